"""Reading every file of a source once and sorting its values into record kinds.

Kind-agnostic: the caller passes the :class:`~explicit_audit._core.records.RecordKind`
objects to sort into. Whatever cannot be read, or is claimed by a kind but does not
fit it, ends up as a :class:`~explicit_audit._core.records.Rejection`; for every
file, loaded + rejected == values read. The kinds then build their tables
(:mod:`explicit_audit.reading.tables`).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core.progress import byte_progress
from .._core.records import RecordKind, Rejection
from .ahead import Relay, read_ahead, relayed
from .batches import BATCH_BYTES, SMALL_FILE_BYTES, SmallFile, read_batch
from .content import FileReader
from .digests import FileDigest, HeldFile, hold_file
from .limits import Limits
from .names import display_name
from .pipeline import PieceReader
from .sources import CANNOT_READ, is_plain_jsonl_name, is_policy_name, scan_sources

__all__ = [
    "Listing",
    "Reading",
    "Source",
    "blame_cut",
    "list_sources",
    "read_all",
    "read_files",
    "read_with",
    "values_rejected",
]

Source = str | os.PathLike | Iterable[str | os.PathLike]


@dataclass
class Reading:
    """What one pass over the files found, before the kinds build their tables.

    Attributes
    ----------
    files : list of str
        The files read, as shown in tables.
    policy_files : list of Path
    segments : dict
        Per kind: its segments, file by file (see ``RecordKind.build``).
    rejections : list of Rejection
        Up to ``max_rejected_rows``; past it, see ``overflow``.
    values_read : dict
        Per file: values read.
    overflow : dict
        Per file: ``[count, first line, last line]`` of rejections past the cap.
    digests : dict
        Per file read to its end: the size and SHA-256 of its bytes as read.
    skipped : list of (str, str)
        What the listing passed over on purpose (as shown in tables), and why.
    held_policies : list
        The policy files as the policies' reader reads them
        (:meth:`hold_policy_files`).
    """

    files: list[str]
    policy_files: list[Path]
    limits: Limits = field(default_factory=Limits)
    segments: dict[str, list[tuple]] = field(default_factory=dict)
    rejections: list[Rejection] = field(default_factory=list)
    values_read: dict[str, int] = field(default_factory=dict)
    overflow: dict[str, list[int]] = field(default_factory=dict)
    #: Per file: the size and SHA-256 of the bytes read from it (a local file, a URL,
    #: a file object, stdin), hashed as they were read.
    digests: dict[str, FileDigest] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    held_policies: list = field(default_factory=list)
    #: The extra top-level fields the columnar path took, bounded by max_extra_columns.
    extra_fields: set[str] = field(default_factory=set)

    def emit(self, kind: str, segment: tuple) -> None:
        """Add a kind's segment (a columnar part or values)."""
        self.segments.setdefault(kind, []).append(segment)

    def reject(self, rejection: Rejection) -> None:
        """Keep a rejection, or count it past ``max_rejected_rows``."""
        if len(self.rejections) < self.limits.max_rejected_rows or rejection.source_line == 0:
            self.rejections.append(rejection)
            return
        line = rejection.source_line
        self.count_over(rejection.source_file, 1, line, line)

    def room(self) -> int:
        """How many more rejections are kept one by one before ``max_rejected_rows``."""
        return max(0, self.limits.max_rejected_rows - len(self.rejections))

    def count_over(self, name: str, count: int, first: int, last: int) -> None:
        """Count ``count`` rejections of file ``name`` past the cap, lines ``first``-``last``.

        :meth:`reject` counts each rejection past the cap so; a piece counts
        many at once, for rejections never built.
        """
        seen = self.overflow.setdefault(name, [0, first, 0])
        seen[0] += count
        seen[1] = min(seen[1], first)
        seen[2] = max(seen[2], last)

    def count_policy_files(self) -> None:
        """A policy file is one value read."""
        for path in self.policy_files:
            self.values_read[display_name(path)] = 1

    def hold_policy_files(self) -> list[HeldFile | Path]:
        """Read each policy file once, whole, hashing it; what the policies' reader reads.

        Returns
        -------
        list
            Per policy file, in order, its :class:`HeldFile` (the reader parses
            the bytes that were hashed), or its path when it cannot be read (a
            file-level rejection says why; the reader says it too).
        """
        held: list[HeldFile | Path] = []
        for path in self.policy_files:
            name = display_name(path)
            try:
                kept = hold_file(path)
            except OSError as exc:
                self.reject(Rejection(name, 0, "file", f"{CANNOT_READ}{exc.strerror or exc}", ""))
                held.append(path)
                continue
            self.digests[name] = kept.digest
            held.append(kept)
        return held

    def overflow_rows(self) -> list[Rejection]:
        """One row per file summing up the rejections past the cap."""
        return [
            Rejection(
                name,
                first,
                "unknown",
                f"{count}{_UNLISTED} {first} and {last}, not listed one by one: more than "
                f"max_rejected_rows ({self.limits.max_rejected_rows}) "
                "rejections in this load; load the file on its own, or raise the limit, to "
                "see them",
                "",
            )
            for name, (count, first, last) in self.overflow.items()
        ]


