"""A file's bytes, read in pieces that end where a value ends.

Files are read with ``read()`` (never memory-mapped), through a tap that
hashes every byte in the one pass that reads it (:mod:`.digests`); gzip
streams are decompressed as they are read and every stream is kept within
its bounds (:mod:`.streams`). The content is handed over in pieces of about
:data:`PIECE_BYTES` that each end at a value boundary (:mod:`.cuts`), a JSON
Lines piece of at most :data:`PIECE_LINES` lines, so that millions of tiny
lines cost a piece's memory, not a file's. Each piece knows the file line it
starts on.

What goes wrong (an unreadable file, a damaged or truncated gzip stream, a
value larger than ``max_value_bytes``, a file larger than ``max_file_bytes``)
is reported as a :class:`~explicit_audit._core.records.Rejection`; every
byte that could be read before it is still handed over.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._core.records import Rejection
from . import digests
from .byte_ranges import range_chunks
from .cuts import (
    NEWLINE,
    array_head,
    count_line_ends,
    cut_after_last_line_end,
    first_cut,
    last_cut,
    unarray,
)
from .digests import FileDigest, _Tap
from .exact import too_large
from .limits import Limits
from .names import display_name
from .sources import is_gzip_name, is_jsonl_name
from .streams import (
    GZIP_MAGIC,
    GZIP_RATIO_FLOOR,
    Bounded,
    Stop,
    cannot_read,
    gunzip,
    read_chunks,
    within,
)

__all__ = [
    "GZIP_RATIO_FLOOR",
    "PIECE_BYTES",
    "PIECE_LINES",
    "BytesReader",
    "FileReader",
    "GzipTailReader",
    "Piece",
    "RangeReader",
]

PIECE_BYTES = 1 << 24
#: The most lines of a JSON Lines piece: its spans cost memory per line, and a
#: piece of 16 MiB holds 8 million lines ``1``. Values of 64 bytes or more never
#: reach it.
PIECE_LINES = PIECE_BYTES // 64
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Piece:
    """Whole values of one file: ``data`` starts on file line ``first_line``."""

    data: bytes
    first_line: int


def _without_bom(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """``chunks`` without the UTF-8 byte order mark at their start, wherever they cut it.

    A gzip file's members are decompressed one by one: a BOM may arrive over
    two or three chunks, and is the same BOM as one that arrives whole.
    """
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= len(_BOM) or not _BOM.startswith(head):
            break
    head = head[len(_BOM) :] if head.startswith(_BOM) else head
    if head:
        yield head
    yield from chunks


@dataclass
class FileReader:
    """Reads one file in pieces (iterate over it), collecting file-level problems.

    Parameters
    ----------
    path : pathlib.Path
    limits : Limits

    Attributes
    ----------
    name : str
        The file's name as shown in tables.
    jsonl : bool
        Whether the file is read as JSON Lines.
    problems : list of Rejection
        File-level problems and oversized values, filled while iterating.
    oversized : int
        How many values were rejected for their size (they count as read).
    cut : bool
        Whether a damaged or truncated gzip stream cut the content short.
    digest : FileDigest or None
        Size and SHA-256 of the file's bytes as read, once it was read to its
        end; None when it could not be (or for bytes given in memory).
    hash_whole : bool
        Whether to read the rest of the file into the hash when reading stops
        early; False for a head read only to sample it.
    """

    path: Path | None
    limits: Limits
    name: str = ""
    jsonl: bool = True
    problems: list[Rejection] = field(default_factory=list)
    oversized: int = 0
    cut: bool = False
    first_line: int = 1
    strip_bom: bool = True
    digest: FileDigest | None = None
    hash_whole: bool = True
    #: Called with the number of bytes each read took from the file (the progress bar).
    on_bytes: Callable[[int], None] | None = None
    _carried: int = 0
    _tap: _Tap | None = None
    #: Inside a top-level array read element by element: its elements' indent.
    _array_indent: int | None = None

    def __post_init__(self) -> None:
        self.name = self.name or display_name(self.path)
        if self.path is not None:
            self.jsonl = is_jsonl_name(self.path)

    def __iter__(self) -> Iterator[Piece]:
        finished = False
        try:
            yield from self._pieces()
            finished = True
        finally:
            self._seal(finished)

    def _seal(self, finished: bool) -> None:
        """Close the file; after a whole read, keep the digest of its bytes."""
        tap, self._tap = self._tap, None
        if tap is None:
            return
        try:
            if finished and self.hash_whole and not tap.failed:
                try:
                    self.digest = tap.digest()
                except OSError as exc:
                    self._stopped(cannot_read(exc))
        finally:
            tap.handle.close()

    def _pieces(self) -> Iterator[Piece]:
        line = self.first_line
        carry = b""
        skipping = False  # inside an oversized value: drop bytes up to the next boundary
        # What a boundary test may need to see of the bytes dropped before it.
        keep = 0 if self.jsonl else 64
        limit = self.limits.max_value_bytes
        # How many bytes at the start of ``carry`` _last_cut found no boundary in: a
        # boundary depends only on the bytes before it, so they are not searched again
        # (one array of many elements, carried on piece after piece, is searched once).
        searched = 0
        for chunks in self._gathered():
            if self.jsonl and not skipping:
                # The piece ends after the last line end: found in the chunks before
                # they are joined, so that the piece's bytes are copied once.
                cut_chunks = cut_after_last_line_end(carry, chunks)
                if cut_chunks is not None:
                    piece, carry = cut_chunks
                    self._carried = len(carry)
                    line = yield from self._handed(piece, line)
                    continue
            data = b"".join([carry, *chunks]) if carry else b"".join(chunks)
            start, searched = (max(searched - 1, 0) if carry else 0), 0
            carry = b""
            self._carried = 0
            if self._array_indent is not None:
                data = self._unarray(data)
            if skipping:
                cut = first_cut(data, self.jsonl)
                if cut is None:
                    carry = data[len(data) - keep :] if keep else b""
                    line += data.count(b"\n", 0, len(data) - len(carry))
                    continue
                line += data.count(b"\n", 0, cut)
                data = data[cut:]
                skipping, start = False, 0
            cut = last_cut(data, self.jsonl, start)
            if cut is None and len(data) > limit and not self.jsonl:
                # An array larger than a value may be: max_value_bytes applies to
                # each of its elements, read as values one after another.
                indent = array_head(data)
                if indent is not None:
                    self._array_indent = indent
                    data = self._unarray(data, opening=True)
                    cut = last_cut(data, self.jsonl)
            if cut is None:
                if len(data) > limit:
                    self._oversized(line, data)
                    skipping = True
                    carry = data[len(data) - keep :] if keep else b""
                    line += data.count(b"\n", 0, len(data) - len(carry))
                else:
                    carry, searched = data, len(data)
                self._carried = len(carry)
                continue
            piece, carry = data[:cut], data[cut:]
            searched = len(carry)  # the last boundary is at cut: none after it
            self._carried = len(carry)
            line = yield from self._handed(piece, line)
        if skipping or not carry:
            return
        if len(carry) > limit and last_cut(carry, self.jsonl) is None:
            self._oversized(line, carry)
            return
        yield from self._handed(carry, line)

    def _handed(self, data: bytes, line: int) -> Generator[Piece, None, int]:
        """``data``, starting on ``line``, as pieces; returns the line after it.

        A JSON Lines piece of more than :data:`PIECE_LINES` lines is handed
        over in runs of that many lines.
        """
        ends = count_line_ends(data)
        if ends <= PIECE_LINES or not self.jsonl:
            yield Piece(data, line)
            return line + ends
        buffer = np.frombuffer(data, dtype=np.uint8)
        cuts = np.flatnonzero(buffer == NEWLINE)[PIECE_LINES - 1 :: PIECE_LINES] + 1
        start = 0
        for number, cut in enumerate([*cuts.tolist(), len(data)]):
            if cut > start:
                yield Piece(data[start:cut], line + number * PIECE_LINES)
            start = cut
        return line + ends

    def _unarray(self, data: bytes, opening: bool = False) -> bytes:
        """``data`` with the elements of the array read made values (:func:`.cuts.unarray`)."""
        data, closed = unarray(data, self._array_indent or 0, opening)
        if closed:
            self._array_indent = None
        return data

    def _gathered(self) -> Iterator[list[bytes]]:
        """The content in runs of about :data:`PIECE_BYTES` chunks (with what is carried over).

        A run is at least as long as what is carried over: a value (an array)
        carried on without a boundary is joined with runs that double it, so
        that its bytes are copied a few times, not once per chunk read after it.
        Each run is the list of its chunks, joined by the caller with what it
        carries over.
        """
        gathered: list[bytes] = []
        size = 0
        chunks = self._chunks()
        for chunk in _without_bom(chunks) if self.strip_bom else chunks:
            gathered.append(chunk)
            size += len(chunk)
            if size + self._carried >= PIECE_BYTES and size >= self._carried:
                yield gathered
                gathered, size = [], 0
        if gathered:
            yield gathered

    def _expanded_before(self) -> int:
        """The file's decompressed bytes before those read: none, where a file is read whole."""
        return 0

    def _oversized(self, line: int, data: bytes) -> None:
        self.oversized += 1
        self.problems.append(too_large(self.name, line, data, self.limits))

    def _chunks(self) -> Iterator[bytes]:
        """The file's decompressed bytes, chunk by chunk, up to ``max_file_bytes``."""
        limit = self.limits.max_file_bytes
        stop = yield from within(self._raw_chunks(), limit, self._expanded_before())
        if stop is not None:
            self._stopped(stop)

    def _raw_chunks(self) -> Iterator[bytes]:
        if self.path is None:
            return
        try:
            handle = open(self.path, "rb")
        except OSError as exc:
            self._stopped(cannot_read(exc))
            return
        # The handle is closed by _seal, once the rest has been read into the hash.
        self._tap = tap = _Tap(handle)
        try:
            first = tap.read(digests.READ_BYTES)
        except OSError as exc:  # EIO on the first read (/proc/self/mem) is a file-level problem
            self._stopped(cannot_read(exc))
            return
        tap.unread(first)
        if is_gzip_name(self.path) or first[:2] == GZIP_MAGIC:
            yield from self._gunzip(tap)
            return
        tap.ends_lines()
        failure = yield from read_chunks(tap, self._advance)
        if failure is not None:
            self._stopped(cannot_read(failure))

    def _gunzip(self, source, before: tuple[int, int] = (0, 0)) -> Iterator[bytes]:
        """Every gzip member of ``source``, decompressed as read (:func:`.streams.gunzip`)."""
        stop = yield from gunzip(source, self.limits.max_gzip_ratio, self._advance, before)
        if stop is not None:
            self._stopped(stop)

    def _advance(self, count: int) -> None:
        """Count bytes read to :attr:`on_bytes`, as it is when they are read."""
        if self.on_bytes is not None:
            self.on_bytes(count)

    def _stopped(self, stop: Stop) -> None:
        """Keep why the stream stopped early, as a file-level problem."""
        self.cut = self.cut or stop.cut
        self.problems.append(Rejection(self.name, 0, "file", stop.reason, ""))


