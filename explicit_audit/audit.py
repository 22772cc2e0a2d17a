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
    loaded_counts,
    read_all,
    read_bytes,
    rejected_frame,
    sources_frame,
    warn_or_raise,
)
from ._core.limits import Limits, limits_from
from ._core.partitions import is_partitioned
from ._core.records import KindTables, RecordKind, Rejection
from .decisions import KIND as DECISIONS_KIND
from .decisions.policies import PolicySet, load_policy_files
from .errors import AuditError, PolicyError, RejectedRowsWarning
from .partitioned.accounting import in_file_order, loaded_lines
from .partitioned.load import load_partitioned
from .plans import KIND as PLANS_KIND
from .receipts import KIND as RECEIPTS_KIND
from .requests import KIND as REQUESTS_KIND

__all__ = [
    "ENGINES",
    "TABLES",
    "Audit",
    "RejectedRowsWarning",
    "load",
    "load_bytes",
    "load_kind",
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

    @property
    def engine(self) -> str:
        """``"dask"`` when the tables are lazy Dask tables, else ``"pandas"``."""
        lazy = [*self.tables.values(), self.rejected]
        return "dask" if any(is_partitioned(frame) for frame in lazy) else "pandas"

    def __repr__(self) -> str:
        if self.engine == "dask":
            partitions = next(iter(self.tables.values())).npartitions if self.tables else 0
            return (
                f"Audit({len(self.files)} files, {partitions} partitions, not read yet: "
                f"{', '.join(self.tables)}; policies={len(self.policies)})"
            )
        counts = ", ".join(f"{name}={len(frame)}" for name, frame in self.tables.items())
        return (
            f"Audit({len(self.files)} files: {counts}, policies={len(self.policies)}, "
            f"rejected={len(self.rejected)})"
        )

    def compute(self) -> Audit:
        """This audit with every table in memory (pandas); itself if it already is.

        Returns
        -------
        Audit
            The same rows, labels, rejections and sources as a load with
            ``engine="pandas"`` (categories may list their values in another order).
        """
        if self.engine != "dask":
            return self
        import dask

        return self._every_table(dask.compute)

    def persist(self) -> Audit:
        """This audit with its Dask tables read once and kept in the workers' memory.

        Every later pass (a check, a summary, a notebook cell) then starts
        from the rows in memory instead of reading the files again. Only for
        data the cluster's memory holds; without it, each pass reads the
        partitions anew, which is what lets a log larger than memory be
        audited at all.

        Returns
        -------
        Audit
            A new audit of persisted tables; itself for in-memory tables.
        """
        if self.engine != "dask":
            return self
        import dask

        return self._every_table(dask.persist)

    def _every_table(self, step) -> Audit:
        """The audit of ``step(*tables, rejected, sources)``, ``dask.compute`` or ``persist``."""
        names = list(self.tables)
        *tables, rejected, sources = step(
            *[self.tables[n] for n in names], self.rejected, self.sources
        )
        return Audit(
            tables=dict(zip(names, tables, strict=True)),
            policies=self.policies,
            rejected=rejected,
            files=list(self.files),
            sources=sources,
        )

    def accounting(self) -> Audit:
        """This audit with its accounting in memory: ``rejected``, ``sources``, rows per table.

        The record tables stay as they are. For Dask tables the accounting is
        computed in one pass, or taken from the pass of the last
        :func:`~explicit_audit.verify_all` over this audit, which computes it
        along with the checks.

        Returns
        -------
        Audit
            Itself for in-memory tables.
        """
        if self.engine != "dask":
            return self
        known = self.__dict__.get("_accounting")
        if known is not None:
            return known
        import dask

        names = list(self.tables)
        *lengths, rejected, sources = dask.compute(
            *[self.tables[name].shape[0] for name in names], self.rejected, self.sources
        )
        return self.remember_accounting(rejected, sources, dict(zip(names, lengths, strict=True)))

    def remember_accounting(
        self, rejected: pd.DataFrame, sources: pd.DataFrame, rows: dict[str, int]
    ) -> Audit:
        """Keep the computed accounting of this (Dask) audit; the audit that holds it.

        Parameters
        ----------
        rejected, sources : DataFrame
            ``self.rejected`` and ``self.sources``, computed.
        rows : dict
            Rows per record table, computed.
        """
        held = Audit(
            tables=self.tables,
            policies=self.policies,
            rejected=rejected,
            files=list(self.files),
            sources=sources,
        )
        held.__dict__["_rows"] = {**rows, "rejected": len(rejected)}
        self.__dict__["_accounting"] = held
        return held

    def rows(self, table: str) -> int:
        """How many rows ``table`` has (a record table, or ``"rejected"``).

        For Dask tables the count comes from the accounting
        (:meth:`accounting`), computed once for every table.

        Parameters
        ----------
        table : str
            ``"receipts"``, ``"plans"``, ..., or ``"rejected"``.

        Returns
        -------
        int

        Examples
        --------
        >>> audit.rows("presentations")  # doctest: +SKIP
        160
        """
        if table != "rejected" and table not in self.tables:
            raise KeyError(f"no table {table!r}; the tables are {', '.join(self.tables)}")
        counts = self.summary().set_index("table")["rows"]
        return int(counts[table])

    def summary(self) -> pd.DataFrame:
        """Row counts per table, rejected rows included.

        Returns
        -------
        DataFrame
            One row per table: ``table``, ``rows``.
        """
        known = self.__dict__.get("_rows")
        if known is None and self.engine == "dask":
            return self.accounting().summary()
        if known is None:
            known = {name: len(frame) for name, frame in self.tables.items()}
            known["rejected"] = len(self.rejected)
        rows = [(name, known[name]) for name in [*self.tables, "rejected"]]
        rows.insert(len(self.tables), ("policies", len(self.policies)))
        return pd.DataFrame(rows, columns=["table", "rows"])


#: The keywords every loader takes after ``source`` and ``strict``, as documented.
READING_OPTIONS = """    progress : bool, default True
        Show a progress bar over files (tqdm) for long loads.
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit._core.limits`.
    engine : {"pandas", "dask"}, default "pandas"
        ``"dask"`` returns lazy ``dask.dataframe`` tables, read partition by
        partition when computed (see README, "Past one machine").
    blocksize : int, optional
        With ``engine="dask"``: bytes per partition of a large JSON Lines
        file (default 64 MiB).
    sample_bytes : int, optional
        With ``engine="dask"``: bytes of each file's head read at once to
        learn the tables' columns (default 1 MiB)."""


def reading_options(func):
    """Write :data:`READING_OPTIONS` into ``func``'s docstring where it says so."""
    func.__doc__ = func.__doc__.replace("    {reading_options}", READING_OPTIONS)
    return func


#: The engines a load can run on.
ENGINES = ("pandas", "dask")


def _is_dask(engine: str) -> bool:
    if engine not in ENGINES:
        raise AuditError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    return engine == "dask"


def engine_options(engine: str, blocksize: int | None, sample_bytes: int | None) -> dict:
    """The engine keywords of a loader, to pass on to :func:`load_kind`."""
    return {"engine": engine, "blocksize": blocksize, "sample_bytes": sample_bytes}


def _raise_or_warn(rejections: list[Rejection], strict: bool) -> None:
    first = rejections[0] if rejections else None
    if strict and first is not None and first.kind == "policies":
        raise PolicyError.at(first.source_file, None, first.reason, first.source_line or None)
    warn_or_raise(rejections, strict)


@reading_options
def load_kind(
    source: Source,
    kind: RecordKind,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
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
    {reading_options}

    Returns
    -------
    KindTables
    """
    if _is_dask(engine):
        planned = load_partitioned(
            source,
            RECORD_KINDS,
            keep={kind.name},
            strict=strict,
            limits=limits_from(limits),
            blocksize=blocksize,
            sample_bytes=sample_bytes,
        )
        return KindTables(planned.tables, [])
    reading = read_all(
        source, RECORD_KINDS, progress=progress, keep={kind.name}, limits=limits_from(limits)
    )
    rejections = [r for r in reading.rejections if r.kind in ("unknown", "file")]
    rejections.extend(reading.overflow_rows())
    built = build_kind(kind, reading.segments.get(kind.name, []))
    rejections.extend(built.rejected)
    _raise_or_warn(rejections, strict)
    return KindTables(built.tables, rejections)


@reading_options
def load(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
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
    {reading_options}

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
    if _is_dask(engine):
        planned = load_partitioned(
            source,
            RECORD_KINDS,
            strict=strict,
            limits=limits_from(limits),
            blocksize=blocksize,
            sample_bytes=sample_bytes,
        )
        return Audit(
            tables=planned.tables,
            policies=planned.policies,
            rejected=planned.rejected,
            files=planned.files,
            sources=planned.sources,
        )
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
        main_tables.append(loaded_lines(kind, built))
        rejections.extend(built.rejected)
    policies = PolicySet([])
    if reading.policy_files:
        policies, policy_rejections = load_policy_files(reading.policy_files, strict=False)
        rejections.extend(policy_rejections)
    rejections.extend(reading.overflow_rows())
    # In file order, then line order: the first of them is what strict mode names.
    rejections = in_file_order(rejections, reading.files)
    _raise_or_warn(rejections, strict)
    rejected = rejected_frame(rejections)
    return Audit(
        tables=tables,
        policies=policies,
        rejected=rejected,
        files=reading.files,
        sources=sources_frame(
            reading, loaded_counts(main_tables), _policy_source_files(policies), rejected
        ),
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


def _policy_source_files(policies: PolicySet) -> list[str]:
    return [str(policy.source_file) for policy in policies.values() if policy.source_file]
