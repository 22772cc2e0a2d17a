"""Receipts in Arrow: the normal layout, the columnar fast path, the final frames.

Both reading paths produce a *part*: a table in :data:`NORMAL_SCHEMA` plus a
row-aligned DataFrame of extra (logger) columns. :func:`frames_from_parts`
turns the parts into the ``receipts`` and ``exposed`` DataFrames, so the
fast path and the exact path cannot drift apart in dtypes or columns.

The fast path (:func:`arrow_part`) takes a file only when every row is
valid as it stands; anything it is not sure of returns None and the file is
read value by value, where each problem is named.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.columns import beside
from .._core.shape import Field
from .._core.shape_arrow import arrow_struct
from ..reading.columnar import (
    ColumnarPart,
    JsonlPiece,
    NotClean,
    in_file_order,
    key_order,
    not_finite,
    order_like,
    refusing,
    scalar_frame,
    string_series,
)
from ._schema import CATEGORIES as _CATEGORIES
from ._schema import NORMAL_SCHEMA, RECEIPT_COLUMNS, RECEIPT_KEYS, RECEIPT_SHAPE, WRAPPER_KEYS
from ._schema import STRINGS as _STRINGS
from ._values import is_presentation
from .shape import RECEIPT_FIELDS, SHAPES

__all__ = ["NORMAL_SCHEMA", "columnar", "frames_from_parts", "layout"]

_CLI, _OUTCOME = SHAPES[1:]
#: Each receipt field the table holds, by its path: its declaration and its column's
#: Arrow type in the table, looked up once (a field is found by walking its shape).
_DECLARED = {path: RECEIPT_SHAPE.field(path) for path in RECEIPT_COLUMNS}
_TYPES = {path: NORMAL_SCHEMA.field(column).type for path, column in RECEIPT_COLUMNS.items()}
_WITHHELD = frozenset(field.name for field in RECEIPT_SHAPE.field("withheld").fields)
_IN_RECEIPT = list(arrow_struct(RECEIPT_FIELDS))
#: What the fast path expects of a bare receipt line, and of a CLI/outcome line.
#: A value of another type makes pyarrow fail, and the file is read value by value.
BARE_LINE = pa.schema(_IN_RECEIPT)
WRAPPED_LINE = pa.schema(
    [
        ("schema_version", pa.int64()),
        ("status", pa.string()),
        ("kind", pa.string()),
        ("receipt", pa.struct(_IN_RECEIPT)),
        ("errors", pa.list_(pa.struct([("code", pa.string())]))),
    ]
)
_INTEGERS_NULLABLE = ("n_records", "schema_version", "withheld_count")


def _field(struct: pa.ChunkedArray, name: str) -> pa.ChunkedArray:
    if struct.type.get_field_index(name) == -1:
        return pa.chunked_array([pa.nulls(len(struct))])
    return pc.struct_field(struct, name)


def _column(table: pa.Table, name: str, type_: pa.DataType) -> pa.ChunkedArray:
    if name in table.column_names:
        return table.column(name)
    return pa.chunked_array([pa.nulls(table.num_rows, type_)], type_)


def _as(array: pa.Array, type_: pa.DataType, nulls_allowed: bool) -> pa.Array:
    if array.type != type_:
        compatible = (
            pa.types.is_null(array.type)
            or (pa.types.is_floating(type_) and pa.types.is_integer(array.type))
            or (
                pa.types.is_list(type_)
                and pa.types.is_list(array.type)
                and pa.types.is_null(array.type.value_type)
            )
        )
        if not compatible:
            raise NotClean
        array = array.cast(type_)
    if not nulls_allowed and array.null_count:
        raise NotClean
    return array


def _within(array: pa.Array, allowed: Sequence) -> None:
    inside = pc.is_in(array, value_set=pa.array(allowed, type=array.type))
    if not pc.all(inside, min_count=0).as_py():
        raise NotClean


def _read(receipt: pa.ChunkedArray, path: str) -> pa.ChunkedArray:
    """The field at ``path`` of a receipt, checked as its shape declares it (:mod:`.shape`).

    Of its type, null only where it is nullable, one of its values where it
    declares them, and inside a list only what the field allows
    (:func:`_no_null_inside`); otherwise :class:`NotClean`.
    """
    field = _DECLARED[path]
    array = receipt
    for name in path.split("."):
        array = _field(array, name)
    array = _as(array, _TYPES[path], field.nullable)
    if field.values:
        _within(array, field.values)
    _no_null_inside(array, field)
    return array


def _no_null_inside(array: pa.ChunkedArray, field: Field) -> None:
    """:class:`NotClean` where a list holds what its declaration does not allow.

    A null string of a list of strings, a null object of an array, or in an
    object of the array, a null where its field is not nullable or a value
    its field does not declare.
    """
    if field.type != "strings" and field.items is None:
        return
    flat = pc.list_flatten(array)
    if flat.null_count:
        raise NotClean
    for item in field.items.fields if field.items is not None else ():
        values = pc.struct_field(flat, item.name)
        if not item.nullable and values.null_count:
            raise NotClean
        if item.values:
            _within(values.drop_null(), item.values)
        _no_null_inside(values, item)


def _receipt_columns(receipt: pa.ChunkedArray) -> dict[str, pa.ChunkedArray]:
    withheld = _field(receipt, "withheld")
    if not pa.types.is_struct(withheld.type) or withheld.null_count:
        raise NotClean
    if not {withheld.type.field(i).name for i in range(withheld.type.num_fields)} <= _WITHHELD:
        raise NotClean
    return {column: _read(receipt, path) for path, column in RECEIPT_COLUMNS.items()}


def _codes(errors: pa.ChunkedArray) -> pa.ChunkedArray:
    """``errors[].code`` per row, as a list of strings (empty when no errors)."""
    chunks = []
    for chunk in errors.chunks:
        values = pc.struct_field(chunk.values, "code")
        codes = pa.ListArray.from_arrays(chunk.offsets, values)
        chunks.append(codes)
    codes = pa.chunked_array(chunks, _STRINGS)
    if pc.list_flatten(codes).null_count:
        raise NotClean
    return pc.fill_null(codes, pa.scalar([], _STRINGS)) if codes.null_count else codes


def _wrapper_columns(table: pa.Table) -> dict[str, pa.ChunkedArray]:
    status = _column(table, "status", pa.string())
    kind = _column(table, "kind", pa.string())
    version = _column(table, "schema_version", pa.int64())
    is_cli = pc.is_valid(status)
    # A CLI line carries schema_version 0 and a status; an outcome line a kind and neither.
    if not pc.all(pc.equal(pc.is_valid(version), is_cli), min_count=0).as_py():
        raise NotClean
    if not pc.all(pc.or_(is_cli, pc.is_valid(kind)), min_count=0).as_py():
        raise NotClean
    _within(version.drop_null(), _CLI.field("schema_version").values)
    _within(status.drop_null(), _CLI.field("status").values)
    outcome_kind = pc.if_else(is_cli, pa.scalar(None, pa.string()), kind)
    _within(outcome_kind.drop_null(), _OUTCOME.field("kind").values)
    outcome = pc.coalesce(status, pc.replace_substring(outcome_kind, "failure", "failed"))
    if "records" in table.column_names:
        records = table.column("records")
        if not pa.types.is_list(records.type):
            raise NotClean
        n_records = pc.fill_null(pc.list_value_length(records).cast(pa.int64()), 0)
    else:
        n_records = pa.chunked_array([np.zeros(table.num_rows, dtype=np.int64)])
    return {
        "shape": pc.if_else(is_cli, "cli", "outcome"),
        "outcome": outcome,
        "error_codes": _codes(_column(table, "errors", WRAPPED_LINE.field("errors").type)),
        "n_records": n_records,
    }


def _normal_piece(
    piece: JsonlPiece, wrapped: bool, first_keys: dict
) -> tuple[pa.Table, pd.DataFrame]:
    """One piece of a file in the normal layout, plus its extra columns."""
    table = piece.table
    names = table.column_names
    n = table.num_rows
    if ("receipt" in names) != wrapped:
        raise NotClean
    if wrapped:
        receipt = table.column("receipt")
        if receipt.null_count:
            raise NotClean
        columns = _wrapper_columns(table)
        extra_names = [name for name in names if name not in WRAPPER_KEYS]
        unknown = [field.name for field in receipt.type if field.name not in RECEIPT_KEYS]
    else:
        receipt = pa.chunked_array(
            [batch.to_struct_array() for batch in table.to_batches()],
            pa.struct(list(table.schema)),
        )
        columns = {
            "shape": pa.repeat(pa.scalar("receipt"), n),
            "outcome": pa.nulls(n, pa.string()),
            "error_codes": pa.nulls(n, _STRINGS),
            "n_records": pa.nulls(n, pa.int64()),
        }
        extra_names = [name for name in names if name not in RECEIPT_KEYS]
        unknown = []
    columns.update(_receipt_columns(receipt))
    score = pc.struct_field(pc.list_flatten(columns["exposed"]), "score")
    if not_finite(columns["relevance_threshold"].drop_null()) or not_finite(score.drop_null()):
        raise NotClean
    columns["source_file"] = pa.repeat(pa.scalar(piece.source_file, pa.string()), n)
    columns["source_line"] = pa.array(piece.lines)
    normal = pa.Table.from_pydict(
        {field.name: columns[field.name] for field in NORMAL_SCHEMA}, schema=NORMAL_SCHEMA
    )
    columns = {name: table.column(name) for name in order_like(extra_names, first_keys)}
    receipt_keys = first_keys.get("receipt", {}) if wrapped else {}
    for name in order_like(unknown, receipt_keys):
        columns[f"receipt.{name}"] = pc.struct_field(receipt, name)
    return normal, scalar_frame(columns, n)


def layout(value: dict) -> str:
    """The line layout of a receipt value: ``"wrapped"``, ``"bare"``, or ``"other"``.

    ``other`` (a presentation, say) has no columnar path: it is read exactly.
    """
    if is_presentation(value):
        return "other"
    receipt = value.get("receipt")
    if isinstance(receipt, dict):
        return "other" if "retrievalReceipt" in receipt or "retrieval" in value else "wrapped"
    return "bare" if "receipt" not in value else "other"


def columnar(layout_name: str, first_value: bytes):
    """The columnar path for receipts of one layout (``FastPath.columnar``).

    See :class:`~explicit_audit.reading.fast.FastPath` for the contract.
    None for ``"other"``; its ``convert`` refuses a piece when any row is not
    plainly valid (the exact path then names the problem).
    """
    if layout_name not in ("wrapped", "bare"):
        return None
    wrapped = layout_name == "wrapped"
    first_keys = key_order(first_value)

    def convert(piece: JsonlPiece) -> ColumnarPart:
        return ColumnarPart(*_normal_piece(piece, wrapped, first_keys))

    return (WRAPPED_LINE if wrapped else BARE_LINE), refusing(convert)


def _category_column(array: pa.ChunkedArray, categories: list[str] | None) -> pd.Categorical:
    values = pd.Categorical(array.dictionary_encode().to_pandas())
    return values.set_categories(categories) if categories is not None else values


def frames_from_parts(parts: Sequence) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``receipts`` and ``exposed`` DataFrames from normal parts."""
    if parts:
        table, extras = in_file_order(parts)
    else:
        table, extras = NORMAL_SCHEMA.empty_table(), pd.DataFrame(index=pd.RangeIndex(0))
    n = table.num_rows
    index = pd.RangeIndex(n)
    data: dict[str, object] = {}
    for field in NORMAL_SCHEMA:
        column = table.column(field.name)
        if field.name == "exposed":
            continue
        if field.name == "source_line":
            data[field.name] = column.to_numpy()
        elif field.name in _CATEGORIES:
            data[field.name] = _category_column(column, _CATEGORIES[field.name])
        elif field.name in _INTEGERS_NULLABLE:
            data[field.name] = column.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        elif field.name == "relevance_threshold":
            data[field.name] = column.to_pandas(types_mapper={pa.float64(): pd.Float64Dtype()}.get)
        elif pa.types.is_list(field.type):
            data[field.name] = pd.arrays.ArrowExtensionArray(column)
        else:
            data[field.name] = string_series(column)
    exposed_lists = table.column("exposed")
    lengths = pc.list_value_length(exposed_lists).to_numpy(zero_copy_only=False).astype(np.int64)
    data["n_exposed"] = pd.array(lengths, dtype="Int64")
    receipts = pd.DataFrame(data, index=index)
    # A logger key named like a column of the table is kept under extra.<key>.
    receipts = beside(receipts, extras, "extra.")
    starts = np.cumsum(lengths) - lengths
    flat = pc.list_flatten(exposed_lists)
    exposed = pd.DataFrame(
        {
            # Int64 as in presentations, where a view may have no receipt: one dtype per name.
            "receipt_row": pd.array(np.repeat(np.arange(n, dtype=np.int64), lengths), "Int64"),
            "position": np.arange(len(flat), dtype=np.int64) - np.repeat(starts, lengths),
            "record_id": string_series(pc.struct_field(flat, "recordId")),
            "source_uri": string_series(pc.struct_field(flat, "sourceUri")),
            "relative_path": string_series(pc.struct_field(flat, "relativePath")),
            "source_classes": pd.Series(
                pd.arrays.ArrowExtensionArray(pc.struct_field(flat, "sourceClasses"))
            ),
            "score": pc.struct_field(flat, "score").to_pandas(
                types_mapper={pa.float64(): pd.Float64Dtype()}.get
            ),
        }
    )
    return receipts, exposed
