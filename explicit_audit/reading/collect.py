"""Reading every file of a source once and sorting its values into record kinds.

Kind-agnostic: the caller passes the :class:`~explicit_audit._core.records.RecordKind`
objects to sort into. Whatever cannot be read, or is claimed by a kind but does not
fit it, ends up as a :class:`~explicit_audit._core.records.Rejection`; for every
file, loaded + rejected == values read.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._core.caller import warn
from .._core.columns import EXTRA_JSON, extra_columns_limited
from .._core.key_table import settle
from .._core.keys import shape_of
from .._core.progress import byte_progress
from .._core.records import KindTables, RecordKind, Rejection, blame_cut
from .._core.times import typed_times, unparsed_counts
from ..errors import ExtraColumnsWarning, InputError, RejectedRowsWarning, UnparsedTimeWarning
from .ahead import Relay, read_ahead, relayed
from .batches import BATCH_BYTES, SMALL_FILE_BYTES, SmallFile, read_batch
from .content import BytesReader, FileDigest, FileReader, HeldFile, RangeReader, hold_file
from .limits import DEFAULT_LIMITS, Limits
from .pipeline import PieceReader
from .sources import (
    CANNOT_READ,
    POLICY_SUFFIXES,
    display_name,
    is_plain_jsonl_name,
    scan_sources,
)

__all__ = [
    "REJECTED_COLUMNS",
    "Listing",
    "Reading",
    "Source",
    "build_kind",
    "in_file_order",
    "list_sources",
    "loaded_counts",
    "read_all",
    "read_bytes",
    "read_file",
    "read_files",
    "read_lines_range",
    "read_with",
    "rejected_frame",
    "sources_frame",
    "warn_extra_json",
    "warn_or_raise",
    "warn_unparsed_times",
]

Source = str | os.PathLike | Iterable[str | os.PathLike]

#: Columns of ``Audit.rejected``, one row per input that was not loaded.
REJECTED_COLUMNS = {
    "source_file": "file the input came from",
    "source_line": "1-based line where the value starts (0: the file as a whole)",
    "kind": "record kind it was meant for; 'unknown' when no kind claimed it; 'file' for a "
    "file-level problem",
    "reason": "what is wrong, naming the field",
    "raw": "excerpt of the raw text",
}


def _text(value: str) -> str:
    """Text that can be stored: a lone surrogate (from a parsed key or value) as ``\\udXXX``."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", errors="backslashreplace").decode("utf-8")


def _texts(values: list[str]) -> pd.Series:
    """A ``str`` column of ``values``, each as :func:`_text` stores it.

    Arrow refuses a lone surrogate: only then is each value looked at.
    """
    try:
        return pd.Series(values, dtype="str")
    except UnicodeEncodeError:
        return pd.Series([_text(value) for value in values], dtype="str")


