"""Sources that are not local paths: URLs, open binary file objects and ``-`` (standard input).

``ea.load`` takes, besides files, folders and globs:

- a URL that fsspec reads (``s3://``, ``gs://``, ``https://``, ``memory://``,
  ...): a file, or for a file system that has folders (not HTTP) a folder
  read recursively or a glob, as a local path is. It needs the ``remote``
  extra (fsspec, and aiohttp for HTTP); a scheme's own library (``s3fs``,
  ``gcsfs``) is named by fsspec when it is missing. ``file://`` URLs are
  local paths and are read as such;
- an open binary file object (``open(path, "rb")``, ``io.BytesIO``), read
  from where it stands to its end and left open: the caller owns it;
- ``"-"``: standard input's bytes.

Each is read by the same pipeline as a local file (gzip found by its name or
its first two bytes; JSON Lines or ``.json`` by its name, or for a stream
without one by whether its first line is a whole object), and its rows and
rejections name it: the URL as given, a file object's ``name`` (or
``<file object N>``), ``<stdin>``. The bytes are hashed as they are read,
so the provenance (size and SHA-256 of the bytes read) of a stream that can
be read only once is known: :attr:`Reading.digests
<explicit_audit.reading.collect.Reading>`.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from .._core.extras import require
from .._core.progress import byte_progress
from .._core.records import Rejection
from ..errors import AuditError
from .ahead import relayed
from .collect import Listing, Reading, read_with
from .content import FileDigest, FileReader, _Tap
from .limits import Limits
from .sources import (
    POLICY_SUFFIXES,
    display_name,
    find_sources,
    is_gzip_name,
    is_jsonl_name,
    suffix_of,
)

__all__ = [
    "STDIN",
    "RemoteFile",
    "StreamReader",
    "expand_remote",
    "has_remote",
    "is_stream",
    "is_url",
    "list_remote",
    "local_source",
    "read_remote",
    "read_url",
    "source_items",
    "url_digest",
]

#: What names standard input as a source.
STDIN = "-"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_READ_BYTES = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_GLOB = re.compile(r"[*?\[]")


def is_url(item: Any) -> bool:
    """Whether ``item`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(item, str) and bool(_SCHEME.match(item)) and not os.path.exists(item)


def is_stream(item: Any) -> bool:
    """Whether ``item`` is an open file object (it has ``read``), not a path."""
    return hasattr(item, "read") and not isinstance(item, str | bytes | os.PathLike)


def source_items(source: Any) -> list:
    """``source`` as a list of items: a path, URL, file object or ``-`` each."""
    if isinstance(source, str | os.PathLike) or is_stream(source):
        return [source]
    return list(source)


def _scheme(url: str) -> str:
    return _SCHEME.match(url).group(1).lower()


def _file_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise AuditError(f"{url}: a file:// URL names a file on this machine; drop the host")
    return url2pathname(unquote(parts.path))


def local_source(source: Any) -> Any:
    """``source`` with each ``file://`` URL written as the local path it names."""
    items = source_items(source)
    if not any(is_url(item) and _scheme(item) == "file" for item in items):
        return source
    return [_file_path(i) if is_url(i) and _scheme(i) == "file" else i for i in items]


def has_remote(source: Any) -> bool:
    """Whether ``source`` names anything but local paths (a URL, a file object, ``-``)."""
    return any(
        is_stream(item) or item == STDIN or (is_url(item) and _scheme(item) != "file")
        for item in source_items(source)
    )


@dataclass(frozen=True)
class RemoteFile:
    """One file that is not a local path: a URL, or an open file object.

    Attributes
    ----------
    name : str
        As tables name it: the URL, a file object's name, ``<stdin>``.
    url : str or None
        The URL fsspec opens; None for a file object.
    handle : file object or None
        An open binary file object, read once; None for a URL.
    """

    name: str
    url: str | None = None
    handle: Any = field(default=None, compare=False)

    @property
    def is_policy(self) -> bool:
        """Whether the file is a YAML policy, by its name."""
        return self.name.lower().endswith(POLICY_SUFFIXES)

    def open(self):
        """A binary file object to read from; a file object's own handle."""
        if self.handle is not None:
            return self.handle
        import fsspec

        scheme = _scheme(self.url)
        # HTTP is read as a stream: no size or range requests needed of the server.
        options = {"block_size": 0} if scheme in ("http", "https") else {}
        return fsspec.open(self.url, "rb", **options).open()

    def read_all(self) -> bytes:
        """Every byte of the file (for a policy, read whole)."""
        handle = self.open()
        try:
            return handle.read()
        finally:
            if self.handle is None:
                handle.close()


def _require(url: str) -> None:
    what = f"reading {_scheme(url)}:// URLs"
    modules = ("fsspec", "aiohttp") if _scheme(url) in ("http", "https") else ("fsspec",)
    require("remote", what, modules)


def _filesystem(url: str):
    _require(url)
    import fsspec

    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:
        # A scheme whose library is not installed (s3fs, gcsfs): fsspec names it.
        raise AuditError(f"{url}: {exc}") from None
    except (ValueError, OSError) as exc:
        raise AuditError(f"{url}: cannot be read ({exc})") from None


def _is_hidden(path: str, root: str) -> bool:
    relative = path[len(root) :].strip("/")
    return any(part.startswith(".") for part in relative.split("/") if part)


def expand_url(url: str) -> list[str]:
    """The files a URL names: itself, the files below it, or those a glob matches.

    Raises
    ------
    AuditError
        When it names nothing readable, or its file system cannot be used.
    """
    fs, path = _filesystem(url)
    scheme = _scheme(url)
    try:
        if scheme in ("http", "https"):
            # A web server has no folders to list: the URL is one file.
            if not fs.exists(url):
                raise AuditError(f"{url}: no such file (the server answers that it has none)")
            return [url]
        if _GLOB.search(path):
            # Hidden files and folders are skipped, as a local glob skips them.
            root = path[: _GLOB.search(path).start()].rpartition("/")[0]
            found = sorted(
                p
                for p in fs.glob(path)
                if suffix_of(p) and not _is_hidden(p, root) and not fs.isdir(p)
            )
        elif fs.isdir(path):
            found = sorted(
                p for p in fs.find(path) if suffix_of(p) and not _is_hidden(p, path.rstrip("/"))
            )
            if not found:
                raise AuditError(f"{url}: the folder holds no file to load")
        elif fs.exists(path):
            if not suffix_of(path):
                raise AuditError(f"{url}: cannot read this kind of file (by its name)")
            return [url]
        else:
            found = []
    except AuditError:
        raise
    except Exception as exc:  # a remote file system's own errors (permissions, network)
        raise AuditError(f"{url}: cannot be listed ({type(exc).__name__}: {exc})") from None
    if not found:
        raise AuditError(f"{url}: no such file or folder, and nothing matches it as a glob")
    return [fs.unstrip_protocol(p) for p in found]


def expand_remote(items: list) -> list[RemoteFile | str | os.PathLike]:
    """Each URL as the files it names, each file object or ``-`` as a :class:`RemoteFile`.

    Local paths are left for :func:`~explicit_audit.reading.sources.find_sources`.
    """
    out: list = []
    unnamed = 0
    for item in items:
        if is_stream(item):
            name = getattr(item, "name", None)
            if not isinstance(name, str) or not name or name.startswith("<"):
                unnamed += 1
                name = f"<file object {unnamed}>"
            handle = (
                item.buffer if isinstance(item, io.TextIOBase) and hasattr(item, "buffer") else item
            )
            out.append(RemoteFile(name, handle=handle))
        elif item == STDIN:
            out.append(RemoteFile("<stdin>", handle=sys.stdin.buffer))
        elif is_url(item) and _scheme(item) != "file":
            out.extend(RemoteFile(url, url=url) for url in expand_url(item))
        else:
            out.append(item)
    return out


def _looks_like_lines(head: bytes) -> bool:
    """Whether a stream without a name holds JSON Lines: its first line is a whole object."""
    if head.startswith(_GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 1 << 16)
        except zlib.error:
            return True
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    return first.startswith(b"{") and first.endswith(b"}")


@dataclass
class StreamReader(FileReader):
    """Reads a :class:`RemoteFile` as :class:`FileReader` reads a local file, hashing it.

    Call :meth:`start` before iterating (it reads the head, which decides
    JSON Lines or ``.json`` for a stream without a name). After iterating,
    ``bytes_read`` and ``sha256`` are the size and digest of every byte of
    the file (what the pipeline left unread, past a limit, is read to hash).
    """

    remote: RemoteFile | None = None
    bytes_read: int = 0
    sha256: str = ""
    #: Whether to read (and hash) what the pipeline leaves unread; not for a file's head.
    hash_all: bool = True
    _source: Any = None

    def start(self) -> StreamReader:
        """Open the file and read its head; a file that cannot be opened is a problem."""
        try:
            handle = self.remote.open()
            tap = _Tap(handle)
            head = tap.read(_READ_BYTES)
        except Exception as exc:  # fsspec's and the network's errors are not all OSError
            self._cannot_open(exc)
            self.sha256 = hashlib.sha256().hexdigest()
            return self
        tap.unread(head)
        self._source = (tap, handle)
        if suffix_of(self.remote.name):
            self.jsonl = is_jsonl_name(self.remote.name)
        else:
            self.jsonl = _looks_like_lines(head)
        return self

    def _cannot_open(self, exc: Exception) -> None:
        reason = getattr(exc, "strerror", None) or f"{type(exc).__name__}: {exc}"
        self.problems.append(Rejection(self.name, 0, "file", f"cannot read: {reason}", ""))

    def _raw_chunks(self) -> Iterator[bytes]:
        # The same tap as a local file's: every byte hashed once as it is read,
        # and counted for progress as it is handed on (gzip: as stored).
        if self._source is None:
            return
        tap, handle = self._source
        failed = False
        try:
            if is_gzip_name(self.remote.name) or tap.pushed[:2] == _GZIP_MAGIC:
                yield from self._gunzip(tap)
                return
            while True:
                try:
                    chunk = tap.read(_READ_BYTES)
                except Exception as exc:
                    failed = True
                    self._cannot_open(exc)
                    return
                if not chunk:
                    return
                if self.on_bytes is not None:
                    self.on_bytes(len(chunk))
                yield chunk
        finally:
            if not failed and self.hash_all:
                try:
                    tap.digest()  # what the pipeline left unread, read into the hash
                except Exception as exc:
                    self._cannot_open(exc)
            self.bytes_read, self.sha256 = tap.size, tap.hash.hexdigest()
            if self.remote.handle is None:
                handle.close()


def read_remote(source: Any, kinds, *, progress: bool, keep=None, limits=None):
    """Read a source that names URLs, file objects or ``-``, local paths among them.

    As :func:`~explicit_audit.reading.collect.read_all` reads local paths, in
    the order given; each file that is not a local path is read through a
    :class:`StreamReader` and its size and SHA-256 recorded in
    ``Reading.digests``. A YAML policy that is not a local file is one
    file-level rejection: policies are read from local files.

    Returns
    -------
    Reading
    """
    entries: list = []
    problems: list = []
    for item in expand_remote(source_items(source)):
        if isinstance(item, RemoteFile):
            entries.append(item)
            continue
        files, found_problems = find_sources(item)
        entries.extend(files)
        problems.extend(found_problems)
    names = [e.name if isinstance(e, RemoteFile) else display_name(e) for e in entries]
    reading = Reading(names + [p.source_file for p in problems], [], limits or Limits())
    for problem in problems:
        reading.reject(problem)
    data = [e for e in entries if not e.name.lower().endswith(POLICY_SUFFIXES)]
    with byte_progress(data, progress) as advance:
        advance = relayed(advance, reading.limits)
        for entry in entries:
            if isinstance(entry, RemoteFile):
                if entry.is_policy:
                    reading.reject(_policy_problem(entry))
                    continue
                reader = StreamReader(
                    None, reading.limits, name=entry.name, remote=entry, on_bytes=advance
                )
                read_with(reading, reader.start(), kinds, keep)
                reading.digests[entry.name] = FileDigest(reader.bytes_read, reader.sha256)
            elif entry.name.lower().endswith(POLICY_SUFFIXES):
                reading.policy_files.append(entry)
            else:
                read_with(reading, FileReader(entry, reading.limits, on_bytes=advance), kinds, keep)
    reading.count_policy_files()
    return reading


def _policy_problem(remote: RemoteFile):
    return Rejection(
        remote.name,
        0,
        "file",
        "a routing policy is read from a local file only: not read (copy it beside the logs, "
        "or load it with ea.load_policy)",
        "",
    )


def list_remote(source: Any):
    """The :class:`~explicit_audit.reading.collect.Listing` of a source naming URLs.

    A URL's files are :class:`RemoteFile` entries of ``data_files``, for the
    Dask engine, whose workers read each by its URL.

    Raises
    ------
    AuditError
        For a file object or ``-``: a worker cannot read the caller's stream.
    """
    data: list = []
    policies: list = []
    problems: list = []
    for item in expand_remote(source_items(source)):
        if isinstance(item, RemoteFile):
            if item.url is None:
                raise AuditError(
                    f"{item.name}: engine='dask' reads its partitions by path or URL, and a "
                    "file object or standard input cannot be read again by a worker; load it "
                    "with the pandas engine, or name a file or URL"
                )
            if item.is_policy:
                problems.append(_policy_problem(item))
            else:
                data.append(item)
            continue
        files, found = find_sources(item)
        problems.extend(found)
        for path in files:
            (policies if path.name.lower().endswith(POLICY_SUFFIXES) else data).append(path)
    names = [e.name if isinstance(e, RemoteFile) else display_name(e) for e in data + policies]
    return Listing(policies, data, problems, names + [p.source_file for p in problems])


def read_url(url: str, name: str, kinds, *, keep=None, limits=None, whole: bool = True):
    """Read the file at ``url`` as :func:`~explicit_audit.reading.reader.read_file` reads a
    local one (a Dask partition, by its URL); ``whole=False`` for its head only."""
    reading = Reading([name], [], limits or Limits())
    remote = RemoteFile(name, url=url)
    reader = StreamReader(None, reading.limits, name=name, remote=remote, hash_all=whole)
    read_with(reading, reader.start(), kinds, keep)
    if whole:
        reading.digests[name] = FileDigest(reader.bytes_read, reader.sha256)
    return reading


def url_digest(url: str) -> tuple[int, str]:
    """Size and SHA-256 of the file at ``url``, read once.

    Raises
    ------
    OSError
        When it cannot be read (a network or file system error is given as one).
    """
    try:
        handle = RemoteFile(url, url=url).open()
        try:
            return tuple(_Tap(handle).digest())
        finally:
            handle.close()
    except OSError:
        raise
    except Exception as exc:
        raise OSError(f"{type(exc).__name__}: {exc}") from None
