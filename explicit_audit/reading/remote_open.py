"""A file at a URL opened and read within the load's limits.

What a local file's size bounds, a server's answer does not: a body may never
end, a ``Content-Encoding: gzip`` body may expand a thousand times, a server
may stall after its headers or redirect elsewhere. Every URL is therefore read
through a :class:`BoundedStream`:

- at most ``max_file_bytes`` bytes are taken from the server, as sent; past
  them the stream ends and :attr:`BoundedStream.cut_off` says that more was
  sent (the SHA-256 covers the bytes taken, no more);
- a ``Content-Encoding: gzip`` body is read as sent (the client does not
  decompress it): the reader decompresses it as it does a local ``.gz`` file,
  under ``max_file_bytes`` and ``max_gzip_ratio``, and the SHA-256 is that of
  the compressed bytes. Any other content coding is refused;
- ``total_timeout`` bounds the whole read; over HTTP(S), ``connect_timeout``
  the connection and ``idle_timeout`` each wait for bytes (the other file
  systems use their own library's timeouts, set through ``storage_options``);
- over HTTP(S), a redirect is followed only on the URL's own scheme and host;
  an HTTP error status and an HTML page (a folder's listing) are refused.

Whatever goes wrong is a :class:`RemoteError` (an ``OSError``) whose message
names it: the timeout and its limit, the status, the redirect's target, a
refused connection, a host name that does not resolve. :class:`StreamReader`
reads such a stream (or a caller's file object, within ``max_file_bytes`` but
untimed) as :class:`~explicit_audit.reading.content.FileReader` reads a local
file.
"""

from __future__ import annotations

import hashlib
import socket
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from .._core.records import Rejection, excerpt
from .content import FileReader
from .digests import READ_BYTES, _Tap
from .limits import Limits
from .sources import is_gzip_name, is_jsonl_name, suffix_of
from .streams import GZIP_MAGIC, cannot_read, gunzip, read_chunks

__all__ = ["BoundedStream", "RemoteError", "StreamReader", "open_url"]

_HTTP = ("http", "https")
_REDIRECTS = 10
_REDIRECT_STATUS = (301, 302, 303, 307, 308)
_CODINGS = ("", "identity", "gzip", "x-gzip")


class RemoteError(OSError):
    """A URL that cannot be read, with the reason as its ``strerror``."""

    def __init__(self, reason: str) -> None:
        super().__init__(None, reason)


