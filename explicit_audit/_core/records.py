"""What a record kind declares, and what the reading core hands to it.

The reading core (:mod:`explicit_audit.reading.collect`) turns files into
:class:`RawValue` objects (parsed JSON values with their provenance) and
:class:`Rejection` objects (input that could not be read). Each record kind
is a :class:`RecordKind`, declared once in its own package and registered
with one call (:func:`explicit_audit._core.registry.register`):

- how it reads: a shape test that claims a parsed value, and a builder that
  turns the claimed values into the kind's tables plus the values that do
  not fit (how the reading engine may read it faster is its own
  :class:`~explicit_audit.reading.fast.FastPath`, never needed);
- its tables (:class:`Table`): what one row is, and the columns that hold a
  row label of another table;
- its checks (:class:`Checker`): the tables and documents they read, the
  checks and rules they report, the records they examine, and how their
  findings combine across partitions;
- the whole-file documents it reads beside its records (:class:`Documents`,
  the routing policies of the decisions kind).

Every layer (the loader, ``Audit``, ``verify_all``, the command line, the
Dask engine) iterates the registered kinds; none names one.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..errors import RecordError
from .surrogates import lone_surrogate, may_hold_surrogate

__all__ = [
    "Check",
    "Checker",
    "Documents",
    "KindTables",
    "RawValue",
    "RecordKind",
    "Rejection",
    "Table",
    "excerpt",
    "excerpts_limited",
    "segment_values",
    "sort_out",
]


@dataclass(frozen=True, slots=True)
class RawValue:
    """One JSON value as read from a file.

    Attributes
    ----------
    source_file : str
        The file it came from, as given or found.
    source_line : int
        The 1-based line on which the value starts.
    value : Any
        The value parsed with orjson: ints stay ints, floats keep the exact
        value written, strings are not normalised. Hashes are rebuilt from
        this, never from DataFrame columns.
    text : bytes
        The raw bytes of the value as written (UTF-8), for excerpts and for
        checks that need the exact text.
    """

    source_file: str
    source_line: int
    value: Any
    text: bytes


@dataclass(frozen=True, slots=True)
class Rejection:
    """One input that was read but could not be loaded.

    Attributes
    ----------
    source_file, source_line :
        Where the value starts (``source_line`` is 0 when the whole file is at fault).
    kind : str
        The record kind it was meant for (``"receipts"``, ...), or ``"unknown"``
        when no kind claimed it, or ``"file"`` when the file itself is at fault.
    reason : str
        What is wrong, naming the field.
    raw : str
        An excerpt of the raw text (at most a few hundred characters).
    """

    source_file: str
    source_line: int
    kind: str
    reason: str
    raw: str


@dataclass(slots=True)
class KindTables:
    """What a record kind's builder returns: its tables and what did not fit."""

    tables: dict[str, pd.DataFrame]
    rejected: list[Rejection] = field(default_factory=list)
    #: ``(RawValue, Shape, [KeyNote, ...])`` of the values loaded whose keys the
    #: shape does not account for as written; filled by the reading core.
    notes: list = field(default_factory=list)


@dataclass(frozen=True)
class Table:
    """One table a record kind fills.

    Attributes
    ----------
    name : str
        The table's name, also the :class:`~explicit_audit.Audit` attribute
        that holds it (``"exposed"``).
    row : str
        What one row is, and the module that documents its columns.
    references : mapping, optional
        ``{column: table}``: the columns that hold a row label of another
        table (``{"receipt_row": "receipts"}``); the Dask engine shifts them
        with the rows they name.
    shapes : tuple of Shape, optional
        The shapes of the lines it is filled from, where they are not the
        kind's record shapes (engram's presentation lines), published as a
        schema of their own (:func:`explicit_audit._core.shape.published`).
    written : tuple of str, optional
        Columns that say how a record was written, not what it says (its
        shape, a text kept byte for byte): two records of one identity alike
        in every other column of the kind's own are the same record
        (:mod:`explicit_audit._core.duplicates`).
    """

    name: str
    row: str = ""
    references: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    shapes: tuple[Any, ...] = ()
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """One check of :func:`~explicit_audit.verify_all`, as its verdict names it.

    Attributes
    ----------
    name : str
        The check's name (``"plan_hashes"``); its rules name it as their ``check``.
    covers : str
        What it covers, in a few words, as ``verify`` prints it.
    examines : str or None
        The table whose rows it looks at, counted as the records it checked;
        None for the tables its checker says (:attr:`Checker.examined`), or
        every value read (the rejected rows).
    """

    name: str
    covers: str
    examines: str | None