def rejected_frame(rejections: Sequence[Rejection]) -> pd.DataFrame:
    """The rejected rows as a DataFrame with the columns of :data:`REJECTED_COLUMNS`."""
    frame = pd.DataFrame(
        {
            "source_file": _texts([r.source_file for r in rejections]),
            "source_line": pd.Series([r.source_line for r in rejections], dtype="int64"),
            "kind": pd.Series([r.kind for r in rejections], dtype="category"),
            "reason": _texts([r.reason for r in rejections]),
            "raw": _texts([r.raw for r in rejections]),
        }
    )
    return frame


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
        seen = self.overflow.setdefault(rejection.source_file, [0, rejection.source_line, 0])
        seen[0] += 1
        seen[1] = min(seen[1], rejection.source_line)
        seen[2] = max(seen[2], rejection.source_line)

    def room(self) -> int:
        """How many more rejections are kept one by one before ``max_rejected_rows``."""
        return max(0, self.limits.max_rejected_rows - len(self.rejections))

    def count_over(self, name: str, count: int, first: int, last: int) -> None:
        """Count ``count`` rejections of file ``name`` past the cap, lines ``first``-``last``.

        As :meth:`reject` counts them one by one, for rejections never built.
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
                f"{count} more value(s) rejected between lines {first} and {last}, not listed "
                f"one by one: more than max_rejected_rows ({self.limits.max_rejected_rows}) "
                "rejections in this load; load the file on its own, or raise the limit, to "
                "see them",
                "",
            )
            for name, (count, first, last) in self.overflow.items()
        ]


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
    policy_files = [path for path in files if path.name.lower().endswith(POLICY_SUFFIXES)]
    data_files = [path for path in files if path not in policy_files]
    names = [display_name(path) for path in files] + [p.source_file for p in problems]
    skipped = [(display_name(path), why) for path, why in scan.skipped]
    return Listing(policy_files, data_files, problems, names, skipped)


def read_all(
    source: Source,
    kinds: Sequence[RecordKind],
    *,
    progress: bool,
    keep: set[str] | None = None,
    limits: Limits | None = None,
) -> Reading:
    """Read every file of ``source`` and sort its values into ``kinds``.

    Parameters
    ----------
    source : str, path-like, or iterable of them
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    progress : bool
        Show a progress bar over the bytes of the files (:mod:`.progress`).
    keep : set of str, optional
        The kinds whose values are kept (all by default). A value of another
        kind is recognised, so not rejected, but not kept or built.
    limits : Limits, optional
        The reading limits (:mod:`explicit_audit.reading.limits`).

    Returns
    -------
    Reading
    """
    listing = list_sources(source)
    reading = Reading(listing.names, listing.policy_files, limits or Limits())
    reading.skipped = list(listing.skipped)
    for problem in listing.problems:
        reading.reject(problem)
    with byte_progress(listing.data_files, progress) as advance:
        read_files(reading, listing.data_files, kinds, keep, on_bytes=advance)
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


def read_file(
    path: Path,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None = None,
    limits: Limits | None = None,
    name: str | None = None,
    hash_whole: bool = True,
) -> Reading:
    """Read one regular file, as :func:`read_all` reads each of its files.

    ``name`` is the file's name in the tables (``source_file``), its path
    as given by default. ``hash_whole=False`` leaves unread what the limits
    leave unparsed (a head read only to sample it): no digest then.
    """
    shown = name or display_name(path)
    return _read_one(
        shown,
        lambda limits: FileReader(path, limits, name=shown, hash_whole=hash_whole),
        kinds,
        keep,
        limits,
    )


def _read_one(
    name: str,
    reader_for: Callable[[Limits], FileReader],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits | None,
) -> Reading:
    """A reading of the one file ``name``, by the reader ``reader_for(limits)`` gives."""
    reading = Reading([name], [], limits or Limits())
    read_with(reading, reader_for(reading.limits), kinds, keep)
    return reading


def read_bytes(
    data: bytes,
    name: str,
    kinds: Sequence[RecordKind],
    *,
    jsonl: bool,
    first_line: int = 1,
    keep: set[str] | None = None,
    limits: Limits | None = None,
    file_start: bool = True,
) -> Reading:
    """Read bytes as the content of file ``name`` from line ``first_line`` on.

    ``file_start`` says whether the bytes begin the file: only there is a
    UTF-8 byte order mark dropped, as when the whole file is read.
    """
    return _read_one(
        name,
        lambda limits: BytesReader(
            None,
            limits,
            name=name,
            jsonl=jsonl,
            first_line=first_line,
            strip_bom=file_start,
            data=data,
        ),
        kinds,
        keep,
        limits,
    )


def read_lines_range(
    path: Path,
    start: int,
    stop: int,
    name: str,
    kinds: Sequence[RecordKind],
    *,
    first_line: int,
    keep: set[str] | None = None,
    limits: Limits | None = None,
) -> Reading:
    """Read the whole lines of a JSON Lines file that start in ``[start, stop)``.

    Numbered from ``first_line``, as :func:`read_bytes` reads them, but
    streamed from the file (:class:`~explicit_audit.reading.content.RangeReader`):
    a line longer than ``max_value_bytes`` is rejected without being held.
    """
    return _read_one(
        name,
        lambda limits: RangeReader(
            path, limits, name=name, first_line=first_line, start=start, stop=stop
        ),
        kinds,
        keep,
        limits,
    )


#: Per process, by kind and ``times``: its tables built from no segments, and the kind.
_NO_VALUES: dict[tuple[int, bool], tuple[RecordKind, dict[str, pd.DataFrame]]] = {}


def build_kind(
    kind: RecordKind,
    segments: list[tuple],
    *,
    strict_keys: bool = False,
    limits: Limits | None = None,
    times: bool = True,
) -> KindTables:
    """Build one kind's tables from its segments, with the notes of its records' keys.

    Every value's keys are read against the kind's shapes
    (:func:`explicit_audit._core.key_table.settle`): the notes of the values
    loaded are in ``notes``; a rejection lists every problem of its value;
    under ``strict_keys`` a value holding an unknown key is rejected. Time
    columns are typed (:mod:`.times`), unless ``times`` is False: a
    partition's are typed as the whole load's meta types them, when it is
    fitted to it (:mod:`explicit_audit.partitioned.conform`). Each table has at most
    ``limits.max_extra_columns`` extra columns (:mod:`.columns`).

    With no segments (most loads and most partitions hold few kinds), the
    kind's empty tables are built once per process; each call returns its
    own shallow copies of them (copy-on-write: changing one never changes
    another, nor the next load's).
    """
    if not segments:
        entry = _NO_VALUES.get((id(kind), times))
        if entry is None or entry[0] is not kind:
            built = _build_kind(kind, [], False, None, times)
            entry = _NO_VALUES[(id(kind), times)] = (kind, built.tables)
        return KindTables({name: table.copy(deep=False) for name, table in entry[1].items()})
    return _build_kind(kind, segments, strict_keys, limits, times)


def _build_kind(
    kind: RecordKind,
    segments: list[tuple],
    strict_keys: bool,
    limits: Limits | None,
    times: bool,
) -> KindTables:

    def shape_for(value):
        if kind.shape_of is not None:
            return kind.shape_of(value)
        return shape_of(kind.shapes, value)

    limit = (limits or DEFAULT_LIMITS).max_extra_columns
    with extra_columns_limited(limit):
        built = settle(
            kind.name, kind.shapes, shape_for, segments, kind.build, strict_keys=strict_keys
        )
    # Time columns typed as UTC times, on both engines alike (:mod:`.times`).
    if times:
        built.tables = {name: typed_times(table) for name, table in built.tables.items()}
    return built


def warn_or_raise(rejections: list[Rejection], strict: bool) -> None:
    """Raise at the first rejection under ``strict``; else warn once about all of them."""
    if not rejections:
        return
    first = rejections[0]
    if strict:
        raise InputError(first.source_file, first.source_line or None, first.reason)
    files = sorted({r.source_file for r in rejections})
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    warn(
        f"{len(rejections)} input value(s) could not be loaded, in {where} "
        f"(first: {first.source_file}:{first.source_line}: {first.reason}). "
        "They are kept in `audit.rejected` (ea.load(...).rejected).",
        RejectedRowsWarning,
    )


def warn_unparsed_times(tables: dict[str, pd.DataFrame]) -> None:
    """Warn once about every time column holding text that is not a time."""
    found = [
        f"{name}.{column} ({count})"
        for name, frame in tables.items()
        for column, count in unparsed_counts(frame).items()
    ]
    if found:
        warn(
            "time columns hold values that are not ISO 8601 times between 1677 and 2262: "
            f"{', '.join(found)}; "
            "they are missing (NaT) there, and the text as written is kept in "
            "<column>_unparsed",
            UnparsedTimeWarning,
        )


def warn_extra_json(tables: dict[str, pd.DataFrame], limits: Limits | None = None) -> None:
    """Warn once about every table whose extra keys went past ``max_extra_columns``.

    Or held a key named ``extra_json``, which is never a column (see
    :mod:`.columns`).
    """
    found = [name for name, frame in tables.items() if EXTRA_JSON in frame.columns]
    if found:
        limit = (limits or DEFAULT_LIMITS).max_extra_columns
        warn(
            f"more keys beside the records than max_extra_columns ({limit}), or a key named "
            f"{EXTRA_JSON!r}, in {', '.join(found)}: the first {limit} are columns, and the "
            f"rest of each row's keys (and any named {EXTRA_JSON!r}) are kept, not dropped, as "
            f"JSON text in the {EXTRA_JSON!r} column",
            ExtraColumnsWarning,
        )


def loaded_counts(frames: Iterable[pd.DataFrame]) -> dict[str, int]:
    """Rows per ``source_file`` over tables of one value per row."""
    counts: dict[str, int] = {}
    for frame in frames:
        if len(frame):
            for name, count in frame["source_file"].astype("str").value_counts().items():
                counts[name] = counts.get(name, 0) + int(count)
    return counts


def sources_frame(
    reading: Reading,
    loaded: dict[str, int],
    policy_files_loaded: Sequence[str],
    rejected: pd.DataFrame,
) -> pd.DataFrame:
    """Per input file: values read, rows loaded into any table, rows rejected, its digest.

    Then one row per entry skipped for its name, with the reason in ``skipped``
    (NA for the files read) and nothing read from it. ``bytes`` and ``sha256``
    are those of the bytes as read (NA for a file not read to its end).

    ``loaded`` holds the rows loaded per file (:func:`loaded_counts`), policy
    files aside.
    """
    loaded = dict(loaded)
    for policy_file in policy_files_loaded:
        if policy_file in reading.files:
            loaded[policy_file] = loaded.get(policy_file, 0) + 1
    rejected_counts = dict(
        rejected.loc[rejected["source_line"] > 0, "source_file"].value_counts().items()
    )
    for name, (count, _, _) in reading.overflow.items():
        # The summary row counts once above; the values it stands for, all.
        rejected_counts[name] = rejected_counts.get(name, 0) + count - 1
    # A policy file is one value: rejected once, whether its problem has a line or not.
    for policy_file in map(display_name, reading.policy_files):
        if (rejected["source_file"] == policy_file).any():
            rejected_counts[policy_file] = 1
    files = list(reading.files)
    digests = [reading.digests.get(f) for f in files]
    skipped = [name for name, _ in reading.skipped]
    frame = pd.DataFrame(
        {
            "source_file": pd.Series(files + skipped, dtype="str"),
            "values_read": [reading.values_read.get(f, 0) for f in files] + [0] * len(skipped),
            "loaded": [int(loaded.get(f, 0)) for f in files] + [0] * len(skipped),
            "rejected": [int(rejected_counts.get(f, 0)) for f in files] + [0] * len(skipped),
            "bytes": pd.Series(
                [None if d is None else d.bytes for d in digests] + [None] * len(skipped),
                dtype="Int64",
            ),
            "sha256": pd.Series(
                [None if d is None else d.sha256 for d in digests] + [None] * len(skipped),
                dtype="str",
            ),
            "skipped": pd.Series(
                [None] * len(files) + [why for _, why in reading.skipped], dtype="str"
            ),
        }
    )
    return frame.astype({"values_read": "int64", "loaded": "int64", "rejected": "int64"})


def in_file_order(rejections: list[Rejection], files: Sequence[str]) -> list[Rejection]:
    """The rejections in file order, then line order (stable: ties keep their order)."""
    rank = {name: index for index, name in enumerate(files)}
    return sorted(rejections, key=lambda r: (rank.get(r.source_file, len(rank)), r.source_line))
