"""One entry point: ``ea.load(source)`` and the :class:`Audit` it returns.

The loader reads every file once, sorts each JSON value into its record kind
by its shape, and hands each kind its values to build that kind's tables.
Whatever cannot be read, or is claimed by a kind but does not fit it, ends up
in ``Audit.rejected``; for every file, loaded + rejected == values read.
"""

from __future__ import annotations

import gzip
import os
import warnings
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson
import pandas as pd

from ._columnar import ColumnarPart
from ._reader import POLICY_SUFFIXES, parse_content, read_file, resolve_sources
from ._records import KindTables, RawValue, RecordKind, Rejection, excerpt
from .errors import InputError
from .policies import PolicySet, load_policy_files

__all__ = ["Audit", "RejectedRowsWarning", "load", "load_kind", "rejected_frame"]

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


class RejectedRowsWarning(UserWarning):
    """Some input could not be loaded; it is kept in ``Audit.rejected``."""


def _record_kinds() -> list[RecordKind]:
    """Every record kind ``load`` sorts values into, in matching order."""
    from . import decisions, plans, receipts, requests

    return [receipts.KIND, plans.KIND, requests.KIND, decisions.KIND]


def rejected_frame(rejections: Sequence[Rejection]) -> pd.DataFrame:
    """The rejected rows as a DataFrame with the columns of :data:`REJECTED_COLUMNS`."""
    frame = pd.DataFrame(
        {
            "source_file": pd.Series([r.source_file for r in rejections], dtype="str"),
            "source_line": pd.Series([r.source_line for r in rejections], dtype="int64"),
            "kind": pd.Series([r.kind for r in rejections], dtype="category"),
            "reason": pd.Series([r.reason for r in rejections], dtype="str"),
            "raw": pd.Series([r.raw for r in rejections], dtype="str"),
        }
    )
    return frame


@dataclass
class Audit:
    """Every table loaded from one source, read together.

    Attributes
    ----------
    receipts, exposed : DataFrame
        Retrieval receipts (one row each) and their exposed results.
    plans : DataFrame
        Retrieval plans with their recorded ``retrieval_plan_hash``.
    requests : DataFrame
        C2 compile requests with their recorded ``request_sha256``.
    decisions : DataFrame
        Routing decisions: inputs and recorded outputs.
    policies : PolicySet
        The routing policies found (YAML files), by ``policy_id``.
    rejected : DataFrame
        Every input that was not loaded, with file, line, kind, reason and an
        excerpt (see :data:`REJECTED_COLUMNS`).
    files : list of str
        The files read, in order.
    sources : DataFrame
        Per file: ``values_read``, ``loaded`` (rows in any record table, or 1
        for a policy file) and ``rejected`` (values rejected; a file-level
        problem such as a truncated gzip stream is in ``rejected`` with line 0
        and is not counted here). For every file, loaded + rejected ==
        values_read.
    """

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    policies: PolicySet = field(default_factory=PolicySet)
    rejected: pd.DataFrame = field(default_factory=lambda: rejected_frame([]))
    files: list[str] = field(default_factory=list)
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(frame)}" for name, frame in self.tables.items())
        return (
            f"Audit({len(self.files)} files: {counts}, policies={len(self.policies)}, "
            f"rejected={len(self.rejected)})"
        )

    def summary(self) -> pd.DataFrame:
        """Row counts per table, rejected rows included.

        Returns
        -------
        DataFrame
            One row per table: ``table``, ``rows``.
        """
        rows = [(name, len(frame)) for name, frame in self.tables.items()]
        rows.append(("policies", len(self.policies)))
        rows.append(("rejected", len(self.rejected)))
        return pd.DataFrame(rows, columns=["table", "rows"])


def _progress(items: list, enabled: bool, what: str):
    if not enabled or len(items) < 2:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=what, unit="file", leave=False)