#: The words after the count in the row standing for the rejections past the cap.
_UNLISTED = " more value(s) rejected between lines"


def values_rejected(rejections: Iterable[tuple[str, str]]) -> int:
    """How many input values ``(kind, reason)`` rejected rows stand for.

    A row is one value, but for the row of a file summing up its rejections
    past ``max_rejected_rows`` (:meth:`Reading.overflow_rows`), which stands
    for the count it names.
    """
    total = 0
    for kind, reason in rejections:
        count, _, rest = reason.partition(" ")
        unlisted = kind == "unknown" and count.isdigit() and (" " + rest).startswith(_UNLISTED)
        total += int(count) if unlisted else 1
    return total


def read_with(reading: Reading, reader: FileReader, kinds, keep, pieces_read=None) -> None:
    """Read one file's pieces into ``reading``.

    ``pieces_read`` are the pieces already taken from ``reader``'s iteration
    (an iterator over the rest); by default the reader is iterated here. A
    reader whose ``on_bytes`` is a :class:`~explicit_audit.reading.ahead.Relay`
    (:func:`~explicit_audit.reading.ahead.relayed`) has it flushed here, as
    each piece is taken.
    """
    name = reader.name
    held: list[Rejection] = []
    # The last piece's rejections wait: a cut gzip stream may explain one. Past
    # max_rejected_rows, a piece counts what it rejects without building rows; the
    # rejections it holds back are kept, or counted, before any of the next piece's.
    pieces = PieceReader(
        name,
        reader.jsonl,
        kinds,
        keep,
        reading.limits,
        reading.emit,
        held.append,
        room=lambda: max(0, reading.room() - len(held)),
        count_over=lambda count, first, last: reading.count_over(name, count, first, last),
        extra_fields=reading.extra_fields,
    )
    # The next piece is read and split in a second thread while this one is parsed;
    # closed on the way out, so that a load that raises leaves no thread reading.
    relay = getattr(reader, "on_bytes", None)
    relay = relay if isinstance(relay, Relay) else None
    ahead = read_ahead(
        reader if pieces_read is None else pieces_read,
        lambda piece: pieces.split(piece.data, piece.first_line),
        threads=reading.limits.max_threads,
    )
    try:
        with closing(ahead):
            for piece, spans in ahead:
                if relay is not None:
                    relay.flush()
                for rejection in held:
                    reading.reject(rejection)
                held.clear()
                pieces.read(piece.data, piece.first_line, spans)
    finally:
        if relay is not None:
            relay.flush()
    problems = list(reader.problems)
    last = pieces.last_item
    if reader.cut and isinstance(last, Rejection) and held and held[-1] is last:
        # The data ends inside a value: the last one rejected is the one cut
        # off (it may start lines earlier in a .json log). Say why, once.
        held[-1] = blame_cut(last, problems)
    for rejection in held:
        reading.reject(rejection)
    for problem in problems:
        reading.reject(problem)
    reading.values_read[name] = (
        reading.values_read.get(name, 0) + pieces.values_read + reader.oversized
    )
    if reader.digest is not None:
        reading.digests[name] = reader.digest


def blame_cut(last: Rejection, problems: list[Rejection]) -> Rejection:
    """The last value rejected, when the data ends inside it, as the cut that ended it.

    A gzip stream (or a file) cut short leaves one file-level problem (line
    0) and, when the cut falls inside a value, that value rejected as bad
    JSON. Say why once: the value's rejection takes the cut's reason, and the
    file-level problem is removed from ``problems``.
    """
    cut = next(p for p in problems if p.source_line == 0 and p.kind == "file")
    problems.remove(cut)
    return Rejection(last.source_file, last.source_line, "file", cut.reason, last.raw)


@dataclass(frozen=True)
class Listing:
    """The files of a source, before any is read.

    Attributes
    ----------
    policy_files, data_files : list of Path
        The YAML policies, and every other file, in order.
    problems : list of Rejection
        A file-level rejection for each entry that is not a regular file, and
        for each folder that cannot be listed.
    names : list of str
        Every file as tables name it: the files, then the problems' entries.
    skipped : list of (str, str)
        What was passed over on purpose, as tables name it, and why.
    """

    policy_files: list[Path]
    data_files: list[Path]
    problems: list[Rejection]
    names: list[str]
    skipped: list[tuple[str, str]] = field(default_factory=list)


