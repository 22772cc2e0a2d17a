"""Routing decisions in Arrow: the normal layout, the columnar fast path, the frame.

Both reading paths produce a *part*: a table in :data:`NORMAL_SCHEMA` and a
row-aligned DataFrame of extra keys.
:func:`~explicit_audit.reading.columnar.frame_from_parts` turns parts into the
``decisions`` DataFrame, so the two paths cannot drift apart.

The fast path takes a JSON Lines file only when every field of every line is
present, not null and valid as it stands: a missing field (which may take
``decide_routing``'s default) or a null one cannot be told apart in Arrow, so
such a file is read value by value, where each problem is named.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.columns import extra_columns
from .._core.shape_arrow import arrow_struct
from ..reading.columnar import (
    ColumnarPart,
    JsonlPiece,
    NotClean,
    key_order,
    not_finite,
    order_like,
    refusing,
    scalar_lists,
)
from .routing import INPUT_COLUMNS, REPLAY_COLUMNS
from .shape import FIELD_TYPES, SHAPES

__all__ = [
    "FIELD_TYPES",
    "NORMAL_SCHEMA",
    "columnar",
    "layout",
    "part_from_rows",
]

_INPUT_FIELDS = [(name, FIELD_TYPES[name]) for name in INPUT_COLUMNS]
_OUTPUT_FIELDS = [(name, FIELD_TYPES[name]) for name in REPLAY_COLUMNS]
_NESTED, _FLAT = SHAPES
#: What the fast path expects of a nested and of a flat decision line: their shapes.
NESTED_LINE = pa.schema(list(arrow_struct(_NESTED.fields)))
FLAT_LINE = pa.schema(list(arrow_struct(_FLAT.fields)))
#: The fields of a line that are neither an input nor an output: its ids.
_IDS = [field for field in FLAT_LINE if field.name not in FIELD_TYPES]
NORMAL_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        *_IDS,
        ("shape", pa.string()),
        *_INPUT_FIELDS,
        *((f"recorded_{name}", type_) for name, type_ in _OUTPUT_FIELDS),
    ]
)


def part_from_rows(rows: Sequence[dict], where: Sequence[tuple[str, int]], extras: Sequence[dict]):
    """A part from rows checked one by one (the exact path)."""
    columns = {"source_file": [w[0] for w in where], "source_line": [w[1] for w in where]}
    for field in list(NORMAL_SCHEMA)[2:]:
        columns[field.name] = [row[field.name] for row in rows]
    table = pa.Table.from_pydict(columns, schema=NORMAL_SCHEMA)
    return table, extra_columns(list(extras), pd.RangeIndex(len(rows)), as_text=False)


def _valid(column: pa.ChunkedArray, type_: pa.DataType) -> pa.ChunkedArray:
    if column.type != type_ or column.null_count:
        raise NotClean
    if pa.types.is_list(type_) and pc.list_flatten(column).null_count:
        raise NotClean
    return column


def _extras(columns: dict[str, pa.ChunkedArray], n: int) -> pd.DataFrame:
    lists = scalar_lists(columns)
    return pd.DataFrame(
        {name: pd.Series(values, dtype=object) for name, values in lists.items()},
        index=pd.RangeIndex(n),
    )


def _piece(piece: JsonlPiece, nested: bool, first_keys: dict):
    table = piece.table
    n = table.num_rows
    if nested != ("inputs" in table.column_names):
        raise NotClean
    if nested:
        inputs, decision = table.column("inputs"), table.column("decision")
        if inputs.null_count or decision.null_count:
            raise NotClean

        def field(section: str, name: str) -> pa.ChunkedArray:
            return pc.struct_field(inputs if section == "inputs" else decision, name)

        known_fields = {name for name, _ in _INPUT_FIELDS + _OUTPUT_FIELDS}
        unknown = {
            f"{section}.{name}": field(section, name)
            for section, struct in (("inputs", inputs), ("decision", decision))
            for name in order_like(
                [f.name for f in struct.type if f.name not in known_fields],
                first_keys.get(section, {}),
            )
        }
        known = {f.name for f in NESTED_LINE}
    else:

        def field(section: str, name: str) -> pa.ChunkedArray:
            return table.column(name)

        unknown = {}
        known = {f.name for f in FLAT_LINE}
    top = [name for name in table.column_names if name not in known]
    unknown |= {name: table.column(name) for name in order_like(top, first_keys)}
    columns = {
        "source_file": pa.repeat(pa.scalar(piece.source_file, pa.string()), n),
        "source_line": pa.array(piece.lines),
        "decision_id": table.column("decision_id"),
        "policy_id": table.column("policy_id"),
        "shape": pa.repeat(pa.scalar("nested" if nested else "flat"), n),
    }
    for name, type_ in _INPUT_FIELDS:
        columns[name] = _valid(field("inputs", name), type_)
    for name, type_ in _OUTPUT_FIELDS:
        columns[f"recorded_{name}"] = _valid(field("decision", name), type_)
    for name in ("content_chars", "evidence_doc_count"):
        if pc.any(pc.less(columns[name], 0)).as_py():
            raise NotClean
    confidence = columns["confidence"]
    inside = pc.and_(pc.greater_equal(confidence, 0.0), pc.less_equal(confidence, 1.0))
    if not_finite(confidence) or not pc.all(inside, min_count=0).as_py():
        raise NotClean
    normal = pa.Table.from_pydict(
        {field.name: columns[field.name] for field in NORMAL_SCHEMA}, schema=NORMAL_SCHEMA
    )
    return normal, _extras(unknown, n)


def layout(value: dict) -> str:
    """The layout of a decision record: ``"nested"`` or ``"flat"``."""
    return "nested" if "inputs" in value and "decision" in value else "flat"


def columnar(layout_name: str, first_value: bytes):
    """The columnar path for decisions of one layout (``FastPath.columnar``).

    See :class:`~explicit_audit.reading.fast.FastPath` for the contract.
    Its ``convert`` refuses a piece unless every field of every record is
    present, not null and valid (the exact path then names the problem).
    """
    nested = layout_name == "nested"
    first_keys = key_order(first_value)

    def convert(piece: JsonlPiece) -> ColumnarPart:
        return ColumnarPart(*_piece(piece, nested, first_keys))

    return (NESTED_LINE if nested else FLAT_LINE), refusing(convert)
