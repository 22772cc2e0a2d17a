"""A file's audited bytes, hashed and indexed by line: what proves them unchanged.

An audit state keeps, per file, the SHA-256 of the bytes audited (ending
at a line boundary) and, per line of them, where it ends and a short hash
of its bytes (:class:`LineIndex`). The next run hashes the same bytes again
(:func:`scan`, a read at the disk's speed); when the SHA-256 differs, the
line hashes of the file as it is now, compared with those kept, name the
first line that changed (:func:`first_changed_line`). Line hashes only
locate a change: whether the bytes changed is the SHA-256's to say.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..reading.limits import Limits
from ..reading.streams import GZIP_MAGIC, Bounded, gunzip

__all__ = ["GzipLines", "LineIndex", "Scan", "first_changed_line", "gzip_lines", "line_at", "scan"]

_READ_BYTES = 1 << 24
_NEWLINE = 10


@dataclass
class LineIndex:
    """Where each audited line ends (the offset after its newline) and the hash of its bytes."""

    ends: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    hashes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.ends)

    def tail(self, start: int) -> LineIndex:
        """The lines after the first ``start``."""
        return LineIndex(self.ends[start:], self.hashes[start:])

    def joined(self, other: LineIndex) -> LineIndex:
        """This index followed by ``other`` (lines after these)."""
        return LineIndex(
            np.concatenate([self.ends, other.ends]), np.concatenate([self.hashes, other.hashes])
        )


@dataclass
class Scan:
    """What one read of ``[start, stop)`` of a file found.

    Attributes
    ----------
    hasher : hashlib object
        The SHA-256 of every byte from the file's start up to where the read stopped.
    at_line : hashlib object
        The SHA-256 of every byte from the file's start up to the end of the last
        whole line read (up to ``start`` when the range holds none).
    read : int
        The offset where the read stopped (``stop``, or the file's end if it came first).
    lines : LineIndex
        The whole lines (ending in a newline) that end in the range.
    gzip : bool
        Whether the range starts at the file's start with a gzip member
        (:data:`~explicit_audit.reading.streams.GZIP_MAGIC`), whatever its name.
    """

    hasher: object
    at_line: object
    read: int
    lines: LineIndex
    gzip: bool = False

    @property
    def line_end(self) -> int | None:
        """The offset after the last newline the read met (None when it met none)."""
        return int(self.lines.ends[-1]) if len(self.lines) else None


def _line_hashes(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    view = memoryview(data)
    found = [zlib.crc32(view[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    return np.asarray(found, dtype=np.int64)


def scan(
    path: Path,
    start: int,
    stop: int,
    *,
    hasher=None,
    index: bool = True,
) -> Scan:
    """Hash ``[start, stop)`` of ``path`` into ``hasher`` and index its lines.

    Parameters
    ----------
    path : Path
    start, stop : int
        The range; ``start`` must be the start of a line (0, or just after a newline).
    hasher : hashlib object, optional
        The SHA-256 of the bytes before ``start`` (a new one when ``start`` is 0).
    index : bool, default True
        Whether to index the range's lines (False: only hash the bytes).

    Raises
    ------
    OSError
        When the file cannot be read.
    """
    hasher = hasher if hasher is not None else hashlib.sha256()
    at_line = hasher.copy()
    ends: list[np.ndarray] = []
    hashes: list[np.ndarray] = []
    carry = b""  # the bytes of a line begun in an earlier block
    position = start
    opens_gzip = False
    with open(path, "rb") as handle:
        handle.seek(start)
        while position < stop:
            block = handle.read(min(_READ_BYTES, stop - position))
            if not block:
                break
            if position == 0:
                opens_gzip = block[:2] == GZIP_MAGIC
            if index:
                last = block.rfind(b"\n") + 1
                if last:
                    hasher.update(memoryview(block)[:last])
                    at_line = hasher.copy()
                    hasher.update(memoryview(block)[last:])
                else:
                    hasher.update(block)
            else:
                hasher.update(block)
            if index:
                data = carry + block
                base = position - len(carry)
                newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE) + 1
                if len(newlines):
                    line_starts = np.concatenate([[0], newlines[:-1]])
                    hashes.append(_line_hashes(data, line_starts, newlines))
                    ends.append(newlines.astype(np.int64) + base)
                    carry = data[int(newlines[-1]) :]
                else:
                    carry = data
            position += len(block)
    lines = LineIndex(
        np.concatenate(ends) if ends else np.zeros(0, dtype=np.int64),
        np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.int64),
    )
    return Scan(hasher, at_line, position, lines, opens_gzip)


def first_changed_line(kept: LineIndex, now: LineIndex) -> int:
    """The 1-based number of the first line of ``kept`` that ``now`` does not hold as it was.

    ``now`` indexes the file as it is, up to the bytes ``kept`` covers (or its
    end, if shorter). When every line ``now`` holds is as kept, the first line
    it lacks is named (the file was cut short there).
    """
    common = min(len(kept), len(now))
    differs = (kept.ends[:common] != now.ends[:common]) | (
        kept.hashes[:common] != now.hashes[:common]
    )
    found = np.flatnonzero(differs)
    if len(found):
        return int(found[0]) + 1
    return common + 1


def line_at(path: Path, offset: int, limit: int = 1 << 20) -> bytes | None:
    """The line of ``path`` that starts at ``offset`` (at most ``limit`` bytes), or None.

    None when the file holds no byte there.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(limit)
    except OSError:
        return None
    if not data:
        return None
    return data.split(b"\n", 1)[0]


@dataclass(frozen=True)
class GzipLines:
    """What the gzip members in ``[start, stop)`` of a file decompress to.

    Attributes
    ----------
    lines : int
        Their newlines: the lines they hold, a last one without its newline not counted.
    whole : bool
        Whether they decompress cleanly to ``stop`` (no damage, no bytes that are not
        gzip, within the limits) and end at the end of a line: where the members
        appended later start a line of their own.
    expanded : int
        The file's decompressed bytes up to ``stop``.
    """

    lines: int
    whole: bool
    expanded: int


def gzip_lines(path: Path, start: int, stop: int, limits: Limits, expanded: int = 0) -> GzipLines:
    """Decompress the gzip members in ``[start, stop)`` of ``path``; count their lines.

    ``expanded``: what the members before ``start`` decompress to; with them, the
    file is held to its limits as a whole read holds it. :attr:`GzipLines.expanded`
    is the file's decompressed bytes up to ``stop``.

    Raises
    ------
    OSError
        When the file cannot be read.
    """
    lines, last, total = 0, b"\n", expanded
    with open(path, "rb") as handle:
        handle.seek(start)
        tail = Bounded(handle, stop - start)
        chunks = gunzip(tail, limits.max_gzip_ratio, lambda _: None, (start, expanded))
        while True:
            try:
                chunk = next(chunks)
            except StopIteration as done:  # its value: why the stream stopped early, or None
                return GzipLines(lines, done.value is None and last == b"\n", total)
            total += len(chunk)
            if total > limits.max_file_bytes:
                return GzipLines(lines, False, total)  # the reading stops there too: not whole
            lines += chunk.count(b"\n")
            last = chunk[-1:] or last