@dataclass(frozen=True)
class Checker:
    """One function that finds the findings of one or more checks.

    Attributes
    ----------
    run : callable
        ``run(*tables, **documents) -> findings``: plain pandas over one
        partition of each table of ``reads`` (the whole in-memory tables on
        the pandas engine), returning the kit's findings shape
        (:data:`~explicit_audit._core.findings.FINDING_COLUMNS`).
    reads : tuple of str
        The tables it is given, in order (a table of any kind, or ``"rejected"``).
    checks : tuple of Check
        The checks whose findings it finds; each finding's rule names one.
    rules : RuleTable
        Every rule it may report.
    documents : tuple of str, optional
        Documents it is given by name as keywords (``("policies",)``).
    combine : callable, optional
        ``combine(list of run's results) -> findings``, over the partitions of
        a Dask table, in partition order. The default concatenates them: a
        check of each row on its own. A check across rows (one payload per
        ``base_id``) has ``run`` return what the combine step needs.
    whole : callable, optional
        The findings of whole in-memory tables, where ``run`` gives a
        partition's part only (with ``combine``).
    order : int, optional
        Where its checks stand in the verdict (lower first; registration order
        breaks ties).
    examined : callable, optional
        ``examined(tables) -> names``: of the audit's tables (name -> frame,
        either engine), those whose rows its checks without a table of their
        own (``Check.examines`` None) look at, counted as the records they
        checked. The default: every kind's table among ``reads``, and where
        ``reads`` holds none (the rejected rows, the keys), every value read.
    """

    run: Callable[..., Any]
    reads: tuple[str, ...]
    checks: tuple[Check, ...]
    rules: Any
    documents: tuple[str, ...] = ()
    combine: Callable[[list], Any] | None = None
    whole: Callable[..., Any] | None = None
    order: int = 1000
    examined: Callable[[Mapping[str, Any]], Sequence[str]] | None = None


@dataclass(frozen=True)
class Documents:
    """Whole files a kind reads beside its records (YAML policies).

    Attributes
    ----------
    name : str
        The :class:`~explicit_audit.Audit` attribute that holds them (``"policies"``).
    kind : str
        Their kind in the rejected table.
    load : callable
        ``load(paths) -> (documents, rejections)``: every file, each loaded
        or rejected.
    empty : callable
        ``empty() -> documents``: none loaded.
    files : callable
        ``files(documents) -> list of str``: the files that loaded, as named.
    strict_error : callable
        ``strict_error(rejection) -> AuditError``: what ``strict=True`` raises
        for the first rejected file.
    dump : callable, optional
        ``dump(documents) -> list``: the documents as JSON values, for
        ``Audit.to_parquet``; None where they are not written.
    restore : callable, optional
        ``restore(values) -> documents``: the inverse of ``dump``.
    shapes : tuple of Shape, optional
        The shape of one document, published as a schema of its own
        (:func:`explicit_audit._core.shape.published`).
    """

    name: str
    kind: str
    load: Callable[[Sequence[Any]], tuple[Any, list[Rejection]]]
    empty: Callable[[], Any]
    files: Callable[[Any], list[str]]
    strict_error: Callable[[Rejection], Exception]
    dump: Callable[[Any], list] | None = None
    restore: Callable[[list], Any] | None = None
    shapes: tuple[Any, ...] = ()


@dataclass(frozen=True)
class RecordKind:
    """One record kind: how it is read, the tables it fills and how they are checked.

    Attributes
    ----------
    name : str
        The kind's name, also used in the rejected table (``"receipts"``).
    tables : tuple of Table
        The :class:`~explicit_audit.Audit` tables it fills; the first is its
        main table (a plain name stands for a :class:`Table` of that name).
    matches : callable
        ``matches(value) -> bool``: whether a parsed JSON value has this kind's
        shape. Shapes of different kinds must not overlap.
    build : callable
        ``build(segments) -> KindTables``. ``segments`` holds, file by file,
        ``("values", [RawValue, ...])`` read value by value and, for a kind
        with a columnar path, ``("part", ColumnarPart)``; within a file they
        come in any order, and the builder puts the rows in file order
        (by ``source_line``). A value that is claimed but does not fit goes to
        ``rejected``; nothing is dropped.
    checks : tuple of Checker, optional
        How its tables are checked by :func:`~explicit_audit.verify_all`.
    documents : Documents, optional
        The whole files it reads beside its records.
    loaded : callable, optional
        ``loaded(built) -> DataFrame``: one row (its ``source_file``) per value
        the kind loaded, for ``Audit.sources``; by default the rows of its
        main table.
    order : int, optional
        Where the kind stands among the others (its tables in an ``Audit``,
        and the order values are matched in); lower first, registration order
        breaks ties.
    shapes : tuple of Shape, optional
        The record shapes its producer writes, declared once
        (:mod:`explicit_audit._core.shape`): the kind's JSON Schema, its
        field tables in ``docs/formats.md`` and the check ``record_keys``
        (every unknown key and every field left to its default, see
        :mod:`explicit_audit._core.keys`) come from them. A columnar path
        must refuse a piece where a field with a default is absent, so that
        the value-by-value path notes it.
    shape_of : callable, optional
        ``shape_of(value) -> Shape | None``: the shape a claimed value is read
        as, for its keys; None for a value no shape declares (its keys are
        then not noted). By default the shape that fits best
        (:func:`explicit_audit._core.keys.shape_of`).
    fast : FastPath, optional
        How the reading engine reads the kind fast
        (:class:`explicit_audit.reading.fast.FastPath`: its values parsed in
        bulk into Arrow columns). Left out, the kind is read value by value,
        with the same rows: a plug-in never has to set it.
    """

    name: str
    tables: tuple[Table, ...]
    matches: Callable[[Any], bool]
    build: Callable[[Sequence[tuple[str, Any]]], KindTables]
    checks: tuple[Checker, ...] = ()
    documents: Documents | None = None
    loaded: Callable[[KindTables], pd.DataFrame] | None = None
    order: int = 1000
    shapes: tuple[Any, ...] = ()
    shape_of: Callable[[Any], Any] | None = None
    fast: Any = None

    def __post_init__(self) -> None:
        tables = tuple(Table(t) if isinstance(t, str) else t for t in self.tables)
        object.__setattr__(self, "tables", tables)
        if not tables:
            raise ValueError(f"record kind {self.name!r} declares no table")

    @property
    def table_names(self) -> tuple[str, ...]:
        """The names of its tables, the main one first."""
        return tuple(table.name for table in self.tables)

    def loaded_rows(self, built: KindTables) -> pd.DataFrame:
        """One row per value it loaded (``source_file``), for ``Audit.sources``."""
        if self.loaded is not None:
            return self.loaded(built)
        return built.tables[self.tables[0].name]


