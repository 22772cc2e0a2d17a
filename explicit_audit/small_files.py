"""Small files read whole besides the logs: a baseline, policies, notebooks, manifests.

The logs go through the reading pipeline and its limits; every other file the
kit opens (``verify --baseline``, a routing policy's YAML, ``report -f``'s
parameters, a notebook, the manifest of a Parquet folder or of the load cache)
is read here, whole, under three bounds, so that a hostile or mistaken path
can neither hang nor exhaust the process:

- only a regular file is read: a FIFO, a socket or a device is refused from
  its ``stat``, before it is opened (and the open itself cannot block: a FIFO
  that appears between the two is opened without waiting for a writer);
- at most ``max_bytes``: a larger file is refused from its size, and a file
  that grows while it is read is refused once the bound is passed, never
  read further;
- JSON at most ``max_depth`` levels deep (objects and arrays), checked on the
  bytes before a parser sees them, where Python's parser would raise
  ``RecursionError``.

A JSON file (:func:`read_small_json`) is read as every JSON reader reads it,
as the logs are (:mod:`explicit_audit._core.i_json`): an object that names a
key twice (which value it holds is each reader's guess), and ``NaN`` or
``Infinity`` (Python's tokens, not JSON), are refused naming the line and the key.

Each refusal is an :class:`UnfitFileError`: an :class:`~explicit_audit.AuditError`
(the command line exits 2 with one line) and an :class:`OSError`, so that a
caller that already says "cannot read the file" for an OSError says so for
these too.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ._core.i_json import loads_alike
from .errors import AuditError
from .reading.digests import HeldFile
from .reading.exact import nesting_depth
from .reading.limits import DEFAULT_LIMITS

__all__ = [
    "MAX_SMALL_FILE_BYTES",
    "NOTEBOOK_BOUNDS",
    "UnfitFileError",
    "read_small_bytes",
    "read_small_json",
    "read_small_text",
    "small_text",
]

#: The size past which a file read whole is refused, by what it is read as.
MAX_SMALL_FILE_BYTES = {
    "baseline": 256 << 20,
    "policy": 16 << 20,
    "notebook": 64 << 20,
    "manifest": 16 << 20,
    "digests": 256 << 20,
    "parameters": 1 << 20,
}
#: How a notebook is read: its size bounded, its JSON nesting too (a deeper one would be a
#: RecursionError in the parser).
NOTEBOOK_BOUNDS = {
    "max_bytes": MAX_SMALL_FILE_BYTES["notebook"],
    "max_depth": DEFAULT_LIMITS.max_depth,
}
_CHUNK = 1 << 20
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
}


class UnfitFileError(AuditError, OSError):
    """A file refused before or while it is read: not a regular file, too large, too deep.

    Parameters
    ----------
    filename : str
        The file, as given.
    reason : str
        What is wrong with it, and what to do.

    Examples
    --------
    >>> str(UnfitFileError("base.json", "a FIFO, not a regular file"))
    'base.json: a FIFO, not a regular file'
    """

    def __init__(self, filename: str, reason: str) -> None:
        OSError.__init__(self, None, reason, filename)

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _refuse_kind(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise UnfitFileError(name, f"{kind}, not a regular file: only regular files are read")


def _too_large(name: str, size: str, max_bytes: int) -> UnfitFileError:
    return UnfitFileError(
        name, f"{size}, more than the {max_bytes} bytes read of such a file; is it the one?"
    )


def read_small_bytes(path: str | os.PathLike, *, max_bytes: int) -> bytes | bytearray:
    """The bytes of a regular file of at most ``max_bytes``.

    Parameters
    ----------
    path : str or path-like
        A :class:`~explicit_audit.reading.digests.HeldFile` gives its bytes
        (read once already), checked against the bound.
    max_bytes : int

    Returns
    -------
    bytes or bytearray
        The bytes as read (a bytearray when read from the file: one buffer,
        never copied).

    Raises
    ------
    UnfitFileError
        When the path is not a regular file, or holds more than ``max_bytes``.
    OSError
        When it cannot be opened or read (no such file, a permission).

    Examples
    --------
    >>> read_small_bytes("/dev/zero", max_bytes=10)
    Traceback (most recent call last):
    ...
    explicit_audit.small_files.UnfitFileError: /dev/zero: a character device, ...
    """
    name = os.fspath(path)
    if isinstance(path, HeldFile):
        if len(path.data) > max_bytes:
            raise _too_large(name, f"{len(path.data)} bytes", max_bytes)
        return path.data
    _refuse_kind(name, os.stat(name).st_mode)
    # O_NONBLOCK: a FIFO swapped in since the stat is opened without waiting for a writer.
    descriptor = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_NOCTTY)
    with open(descriptor, "rb", buffering=0) as handle:
        found = os.fstat(descriptor)
        _refuse_kind(name, found.st_mode)
        if found.st_size > max_bytes:
            raise _too_large(name, f"{found.st_size} bytes", max_bytes)
        # Read into one buffer of the size found: no second copy of the bytes.
        data = bytearray(found.st_size)
        held = 0
        while held < len(data) and (count := handle.readinto(memoryview(data)[held:])):
            held += count
        del data[held:]  # shorter when the file shrank while read
        grown = held == found.st_size
        while grown and (chunk := handle.read(min(_CHUNK, max_bytes + 1 - held))):
            data += chunk  # it grew since its stat
            held += len(chunk)
            if held > max_bytes:
                raise _too_large(name, f"{held} bytes (it grew while read)", max_bytes)
    return data


def read_small_text(
    path: str | os.PathLike, *, max_bytes: int, max_depth: int | None = None
) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (see :func:`read_small_bytes`).

    Parameters
    ----------
    path : str or path-like
    max_bytes : int
    max_depth : int, optional
        For JSON text (a notebook): the deepest nesting of objects and arrays
        read, checked on the text before a parser sees it.

    Raises
    ------
    UnfitFileError
        Also when the bytes are not UTF-8 (naming the offset of the first
        that is not), or the text nests deeper than ``max_depth``.
    """
    return small_text(path, read_small_bytes(path, max_bytes=max_bytes), max_depth=max_depth)


