"""Plan records in Arrow: the columnar path and the rows read one by one.

Every reading path makes a *part*: a table in :data:`NORMAL_SCHEMA` and a
row-aligned DataFrame of the records' other keys;
:func:`~explicit_audit.reading.columnar.frame_from_parts` turns parts into the
``plans`` DataFrame, so the paths cannot drift apart.

The columnar path takes a piece only when every record in it is written as
producers write it (:mod:`explicit_audit.plans._producer`): every field
present and of its exact type, so that the row follows from the fields alone,
as :func:`~explicit_audit.plans.loader._producer_row` builds it. Arrow reads
a key written ``null`` as it reads a key left out; the two differ for the
plan (``"mt": null`` is no shape a producer writes), so every record whose
bytes hold a ``null`` is parsed again to tell them apart. Each plan's text
is its bytes in the record (:func:`~explicit_audit.reading.member_text.member_texts`).
Anything else is refused (:attr:`~explicit_audit.reading.columnar.Refused.NOT_CLEAN`): the
piece is then read record by record in bulk (:mod:`explicit_audit.plans._bulk`),
and what that refuses value by value, where each problem is named.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.columns import displayable
from .._core.shape_arrow import arrow_struct, arrow_type
from ..reading.columnar import (
    ColumnarPart,
    ColumnarReader,
    JsonlPiece,
    NotClean,
    key_order,
    order_like,
    refusing,
    scalar_frame,
)
from ..reading.member_text import member_texts
from .shape import FLAT_MT_FIELDS, MT_FIELDS, SHAPES

__all__ = [
    "COLUMNS",
    "DTYPES",
    "LINE",
    "NORMAL_SCHEMA",
    "columnar",
    "layout",
    "part_from_columns",
    "part_from_rows",
    "plan_bytes",
]

_STRING = pa.string()
_SHARDS = pa.list_(_STRING)
_MT_NAMES = tuple(field.name for field in MT_FIELDS)
_FLAT_NAMES = tuple(field.name for field in FLAT_MT_FIELDS)
#: A written plan, either shape: the core fields, the ``mt`` object, the flat MT keys.
PLAN_TYPE = arrow_struct(
    field for shape in SHAPES for field in shape.field("retrieval_plan").fields
)
#: What the columnar path expects of a record: its fields, the plan in either shape.
LINE = pa.schema(
    (field.name, PLAN_TYPE if field.name == "retrieval_plan" else arrow_type(field))
    for field in SHAPES[0].fields
)
#: The ``plans`` table's columns, in order: each one's Arrow type in the parts both
#: paths make (:data:`NORMAL_SCHEMA`), and its dtype in the DataFrame (:data:`DTYPES`).
COLUMNS = {
    "source_file": (_STRING, "str"),
    "source_line": (pa.int64(), "int64"),
    "run_id": (_STRING, "str"),
    "retrieval_plan_hash": (_STRING, "str"),
    "plan_shape": (_STRING, pd.CategoricalDtype([shape.name for shape in SHAPES])),
    "retrieval_keywords": (_STRING, "str"),
    "keywords_non_ascii": (pa.bool_(), "boolean"),
    "top_k": (pa.int64(), "Int64"),
    "over_fetch": (pa.int64(), "Int64"),
    "max_context_chars": (pa.int64(), "Int64"),
    "shard_ids": (_SHARDS, pd.ArrowDtype(_SHARDS)),
    "has_mt": (pa.bool_(), "boolean"),
    "mt_engine": (_STRING, "category"),
    "mt_manifest_hash": (_STRING, "str"),
    "source_lang": (_STRING, "category"),
    "seed_coercions": (_STRING, "str"),
    "plan": (_STRING, "str"),
}
NORMAL_SCHEMA = pa.schema([(name, arrow) for name, (arrow, _) in COLUMNS.items()])
DTYPES = {name: dtype for name, (_, dtype) in COLUMNS.items()}
_NULL = re.compile(rb"null")


def layout(value: dict) -> str:
    """One layout for both plan shapes: a piece may mix them (see :func:`columnar`)."""
    return "plan"


def columnar(layout_name: str, first_value: bytes):
    """The columnar path for plan records (see ``FastPath.columnar``).

    Returns
    -------
    ColumnarReader
        :data:`LINE`; ``convert(piece) -> ColumnarPart``, which refuses
        (:attr:`~explicit_audit.reading.columnar.Refused.NOT_CLEAN`) unless every record
        of the piece is written as producers write it; and, as its ``beside``
        step, :func:`plan_bytes`, which finds each plan's text and the records
        holding a ``null`` while Arrow parses the piece.
    """
    first_keys = key_order(first_value)

    def convert(piece: JsonlPiece) -> ColumnarPart:
        return _piece(piece, first_keys)

    return ColumnarReader(LINE, refusing(convert), beside=plan_bytes)


def plan_bytes(
    data: bytes, starts: np.ndarray, threads: int = 1
) -> tuple[pa.Array | None, np.ndarray]:
    """What the columnar path reads of a piece's bytes, not of Arrow's parse.

    Parameters
    ----------
    data : bytes
        Records one after another, as parsed.
    starts : ndarray of int64
        Where each record starts in ``data``.
    threads : int, default 1

    Returns
    -------
    plans : pyarrow.StringArray or None
        Each record's ``retrieval_plan`` text as written (see
        :func:`~explicit_audit.reading.member_text.member_texts`).
    null_rows : ndarray of int64
        The records whose bytes hold ``null`` (see :func:`_no_written_null`).
    """
    plans = member_texts(data, len(starts), "retrieval_plan", object_starts=starts, threads=threads)
    return plans, np.flatnonzero(rows_holding(data, starts, _NULL))


def _present(*columns: pa.ChunkedArray) -> bool:
    return not any(column.null_count for column in columns)


def _piece(piece: JsonlPiece, first_keys: dict) -> ColumnarPart:
    table = piece.table
    n = table.num_rows
    plan, recorded = table.column("retrieval_plan"), table.column("retrieval_plan_hash")
    if not _present(plan, recorded) or table.column("run_id").type != _STRING:
        raise NotClean
    field = {name: pc.struct_field(plan, name) for name in PLAN_TYPE.names}
    keywords, shard_ids = field["retrieval_keywords"], field["shard_ids"]
    counts = [field[name] for name in ("top_k", "over_fetch", "max_context_chars")]
    if not _present(keywords, shard_ids, *counts) or pc.list_flatten(shard_ids).null_count:
        raise NotClean
    mt = field["mt"]
    in_mt = [pc.struct_field(mt, name) for name in _MT_NAMES]
    flat = [field[name] for name in _FLAT_NAMES]
    has_block = pc.is_valid(mt)
    flat_set = [pc.is_valid(column) for column in flat]
    is_flat, any_flat = all_of(flat_set), any_of(flat_set)
    # A flat record has all three flat keys and no ``mt``; a canonical one, a whole
    # ``mt`` object or none, and no flat key.
    if pc.any(pc.and_(any_flat, pc.or_(pc.invert(is_flat), has_block))).as_py() or (
        pc.any(pc.and_(has_block, pc.invert(all_of([pc.is_valid(c) for c in in_mt])))).as_py()
    ):
        raise NotClean
    plan_texts, null_rows = piece.found_beside  # plan_bytes, run beside the parse
    _no_written_null(piece, null_rows)
    if plan_texts is None:
        raise NotClean
    engine, manifest, lang = (
        pc.if_else(is_flat, flat_column, block_column)
        for flat_column, block_column in zip(flat, in_mt, strict=True)
    )
    engine, manifest, lang = (pc.fill_null(column, "") for column in (engine, manifest, lang))
    has_mt = mt_set(engine, manifest, lang)
    null_text = pa.nulls(n, _STRING)
    columns = {
        "source_file": pa.repeat(pa.scalar(piece.source_file, _STRING), n),
        "source_line": pa.array(piece.lines, type=pa.int64()),
        "run_id": table.column("run_id"),
        "retrieval_plan_hash": recorded,
        "plan_shape": pc.if_else(is_flat, "flat", "canonical"),
        "retrieval_keywords": keywords,
        "keywords_non_ascii": pc.invert(pc.string_is_ascii(keywords)),
        "top_k": counts[0],
        "over_fetch": counts[1],
        "max_context_chars": counts[2],
        "shard_ids": shard_ids,
        "has_mt": has_mt,
        "mt_engine": pc.if_else(has_mt, engine, null_text),
        "mt_manifest_hash": pc.if_else(has_mt, manifest, null_text),
        "source_lang": pc.if_else(has_mt, lang, null_text),
        "seed_coercions": null_text,
        "plan": plan_texts,
    }
    normal = pa.Table.from_pydict(columns, schema=NORMAL_SCHEMA)
    top = [name for name in table.column_names if name not in LINE.names]
    extras = {name: table.column(name) for name in order_like(top, first_keys)}
    return ColumnarPart(normal, scalar_frame(extras, n))


def all_of(masks: Sequence):
    """Row by row, whether every mask holds."""
    found = masks[0]
    for mask in masks[1:]:
        found = pc.and_(found, mask)
    return found


def any_of(masks: Sequence):
    """Row by row, whether some mask holds."""
    found = masks[0]
    for mask in masks[1:]:
        found = pc.or_(found, mask)
    return found


def mt_set(engine, manifest, lang):
    """Row by row, whether an MT field is set (not empty): the seed's ``engine or
    manifest or lang``, which puts the ``mt`` block in the canonical dict."""
    return any_of([pc.greater(pc.binary_length(text), 0) for text in (engine, manifest, lang)])


def rows_holding(view, starts: np.ndarray, pattern: re.Pattern) -> np.ndarray:
    """Per row of ``view`` (rows start at ``starts``), whether its bytes hold ``pattern``.

    One search over all of them; a pattern of one literal is searched for fast.
    """
    found = np.zeros(len(starts), dtype=bool)
    at = [match.start() for match in pattern.finditer(view)]
    if at:
        found[np.searchsorted(starts, np.asarray(at, dtype=np.int64), side="right") - 1] = True
    return found


#: The plan keys whose ``null`` Arrow reads as a key left out, and the two differ.
_NOT_NULL_KEYS = ("mt", *_FLAT_NAMES)


def _no_written_null(piece: JsonlPiece, rows: np.ndarray) -> None:
    """Refuse a piece where a plan writes ``null`` for ``mt`` or a flat MT key.

    Arrow reads such a key as left out. A record whose bytes hold no
    ``null`` (a literal is never escaped) cannot write one; the others
    (``rows``) are parsed again, and their plans looked at.
    """
    data, starts = piece.data, piece.starts
    ends = np.append(starts[1:], len(data))
    for row in rows.tolist():
        try:
            plan = orjson.loads(data[starts[row] : ends[row]]).get("retrieval_plan")
        except (orjson.JSONDecodeError, AttributeError):
            raise NotClean from None
        if type(plan) is not dict or any(
            key in plan and plan[key] is None for key in _NOT_NULL_KEYS
        ):
            raise NotClean


def part_from_rows(rows: Sequence[dict], where: Sequence[tuple[str, int]], extras) -> ColumnarPart:
    """A part from records read one by one (rows as ``loader._row`` builds them)."""
    columns = {"source_file": [w[0] for w in where], "source_line": [w[1] for w in where]}
    for field in list(NORMAL_SCHEMA)[2:]:
        columns[field.name] = [row[field.name] for row in rows]
    return part_from_columns(columns, extras)


def part_from_columns(columns: dict[str, list], extras: pd.DataFrame) -> ColumnarPart:
    """A part from the values of each column of :data:`NORMAL_SCHEMA`, as lists."""
    arrays = [_arrow_column(columns[f.name], f.type) for f in NORMAL_SCHEMA]
    return ColumnarPart(pa.Table.from_arrays(arrays, schema=NORMAL_SCHEMA), extras)


def _arrow_column(values: list, type_: pa.DataType) -> pa.Array:
    """Values as an Arrow column; a lone surrogate, which Arrow cannot store, as its escape."""
    try:
        return pa.array(values, type=type_, from_pandas=True)
    except UnicodeEncodeError:
        return pa.array([displayable(value) for value in values], type=type_, from_pandas=True)
