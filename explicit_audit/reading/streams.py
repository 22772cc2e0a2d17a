"""A file's stream of bytes, decompressed as it is read and kept within its bounds.

Each generator here hands over chunks of bytes and, when it ends, returns
why it stopped before the end of its stream (a :class:`Stop`), or None: a
reader turns that reason into a file-level rejection, having handed over
every byte that could be read before it. Nothing here raises for what a file
holds: an unreadable file, a damaged or truncated gzip stream, a gzip bomb
(``max_gzip_ratio``) and a file larger than ``max_file_bytes`` are reasons.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Generator, Iterable
from typing import NamedTuple

from . import digests
from .sources import CANNOT_READ

__all__ = [
    "GZIP_RATIO_FLOOR",
    "Bounded",
    "Stop",
    "cannot_read",
    "gunzip",
    "gzip_at",
    "read_chunks",
    "salvage",
    "within",
]

#: Decompressed bytes a gzip stream may produce before max_gzip_ratio is checked:
#: a small file that expands a lot costs little, a bomb is stopped early.
GZIP_RATIO_FLOOR = 64 << 20
#: Compressed bytes read at a time.
_GZIP_INPUT = 1 << 16

#: What a stream hands over, then why it stopped early (None: it was read to its end).
Chunks = Generator[bytes, None, "Stop | None"]


class Stop(NamedTuple):
    """Why a stream ended early: the reason of its file-level rejection.

    Attributes
    ----------
    reason : str
    cut : bool
        Whether damage cut the content short (the value it ends in may be cut).
    """

    reason: str
    cut: bool = False


#: The two bytes every gzip member opens with.
GZIP_MAGIC = b"\x1f\x8b"


def cannot_read(exc: OSError) -> Stop:
    """The stop of a read the system refused (:data:`.sources.CANNOT_READ`)."""
    return Stop(f"{CANNOT_READ}{exc.strerror or exc}")


def read_chunks(source, on_bytes: Callable[[int], None]) -> Generator[bytes, None, OSError | None]:
    """The bytes of ``source`` (anything with ``read(size)``), chunk by chunk, as read.

    Each chunk's size is given to ``on_bytes`` (the progress bar). Returns
    the ``OSError`` that stopped the reading, or None at the end.
    """
    while True:
        try:
            chunk = source.read(digests.READ_BYTES)
        except OSError as exc:
            return exc
        if not chunk:
            return None
        on_bytes(len(chunk))
        yield chunk


def within(chunks: Iterable[bytes], limit: int, used: int = 0) -> Chunks:
    """The first ``limit`` bytes of ``chunks``; past them, a stop naming ``max_file_bytes``.

    ``used``: the file's bytes before ``chunks`` (the gzip members audited
    before those appended), which count towards ``limit`` as a whole read counts them.
    """
    budget = max(limit - used, 0)
    for chunk in chunks:
        if len(chunk) > budget:
            yield chunk[:budget]
            return Stop(
                f"the file is larger than max_file_bytes ({limit} bytes, after decompression): "
                "the rest is not read"
            )
        budget -= len(chunk)
        yield chunk
    return None


def gunzip(
    source, ratio: int, on_bytes: Callable[[int], None], before: tuple[int, int] = (0, 0)
) -> Chunks:
    """Every gzip member of ``source``, decompressed as read; damage keeps all output before it.

    Parameters
    ----------
    source
        The compressed bytes: anything with ``read(size)`` (a file's tap).
    ratio : int
        ``max_gzip_ratio``: past :data:`GZIP_RATIO_FLOOR` decompressed bytes,
        a stream that has expanded more than this is read no further.
    on_bytes : callable
        Given each compressed read's size (the progress bar).
    before : (int, int)
        The compressed and decompressed bytes of the members before ``source``
        in its file (those audited before the ones appended): the ratio and the
        words of a stop are those of a read of the whole file.
    """
    decompressor = None
    compressed, total = before
    members = 1 if compressed else 0
    member_output = 0
    # Reads on the grid of a whole read (from the file's start), so that the members
    # after ``before`` are fed, and stopped, as a whole read feeds and stops them.
    size = _GZIP_INPUT - compressed % _GZIP_INPUT
    pending = b""
    while True:
        if not pending:
            try:
                pending, size = source.read(size), _GZIP_INPUT
            except OSError as exc:
                return cannot_read(exc)
            if not pending:
                break
            compressed += len(pending)
            on_bytes(len(pending))
        if decompressor is None:
            if not pending.strip(b"\0"):  # gzip tools allow zero padding at the end
                pending = b""
                continue
            decompressor = zlib.decompressobj(wbits=31)
            members += 1
            member_output = 0
        before = decompressor.copy()
        try:
            output = decompressor.decompress(pending, digests.READ_BYTES)
        except zlib.error as exc:
            salvaged = list(salvage(before, pending))
            yield from salvaged
            fresh = member_output == 0 and not any(salvaged)
            if members == 1 and total == 0 and fresh:
                what = "not a readable gzip file"
            elif fresh:
                what = "the bytes after the last gzip member are not gzip"
            else:
                what = "gzip data is damaged"
            return Stop(f"{what} ({exc}): the rest is lost", cut=True)
        if output:
            total += len(output)
            member_output += len(output)
            yield output
            if total > GZIP_RATIO_FLOOR and total > ratio * compressed:
                return Stop(
                    f"the gzip stream expands {total // compressed} times (to {total} bytes "
                    f"from {compressed}), more than max_gzip_ratio ({ratio}): the rest is not read"
                )
        if decompressor.eof:
            # What follows the member is its unused data. Where an output bound held back
            # input, CPython leaves those bytes in unconsumed_tail as well: taken once.
            pending = decompressor.unused_data
            decompressor = None
        else:
            pending = decompressor.unconsumed_tail
    if decompressor is None:
        return None
    try:
        tail = decompressor.flush()
    except zlib.error:
        tail = b""
    if tail:
        yield tail
    return Stop("gzip stream is truncated: the rest is lost", cut=True)


def salvage(decompressor, data: bytes) -> Generator[bytes, None, None]:
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


class Bounded:
    """The first ``left`` bytes of a file handle, read as a file is (``read(size)``)."""

    def __init__(self, handle, left: int) -> None:
        self.handle, self.left = handle, left

    def read(self, size: int) -> bytes:
        data = self.handle.read(min(size, self.left)) if self.left > 0 else b""
        self.left -= len(data)
        return data


def gzip_at(path, offset: int = 0) -> bool:
    """Whether the bytes of the file ``path`` at ``offset`` open a gzip member
    (:data:`GZIP_MAGIC`); False where they cannot be read."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return handle.read(2) == GZIP_MAGIC
    except OSError:
        return False
