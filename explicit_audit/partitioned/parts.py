"""The partitions of a partitioned load: which bytes of which file each one reads.

A partition is one file, one line-aligned byte range of a large plain JSON
Lines file (:mod:`explicit_audit.reading.byte_ranges`), or a pack of whole
small files, one after another, up to about ``blocksize`` bytes (a Dask
partition costs bookkeeping of its own, which a hundred thousand one-line
files would each pay). Gzip files, ``.json`` files (values one after another
may span lines) and files past ``max_file_bytes`` are never split, and are
read exactly as the in-memory engine reads them. Every partition is read by
the same pipeline as whole files (a pack by the reader the in-memory engine
reads its files with), so it loads the same rows with the same line numbers.

A partition is pinned to the file as it was planned: its size, modification
time and inode (:class:`Stamp`); a pack, to each of its files. A file
truncated, emptied, appended to or replaced before the partition is computed
is not read as it is then: it is a file-level rejection naming the file and
what changed, and loads no row (the other files of a pack load as usual).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .._core.records import RecordKind, Rejection
from ..errors import AuditError
from ..reading.batches import SMALL_FILE_BYTES
from ..reading.byte_ranges import nominal_ranges
from ..reading.collect import Reading, read_files
from ..reading.limits import Limits
from ..reading.names import display_name
from ..reading.reader import read_bytes, read_file, read_lines_range
from ..reading.remote import RemoteFile, read_url
from ..reading.sources import is_gzip_name, is_jsonl_name

__all__ = [
    "DEFAULT_BLOCKSIZE",
    "DEFAULT_SAMPLE_BYTES",
    "PACK_FILES",
    "Part",
    "Stamp",
    "plan_parts",
    "read_part",
    "sample_limits",
]

#: Bytes per partition of a large JSON Lines file (``blocksize=``).
DEFAULT_BLOCKSIZE = 64 << 20

#: Files per partition of small whole files, at most: a pack of a hundred thousand
#: one-line files would leave the other workers idle.
PACK_FILES = 4096

#: Bytes of each file's head read to learn the tables' columns (``sample_bytes=``).
DEFAULT_SAMPLE_BYTES = 1 << 20

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class Stamp:
    """What identifies a file's content when a load is planned: size, mtime and inode."""

    size: int
    mtime_ns: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> Stamp | None:
        """The file's stamp now; None when it cannot be looked at."""
        try:
            found = os.stat(path)
        except OSError:
            return None
        return cls(found.st_size, found.st_mtime_ns, found.st_ino)

    def changes(self, now: Stamp | None) -> str | None:
        """How the file changed since this stamp, in words; None when it did not."""
        if now is None:
            return "it is gone or can no longer be looked at"
        if now.inode != self.inode:
            return "it was replaced by another file"
        if now.size != self.size:
            return f"its size went from {self.size:,} to {now.size:,} bytes"
        if now.mtime_ns != self.mtime_ns:
            return "it was modified (same size, a later modification time)"
        return None


@dataclass(frozen=True)
class Part:
    """One partition: a whole file (``start is None``) or a nominal byte range of it.

    ``path`` is absolute, so that a worker whose working folder is not the
    caller's (a cluster's, a notebook kernel's) reads the same file; ``name``
    is the path as the caller gave it, as the tables show it. ``stamp`` is
    the file as the load was planned (None when it could not be looked at:
    then reading it says why).
    """

    path: Path | None
    name: str
    start: int | None = None
    stop: int | None = None
    stamp: Stamp | None = None
    #: A file read by URL (fsspec): the worker opens the URL, as the caller named it.
    url: str | None = None
    #: A pack of whole small files (each a Part of its own), read one after another.
    members: tuple[Part, ...] = ()

    @property
    def whole(self) -> bool:
        """Whether the partition is the whole file (or whole files)."""
        return self.start is None

    @property
    def files(self) -> tuple[Part, ...]:
        """The whole-file parts it reads: its members, or itself."""
        return self.members or (self,)

    @property
    def names(self) -> list[str]:
        """The names of the files it reads, in order."""
        return [member.name for member in self.files]