def _sort_value(item: RawValue, kinds: Sequence[RecordKind]) -> RecordKind | Rejection:
    value = item.value
    if not isinstance(value, dict):
        kind_of = type(value).__name__ if value is not None else "null"
        kind_of = {"list": "array", "str": "string", "int": "number", "float": "number"}.get(
            kind_of, kind_of
        )
        return Rejection(
            item.source_file,
            item.source_line,
            "unknown",
            f"expected a JSON object (a record), got a JSON {kind_of}",
            excerpt(item.text),
        )
    for kind in kinds:
        if kind.matches(value):
            return kind
    keys = ", ".join(list(value)[:8])
    return Rejection(
        item.source_file,
        item.source_line,
        "unknown",
        f"not a record of any known kind (keys: {keys}); see FORMATS.md for the record shapes",
        excerpt(item.text),
    )


def _first_line(path: Path) -> bytes:
    """A JSON Lines file's first line (at most 1 MiB of it), read without the rest."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as stream:
            return stream.readline(1 << 20).strip()
    except (OSError, EOFError, zlib.error):
        return b""


def _fast_path_kind(path: Path, kinds: Sequence[RecordKind]) -> tuple[RecordKind, bytes] | None:
    """The kind whose columnar fast path should read this file, if any."""
    if not path.name.lower().endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
        return None
    first = _first_line(path)
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    kind = next((kind for kind in kinds if kind.matches(value)), None)
    if kind is None or kind.arrow_build is None:
        return None
    return kind, first


@dataclass
class _Reading:
    """What one pass over the files found, before the kinds build their tables."""

    files: list[str]
    policy_files: list[Path]
    values: dict[str, list[RawValue]] = field(default_factory=lambda: defaultdict(list))
    columnar: dict[str, list[tuple[int, ColumnarPart]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    rejections: list[Rejection] = field(default_factory=list)
    values_read: dict[str, int] = field(default_factory=dict)


def _read_all(source: Source, kinds: Sequence[RecordKind], *, progress: bool) -> _Reading:
    files = resolve_sources(source)
    policy_files = [path for path in files if path.name.lower().endswith(POLICY_SUFFIXES)]
    reading = _Reading([str(f) for f in files], policy_files)
    for path in _progress([p for p in files if p not in policy_files], progress, "reading"):
        fast = _fast_path_kind(path, kinds)
        if fast is not None:
            kind, first = fast
            part = kind.arrow_build(path, first)
            if part is not None:
                position = len(reading.values[kind.name])
                reading.columnar[kind.name].append((position, part))
                reading.values_read[str(path)] = part.table.num_rows
                continue
        count = 0
        for item in parse_content(read_file(path)):
            # A file-level problem (line 0) is not a value that was read.
            count += isinstance(item, RawValue) or item.source_line > 0
            if isinstance(item, Rejection):
                reading.rejections.append(item)
                continue
            sorted_into = _sort_value(item, kinds)
            if isinstance(sorted_into, Rejection):
                reading.rejections.append(sorted_into)
            else:
                reading.values[sorted_into.name].append(item)
        reading.values_read[str(path)] = count
    for path in policy_files:
        reading.values_read[str(path)] = 1
    return reading


def _combine(
    kind: RecordKind, values: list[RawValue], columnar: list[tuple[int, ColumnarPart]]
) -> KindTables:
    """Build one kind's tables from its values and its columnar parts."""
    if columnar:
        return kind.build(values, columnar=columnar)
    return kind.build(values)


def _warn_or_raise(rejections: list[Rejection], strict: bool) -> None:
    if not rejections:
        return
    first = rejections[0]
    if strict and first.kind == "policies":
        from ._policy_yaml import policy_error

        raise policy_error(first.source_file, None, first.reason, first.source_line or None)
    if strict:
        raise InputError(first.source_file, first.source_line or None, first.reason)
    files = sorted({r.source_file for r in rejections})
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    warnings.warn(
        f"{len(rejections)} input value(s) could not be loaded, in {where} "
        f"(first: {first.source_file}:{first.source_line}: {first.reason}). "
        "They are kept in `audit.rejected` (ea.load(...).rejected).",
        RejectedRowsWarning,
        stacklevel=3,
    )