@dataclass
class BytesReader(FileReader):
    """Reads bytes already in memory as if they were a file's (see :class:`FileReader`).

    Parameters
    ----------
    data : bytes
        Decompressed content.
    name : str
        The file the bytes come from, as rows name it.
    jsonl : bool
    """

    data: bytes = b""

    def _raw_chunks(self) -> Iterator[bytes]:
        view, size = memoryview(self.data), digests.READ_BYTES
        for start in range(0, len(self.data), size):
            yield bytes(view[start : start + size])


@dataclass
class RangeReader(FileReader):
    """Reads the whole lines that start in a byte range of a JSON Lines file, streamed.

    As :class:`FileReader` reads a file, the range's bytes are taken chunk by
    chunk (:func:`~explicit_audit.reading.byte_ranges.range_chunks`), so that a
    value larger than ``max_value_bytes`` is skipped as it is read, never
    held whole. No digest is taken: a range is not the file.

    Parameters
    ----------
    start, stop : int
        The nominal range (see :mod:`explicit_audit.reading.byte_ranges`).
    """

    start: int = 0
    stop: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.jsonl = True
        self.strip_bom = self.start == 0

    def _raw_chunks(self) -> Iterator[bytes]:
        try:
            yield from range_chunks(self.path, self.start, self.stop, digests.READ_BYTES)
        except OSError as exc:
            self._stopped(cannot_read(exc))


@dataclass
class GzipTailReader(RangeReader):
    """Reads the gzip members that start at ``start`` of a gzip file, up to ``stop``.

    The members appended to a gzip log after the ones audited before
    (``gzip -c >> x.jsonl.gz``): their bytes, from the first of them to
    ``stop``, decompressed as a whole read decompresses them, their lines
    numbered on from ``first_line``, within the limits of the whole file: the
    members before ``start`` decompress to ``expanded`` bytes. No digest is
    taken: a range is not the file.
    """

    expanded: int = 0

    def _expanded_before(self) -> int:
        return self.expanded

    def _raw_chunks(self) -> Iterator[bytes]:
        try:
            handle = open(self.path, "rb")
        except OSError as exc:
            self._stopped(cannot_read(exc))
            return
        with handle:
            handle.seek(self.start)
            tail = Bounded(handle, self.stop - self.start)
            yield from self._gunzip(tail, (self.start, self.expanded))
