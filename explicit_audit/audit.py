"""One entry point: ``ea.load(source)``, the per-kind loaders, and the :class:`Audit`.

The loader reads every file once, sorts each JSON value into its record kind
by its shape, and hands each kind its values to build that kind's tables.
Whatever cannot be read, or is claimed by a kind but does not fit it, ends up
in ``Audit.rejected``; for every file, loaded + rejected == values read.

The tables an :class:`Audit` holds are declared in :data:`TABLES`, one line
each, as the record kinds fill them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

import pandas as pd

from ._core.collect import (
    Reading,
    Source,
    build_kind,
    read_all,
    read_bytes,
    rejected_frame,
    sources_frame,
    warn_or_raise,
)
from ._core.limits import Limits, limits_from
from ._core.records import KindTables, RecordKind, Rejection
from .decisions import KIND as DECISIONS_KIND
from .decisions.policies import PolicySet, load_policy_files
from .errors import PolicyError, RejectedRowsWarning
from .plans import KIND as PLANS_KIND
from .receipts import KIND as RECEIPTS_KIND
from .requests import KIND as REQUESTS_KIND

__all__ = [
    "TABLES",
    "Audit",
    "RejectedRowsWarning",
    "load",
    "load_bytes",
    "load_decisions",
    "load_kind",
    "load_plans",
    "load_receipts",
    "load_receipts_and_exposed",
    "load_requests",
]

#: Every record kind ``load`` sorts values into, in matching order.
RECORD_KINDS: tuple[RecordKind, ...] = (RECEIPTS_KIND, PLANS_KIND, REQUESTS_KIND, DECISIONS_KIND)

#: The tables of an :class:`Audit`: name -> what one row is (columns: each kind's module).
TABLES = MappingProxyType(
    {
        "receipts": "one retrieval receipt (engram); explicit_audit.receipts",
        "exposed": "one exposed result of a receipt; explicit_audit.receipts",
        "presentations": "one presentation line (engram), presented or failed; "
        "explicit_audit.receipts.presentations",
        "plans": "one retrieval plan record (arborist); explicit_audit.plans",
        "requests": "one C2 compile request (explicit_learning); explicit_audit.requests",
        "decisions": "one routing decision (hyungi document server); explicit_audit.decisions",
    }
)


@dataclass
class Audit:
    """Every table loaded from one source, read together.

    Attributes
    ----------
    receipts, exposed : DataFrame
        Retrieval receipts (one row each) and their exposed results.
    presentations : DataFrame
        engram's presentation outcomes, one row per line, keyed to the
        retrieval receipt each embeds (``receipt_row``).
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


def _raise_or_warn(rejections: list[Rejection], strict: bool) -> None:
    first = rejections[0] if rejections else None
    if strict and first is not None and first.kind == "policies":
        raise PolicyError.at(first.source_file, None, first.reason, first.source_line or None)
    warn_or_raise(rejections, strict)