def _pack(members: list[Part]) -> Part:
    """One partition of whole files; a single file stays its own partition."""
    if len(members) == 1:
        return members[0]
    return Part(None, members[0].name, members=tuple(members))


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
    # Small whole files, one after another, gathered into one partition up to blocksize.
    packed: list[Part] = []
    packed_bytes = 0
    small = min(SMALL_FILE_BYTES, blocksize)  # a file up to this size is packed with others

    def room(more: int, name: str) -> None:
        # Refused before the partitions are made: a graph holds every one of them.
        if len(parts) + more > limits.max_partitions:
            raise AuditError(
                f"{name}: the load would plan more than {limits.max_partitions:,} partitions "
                f"(limit max_partitions; one per block of {blocksize:,} bytes of a larger plain "
                f"JSON Lines file, per other file over {small:,} bytes or URL, and per pack of "
                "smaller files), and each costs the client and the scheduler memory; load fewer "
                "files at once, pass a larger blocksize= for the split files, or raise the limit"
            )

    def pack() -> None:
        nonlocal packed, packed_bytes
        if packed:
            room(1, packed[-1].name)
            parts.append(_pack(packed))
        packed, packed_bytes = [], 0

    for given in files:
        if isinstance(given, RemoteFile):
            # Read whole by every worker from its URL: no byte ranges over a network.
            pack()
            room(1, given.name)
            parts.append(Part(None, given.name, url=given.url))
            continue
        name = display_name(given)
        path = Path(given).absolute()
        stamp = Stamp.of(path)
        size = stamp.size if stamp is not None else 0
        if stamp is not None and size <= small:
            if packed and (packed_bytes + size > blocksize or len(packed) >= PACK_FILES):
                pack()
            packed.append(Part(path, name, stamp=stamp))
            packed_bytes += size
            continue
        pack()
        if not _splittable(path, size, blocksize, limits):
            room(1, name)
            parts.append(Part(path, name, stamp=stamp))
            continue
        room(-(-size // blocksize), name)
        parts.extend(
            Part(path, name, start, stop, stamp) for start, stop in nominal_ranges(size, blocksize)
        )
    pack()
    return parts


def read_part(
    part: Part,
    first_line: int | None,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None,
    limits: Limits,
) -> Reading:
    """Read one partition as the pipeline reads a file, its lines numbered from ``first_line``.

    The file is looked at before and after it is read: when it is no longer
    the file the load was planned on (:class:`Stamp`), nothing of it is kept
    and the partition is one file-level rejection that says what changed.
    ``first_line`` is None when a range of the file before this one could
    not be read: no line number is guessed, and the range is rejected.
    """
    if part.url is not None:
        # A file at a URL: read whole, by the worker, from the URL.
        return read_url(part.url, part.name, kinds, keep=keep, limits=limits)
    if part.members:
        return _read_pack(part.members, kinds, keep, limits)
    changed = _changed(part)
    if changed is None and first_line is None and not part.whole:
        return _rejected(
            part,
            kinds,
            keep,
            limits,
            f"bytes {part.start}-{part.stop}: the lines before them could not be counted (a "
            "range of the file before this one could not be read), so no line number would "
            "be right; nothing of them was loaded",
        )
    if changed is None:
        if part.whole:
            reading = read_file(part.path, kinds, keep=keep, limits=limits, name=part.name)
        else:
            # Streamed, as a whole file is: a line past max_value_bytes is never held.
            reading = read_lines_range(
                part.path,
                part.start,
                part.stop,
                part.name,
                kinds,
                first_line=first_line,
                keep=keep,
                limits=limits,
            )
        changed = _changed(part)  # while it was read
        if changed is None:
            return reading
    return _rejected(part, kinds, keep, limits, _changed_reason(part, changed))


def _read_pack(
    members: Sequence[Part], kinds: Sequence[RecordKind], keep: set[str] | None, limits: Limits
) -> Reading:
    """Read a pack of whole files, each pinned to its stamp; a changed one loads nothing.

    Files are looked at before and after the read; when one changed while
    the pack was read, the pack is read again without it, so that no row,
    value or rejection of it is kept. Each changed file is one file-level
    rejection in its place among the others.
    """
    changed = {member.name: why for member in members if (why := _changed(member))}
    while True:
        reading = _read_members(members, changed, kinds, keep, limits)
        later = {
            member.name: why
            for member in members
            if member.name not in changed and (why := _changed(member))
        }
        if not later:
            return reading
        changed |= later  # read again without them: each pass leaves one more file out


def _read_members(
    members: Sequence[Part],
    changed: dict[str, str],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits,
) -> Reading:
    """The members not in ``changed`` read in order; each changed one a file-level rejection."""
    reading = Reading([member.name for member in members], [], limits)
    run: list[Part] = []
    for member in [*members, None]:
        if member is not None and member.name not in changed:
            run.append(member)
            continue
        if run:
            names = [each.name for each in run]
            read_files(reading, [each.path for each in run], kinds, keep, names=names)
            run = []
        if member is not None:
            reading.values_read[member.name] = 0
            reason = _changed_reason(member, changed[member.name])
            reading.reject(Rejection(member.name, 0, "file", reason, ""))
    return reading


def _changed_reason(part: Part, changed: str) -> str:
    bytes_read = "" if part.whole else f" (bytes {part.start}-{part.stop})"
    return (
        f"changed after the load was planned{bytes_read}: {changed}; nothing of it was "
        "loaded, so that no row is read from a file other than the one listed. Load it "
        "again once it no longer changes, or load a copy"
    )


def _changed(part: Part) -> str | None:
    """How the partition's file changed since it was planned; None when it did not."""
    if part.stamp is None:
        return None  # it could not be looked at when planned: reading it says why
    return part.stamp.changes(Stamp.of(part.path))


def _rejected(
    part: Part, kinds: Sequence[RecordKind], keep: set[str] | None, limits: Limits, reason: str
) -> Reading:
    """A partition that loads nothing: one file-level rejection."""
    reading = read_bytes(b"", part.name, kinds, jsonl=True, keep=keep, limits=limits)
    reading.reject(Rejection(part.name, 0, "file", reason, ""))
    return reading


def sample_limits(limits: Limits, sample_bytes: int) -> Limits:
    """The limits for reading a file's head: at most ``sample_bytes`` of it."""
    return replace(limits, max_file_bytes=min(limits.max_file_bytes, sample_bytes))