class BoundedStream:
    """A binary stream of a URL's bytes, at most ``max_file_bytes`` of them, timed.

    Parameters
    ----------
    read : callable
        Takes a size, gives up to that many bytes (b"" at the end).
    close : callable
    limits : Limits
    timed : bool
        Whether ``total_timeout`` applies (not to a caller's own file object).

    Attributes
    ----------
    cut_off : bool
        Whether the server had more than ``max_file_bytes`` bytes to send.
    coded : bool
        Whether the server compressed the file for the transfer (``Content-Encoding: gzip``).
    """

    def __init__(
        self,
        read: Callable[[int], bytes],
        close: Callable[[], None],
        limits: Limits,
        timed: bool = True,
    ) -> None:
        self._read, self._close = read, close
        self.limits = limits
        self.left = limits.max_file_bytes
        self.deadline = time.monotonic() + limits.total_timeout if timed else None
        self.cut_off = False
        self.coded = False

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left within the bound for -1)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RemoteError(_timed_out("total", self.limits.total_timeout))
        if self.left <= 0:
            self.cut_off = self.cut_off or bool(self._guarded(1))
            return b""
        size = self.left if size is None or size < 0 else min(size, self.left)
        data = self._guarded(size)
        self.left -= len(data)
        return data

    def _guarded(self, size: int) -> bytes:
        try:
            return self._read(size)
        except OSError:
            raise
        except Exception as exc:  # a file system's own errors are not all OSError
            raise RemoteError(f"{type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        """Close the connection (what the server still sends is not read)."""
        self._close()


def open_url(url: str, limits: Limits, options: dict[str, Any]) -> BoundedStream:
    """Open ``url`` for reading within ``limits``; ``options`` are fsspec's storage options.

    Raises
    ------
    RemoteError
        When the server's answer is not a file to read, or it cannot be reached.
    """
    if urlsplit(url).scheme.lower() in _HTTP:
        return _open_http(url, limits, options)
    import fsspec

    try:
        handle = fsspec.open(url, "rb", **options).open()
    except OSError:
        raise
    except Exception as exc:  # as above: fsspec's and its libraries' errors
        raise RemoteError(f"{type(exc).__name__}: {exc}") from None
    return BoundedStream(handle.read, handle.close, limits)


def _open_http(url: str, limits: Limits, options: dict[str, Any]) -> BoundedStream:
    import aiohttp
    import fsspec
    from fsspec.asyn import sync

    # The body is read as sent: a gzip coding is decompressed by the reader, under its limits.
    client = {**options.get("client_kwargs", {}), "auto_decompress": False}
    fs = fsspec.filesystem(urlsplit(url).scheme.lower(), **{**options, "client_kwargs": client})
    session = sync(fs.loop, fs.set_session)
    request = dict(fs.kwargs)
    headers = {"Accept-Encoding": "gzip", **request.pop("headers", {})}
    timeout = aiohttp.ClientTimeout(
        total=limits.total_timeout,
        sock_connect=limits.connect_timeout,
        sock_read=limits.idle_timeout,
    )

    async def get():
        current = url
        for _ in range(_REDIRECTS + 1):
            response = await session.get(
                fs.encode_url(current),
                headers=headers,
                timeout=timeout,
                allow_redirects=False,
                **request,
            )
            if response.status not in _REDIRECT_STATUS or "Location" not in response.headers:
                return response
            target = urljoin(current, response.headers["Location"])
            response.release()
            if _origin(target) != _origin(url):
                raise RemoteError(
                    f"the server redirects to {target}, off the URL's scheme or host: not followed"
                )
            current = target
        raise RemoteError(f"the server redirects more than {_REDIRECTS} times: not followed")

    response = sync(fs.loop, _named, get(), limits)
    try:
        _check(response)
    except RemoteError:
        sync(fs.loop, _closed, response)
        raise
    stream = BoundedStream(
        lambda size: sync(fs.loop, _named, _body(response.content, size), limits),
        lambda: sync(fs.loop, _closed, response),
        limits,
    )
    coding = response.headers.get("Content-Encoding", "").strip().lower()
    stream.coded = coding in ("gzip", "x-gzip")
    return stream


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(scheme)


def _check(response) -> None:
    """Refuse an answer that is not a file's bytes: an error status, a page, a coding."""
    status = response.status
    reason = f"{status} {response.reason or ''}".strip()
    if status in (404, 410):
        raise RemoteError(f"no such file (the server answers {reason})")
    if status in (401, 403):
        raise RemoteError(
            f"access refused (the server answers {reason}); credentials go in storage_options"
        )
    if status >= 300:
        raise RemoteError(f"the server answers {reason}")
    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml"):
        raise RemoteError(
            "the server answers with an HTML page (a folder's listing?), not a log: "
            "name each file's URL"
        )
    coding = response.headers.get("Content-Encoding", "").strip().lower()
    if coding not in _CODINGS:
        raise RemoteError(
            f"the server sends Content-Encoding {coding!r}, which is not read (gzip or none)"
        )


async def _body(content, size: int) -> bytes:
    """Up to ``size`` bytes of a body; those that arrived before it broke off come first.

    aiohttp raises a transfer's break at the next read, before the bytes it
    had already received: read after the break, its buffer would be lost, a
    varying share of the file by when the break came. They are taken first
    (its ``_read_nowait``); the break is raised at the read after them.
    """
    import aiohttp

    try:
        return await content.read(size)
    except aiohttp.ClientPayloadError:
        received = getattr(content, "_read_nowait", None)
        data = received(size) if received is not None else b""
        if data:
            return data
        raise


async def _closed(response) -> None:
    response.close()


async def _named(awaitable, limits: Limits):
    """``awaitable``'s result; its failure as a :class:`RemoteError` that names it."""
    import aiohttp

    # Older aiohttp (before 3.10) does not tell the connect and idle timeouts apart.
    connect = getattr(aiohttp, "ConnectionTimeoutError", ())
    idle = getattr(aiohttp, "SocketTimeoutError", ())
    try:
        return await awaitable
    except RemoteError:
        raise
    except connect:
        raise RemoteError(_timed_out("connect", limits.connect_timeout)) from None
    except idle:
        raise RemoteError(_timed_out("idle", limits.idle_timeout)) from None
    except TimeoutError:
        raise RemoteError(_timed_out("total", limits.total_timeout)) from None
    except aiohttp.ClientConnectorError as exc:
        raise RemoteError(_unreachable(exc)) from None
    except aiohttp.ServerDisconnectedError:
        raise RemoteError("the server closed the connection before the end") from None
    except aiohttp.ClientPayloadError as exc:
        raise RemoteError(f"the transfer broke off ({exc})") from None
    except aiohttp.ClientError as exc:
        # Its text may quote what the server sent (a body after its headers): an excerpt.
        raise RemoteError(
            f"{type(exc).__name__}: {excerpt(str(exc), limits.excerpt_chars)}"
        ) from None


def _timed_out(which: str, seconds: int) -> str:
    what = {
        "connect": "no connection to the server",
        "idle": "the server sent nothing",
        "total": "the file was not read whole",
    }[which]
    return f"{what} within {which}_timeout ({seconds} s)"


def _unreachable(exc) -> str:
    where = f"{exc.host}:{exc.port}"
    if isinstance(exc.os_error, socket.gaierror):
        return f"the host name {exc.host} is not found (DNS: {exc.os_error.strerror})"
    if isinstance(exc.os_error, ConnectionRefusedError):
        return f"the server at {where} refuses the connection"
    return f"cannot connect to {where} ({exc.os_error.strerror or exc.os_error})"


def _looks_like_lines(head: bytes) -> bool:
    """Whether a stream without a name holds JSON Lines: its first line is a whole object."""
    if head.startswith(GZIP_MAGIC):
        try:
            head = zlib.decompressobj(wbits=31).decompress(head, 1 << 16)
        except zlib.error:
            return True
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    return first.startswith(b"{") and first.endswith(b"}")


def _line_ended(head: bytes) -> bool:
    """Whether the head holds its first line whole (white space first aside); a gzip head,
    whose lines are compressed, is judged by what it holds."""
    return head.startswith(GZIP_MAGIC) or b"\n" in head.lstrip(b"\xef\xbb\xbf \t\r\n")


@dataclass
class StreamReader(FileReader):
    """Reads a :class:`~explicit_audit.reading.remote.RemoteFile` as a local file is read.

    As :class:`FileReader` reads a file, hashing its bytes as they are read.

    Call :meth:`start` before iterating (it reads the head, which decides
    JSON Lines or ``.json`` for a stream without a name). After iterating,
    ``bytes_read`` and ``sha256`` are the size and digest of every byte of
    the file, up to ``max_file_bytes`` of them (what the pipeline left
    unread, past a limit, is read to hash, unless ``hash_whole`` is False).
    """

    remote: Any = None  # a RemoteFile
    bytes_read: int = 0
    sha256: str = hashlib.sha256().hexdigest()

    def start(self) -> StreamReader:
        """Open the file and read its head; a file that cannot be opened is a problem."""
        try:
            tap = _Tap(self.remote.open(self.limits))
        except OSError as exc:
            self._stopped(cannot_read(exc))
            return self
        named = bool(suffix_of(self.remote.name))
        try:
            head = tap.read(READ_BYTES)
            # A stream judged by its head gives what it has (a pipe, its writer's first
            # write): the head is read on until its first line is whole, or there is no more.
            while not named and head and len(head) < READ_BYTES and not _line_ended(head):
                more = tap.read(READ_BYTES - len(head))
                if not more:
                    break
                head += more
        except OSError as exc:
            tap.handle.close()
            self._stopped(cannot_read(exc))
            return self
        tap.unread(head)
        self._tap = tap
        self.jsonl = is_jsonl_name(self.remote.name) if named else _looks_like_lines(head)
        return self

    def _raw_chunks(self) -> Iterator[bytes]:
        # The same tap as a local file's: every byte hashed once as it is read,
        # and counted for progress as it is handed on (gzip: as stored).
        tap = self._tap
        if tap is None:
            return
        if getattr(tap.handle, "coded", False) and is_gzip_name(self.remote.name):
            # A gzip file the server compressed again for the transfer: both layers undone,
            # the file's own under the limits as a local one's is.
            stop = yield from gunzip(_Joined(self._gunzip(tap)), self.limits.max_gzip_ratio, _none)
            if stop is not None:
                self._stopped(stop)
            return
        if is_gzip_name(self.remote.name) or tap.pushed[:2] == GZIP_MAGIC:
            yield from self._gunzip(tap)
            return
        failure = yield from read_chunks(tap, self._advance)
        if failure is not None:
            self._stopped(cannot_read(failure))

    def _seal(self, finished: bool) -> None:
        tap = self._tap
        super()._seal(finished)  # the rest read into the hash, the stream closed
        if tap is None:
            return
        self.bytes_read, self.sha256 = tap.size, tap.hash.hexdigest()
        if tap.handle.cut_off:
            bound = self.limits.max_file_bytes
            self.problems.append(
                Rejection(
                    self.name,
                    0,
                    "file",
                    f"more than max_file_bytes ({bound} bytes) sent: the rest is not read, "
                    f"and the SHA-256 is that of the first {bound} bytes",
                    "",
                )
            )


def _none(_: int) -> None:
    """No progress to count: the bytes were counted as they came."""


class _Joined:
    """``read(size)`` over chunks of bytes, as :func:`.streams.gunzip` reads a file."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks, self._left = chunks, b""

    def read(self, size: int) -> bytes:
        while len(self._left) < size:
            more = next(self._chunks, None)
            if more is None:
                break
            self._left += more
        data, self._left = self._left[:size], self._left[size:]
        return data
