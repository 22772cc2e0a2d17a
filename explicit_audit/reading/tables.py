"""The table stage: a reading's segments built into each kind's tables, and the load's own.

Each kind's builder makes its tables from the segments the pieces gave it
(:func:`build_kind`, with the notes of its records' keys); the load's own
tables say what was not loaded (:func:`rejected_frame`) and what each file
gave (:func:`sources_frame`). The warnings a load gives once are made here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from .._core.caller import warn
from .._core.columns import EXTRA_JSON, extra_columns_limited
from .._core.key_table import settle
from .._core.keys import shape_of
from .._core.records import Documents, KindTables, RecordKind, Rejection, excerpts_limited
from .._core.times import typed_times, unparsed_counts
from ..errors import ExtraColumnsWarning, InputError, RejectedRowsWarning, UnparsedTimeWarning
from .collect import Reading, values_rejected
from .limits import DEFAULT_LIMITS, Limits
from .names import display_name

__all__ = [
    "REJECTED_COLUMNS",
    "build_kind",
    "in_file_order",
    "load_documents",
    "loaded_counts",
    "rejected_frame",
    "sources_frame",
    "warn_extra_json",
    "warn_or_raise",
    "warn_unparsed_times",
]

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

    limits = limits or DEFAULT_LIMITS
    with extra_columns_limited(limits.max_extra_columns), excerpts_limited(limits.excerpt_chars):
        built = settle(
            kind.name, kind.shapes, shape_for, segments, kind.build, strict_keys=strict_keys
        )
    # Time columns typed as UTC times, on both engines alike (:mod:`.times`).
    if times:
        built.tables = {name: typed_times(table) for name, table in built.tables.items()}
    return built


def load_documents(
    declared: Sequence[Documents], paths: Sequence, limits: Limits
) -> tuple[dict[str, Any], list[Rejection], list[str]]:
    """Every kind's documents read from ``paths`` (the policy files), the same on both
    engines: by name, their rejections (excerpts cut at ``limits.excerpt_chars``), and
    the files loaded."""
    documents: dict[str, Any] = {}
    rejections: list[Rejection] = []
    loaded: list[str] = []
    for docs in declared:
        found = docs.empty()
        if paths:
            with excerpts_limited(limits.excerpt_chars):
                found, problems = docs.load(paths)
            rejections.extend(problems)
        documents[docs.name] = found
        loaded.extend(docs.files(found))
    return documents, rejections, loaded


def warn_or_raise(
    rejections: list[Rejection], strict: bool, documents: Sequence[Documents] = ()
) -> None:
    """Raise at the first rejection under ``strict`` (a document's own error for a
    rejection of one of ``documents``); else warn once about all of them."""
    if not rejections:
        return
    first = rejections[0]
    if strict:
        for declared in documents:
            if first.kind == declared.kind:
                raise declared.strict_error(first)
        raise InputError(first.source_file, first.source_line or None, first.reason)
    files = sorted({r.source_file for r in rejections})
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    values = values_rejected((r.kind, r.reason) for r in rejections)
    warn(
        f"{values} input value(s) could not be loaded, in {where} "
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
