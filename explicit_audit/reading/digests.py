"""A file's bytes hashed in the one pass that reads them.

The SHA-256 a provenance publishes covers exactly the bytes that were
checked: every read of a file goes through a tap (:class:`_Tap`) that hashes
what it hands over, and when reading stops early (a damaged gzip stream,
``max_file_bytes``) the rest is read into the hash, never parsed. A small
file read whole (:func:`hold_file`, a policy's YAML) is parsed from the very
bytes that were hashed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

__all__ = ["READ_BYTES", "FileDigest", "HeldFile", "file_digest", "hold_file"]

#: The most bytes one read of a file takes.
READ_BYTES = 1 << 20


class FileDigest(NamedTuple):
    """The size and SHA-256 of the bytes read from one file (as stored: gzip compressed)."""

    bytes: int
    sha256: str


class _Tap:
    """A file read once from front to back, every byte hashed as it is read.

    It is read up to the size it had when it was opened: a log a writer keeps
    appending to is read as it was then, and the read ends, however fast the
    writer goes. A file whose size the system gives as 0 (a ``/proc`` file)
    is read to its end. Of a file read as lines (:meth:`ends_lines`), a size
    that fell inside a line a writer was appending is moved to that line's end.
    """

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.hash = hashlib.sha256()
        self.size = 0
        self.pushed = b""
        self.failed = False
        self.at_end = False
        self._lines = False
        self._last = b""
        try:
            self.limit = os.fstat(handle.fileno()).st_size or None
        except (OSError, AttributeError, ValueError):
            self.limit = None

    def read(self, size: int) -> bytes:
        if self.pushed:  # at most ``size`` of it, as a read would give
            data, self.pushed = self.pushed[:size], self.pushed[size:]
            return data
        if self.limit is not None:
            if self._lines and self.size >= self.limit and self._last != b"\n":
                self._lines = False  # once
                self.limit += self._rest_of_line()
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
        self._last = data[-1:] or self._last
        return data

    def ends_lines(self) -> None:
        """Read the file as lines: a read ends where a line ends, as it was when opened."""
        self._lines = True

    def _rest_of_line(self) -> int:
        """The bytes of the line a writer was appending when the file was opened, up to its
        newline, where the file holds them now (0 when it does not: a line cut short)."""
        try:
            now = os.fstat(self.handle.fileno()).st_size
            start = self.handle.tell()
            found = 0
            while start + found < now:
                chunk = self.handle.read(min(READ_BYTES, now - start - found))
                cut = chunk.find(b"\n")
                if not chunk or cut >= 0:
                    found = found + cut + 1 if cut >= 0 else 0
                    break
                found += len(chunk)
            else:
                found = 0
            self.handle.seek(start)
        except (OSError, ValueError):
            return 0
        return found

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
            self.read(READ_BYTES)
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
        while chunk := tap.read(READ_BYTES):
            chunks.append(chunk)
        return HeldFile(Path(path), b"".join(chunks), tap.digest())