def list_sources(source: Source) -> Listing:
    """Expand ``source`` into files (:func:`scan_sources`), policies set apart."""
    scan = scan_sources(source)
    files, problems = scan.files, scan.problems
    policy_files = [path for path in files if is_policy_name(path)]
    data_files = [path for path in files if path not in policy_files]
    names = [display_name(path) for path in files] + [p.source_file for p in problems]
    skipped = [(display_name(path), why) for path, why in scan.skipped]
    return Listing(policy_files, data_files, problems, names, skipped)


def read_all(source: Source, kinds: Sequence[RecordKind], **options: Any) -> Reading:
    """Read every file of ``source`` (:func:`list_sources`) and sort its values into
    ``kinds``; ``options`` as for :func:`read_listed`."""
    return read_listed(list_sources(source), kinds, **options)


def read_listed(
    listing: Listing,
    kinds: Sequence[RecordKind],
    *,
    progress: bool,
    keep: set[str] | None = None,
    limits: Limits | None = None,
    read: Callable[..., None] | None = None,
) -> Reading:
    """Read the files of ``listing`` and sort their values into ``kinds``.

    Its problems are rejected, its data files read, its policies held and hashed.

    Parameters
    ----------
    listing : Listing
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    progress : bool
        Show a progress bar over the bytes of the files (:mod:`.progress`).
    keep : set of str, optional
        The kinds whose values are kept (all by default). A value of another
        kind is recognised, so not rejected, but not kept or built.
    limits : Limits, optional
        The reading limits (:mod:`explicit_audit.reading.limits`).
    read : callable, optional
        ``read(reading, data_files, kinds, keep, on_bytes=)`` reads the data
        files: :func:`read_files` by default.

    Returns
    -------
    Reading
    """
    reading = Reading(listing.names, listing.policy_files, limits or Limits())
    reading.skipped = list(listing.skipped)
    for problem in listing.problems:
        reading.reject(problem)
    with byte_progress(listing.data_files, progress) as advance:
        (read or read_files)(reading, listing.data_files, kinds, keep, on_bytes=advance)
    reading.count_policy_files()
    reading.held_policies = reading.hold_policy_files()
    return reading


def read_files(
    reading: Reading,
    paths: Sequence[Path],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    *,
    names: Sequence[str] | None = None,
    on_bytes=None,
    hash_whole: bool = True,
) -> None:
    """Read files one after another into ``reading``, small JSON Lines files in batches.

    A plain (not gzip) JSON Lines file of at most
    :data:`~explicit_audit.reading.batches.SMALL_FILE_BYTES` that is read whole
    in one piece, without a file-level problem, joins a batch
    (:func:`~explicit_audit.reading.batches.read_batch`); any other file is
    read on its own, from where its reading got to. Files are read, and their
    rows and rejections kept, in the order given.

    Parameters
    ----------
    reading : Reading
    paths : sequence of Path
    kinds, keep
        As for :func:`read_all`.
    names : sequence of str, optional
        Each file's name in the tables (``source_file``); by default its path as given.
    on_bytes : callable, optional
        The progress bar's count of bytes read.
    hash_whole : bool, default True
        As for :class:`~explicit_audit.reading.content.FileReader`.
    """
    batch: list[SmallFile] = []
    batch_bytes = 0

    def flush() -> None:
        nonlocal batch, batch_bytes
        counts = read_batch(batch, kinds, keep, reading.limits, reading.emit, reading.reject)
        for file, count in zip(batch, counts, strict=True):
            reading.values_read[file.name] = reading.values_read.get(file.name, 0) + count
        batch, batch_bytes = [], 0

    limits = reading.limits
    on_bytes = relayed(on_bytes, limits)
    relay = on_bytes if isinstance(on_bytes, Relay) else None
    for index, path in enumerate(paths):
        if relay is not None:
            relay.flush()  # the bytes of the files read whole in this thread
        name = display_name(path) if names is None else names[index]
        reader = FileReader(path, limits, name=name, on_bytes=on_bytes, hash_whole=hash_whole)
        if not is_plain_jsonl_name(path):
            flush()
            read_with(reading, reader, kinds, keep)
            continue
        taken, pieces, size = [], iter(reader), 0
        for piece in pieces:
            taken.append(piece)
            size += len(piece.data)
            if size > SMALL_FILE_BYTES or len(taken) > 1:
                break
        whole = (
            len(taken) <= 1
            and size <= SMALL_FILE_BYTES
            and all(piece.first_line == 1 for piece in taken)
            and not (reader.problems or reader.cut or reader.oversized)
        )
        if not whole:
            flush()
            read_with(reading, reader, kinds, keep, itertools.chain(taken, pieces))
            continue
        batch.append(SmallFile(name, taken[0].data if taken else b"", reader.digest))
        batch_bytes += size
        if reader.digest is not None:
            reading.digests[name] = reader.digest
        if batch_bytes >= BATCH_BYTES:
            flush()
    flush()
    if relay is not None:
        relay.flush()
