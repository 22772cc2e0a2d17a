"""The Arrow types of declared fields: what the columnar reading paths expect of a line.

A kind's fast path parses a line with an explicit Arrow schema, and its
parts are tables of Arrow columns; both are read off the kind's declared
shapes (:mod:`explicit_audit._core.shape`) with :func:`arrow_type` and
:func:`arrow_struct`, never written out beside them.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from .shape import Field, is_map

__all__ = ["arrow_struct", "arrow_type"]

_ARROW = {
    "string": pa.string(),
    "name": pa.string(),
    "integer": pa.int64(),
    "count": pa.int64(),
    "number": pa.float64(),
    "probability": pa.float64(),
    "boolean": pa.bool_(),
    "strings": pa.list_(pa.string()),
}


def arrow_type(field: Field) -> pa.DataType:
    """The Arrow type a field's values are read into.

    A scalar or strings type has its own; an object of declared fields is a
    struct of them (:func:`arrow_struct`), an array of declared items a list
    of their type. Any other field (a map, an array of any values) has none.

    Raises
    ------
    ValueError
        Naming the field, when it has no Arrow type.
    """
    try:
        if field.type == "object" and field.fields and not is_map(field):
            return arrow_struct(field.fields)
        if field.type == "array" and field.items is not None:
            return pa.list_(arrow_type(field.items))
    except ValueError as exc:  # named from the outside in: "field 'a': field 'b' of ..."
        raise ValueError(f"field {field.name!r}: {exc}") from None
    if field.type not in _ARROW:
        raise ValueError(f"field {field.name!r} of type {field.type!r} has no Arrow type")
    return _ARROW[field.type]


def arrow_struct(fields: Iterable[Field]) -> pa.StructType:
    """A struct of ``fields`` in their order, a name given twice kept at its first place.

    Two shapes' fields together give one struct that reads either shape.
    """
    first: dict[str, Field] = {}
    for field in fields:
        first.setdefault(field.name, field)
    return pa.struct([(name, arrow_type(field)) for name, field in first.items()])