def small_text(path: str | os.PathLike, data: bytes, *, max_depth: int | None = None) -> str:
    """The UTF-8 text of ``data``, the bytes of the file ``path``, as :func:`read_small_text`
    checks it (for a caller that keeps the bytes too)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnfitFileError(
            os.fspath(path), f"not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})"
        ) from None
    if max_depth is not None and data.count(b"[") + data.count(b"{") > max_depth:
        depth = nesting_depth(data)
        if depth > max_depth:
            raise UnfitFileError(
                os.fspath(path), f"nested {depth} levels deep, deeper than the {max_depth} read"
            )
    return text


def read_small_json(
    path: str | os.PathLike, *, max_bytes: int, max_depth: int = DEFAULT_LIMITS.max_depth
) -> Any:
    """The JSON value of a regular file of at most ``max_bytes``, nested at most ``max_depth``.

    Raises
    ------
    UnfitFileError
        When :func:`read_small_text` refuses the file, or it nests deeper than
        ``max_depth``.
    json.JSONDecodeError
        When it is not JSON, or not JSON that every reader reads alike (I-JSON,
        RFC 7493): an object that repeats a key, ``NaN`` or ``Infinity``. The
        error gives the line and column.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
    ...     _ = out.write("[" * 600 + "]" * 600)
    >>> read_small_json(out.name, max_bytes=4096)
    Traceback (most recent call last):
    ...
    explicit_audit.small_files.UnfitFileError: ...: nested 600 levels deep, ...
    >>> with open(out.name, "w") as again:
    ...     _ = again.write('{"findings": [], "findings": [{"check": "plan_hashes"}]}')
    >>> read_small_json(out.name, max_bytes=4096)
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: the key `findings` is repeated ...: line 1 column 18 (char 17)
    """
    return loads_alike(read_small_text(path, max_bytes=max_bytes, max_depth=max_depth))
