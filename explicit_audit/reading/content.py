"""A file's bytes, read in pieces that end where a value ends.

Files are read with ``read()`` (never memory-mapped), gzip streams are
decompressed as they are read, and the content is handed over in pieces of
about :data:`PIECE_BYTES` that each end at a value boundary:

- JSON Lines: after a line end;
- ``.json``: before a line that starts at column 0 with ``{`` or ``[`` and
  follows a line whose last character (white space aside) is ``}`` or ``]``.
  Outside a string, ``}`` or ``]`` followed by white space and ``{`` or ``[`` is
  valid JSON only between two top-level values, and a JSON string never holds
  a raw line end: such a cut never falls inside a value of a valid file.

Each piece knows the file line it starts on. The file's bytes are hashed as
they are read (:class:`FileDigest`), in the one pass that reads them, so the
SHA-256 a provenance publishes covers exactly the bytes that were checked;
when reading stops early (a damaged gzip stream, ``max_file_bytes``), the
rest of the file is still read into the hash, never parsed. What goes wrong (an unreadable
file, a damaged or truncated gzip stream, a value larger than
``max_value_bytes``, a file larger than ``max_file_bytes``) is reported as a
:class:`~explicit_audit._core.records.Rejection`; every byte that could be
read before it is still handed over.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np

from .._core.records import Rejection, excerpt
from .byte_ranges import range_chunks
from .limits import Limits
from .sources import CANNOT_READ, display_name, is_gzip_name, is_jsonl_name

__all__ = [
    "GZIP_RATIO_FLOOR",
    "PIECE_BYTES",
    "BytesReader",
    "FileDigest",
    "FileReader",
    "HeldFile",
    "Piece",
    "RangeReader",
    "file_digest",
    "hold_file",
]

PIECE_BYTES = 1 << 24
_READ_BYTES = 1 << 20
_GZIP_INPUT = 1 << 16
_BOM = b"\xef\xbb\xbf"
_NEWLINE = 10
#: Decompressed bytes a gzip stream may produce before max_gzip_ratio is checked:
#: a small file that expands a lot costs little, a bomb is stopped early.
GZIP_RATIO_FLOOR = 64 << 20
_WHITESPACE = b" \t\r\n"


def _count_line_ends(data: bytes) -> int:
    """How many line ends ``data`` holds (NumPy's count: faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE))


def _cut_after_last_line_end(carry: bytes, chunks: list[bytes]) -> tuple[bytes, bytes] | None:
    """``carry`` and ``chunks`` joined, split after their last line end; None without one.

    The same two parts as joining them all and cutting after the last line
    end, each byte copied once: the chunk that holds the line end goes into
    both parts as views of it. (None where no chunk holds one: the caller
    joins them and decides, as for any piece.)
    """
    for index in range(len(chunks) - 1, -1, -1):
        end = chunks[index].rfind(b"\n") + 1
        if end:
            last = memoryview(chunks[index])
            head = b"".join([carry, *chunks[:index], last[:end]])
            return head, b"".join([last[end:], *chunks[index + 1 :]])
    return None


class FileDigest(NamedTuple):
    """The size and SHA-256 of the bytes read from one file (as stored: gzip compressed)."""

    bytes: int
    sha256: str


class _Tap:
    """A file read once from front to back, every byte hashed as it is read.

    It is read up to the size it had when it was opened: a log a writer keeps
    appending to is read as it was then, and the read ends, however fast the
    writer goes. A file whose size the system gives as 0 (a ``/proc`` file)
    is read to its end.
    """

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.hash = hashlib.sha256()
        self.size = 0
        self.pushed = b""
        self.failed = False
        self.at_end = False
        try:
            self.limit = os.fstat(handle.fileno()).st_size or None
        except (OSError, AttributeError, ValueError):
            self.limit = None

    def read(self, size: int) -> bytes:
        if self.pushed:  # at most ``size`` of it, as a read would give
            data, self.pushed = self.pushed[:size], self.pushed[size:]
            return data
        if self.limit is not None:
            size = min(size, self.limit - self.size)
            if size <= 0:
                self.at_end = True
                return b""
        try:
            data = self.handle.read(size)
        except OSError:
            self.failed = True
            raise
        self.hash.update(data)
        self.size += len(data)
        self.at_end = not data
        return data

    def unread(self, data: bytes) -> None:
        """Hand ``data`` (already hashed) back to the next :meth:`read`."""
        self.pushed = data

    def digest(self) -> FileDigest:
        """The size and SHA-256 of every byte read.

        When reading stopped before the end (``max_file_bytes``, a damaged
        gzip stream), the rest is read into the hash first, never parsed.
        Once the end was seen nothing more is read: bytes a writer appends
        after it were not checked, and are not hashed.
        """
        self.pushed = b""
        while not self.at_end:
            self.read(_READ_BYTES)
        return FileDigest(self.size, self.hash.hexdigest())


def file_digest(path: str | Path) -> FileDigest:
    """Size and SHA-256 of a file's bytes, read once in chunks.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    FileDigest

    Raises
    ------
    OSError
        When the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        return _Tap(handle).digest()


@dataclass(frozen=True)
class HeldFile:
    """A small file read once, whole: its path, its bytes and their digest.

    A reader given it (a policy's YAML reader) reads these bytes, not the file
    again: what it parses is exactly what was hashed.

    Attributes
    ----------
    path : Path
    data : bytes
    digest : FileDigest
    """

    path: Path
    data: bytes
    digest: FileDigest

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    @property
    def name(self) -> str:
        """The file's name, as ``Path.name``."""
        return self.path.name

    def read_bytes(self) -> bytes:
        """The bytes read, as ``Path.read_bytes`` would give them."""
        return self.data

    def read_text(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        """The bytes read as text, as ``Path.read_text`` would give them."""
        return self.data.decode(encoding, errors)


def hold_file(path: str | Path) -> HeldFile:
    """Read a (small) file once, whole, hashing it as it is read.

    Raises
    ------
    OSError
        When the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        tap = _Tap(handle)
        chunks = []
        while chunk := tap.read(_READ_BYTES):
            chunks.append(chunk)
        return HeldFile(Path(path), b"".join(chunks), tap.digest())


@dataclass(frozen=True, slots=True)
class Piece:
    """Whole values of one file: ``data`` starts on file line ``first_line``."""

    data: bytes
    first_line: int


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
                    self._cannot_read(exc)
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
                cut_chunks = _cut_after_last_line_end(carry, chunks)
                if cut_chunks is not None:
                    piece, carry = cut_chunks
                    self._carried = len(carry)
                    yield Piece(piece, line)
                    line += _count_line_ends(piece)
                    continue
            data = b"".join([carry, *chunks]) if carry else b"".join(chunks)
            start, searched = (max(searched - 1, 0) if carry else 0), 0
            carry = b""
            self._carried = 0
            if self._array_indent is not None:
                data = self._unarray(data)
            if skipping:
                cut = self._first_cut(data)
                if cut is None:
                    carry = data[len(data) - keep :] if keep else b""
                    line += data.count(b"\n", 0, len(data) - len(carry))
                    continue
                line += data.count(b"\n", 0, cut)
                data = data[cut:]
                skipping, start = False, 0
            cut = self._last_cut(data, start)
            if cut is None and len(data) > limit and not self.jsonl:
                # An array larger than a value may be: max_value_bytes applies to
                # each of its elements, read as values one after another.
                indent = _array_head(data)
                if indent is not None:
                    self._array_indent = indent
                    data = self._unarray(data, opening=True)
                    cut = self._last_cut(data)
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
            yield Piece(piece, line)
            line += _count_line_ends(piece)
        if skipping or not carry:
            return
        if len(carry) > limit and self._last_cut(carry) is None:
            self._oversized(line, carry)
            return
        yield Piece(carry, line)

    def _unarray(self, data: bytes, opening: bool = False) -> bytes:
        """``data`` of a top-level array with its elements made values one after another.

        The same bytes but for white space: the array's ``[`` (with
        ``opening``), each comma that ends a line before an element, and the
        ``]`` that closes the array at column 0 become spaces, and each
        element's ``{`` moves to column 0 in place of its indent; the lines
        stay where they are. Applied again to bytes already rewritten, it
        changes nothing. The array ends at its ``]``: what follows is read as
        written.
        """
        indent = self._array_indent or 0
        buffer = bytearray(data)
        if opening:
            buffer[len(data) - len(data.lstrip(_WHITESPACE))] = 32
        closing = _closing_bracket(data)
        end = len(data) if closing is None else closing
        for separator in (b",\n", b",\r\n"):
            element = separator + b" " * indent + b"{"
            position = data.find(element, 0, end)
            while position != -1:
                buffer[position] = 32
                brace = position + len(separator) + indent
                if indent:
                    buffer[brace - indent] = 123
                    buffer[brace] = 32
                position = data.find(element, position + 1, end)
        if closing is not None:
            buffer[closing] = 32
            self._array_indent = None
        return bytes(buffer)

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
        first = True
        for chunk in self._chunks():
            if first:
                first = False
                if self.strip_bom and chunk.startswith(_BOM):
                    chunk = chunk[len(_BOM) :]
            gathered.append(chunk)
            size += len(chunk)
            if size + self._carried >= PIECE_BYTES and size >= self._carried:
                yield gathered
                gathered, size = [], 0
        if gathered:
            yield gathered

    def _oversized(self, line: int, data: bytes) -> None:
        self.oversized += 1
        self.problems.append(
            Rejection(
                self.name,
                line,
                "unknown",
                f"the value is larger than max_value_bytes ({self.limits.max_value_bytes} "
                "bytes) and is not read",
                excerpt(data[: self.limits.excerpt_chars * 4], self.limits.excerpt_chars),
            )
        )

    def _last_cut(self, data: bytes, start: int = 0) -> int | None:
        """Where the last whole value of ``data`` ends, or None when none does.

        Only boundaries at ``start`` or after are looked for (the bytes before
        were searched already, and held none).
        """
        if self.jsonl:
            cut = data.rfind(b"\n") + 1
            return cut or None
        # Each kind of line start is searched for once from where its last one
        # was found: searching both from each candidate anew is quadratic when
        # one of them is rare (``[\n{...},\n{...}`` has one "\n[").
        brace, bracket = data.rfind(b"\n{", start), data.rfind(b"\n[", start)
        while True:
            cut = max(brace, bracket)
            if cut == -1:
                return None
            if _ends_a_value(data, cut):
                return cut + 1
            if cut == brace:
                brace = data.rfind(b"\n{", start, cut)
            else:
                bracket = data.rfind(b"\n[", start, cut)

    def _first_cut(self, data: bytes) -> int | None:
        """Where the first value boundary of ``data`` is, or None."""
        if self.jsonl:
            cut = data.find(b"\n") + 1
            return cut or None
        # As in _last_cut, each kind of line start is searched for once onwards.
        brace, bracket = data.find(b"\n{"), data.find(b"\n[")
        while True:
            found = [i for i in (brace, bracket) if i != -1]
            if not found:
                return None
            cut = min(found)
            if _ends_a_value(data, cut):
                return cut + 1
            if cut == brace:
                brace = data.find(b"\n{", cut + 1)
            else:
                bracket = data.find(b"\n[", cut + 1)

    def _chunks(self) -> Iterator[bytes]:
        """The file's decompressed bytes, chunk by chunk, up to ``max_file_bytes``."""
        budget = self.limits.max_file_bytes
        for chunk in self._raw_chunks():
            if len(chunk) > budget:
                yield chunk[:budget]
                self.problems.append(
                    Rejection(
                        self.name,
                        0,
                        "file",
                        f"the file is larger than max_file_bytes ({self.limits.max_file_bytes} "
                        "bytes, after decompression): the rest is not read",
                        "",
                    )
                )
                return
            budget -= len(chunk)
            yield chunk

    def _raw_chunks(self) -> Iterator[bytes]:
        if self.path is None:
            return
        try:
            handle = open(self.path, "rb")
        except OSError as exc:
            self._cannot_read(exc)
            return
        # The handle is closed by _seal, once the rest has been read into the hash.
        self._tap = tap = _Tap(handle)
        try:
            first = tap.read(_READ_BYTES)
        except OSError as exc:  # EIO on the first read (/proc/self/mem) is a file-level problem
            self._cannot_read(exc)
            return
        tap.unread(first)
        if is_gzip_name(self.path) or first[:2] == b"\x1f\x8b":
            yield from self._gunzip(tap)
            return
        while True:
            try:
                chunk = tap.read(_READ_BYTES)
            except OSError as exc:
                self._cannot_read(exc)
                return
            if not chunk:
                return
            if self.on_bytes is not None:
                self.on_bytes(len(chunk))
            yield chunk

    def _cannot_read(self, exc: OSError) -> None:
        self.problems.append(
            Rejection(self.name, 0, "file", f"{CANNOT_READ}{exc.strerror or exc}", "")
        )

    def _gunzip(self, handle) -> Iterator[bytes]:
        """Every gzip member, decompressed as read; damage keeps all output before it."""
        decompressor = None
        members = 0
        total = member_output = compressed = 0
        pending = b""
        ratio = self.limits.max_gzip_ratio
        while True:
            if not pending:
                try:
                    pending = handle.read(_GZIP_INPUT)
                except OSError as exc:
                    self._cannot_read(exc)
                    return
                if not pending:
                    break
                compressed += len(pending)
                if self.on_bytes is not None:
                    self.on_bytes(len(pending))
            if decompressor is None:
                if not pending.strip(b"\0"):  # gzip tools allow zero padding at the end
                    pending = b""
                    continue
                decompressor = zlib.decompressobj(wbits=31)
                members += 1
                member_output = 0
            before = decompressor.copy()
            try:
                output = decompressor.decompress(pending, _READ_BYTES)
            except zlib.error as exc:
                salvaged = list(self._salvage(before, pending))
                yield from salvaged
                fresh = member_output == 0 and not any(salvaged)
                if members == 1 and total == 0 and fresh:
                    what = "not a readable gzip file"
                elif fresh:
                    what = "the bytes after the last gzip member are not gzip"
                else:
                    what = "gzip data is damaged"
                self.cut = True
                self.problems.append(
                    Rejection(self.name, 0, "file", f"{what} ({exc}): the rest is lost", "")
                )
                return
            if output:
                total += len(output)
                member_output += len(output)
                yield output
                if total > GZIP_RATIO_FLOOR and total > ratio * compressed:
                    self.problems.append(
                        Rejection(
                            self.name,
                            0,
                            "file",
                            f"the gzip stream expands {total // compressed} times (to {total} "
                            f"bytes from {compressed}), more than max_gzip_ratio ({ratio}): "
                            "the rest is not read",
                            "",
                        )
                    )
                    return
            pending = decompressor.unconsumed_tail
            if decompressor.eof:
                pending = decompressor.unused_data + pending
                decompressor = None
        if decompressor is not None:
            try:
                tail = decompressor.flush()
            except zlib.error:
                tail = b""
            if tail:
                yield tail
            self.cut = True
            self.problems.append(
                Rejection(self.name, 0, "file", "gzip stream is truncated: the rest is lost", "")
            )

    def _salvage(self, decompressor, data: bytes) -> Iterator[bytes]:
        """The output of ``data`` up to the byte where the stream breaks."""
        for index in range(len(data)):
            try:
                output = decompressor.decompress(data[index : index + 1])
            except zlib.error:
                return
            if output:
                yield output
            if decompressor.eof:
                return


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
        view = memoryview(self.data)
        for start in range(0, len(self.data), _READ_BYTES):
            yield bytes(view[start : start + _READ_BYTES])


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
            yield from range_chunks(self.path, self.start, self.stop, _READ_BYTES)
        except OSError as exc:
            self._cannot_read(exc)


def _array_head(data: bytes) -> int | None:
    """The indent of an array's elements when ``data`` opens one with ``[`` alone on its line.

    None unless the first element starts the next line with ``{``.
    """
    head = len(data) - len(data.lstrip(_WHITESPACE))
    if data[head : head + 1] != b"[":
        return None
    newline = data.find(b"\n", head)
    if newline == -1 or data[head + 1 : newline].strip(_WHITESPACE):
        return None
    first = data.find(b"{", newline)
    if first == -1 or data[newline + 1 : first].strip(b" ") or first - newline - 1 > 64:
        return None
    return first - newline - 1


def _closing_bracket(data: bytes) -> int | None:
    """Where a ``]`` at column 0 after a line ending with ``}`` closes the array, if in ``data``."""
    position = data.find(b"\n]")
    while position != -1:
        if _ends_a_value(data, position):
            return position + 1
        position = data.find(b"\n]", position + 1)
    return None


def _ends_a_value(data: bytes, end: int) -> bool:
    """Whether the last byte before ``end``, white space aside, closes a value."""
    index = end - 1
    while index >= 0 and data[index] in _WHITESPACE:
        index -= 1
    return index >= 0 and data[index] in b"}]"
