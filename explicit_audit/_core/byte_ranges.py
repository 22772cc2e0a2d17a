"""Line-aligned byte ranges of a large JSON Lines file, read on their own.

A range is named by two nominal offsets; it holds the whole lines that start
in it. :func:`line_start` moves a nominal offset to the start of the line it
falls in or, inside a line, to the next one, so consecutive ranges hold every
line of the file exactly once, whatever the offsets. The bytes are read with
``read()``, never memory-mapped (a file cut short while it is read gives
fewer bytes, not a signal).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["count_lines", "line_start", "nominal_ranges", "read_range"]

_SCAN_BYTES = 1 << 16


def nominal_ranges(size: int, blocksize: int) -> list[tuple[int, int]]:
    """``[start, stop)`` offsets of about ``blocksize`` bytes covering ``size`` bytes.

    >>> nominal_ranges(10, 4)
    [(0, 4), (4, 8), (8, 10)]
    >>> nominal_ranges(0, 4)
    [(0, 0)]
    """
    if size <= 0:
        return [(0, 0)]
    return [(start, min(start + blocksize, size)) for start in range(0, size, blocksize)]


def line_start(handle, offset: int) -> int:
    """The offset of the first line that starts at or after nominal ``offset``.

    Offset 0 is the file's start; any other offset moves past the first
    newline at or after ``offset - 1`` (the end of the file if there is none).
    """
    if offset <= 0:
        return 0
    handle.seek(offset - 1)
    position = offset - 1
    while True:
        block = handle.read(_SCAN_BYTES)
        if not block:
            return position
        found = block.find(b"\n")
        if found != -1:
            return position + found + 1
        position += len(block)


def read_range(path: Path, start: int, stop: int) -> bytes:
    """The whole lines of ``path`` that start in nominal range ``[start, stop)``."""
    with open(path, "rb") as handle:
        first = line_start(handle, start)
        last = line_start(handle, stop)
        if last <= first:
            return b""
        handle.seek(first)
        return handle.read(last - first)


def count_lines(path: Path, start: int, stop: int) -> int:
    """How many newlines the range ``[start, stop)`` of :func:`read_range` holds."""
    return read_range(path, start, stop).count(b"\n")