def load_kind(
    source: Source,
    kind: RecordKind,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
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
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    KindTables
    """
    reading = read_all(
        source, RECORD_KINDS, progress=progress, keep={kind.name}, limits=limits_from(limits)
    )
    rejections = [r for r in reading.rejections if r.kind in ("unknown", "file")]
    rejections.extend(reading.overflow_rows())
    built = build_kind(kind, reading.segments.get(kind.name, []))
    rejections.extend(built.rejected)
    _raise_or_warn(rejections, strict)
    return KindTables(built.tables, rejections)


def load(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> Audit:
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
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

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
    reading = read_all(source, RECORD_KINDS, progress=progress, limits=limits_from(limits))
    return _audit_from(reading, strict=strict)


def _audit_from(reading: Reading, *, strict: bool) -> Audit:
    """Every kind's tables, the policies and the rejected rows of one reading."""
    rejections = reading.rejections
    tables: dict[str, pd.DataFrame] = {}
    main_tables = []
    for kind in RECORD_KINDS:
        built = build_kind(kind, reading.segments.get(kind.name, []))
        tables.update(built.tables)
        main_tables.append(_loaded_lines(kind, built))
        rejections.extend(built.rejected)
    policies = PolicySet([])
    if reading.policy_files:
        policies, policy_rejections = load_policy_files(reading.policy_files, strict=False)
        rejections.extend(policy_rejections)
    rejections.extend(reading.overflow_rows())
    # In file order, then line order: the first of them is what strict mode names.
    rank = {name: index for index, name in enumerate(reading.files)}
    rejections.sort(key=lambda r: (rank.get(r.source_file, len(rank)), r.source_line))
    _raise_or_warn(rejections, strict)
    rejected = rejected_frame(rejections)
    return Audit(
        tables=tables,
        policies=policies,
        rejected=rejected,
        files=reading.files,
        sources=sources_frame(reading, main_tables, _policy_source_files(policies), rejected),
    )


def load_bytes(
    data: bytes,
    *,
    source_file: str,
    first_line: int = 1,
    lines: bool = True,
    strict: bool = False,
    limits: Limits | dict | None = None,
) -> Audit:
    """Load the records held in bytes, as if read from ``source_file``.

    This is how a part of a file is read on its own (a byte range of a large
    JSON Lines file, say): the rows carry ``source_file`` and the line numbers
    of the file they came from.

    Parameters
    ----------
    data : bytes
        The content, decompressed; for JSON Lines, whole lines.
    source_file : str
        The file the bytes come from, as rows and rejections name it.
    first_line : int, default 1
        The file line on which ``data`` starts.
    lines : bool, default True
        JSON Lines (one value per line); False for ``.json`` content (an
        array, a record, or values one after another).
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` at the first rejection.

    Returns
    -------
    Audit
        With one entry in ``files`` and ``sources``: ``source_file``.

    Examples
    --------
    >>> import warnings
    >>> from explicit_audit.audit import load_bytes
    >>> with warnings.catch_warnings(action="ignore"):
    ...     part = load_bytes(b'{"not": "a record"}\\n', source_file="log.jsonl", first_line=41)
    >>> part.rejected[["source_file", "source_line", "kind"]].to_dict("records")
    [{'source_file': 'log.jsonl', 'source_line': 41, 'kind': 'unknown'}]
    """
    reading = read_bytes(
        data,
        source_file,
        RECORD_KINDS,
        jsonl=lines,
        first_line=first_line,
        limits=limits_from(limits),
    )
    return _audit_from(reading, strict=strict)


def _loaded_lines(kind: RecordKind, built: KindTables) -> pd.DataFrame:
    """One row per value a kind loaded (its file in ``source_file``), for ``Audit.sources``.

    That is a row of its main table, but for a presentation that failed before
    retrieval: a loaded value with a ``presentations`` row and no receipt row.
    """
    main = built.tables[kind.tables[0]]
    presentations = built.tables.get("presentations")
    if presentations is None or not presentations["receipt_row"].isna().any():
        return main
    alone = presentations.loc[presentations["receipt_row"].isna(), ["source_file"]]
    return pd.concat([main[["source_file"]], alone]).astype({"source_file": "str"})


def _policy_source_files(policies: PolicySet) -> list[str]:
    return [str(policy.source_file) for policy in policies.values() if policy.source_file]


def load_plans(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> pd.DataFrame:
    """Load arborist retrieval-plan records into a DataFrame, one row per run.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    progress : bool, default True
        Show a progress bar over files for long loads.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    DataFrame
        The ``plans`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> plans = ea.load_plans("data/plans/")  # doctest: +SKIP
    >>> ea.verify_plans(plans).status.value_counts()  # doctest: +SKIP
    """

    return load_kind(source, PLANS_KIND, strict=strict, progress=progress, limits=limits).tables[
        "plans"
    ]


def load_requests(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> pd.DataFrame:
    """Load explicit_learning C2 compile requests, one row per request sent.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    progress : bool, default True
        Show a progress bar over files for long loads.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    DataFrame
        The ``requests`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> requests = ea.load_requests("data/requests/")  # doctest: +SKIP
    >>> ea.verify_requests(requests).finding.value_counts()  # doctest: +SKIP
    """

    return load_kind(source, REQUESTS_KIND, strict=strict, progress=progress, limits=limits).tables[
        "requests"
    ]


def load_receipts_and_exposed(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load retrieval receipts and their exposed results.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs.
    strict : bool, default False
        Raise at the first input that cannot be loaded.
    progress : bool, default True
        Show a progress bar over files for long loads.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    receipts, exposed : DataFrame
        See the module docstring for their columns.
    """

    built = load_kind(source, RECEIPTS_KIND, strict=strict, progress=progress, limits=limits)
    return built.tables["receipts"], built.tables["exposed"]


def load_receipts(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> pd.DataFrame:
    """Load retrieval receipts (engram) into a DataFrame, one row per receipt.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    progress : bool, default True
        Show a progress bar over files for long loads.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    DataFrame
        The ``receipts`` table (columns in the module docstring). Rejected
        inputs are announced by a :class:`~explicit_audit.RejectedRowsWarning`;
        ``ea.load(source).rejected`` lists them.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> receipts = ea.load_receipts("data/receipts/")  # doctest: +SKIP
    >>> receipts.groupby("withheld_audience").withheld_count.sum()  # doctest: +SKIP
    """
    return load_receipts_and_exposed(source, strict=strict, progress=progress, limits=limits)[0]


def load_decisions(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
) -> pd.DataFrame:
    """Load routing decision records into one table.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs of ``.jsonl``/``.json`` (optionally ``.gz``).
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` at the first record that does not fit.
    progress : bool, default True
        Show a progress bar over files.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.

    Returns
    -------
    DataFrame
        The ``decisions`` table (columns in the module docstring). Rejected
        records are only reported; load with :func:`explicit_audit.load` to
        keep them in ``audit.rejected``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> decisions = ea.load_decisions("data/decisions/")  # doctest: +SKIP
    >>> decisions.recorded_escalate_to_26b.mean()  # doctest: +SKIP
    """

    return load_kind(
        source, DECISIONS_KIND, strict=strict, progress=progress, limits=limits
    ).tables["decisions"]
