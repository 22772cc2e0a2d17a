"""The check ``record_duplicates``: one record written twice, or one id holding two records.

A kind's shapes declare the fields that identify a record
(:attr:`~explicit_audit._core.shape.Shape.identity`: a decision's
``decision_id``, a plan's ``run_id``, a C2 request's ``base_id`` and
``model``, an engram presentation's ``presentationId``). Two rows of its
table with the same values there, in one file or two, are one record
written twice:

- ``repeated_record`` (a notice): the two say the same, column for column
  (where each was read, how it was written and a logger's keys aside: a
  replay re-logs a run pretty-printed, with ``"replayed": true``). Nothing
  the producer promises is broken, but a count over the table counts the
  record twice: worth a look, never unclean.
- ``conflicting_record`` (an error): the two say different things under one
  id, so at most one is what the producer wrote; the finding names both
  places and the columns that differ.

The first row of an id, in load order (files sorted, lines in order), is the
one each later row is compared with, and each later row is the finding.
Rows whose identity has a missing value are not compared. Declared once
here and added by the registry (:func:`duplicates_checker`) for the kinds
that declare an identity, on both engines: each partition gives its rows'
ids and per-column digests (:func:`identified_rows`), and the digests of all
partitions are compared at once (:func:`duplicate_findings`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson
import pandas as pd

from .findings import ERROR, LISTED_COLUMNS, NOTICE, Rule, RuleTable, listed_findings
from .records import Check, Checker, RecordKind, Table
from .shape import Shape

__all__ = [
    "CHECK",
    "CONFLICTING_RECORD",
    "DUPLICATE_RULES",
    "REPEATED_RECORD",
    "duplicate_findings",
    "duplicates_checker",
    "identified_rows",
    "identity",
]

CHECK = "record_duplicates"
REPEATED_RECORD = "repeated_record"
CONFLICTING_RECORD = "conflicting_record"

#: The rules of the check ``record_duplicates``; each finding names its own kind.
DUPLICATE_RULES = RuleTable(
    [
        Rule(
            REPEATED_RECORD,
            "A record is written once: the same id again with the same content (a log "
            "copied twice, a run replayed) is the same record, counted twice by any sum "
            "over the table.",
            check=CHECK,
            kind="",
            severity=NOTICE,
        ),
        Rule(
            CONFLICTING_RECORD,
            "One id names one record: two records with the same id and different content "
            "cannot both be what the producer wrote.",
            check=CHECK,
            kind="",
            severity=ERROR,
        ),
    ]
)

#: Columns of a row's place, never of its content.
_PLACE = ("source_file", "source_line")


def identity(kind: RecordKind, table: Table | None = None) -> tuple[str, ...]:
    """The fields that identify a row of ``kind``'s ``table``, as its shapes declare them.

    ``table`` is by default the kind's main table, whose shapes are the
    kind's; another table's are its own (``Table.shapes``: engram's
    presentation lines). ``()`` where none declares an identity.

    Raises
    ------
    ValueError
        When two of its shapes declare different identities: a record has one.
    """
    declaring = _declaring(kind, table)
    return declaring[0].identity if declaring else ()


def _declaring(kind: RecordKind, table: Table | None = None) -> list[Shape]:
    """The shapes of ``kind``'s ``table`` (by default its main one) that declare an identity."""
    main = kind.tables[0] if kind.tables else None
    table = table or main
    shapes = table.shapes if table is not None and table.shapes else ()
    if not shapes and table is main:
        shapes = kind.shapes
    declaring = [shape for shape in shapes if shape.identity]
    if len({shape.identity for shape in declaring}) > 1:
        name = kind.name if table is main else f"{kind.name}, table {table.name}"
        raise ValueError(f"record kind {name!r}: its shapes declare different identities")
    return declaring


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _canonical(value: Any) -> str:
    """A value as text that is equal exactly when the values are (keys sorted)."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return "null"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    try:
        return orjson.dumps(value, option=_SORTED).decode()
    except TypeError:
        return repr(value)


def _column_digests(values: pd.Series) -> np.ndarray:
    """One 64-bit digest per value of a column; equal values give equal digests."""
    plain = values.dtype != object and not isinstance(values.dtype, pd.ArrowDtype)
    if plain:
        try:
            return pd.util.hash_pandas_object(values, index=False).to_numpy()
        except TypeError:
            pass
    texts = pd.Series([_canonical(value) for value in values.tolist()], dtype=object)
    return pd.util.hash_pandas_object(texts, index=False).to_numpy()


def identified_rows(
    table: pd.DataFrame,
    kind: str,
    fields: Sequence[str],
    content: Sequence[str],
    *,
    repeated_only: bool = False,
) -> pd.DataFrame:
    """The rows of ``table`` that carry an id: kind, id, place, row label and digests.

    Parameters
    ----------
    table : DataFrame
        A kind's table (or one partition of it).
    kind : str
    fields : sequence of str
        Its identity (:func:`identity`).
    content : sequence of str
        The columns compared: the kind's own, but its place and how it was written.
    repeated_only : bool, default False
        Only the rows whose id another row of ``table`` holds (a whole table:
        no other partition may hold it).

    Returns
    -------
    DataFrame
        ``kind``, ``record`` (the id, its fields joined by ``" / "``),
        ``source_file``, ``source_line``, ``row``, ``digests`` (per row, one
        64-bit digest per column compared, as bytes) and ``columns`` (the
        columns compared, one tuple shared by every row), one row per record
        whose every identity field holds a value. Compact: on Dask every
        partition's rows are gathered to find an id repeated across them.
    """
    if not len(table) or any(name not in table.columns for name in fields):
        return _no_rows()
    held = table[list(fields)].notna().all(axis=1).to_numpy()
    rows = table if held.all() else table.loc[held]  # most often every row: no copy
    ids = rows[fields[0]].astype("str")
    for name in fields[1:]:
        ids = ids + " / " + rows[name].astype("str")
    if repeated_only:
        repeated = ids.duplicated(keep=False).to_numpy()
        rows, ids = rows.loc[repeated], ids.loc[repeated]
    if not len(rows):
        return _no_rows()
    columns = tuple(name for name in content if name in rows.columns)
    digests = np.column_stack([_column_digests(rows[name]) for name in columns])
    digests = np.ascontiguousarray(digests, dtype=np.uint64)
    width = digests.shape[1] * digests.itemsize
    flat = digests.tobytes()
    return pd.DataFrame(
        {
            "kind": [kind] * len(rows),
            "record": ids.to_numpy(dtype=object),
            "source_file": rows["source_file"].astype("str").to_numpy(dtype=object),
            "source_line": rows["source_line"].to_numpy(dtype=np.int64),
            "row": rows.index.to_numpy(),
            "digests": [flat[at : at + width] for at in range(0, len(flat), width)],
            "columns": [columns] * len(rows),
        }
    )


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame(
        {name: pd.Series([], dtype=object) for name in ("kind", "record", "source_file")}
        | {"source_line": pd.Series([], dtype="int64"), "row": pd.Series([], dtype=object)}
        | {name: pd.Series([], dtype=object) for name in ("digests", "columns")}
    )


def duplicate_findings(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The findings of ``record_duplicates`` over every partition's identified rows, in order."""
    rows = pd.concat([part for part in parts if len(part)] or [_no_rows()], ignore_index=True)
    repeated = rows.duplicated(["kind", "record"], keep=False).to_numpy()
    rows = rows.loc[repeated]
    found: dict[str, list] = {name: [] for name in LISTED_COLUMNS}
    for (kind, record), group in rows.groupby(["kind", "record"], sort=False):
        first = group.iloc[0]
        where = f"{first['source_file']}:{first['source_line']}"
        theirs = np.frombuffer(first["digests"], dtype=np.uint64)
        for _, later in group.iloc[1:].iterrows():
            mine = np.frombuffer(later["digests"], dtype=np.uint64)
            same = zip(later["columns"], mine == theirs, strict=True)
            differ = [name for name, equal in same if not equal]
            found["kind"].append(kind)
            found["source_file"].append(later["source_file"])
            found["source_line"].append(int(later["source_line"]))
            found["row"].append(later["row"])
            found["record"].append(record)
            if differ:
                found["rule"].append(CONFLICTING_RECORD)
                found["field"].append(", ".join(differ))
                found["detail"].append(
                    f"{record} is also the id of the record at {where}, which says otherwise: "
                    f"{', '.join(differ)} differ"
                )
            else:
                found["rule"].append(REPEATED_RECORD)
                found["field"].append(None)
                found["detail"].append(f"{record} again: the same record as at {where}")
    return listed_findings(DUPLICATE_RULES, found)