def segment_values(segments: Sequence[tuple[str, Any]]) -> list[RawValue]:
    """Every value of ``("values", [...])`` segments, in file order.

    For a kind without a columnar path, whose segments are all values.
    """
    values = [item for what, items in segments if what == "values" for item in items]
    return _in_file_order(values)


def _in_file_order(values: list[RawValue]) -> list[RawValue]:
    """Files in the order first seen, lines in order; a stable sort, skipped when in order."""
    if len(values) < 2:
        return list(values)
    files, _ = pd.factorize(pd.Series([item.source_file for item in values], dtype=object))
    lines = np.fromiter((item.source_line for item in values), dtype=np.int64, count=len(values))
    if (np.diff(files) >= 0).all() and (np.diff(lines)[np.diff(files) == 0] >= 0).all():
        return list(values)
    order = np.lexsort((lines, files))  # stable: values on one line keep their order
    return [values[index] for index in order.tolist()]


#: ``excerpt_chars`` of the load reading or building now (see :func:`excerpts_limited`).
_EXCERPT_CHARS: contextvars.ContextVar[int] = contextvars.ContextVar("excerpt_chars", default=300)


@contextlib.contextmanager
def excerpts_limited(chars: int) -> Iterator[None]:
    """Cut every excerpt made inside the block at ``chars`` characters (a load's
    ``Limits.excerpt_chars``), whichever stage rejects the value."""
    token = _EXCERPT_CHARS.set(chars)
    try:
        yield
    finally:
        _EXCERPT_CHARS.reset(token)


def excerpt(text: bytes | str, limit: int | None = None) -> str:
    """A short, printable excerpt of raw input for the rejected table: at most ``limit``
    characters, by default the load's ``excerpt_chars`` (:func:`excerpts_limited`; 300
    outside a load)."""
    if limit is None:
        limit = _EXCERPT_CHARS.get()
    if isinstance(text, str):
        # Text decoded with surrogateescape carries invalid bytes as lone surrogates;
        # any other lone surrogate is written as an escape.
        try:
            text = text[: limit * 4].encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            text = text[: limit * 4].encode("utf-8", errors="backslashreplace")
    text = text[: limit * 4].decode("utf-8", errors="replace")
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def sort_out(
    values: Sequence[RawValue],
    kind: str,
    parse: Callable[[Any], Any],
    misfits: type[Exception] | tuple[type[Exception], ...] = RecordError,
    *,
    text_only: bool = False,
) -> tuple[list[tuple[RawValue, Any]], list[Rejection]]:
    """Parse each value of a kind; one that does not fit becomes a Rejection.

    Parameters
    ----------
    values : sequence of RawValue
    kind : str
        The kind's name, for the rejected table.
    parse : callable
        ``parse(value) -> parsed``; raises one of ``misfits``, whose message
        names the field, when the value does not fit.
    misfits : exception type or tuple of them, default RecordError
    text_only : bool, default False
        Reject a value holding a lone surrogate anywhere (see
        :func:`lone_surrogate`): for kinds whose every string goes into a
        text column.

    Returns
    -------
    kept : list of (RawValue, parsed)
    rejected : list of Rejection
    """
    kept: list[tuple[RawValue, Any]] = []
    rejected: list[Rejection] = []
    for item in values:
        if text_only and may_hold_surrogate(item.text):
            where = lone_surrogate(item.value)
            if where is not None:
                rejected.append(
                    Rejection(
                        item.source_file,
                        item.source_line,
                        kind,
                        f"{where} holds a lone surrogate (an unpaired \\uD800-\\uDFFF), "
                        "which cannot be stored as text",
                        excerpt(item.text),
                    )
                )
                continue
        try:
            kept.append((item, parse(item.value)))
        except misfits as exc:
            rejected.append(
                Rejection(item.source_file, item.source_line, kind, str(exc), excerpt(item.text))
            )
    return kept, rejected
