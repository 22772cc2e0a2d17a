"""The partitions of a partitioned load: which bytes of which file each one reads.

A partition is one file, or one line-aligned byte range of a large plain JSON
Lines file (:mod:`explicit_audit._core.byte_ranges`). Gzip files, ``.json``
files (values one after another may span lines) and files past
``max_file_bytes`` are one partition each, read exactly as the in-memory
engine reads them. Every partition is read by the same pipeline as a whole
file, so it loads the same rows with the same line numbers.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .._core.byte_ranges import nominal_ranges, read_range
from .._core.collect import Reading, read_bytes, read_file
from .._core.limits import Limits
from .._core.records import RecordKind, Rejection
from .._core.remote import RemoteFile, read_url
from .._core.sources import display_name, is_gzip_name, is_jsonl_name

__all__ = [
    "DEFAULT_BLOCKSIZE",
    "DEFAULT_SAMPLE_BYTES",
    "Part",
    "plan_parts",
    "read_part",
    "sample_limits",
]

#: Bytes per partition of a large JSON Lines file (``blocksize=``).
DEFAULT_BLOCKSIZE = 64 << 20

#: Bytes of each file's head read to learn the tables' columns (``sample_bytes=``).
DEFAULT_SAMPLE_BYTES = 1 << 20

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Part:
    """One partition: a whole file (``start is None``) or a nominal byte range of it.

    ``path`` is absolute, so that a worker whose working folder is not the
    caller's (a cluster's, a notebook kernel's) reads the same file; ``name``
    is the path as the caller gave it, as the tables show it.
    """

    path: Path | None
    name: str
    start: int | None = None
    stop: int | None = None
    #: A file read by URL (fsspec): the worker opens the URL, as the caller named it.
    url: str | None = None

    @property
    def whole(self) -> bool:
        """Whether the partition is the whole file."""
        return self.start is None


def _splittable(path: Path, size: int, blocksize: int, limits: Limits) -> bool:
    if size <= blocksize or size > limits.max_file_bytes:
        return False
    if not is_jsonl_name(path) or is_gzip_name(path):
        return False
    try:
        with open(path, "rb") as handle:
            return handle.read(2) != _GZIP_MAGIC
    except OSError:
        return False


def plan_parts(files: Sequence[Path], *, blocksize: int, limits: Limits) -> list[Part]:
    """The partitions of ``files``, in file order and, within a file, in byte order."""
    if blocksize < 1:
        raise ValueError(f"blocksize must be at least 1 byte, not {blocksize}")
    parts: list[Part] = []
    for given in files:
        if isinstance(given, RemoteFile):
            # Read whole by every worker from its URL: no byte ranges over a network.
            parts.append(Part(None, given.name, url=given.url))
            continue
        name = display_name(given)
        path = Path(given).absolute()
        try:
            size = os.stat(path).st_size
        except OSError:
            size = 0
        if not _splittable(path, size, blocksize, limits):
            parts.append(Part(path, name))
            continue
        parts.extend(
            Part(path, name, start, stop) for start, stop in nominal_ranges(size, blocksize)
        )
    return parts


def read_part(
    part: Part,
    first_line: int,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None,
    limits: Limits,
) -> Reading:
    """Read one partition as the pipeline reads a file, its lines numbered from ``first_line``."""
    if part.url is not None:
        return read_url(part.url, part.name, kinds, keep=keep, limits=limits)
    if part.whole:
        return read_file(part.path, kinds, keep=keep, limits=limits, name=part.name)
    try:
        data = read_range(part.path, part.start, part.stop)
    except OSError as exc:
        # As the whole-file reader says it: the file cannot be read.
        reading = read_bytes(b"", part.name, kinds, jsonl=True, keep=keep, limits=limits)
        reading.reject(Rejection(part.name, 0, "file", f"cannot read: {exc.strerror or exc}", ""))
        return reading
    return read_bytes(
        data,
        part.name,
        kinds,
        jsonl=True,
        first_line=first_line,
        keep=keep,
        limits=limits,
        file_start=part.start == 0,
    )


def sample_limits(limits: Limits, sample_bytes: int) -> Limits:
    """The limits for reading a file's head: at most ``sample_bytes`` of it."""
    return replace(limits, max_file_bytes=min(limits.max_file_bytes, sample_bytes))
