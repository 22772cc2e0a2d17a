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

A URL is read within the load's limits, and opened with the ``storage_options``
given (credentials, client options: fsspec's): :mod:`.remote_open`. Over HTTP(S)
each URL is opened once before the load, so that a URL the server refuses (an
error status, a redirect off its host, a folder's HTML listing, no connection)
is an :class:`~explicit_audit.errors.AuditError` that says why.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import select
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from .._core.extras import require
from .._core.records import Rejection
from ..errors import AuditError
from .ahead import relayed
from .collect import Listing, Reading, read_files, read_listed, read_with
from .digests import FileDigest, _Tap
from .limits import DEFAULT_LIMITS, Limits
from .names import STDIN_NAME, display_name
from .remote_open import BoundedStream, RemoteError, StreamReader, open_url
from .sources import is_policy_name, scan_sources, suffix_of

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
    return url2pathname(parts.path)  # which undoes the URL's %-escapes, once


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
    options : dict
        fsspec's storage options for the URL (credentials, client options).
    """

    name: str
    url: str | None = None
    handle: Any = field(default=None, compare=False)
    options: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_policy(self) -> bool:
        """Whether the file is a YAML policy, by its name."""
        return is_policy_name(self.name)

    def open(self, limits: Limits = DEFAULT_LIMITS) -> BoundedStream:
        """A binary stream of at most ``max_file_bytes`` bytes of the file.

        A URL is opened within ``limits`` (:func:`.remote_open.open_url`); a
        file object is read as it stands, untimed, and left open.

        Raises
        ------
        OSError
            When the URL cannot be opened, naming why.
        """
        if self.handle is None:
            return open_url(self.url, limits, self.options)
        stream = BoundedStream(_waiting(self.handle), lambda: None, limits, timed=False)
        # A file's size when opened bounds the read, as for a path (a log still written):
        # a file's own bytes only, not those a decompressing object (gzip.open, bz2.open,
        # lzma.open) makes of the file it reads, which are more.
        if isinstance(getattr(self.handle, "raw", self.handle), io.FileIO):
            stream.fileno = self.handle.fileno
        return stream


def _waiting(handle) -> Callable[[int], bytes]:
    """``handle.read``, waiting while a non-blocking file has nothing yet, as a blocking one does.

    A pipe is made non-blocking by any process sharing it; read faster than it is
    written, it then has nothing now and then (None, or BlockingIOError), which is
    not its end.
    """

    def read(size: int) -> bytes:
        while True:
            try:
                data = handle.read(size)
            except BlockingIOError:
                data = None
            if data is not None:
                return data
            select.select([handle], [], [])

    return read


def _require(url: str) -> None:
    what = f"reading {_scheme(url)}:// URLs"
    modules = ("fsspec", "aiohttp") if _scheme(url) in ("http", "https") else ("fsspec",)
    require("remote", what, modules)


def _filesystem(url: str, options: dict):
    _require(url)
    import fsspec

    try:
        return fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:
        # A scheme whose library is not installed (s3fs, gcsfs): fsspec names it.
        raise AuditError(f"{url}: {exc}") from None
    except (ValueError, OSError) as exc:
        raise AuditError(f"{url}: cannot be read ({exc})") from None


def _is_hidden(path: str, root: str) -> bool:
    relative = path[len(root) :].strip("/")
    return any(part.startswith(".") for part in relative.split("/") if part)


def expand_url(url: str, options: dict | None = None, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The files a URL names: itself, the files below it, or those a glob matches.

    ``options`` are fsspec's storage options. An HTTP(S) URL is one file: it
    is opened (within ``limits``) and closed, so that what the server answers
    instead of a file is an error saying what.

    Raises
    ------
    AuditError
        When it names nothing readable, or its file system cannot be used.
    """
    options = options or {}
    if _scheme(url) in ("http", "https"):
        # A web server has no folders to list: the URL is one file.
        _require(url)
        try:
            open_url(url, limits, options).close()
        except OSError as exc:
            raise AuditError(f"{url}: {exc.strerror or exc}") from None
        return [url]
    fs, path = _filesystem(url, options)
    try:
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


def expand_remote(
    items: list, options: dict | None = None, limits: Limits = DEFAULT_LIMITS
) -> list[RemoteFile | str | os.PathLike]:
    """Each URL as the files it names, each file object or ``-`` as a :class:`RemoteFile`.

    Local paths are left for :func:`~explicit_audit.reading.sources.scan_sources`;
    ``options`` (fsspec's storage options) go with each URL.
    """
    options = options or {}
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
            out.append(RemoteFile(STDIN_NAME, handle=sys.stdin.buffer))
        elif is_url(item) and _scheme(item) != "file":
            found = expand_url(item, options, limits)
            out.extend(RemoteFile(url, url=url, options=options) for url in found)
        else:
            out.append(item)
    return out


def read_remote(
    source: Any, kinds, *, progress: bool, keep=None, limits=None, storage_options=None
):
    """Read a source that names URLs, file objects or ``-``, local paths among them.

    As :func:`~explicit_audit.reading.collect.read_all` reads local paths, in
    the order given (:func:`list_remote`); each file that is not a local path
    is read through a :class:`StreamReader` and its size and SHA-256 recorded
    in ``Reading.digests``. Each URL is opened with ``storage_options``
    (fsspec's).

    Returns
    -------
    Reading
    """
    limits = limits or Limits()
    listing = list_remote(source, limits, storage_options=storage_options, streams=True)
    return read_listed(listing, kinds, progress=progress, keep=keep, limits=limits, read=_read)


def _read(reading: Reading, entries: list, kinds, keep, *, on_bytes=None) -> None:
    """Read ``entries`` in order: a :class:`RemoteFile` as a stream, runs of local paths
    as :func:`~explicit_audit.reading.collect.read_files` reads them."""
    on_bytes = relayed(on_bytes, reading.limits)
    for remote, run in itertools.groupby(entries, key=lambda e: isinstance(e, RemoteFile)):
        if not remote:
            read_files(reading, list(run), kinds, keep, on_bytes=on_bytes)
            continue
        for entry in run:
            reader = StreamReader(
                None, reading.limits, name=entry.name, remote=entry, on_bytes=on_bytes
            )
            read_with(reading, reader.start(), kinds, keep)
            reading.digests[entry.name] = FileDigest(reader.bytes_read, reader.sha256)


def _policy_problem(remote: RemoteFile):
    return Rejection(
        remote.name,
        0,
        "file",
        "a routing policy is read from a local file only: not read (copy it beside the logs, "
        "or load it with ea.load_policy)",
        "",
    )


def list_remote(
    source: Any,
    limits: Limits = DEFAULT_LIMITS,
    *,
    storage_options: dict | None = None,
    streams: bool = False,
) -> Listing:
    """The :class:`~explicit_audit.reading.collect.Listing` of a source naming URLs.

    A URL's files, a file object and ``-`` are :class:`RemoteFile` entries of
    ``data_files`` (each URL opened with ``storage_options``, fsspec's); a
    local path is listed as :func:`~explicit_audit.reading.sources.scan_sources`
    lists it. A YAML policy that is not a local file is a file-level problem:
    policies are read from local files.

    Raises
    ------
    AuditError
        For a file object or ``-`` unless ``streams``: the Dask engine's workers
        read each file by its path or URL, and cannot read the caller's stream.
    """
    data: list = []
    policies: list = []
    problems: list = []
    skipped: list = []
    # Every file in the order given, as tables name them; then what could not be listed.
    names: list[str] = []
    seen: set[str] = set()  # the names listed: a name given twice is read once
    unlisted: list = []
    for item in expand_remote(source_items(source), storage_options, limits):
        if isinstance(item, RemoteFile):
            if item.name in seen:
                continue  # a URL given twice, or a file object named as a file read
            seen.add(item.name)
            if item.url is None and not streams:
                raise AuditError(
                    f"{item.name}: engine='dask' reads its partitions by path or URL, and a "
                    "file object or standard input cannot be read again by a worker; load it "
                    "with the pandas engine, or name a file or URL"
                )
            names.append(item.name)
            if item.is_policy:
                problems.append(_policy_problem(item))
            else:
                data.append(item)
            continue
        scan = scan_sources(item)
        unlisted.extend(scan.problems)
        skipped.extend((display_name(path), why) for path, why in scan.skipped)
        for path in scan.files:
            name = display_name(path)
            if name in seen:
                continue
            seen.add(name)
            names.append(name)
            (policies if is_policy_name(path) else data).append(path)
    problems.extend(unlisted)
    return Listing(policies, data, problems, names + [p.source_file for p in unlisted], skipped)


def read_url(url: str, name: str, kinds, *, keep=None, limits=None, whole: bool = True):
    """Read the file at ``url`` as :func:`~explicit_audit.reading.reader.read_file` reads a
    local one (a Dask partition, by its URL); ``whole=False`` for its head only.
    """
    reading = Reading([name], [], limits or Limits())
    remote = RemoteFile(name, url=url)
    reader = StreamReader(None, reading.limits, name=name, remote=remote, hash_whole=whole)
    read_with(reading, reader.start(), kinds, keep)
    if whole:
        reading.digests[name] = FileDigest(reader.bytes_read, reader.sha256)
    return reading


def url_digest(url: str, limits: Limits = DEFAULT_LIMITS) -> tuple[int, str]:
    """Size and SHA-256 of the file at ``url``, read once, within ``limits``.

    Raises
    ------
    OSError
        When it cannot be read, or holds more than ``max_file_bytes`` bytes.
    """
    handle = RemoteFile(url, url=url).open(limits)
    try:
        digest = _Tap(handle).digest()
    finally:
        handle.close()
    if handle.cut_off:
        raise RemoteError(f"more than max_file_bytes ({limits.max_file_bytes} bytes) sent")
    return tuple(digest)
