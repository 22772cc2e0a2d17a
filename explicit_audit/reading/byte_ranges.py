"""Line-aligned byte ranges of a large JSON Lines file, read on their own.

A range is named by two nominal offsets; it holds the whole lines that start
in it. :func:`line_start` moves a nominal offset to the start of the line it
falls in or, inside a line, to the next one, so consecutive ranges hold every
line of the file exactly once, whatever the offsets. The bytes are read with
``read()``, never memory-mapped (a file cut short while it is read gives
fewer bytes, not a signal), and in chunks (:func:`range_chunks`): a range
that holds one very long line is streamed, never held whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

__all__ = ["count_lines", "line_start", "nominal_ranges", "range_chunks"]

_SCAN_BYTES = 1 << 16
#: The most bytes :func:`range_chunks` reads at once.
CHUNK_BYTES = 1 << 20


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


def line_start(handle, offset: int, before: int | None = None) -> int:
    """The offset of the first line that starts at or after nominal ``offset``.

    Offset 0 is the file's start; any other offset moves past the first
    newline at or after ``offset - 1`` (the end of the file if there is none).
    With ``before``, the search stops there: ``before`` is returned when no
    line starts before it (only the bytes up to it are read).
    """
    if offset <= 0:
        return 0
    handle.seek(offset - 1)
    position = offset - 1
    while True:
        size = _SCAN_BYTES if before is None else min(_SCAN_BYTES, before - 1 - position)
        if size <= 0:
            return before
        block = handle.read(size)
        if not block:
            return position
        found = block.find(b"\n")
        if found != -1:
            return position + found + 1
        position += len(block)


def range_chunks(path: Path, start: int, stop: int, size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The whole lines of ``path`` that start in nominal range ``[start, stop)``.

    Read in chunks of at most ``size`` bytes: a range of one long line is
    never held whole.

    Raises OSError when the file cannot be opened or read (after the chunks
    read before it).
    """
    with open(path, "rb") as handle:
        # A range inside one long line holds no line start: only its own bytes
        # are searched for one, never the rest of that line (each range of a
        # 1 GB line would read on to its end).
        first = line_start(handle, start, before=stop)
        if first >= stop:
            return
        last = line_start(handle, stop)
        handle.seek(first)
        remaining = last - first
        while remaining > 0:
            chunk = handle.read(min(size, remaining))
            if not chunk:  # the file was cut short meanwhile: fewer bytes
                return
            remaining -= len(chunk)
            yield chunk


def count_lines(path: Path, start: int, stop: int) -> int:
    """How many newlines the range ``[start, stop)`` of :func:`range_chunks` holds."""
    return sum(chunk.count(b"\n") for chunk in range_chunks(path, start, stop))
