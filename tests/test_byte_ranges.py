"""Line-aligned byte ranges (``explicit_audit.reading.byte_ranges``), on real files.

Consecutive ranges hold every line of a file exactly once, whatever the
nominal offsets; a range that falls inside one long line reads only its own
bytes to learn that it holds no line start.
"""

from __future__ import annotations

import io

import pytest

from explicit_audit.reading.byte_ranges import (
    count_lines,
    line_start,
    nominal_ranges,
    range_chunks,
)


def read_range(path, start: int, stop: int) -> bytes:
    """A range's bytes, joined."""
    return b"".join(range_chunks(path, start, stop))


class _CountingFile(io.FileIO):
    """A real file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size=-1):
        block = super().read(size)
        self.read_bytes += len(block)
        return block


@pytest.mark.parametrize("blocksize", [1, 2, 3, 7, 64, 1000, 1 << 20])
def test_consecutive_ranges_hold_every_line_once(tmp_path, blocksize):
    lines = [b"a" * n + b"\n" for n in (0, 1, 5, 300, 2, 0, 4000, 9)] + [b"tail"]
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(lines))
    size = path.stat().st_size
    ranges = nominal_ranges(size, blocksize)
    assert b"".join(read_range(path, start, stop) for start, stop in ranges) == path.read_bytes()
    assert sum(count_lines(path, start, stop) for start, stop in ranges) == len(lines) - 1
    for start, stop in ranges:
        chunks = list(range_chunks(path, start, stop, size=3))
        assert all(0 < len(chunk) <= 3 for chunk in chunks)
        assert b"".join(chunks) == read_range(path, start, stop)


def test_a_range_inside_a_long_line_reads_only_its_own_bytes(tmp_path):
    path = tmp_path / "long.jsonl"
    long_line = b'{"pad": "' + b"x" * (8 << 20) + b'"}\n'
    path.write_bytes(b"{}\n" + long_line + b"{}\n")
    start, stop = 1 << 20, 2 << 20  # inside the long line
    with _CountingFile(path, "rb") as handle:
        assert line_start(handle, start, before=stop) == stop  # no line starts in the range
        assert handle.read_bytes <= stop - start
        # Without the bound the search runs on to the line's end.
        assert line_start(handle, start) == 3 + len(long_line)
    assert read_range(path, start, stop) == b""
    assert count_lines(path, start, stop) == 0
    # The range where the long line starts holds it whole, and the line after it does not.
    assert read_range(path, 0, 1 << 20) == b"{}\n" + long_line
    assert read_range(path, 8 << 20, path.stat().st_size) == b"{}\n"


def test_a_newline_just_before_the_bound_starts_a_line_in_the_range(tmp_path):
    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"abcd\nefgh\n")
    with open(path, "rb") as handle:
        assert line_start(handle, 2, before=6) == 5  # the newline at 4 starts line 2 at 5
        assert line_start(handle, 2, before=5) == 5  # line 2 starts at 5: not before 5
    assert read_range(path, 2, 6) == b"efgh\n"
    assert read_range(path, 2, 5) == b""
    assert read_range(path, 5, 10) == b"efgh\n"