#: Per kind (by ``id``): the kind, and the columns of its tables built from no value.
_OWN: dict[int, tuple[RecordKind, dict[str, tuple[str, ...]]]] = {}


def _own_columns(kind: RecordKind, table: Table) -> tuple[str, ...]:
    """The columns of one of the kind's tables that are its own: a logger's keys are not."""
    entry = _OWN.get(id(kind))
    if entry is None or entry[0] is not kind:
        built = kind.build([]).tables
        entry = _OWN[id(kind)] = (kind, {name: tuple(built[name].columns) for name in built})
    return entry[1][table.name]


def duplicates_checker(kinds: Sequence[RecordKind]) -> Checker | None:
    """The checker of ``record_duplicates`` over the tables whose shapes declare an identity.

    Compared are a table's own columns but where a row was read, how it was
    written (``Table.written``) and the row labels of another table it holds
    (``Table.references``: a presentation's ``receipt_row``). Its findings
    name the kind their shape declares: the record kind, or the table it fills
    where that is not the kind's main one.
    """
    declared = []
    for kind in kinds:
        for table in kind.tables:
            declaring = _declaring(kind, table)
            if not declaring:
                continue
            fields = declaring[0].identity
            aside = (*_PLACE, *table.written, *table.references)
            content = tuple(c for c in _own_columns(kind, table) if c not in aside)
            declared.append((declaring[0].kind, table.name, fields, content))
    if not declared:
        return None
    plan = tuple(declared)

    def run(*tables: pd.DataFrame, repeated_only: bool = False) -> pd.DataFrame:
        parts = [
            identified_rows(frame, name, fields, content, repeated_only=repeated_only)
            for frame, (name, _, fields, content) in zip(tables, plan, strict=True)
        ]
        return pd.concat(parts, ignore_index=True)

    def whole(*tables: pd.DataFrame) -> pd.DataFrame:
        return duplicate_findings([run(*tables, repeated_only=True)])

    return Checker(
        run=run,
        reads=tuple(table for _, table, _, _ in plan),
        checks=(
            Check(
                CHECK,
                "records written twice: the same id again, with the same or other content",
                examines=None,
            ),
        ),
        rules=DUPLICATE_RULES,
        combine=duplicate_findings,
        whole=whole,
        order=2,
    )