def load_kind(
    source: Source, kind: RecordKind, *, strict: bool = False, progress: bool = True
) -> KindTables:
    """Load only one record kind from a source.

    Values of other kinds are skipped; values that no kind claims, or that
    this kind claims but that do not fit it, are rejected.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs.
    kind : RecordKind
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` at the first rejection.
    progress : bool, default True
        Show a progress bar over files for long loads.

    Returns
    -------
    KindTables
    """
    reading = _read_all(source, _record_kinds(), progress=progress)
    rejections = [r for r in reading.rejections if r.kind in ("unknown", "file")]
    built = _combine(kind, reading.values.get(kind.name, []), reading.columnar.get(kind.name, []))
    rejections.extend(built.rejected)
    _warn_or_raise(rejections, strict)
    return KindTables(built.tables, rejections)


def load(source: Source, *, strict: bool = False, progress: bool = True) -> Audit:
    """Load every audit record from files, folders or globs.

    Each JSON value is sorted into its record kind by its shape, so a folder
    of mixed logs just works. YAML files are read as routing policies.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        A file, a folder (read recursively), a glob, or a list of them.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded, instead of collecting it in
        ``Audit.rejected``.
    progress : bool, default True
        Show a progress bar over files (tqdm) for long loads.

    Returns
    -------
    Audit

    Warns
    -----
    RejectedRowsWarning
        When some input was rejected: how many, and where to look.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> audit.receipts.withheld_count.sum()  # doctest: +SKIP
    """
    kinds = _record_kinds()
    reading = _read_all(source, kinds, progress=progress)
    rejections = reading.rejections
    tables: dict[str, pd.DataFrame] = {}
    main_tables = []
    for kind in kinds:
        values = reading.values.get(kind.name, [])
        built = _combine(kind, values, reading.columnar.get(kind.name, []))
        tables.update(built.tables)
        main_tables.append(built.tables[kind.tables[0]])
        rejections.extend(built.rejected)
    policies = PolicySet([])
    if reading.policy_files:
        policies, policy_rejections = load_policy_files(reading.policy_files, strict=False)
        rejections.extend(policy_rejections)
    # In file order, then line order: the first of them is what strict mode names.
    rank = {name: index for index, name in enumerate(reading.files)}
    rejections.sort(key=lambda r: (rank.get(r.source_file, len(rank)), r.source_line))
    _warn_or_raise(rejections, strict)
    rejected = rejected_frame(rejections)
    return Audit(
        tables=tables,
        policies=policies,
        rejected=rejected,
        files=reading.files,
        sources=_sources_frame(reading, main_tables, policies, rejected),
    )


def _sources_frame(
    reading: _Reading, main_tables: list[pd.DataFrame], policies: PolicySet, rejected: pd.DataFrame
) -> pd.DataFrame:
    """Per input file: values read, rows loaded into any table, rows rejected."""
    loaded = pd.Series(0, index=pd.Index(reading.files, dtype="str"), dtype="int64")
    for frame in main_tables:
        if len(frame):
            counts = frame["source_file"].astype("str").value_counts()
            loaded = loaded.add(counts, fill_value=0).astype("int64")
    for policy_file in _policy_source_files(policies):
        if policy_file in loaded.index:
            loaded[policy_file] += 1
    rejected_counts = dict(
        rejected.loc[rejected["source_line"] > 0, "source_file"].value_counts().items()
    )
    # A policy file is one value: rejected once, whether its problem has a line or not.
    for policy_file in map(str, reading.policy_files):
        if (rejected["source_file"] == policy_file).any():
            rejected_counts[policy_file] = 1
    frame = pd.DataFrame(
        {
            "source_file": pd.Series(reading.files, dtype="str"),
            "values_read": [reading.values_read.get(f, 0) for f in reading.files],
            "loaded": [int(loaded.get(f, 0)) for f in reading.files],
            "rejected": [int(rejected_counts.get(f, 0)) for f in reading.files],
        }
    )
    return frame.astype({"values_read": "int64", "loaded": "int64", "rejected": "int64"})


def _policy_source_files(policies: PolicySet) -> list[str]:
    return [str(policy.source_file) for policy in policies.values() if policy.source_file]
