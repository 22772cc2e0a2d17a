"""The :class:`Audit`: every table of one load, read together; and the in-memory load.

The tables an :class:`Audit` holds are those of the registered record kinds
(:mod:`explicit_audit._core.registry`), listed in :data:`TABLES`.
:func:`audit_of_reading` builds an in-memory audit from one reading of the
files: each kind builds its tables from the values sorted into it, and
whatever cannot be read, or is claimed by a kind but does not fit it, ends
up in ``Audit.rejected``; for every file, loaded + rejected == values read.
``ea.load`` (:mod:`explicit_audit.loading`) chooses the engine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from ._core import registry
from ._core.engine import computed, engine_of, is_lazy, persisted
from ._core.key_table import keys_frame
from ._core.records import Documents, RecordKind
from .parquet import write_parquet
from .reading.collect import Reading
from .reading.tables import (
    build_kind,
    in_file_order,
    load_documents,
    loaded_counts,
    rejected_frame,
    sources_frame,
    warn_extra_json,
    warn_or_raise,
    warn_unparsed_times,
)

__all__ = ["TABLES", "Audit", "audit_of_reading", "with_heads_as_needed"]  # noqa: F822


def __getattr__(name: str) -> Any:
    # TABLES: the tables of an Audit, name -> what one row is, as registered now.
    if name == "TABLES":
        return MappingProxyType({n: t.row for n, t in registry.tables().items()})
    raise AttributeError(name)


def _documents(among: Sequence[RecordKind] | None = None) -> list[Documents]:
    if among is None:
        return registry.documents()
    return [kind.documents for kind in among if kind.documents is not None]


#: A step over an audit (a check, the accounting), as :func:`with_heads_as_needed` runs it.
Step = Callable[["Audit"], Any]


@dataclass
class Audit:
    """Every table loaded from one source, read together.

    Each table of each registered record kind is an attribute of its name
    (``audit.receipts``, ``audit.plans``, ...: :data:`TABLES` lists them, with
    what one row is), and so are the documents a kind reads whole beside its
    records (``audit.policies``, the routing policies, by ``policy_id``).

    Attributes
    ----------
    tables : dict of str to DataFrame
        Every record table, by name, in the kinds' order.
    documents : dict
        The documents read whole (YAML policies), by name.
    rejected : DataFrame
        Every input that was not loaded, with file, line, kind, reason and an
        excerpt (see :data:`REJECTED_COLUMNS`).
    files : list of str
        The files read, in order.
    sources : DataFrame
        Per file: ``values_read``, ``loaded`` (rows in any record table, or 1
        for a policy file) and ``rejected`` (values rejected; a file-level
        problem such as a truncated gzip stream is in ``rejected`` with line 0
        and is not counted here), ``bytes`` and ``sha256`` of the bytes as
        read (NA for a file not read to its end), and ``skipped`` (NA for a
        file read). For every file, loaded + rejected == values_read. Then a
        row per entry of a folder skipped for its name (hidden, no suffix the
        kit reads, a link to a folder already read), the reason in
        ``skipped``.
    keys : DataFrame
        One row per key a loaded record holds that its kind does not declare,
        or per declared field it leaves to the producer's default (see
        :data:`~explicit_audit._core.key_table.KEY_COLUMNS`): the rows of the
        check ``record_keys``.
    """

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    documents: dict[str, Any] = field(default_factory=dict)
    rejected: pd.DataFrame = field(default_factory=lambda: rejected_frame([]))
    files: list[str] = field(default_factory=list)
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)
    keys: pd.DataFrame = field(default_factory=lambda: keys_frame([]))
    #: Rows per table, known once computed (the accounting of a Dask audit).
    rows_known: dict[str, int] | None = field(default=None, repr=False, compare=False)
    #: Per file read as a stream (a URL, a file object, stdin): (bytes, SHA-256) of what was
    #: read, for the provenance of what cannot be read again.
    digests: dict[str, tuple[int, str]] = field(default_factory=dict, repr=False, compare=False)
    #: Of a Dask load: ``retry(step)`` is ``step(audit)``, of the load planned again with
    #: heads that take in a partition holding a key its heads did not show (see
    #: :func:`with_heads_as_needed`).
    retry: Callable[[Step], Any] | None = field(default=None, repr=False, compare=False)
    #: Of a load with ``state=`` (:mod:`explicit_audit.state`): edits, row checks' findings.
    changes: pd.DataFrame | None = field(default=None, repr=False, compare=False)
    #: Of a load with ``state=``: the lines the state audited before, compared with the files.
    audited_before: int = field(default=0, repr=False, compare=False)
    known_findings: dict | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        documents = self.__dict__.get("documents", {})
        if name in documents:
            return documents[name]
        for declared in registry.documents():
            if declared.name == name:
                return declared.empty()
        raise AttributeError(name)

    @property
    def engine(self) -> str:
        """``"dask"`` when the tables are lazy Dask tables, else ``"pandas"``."""
        return engine_of(*self.tables.values(), self.rejected)

    @property
    def lazy(self) -> bool:
        """Whether the tables are lazy Dask tables, read only when computed."""
        return is_lazy(*self.tables.values(), self.rejected)

    def __repr__(self) -> str:
        documents = [f"{d.name}={len(getattr(self, d.name))}" for d in _documents()]
        if self.lazy:
            partitions = next(iter(self.tables.values())).npartitions if self.tables else 0
            return (
                f"Audit({_counted(len(self.files), 'file')}, "
                f"{_counted(partitions, 'partition')}, not read yet: "
                f"{'; '.join([', '.join(self.tables), *documents])})"
            )
        counts = [f"{name}={len(frame)}" for name, frame in self.tables.items()]
        counts += [*documents, f"rejected={len(self.rejected)}"]
        return f"Audit({_counted(len(self.files), 'file')}: {', '.join(counts)})"

    def compute(self) -> Audit:
        """This audit with every table in memory (pandas); itself if it already is.

        Returns
        -------
        Audit
            The same rows, labels, rejections and sources as a load with
            ``engine="pandas"`` (categories may list their values in another order).
        """
        if not self.lazy:
            return self
        return _every_table(self, computed)

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
        if not self.lazy:
            return self
        return _every_table(self, persisted)

    def to_parquet(self, directory: str | os.PathLike) -> Path:
        """Write every table to ``directory``, one Parquet file each, to read back whole.

        The record tables, ``rejected`` and ``sources`` are written as
        ``<table>.parquet``, the files read and the documents (the routing
        policies) in ``audit.json``; :func:`~explicit_audit.read_parquet`
        gives the audit back, and its checks the same findings. The values
        hashes are rebuilt from are written as their JSON text (see
        :mod:`explicit_audit.parquet`). pandas, polars and DuckDB read every
        file.

        Parameters
        ----------
        directory : str or path-like
            Created when missing; files of the same names are replaced.

        Returns
        -------
        pathlib.Path
            The folder.

        Examples
        --------
        >>> audit.to_parquet("audit-2025-03/")  # doctest: +SKIP
        PosixPath('audit-2025-03')
        """
        audit = self.compute()
        return write_parquet(
            audit.tables,
            rejected=audit.rejected,
            sources=audit.sources,
            files=audit.files,
            documents=audit.documents,
            directory=directory,
            digests=audit.digests,
            keys=audit.keys,
        )

    def accounting(self) -> Audit:
        """This audit with its accounting in memory: ``rejected``, ``sources``, ``keys``,
        rows per table.

        The record tables stay as they are. For Dask tables the accounting is
        computed in one pass (:func:`~explicit_audit.verify_all` computes it
        along with the checks: ``Verification.accounting``).

        Returns
        -------
        Audit
            Itself for in-memory tables.
        """
        if not self.lazy or self.rows_known is not None:
            return self
        return with_heads_as_needed(self, _accounted)

    def with_accounting(
        self,
        rejected: pd.DataFrame,
        sources: pd.DataFrame,
        rows: dict[str, int],
        *,
        keys: pd.DataFrame | None = None,
    ) -> Audit:
        """This (Dask) audit with its accounting computed elsewhere: a new audit.

        Parameters
        ----------
        rejected, sources : DataFrame
            ``self.rejected`` and ``self.sources``, computed.
        rows : dict
            Rows per record table, computed.
        keys : DataFrame, optional
            ``self.keys``, computed; left as it is when not given.
        """
        return replace(
            self,
            rejected=rejected,
            files=list(self.files),
            sources=sources,
            keys=self.keys if keys is None else keys,
            rows_known={**rows, "rejected": len(rejected)},
        )

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
        known = self.rows_known
        if known is None and self.lazy:
            return self.accounting().summary()
        if known is None:
            known = {name: len(frame) for name, frame in self.tables.items()}
            known["rejected"] = len(self.rejected)
        rows = [(name, known[name]) for name in self.tables]
        rows += [(declared.name, len(getattr(self, declared.name))) for declared in _documents()]
        rows.append(("rejected", known["rejected"]))
        return pd.DataFrame(rows, columns=["table", "rows"])


def _counted(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _every_table(audit: Audit, step) -> Audit:
    """The audit of ``step(*tables, rejected, sources)``, ``dask.compute`` or ``persist``."""
    names = list(audit.tables)
    *tables, rejected, sources, keys = step(
        *[audit.tables[n] for n in names], audit.rejected, audit.sources, audit.keys
    )
    # Counted anew, and no longer planned from the files: no rows known, nothing to retry.
    return replace(
        audit,
        tables=dict(zip(names, tables, strict=True)),
        rejected=rejected,
        files=list(audit.files),
        sources=sources,
        keys=keys,
        rows_known=None,
        retry=None,
    )


def _accounted(audit: Audit) -> Audit:
    """The Dask audit with its accounting computed in one pass (``Audit.accounting``)."""
    names = list(audit.tables)
    *lengths, rejected, sources, keys = computed(
        *[audit.tables[name].shape[0] for name in names],
        audit.rejected,
        audit.sources,
        audit.keys,
    )
    rows = dict(zip(names, lengths, strict=True))
    return audit.with_accounting(rejected, sources, rows, keys=keys)


def with_heads_as_needed(audit: Audit, step: Step) -> Any:
    """``step(audit)``; for a Dask load, planned again where the heads of its files fell short.

    A partition holding a key the heads of the files did not show (first
    seen after ``sample_bytes``) cannot fit the lazy tables' columns: the
    load is planned again with heads that take that partition in
    (``Audit.retry``), as often as needed, so that the answer is the
    in-memory engine's.

    Parameters
    ----------
    audit : Audit
    step : callable
        ``step(audit)`` computes what is asked of the audit.

    Returns
    -------
    object
        What ``step`` returned.
    """
    return step(audit) if audit.retry is None else audit.retry(step)


def audit_of_reading(
    reading: Reading,
    kinds: Sequence[RecordKind],
    *,
    strict: bool,
    documents: bool = True,
    strict_keys: bool = False,
    on_kind: Callable[[str | None], None] | None = None,
) -> Audit:
    """Every kind's tables, the documents and the rejected rows of one reading, in memory.

    ``on_kind(name)``, when given, is called as each kind's tables begin, and
    ``on_kind(None)`` once all are built (the progress bar, closed before any warning).
    """
    rejections = reading.rejections
    tables: dict[str, pd.DataFrame] = {}
    main_tables = []
    notes = []
    for kind in kinds:
        if on_kind is not None:
            on_kind(kind.name)
        built = build_kind(
            kind,
            reading.segments.get(kind.name, []),
            strict_keys=strict_keys,
            limits=reading.limits,
        )
        notes.append((kind.name, built.notes))
        tables.update(built.tables)
        main_tables.append(kind.loaded_rows(built))
        rejections.extend(built.rejected)
    if on_kind is not None:
        on_kind(None)
    declared = _documents(kinds) if documents else []
    # The bytes the load hashed, not the files read again.
    held = (reading.held_policies or reading.policy_files) if reading.policy_files else []
    loaded, problems, loaded_files = load_documents(declared, held, reading.limits)
    rejections.extend(problems)
    rejections.extend(reading.overflow_rows())
    # In file order, then line order: the first of them is what strict mode names.
    rejections = in_file_order(rejections, reading.files)
    warn_or_raise(rejections, strict, declared)
    warn_unparsed_times(tables)
    warn_extra_json(tables, reading.limits)
    rejected = rejected_frame(rejections)
    return Audit(
        tables=tables,
        documents=loaded,
        rejected=rejected,
        files=reading.files,
        sources=sources_frame(reading, loaded_counts(main_tables), loaded_files, rejected),
        digests=dict(reading.digests),
        keys=keys_frame(notes, reading.files),
    )
