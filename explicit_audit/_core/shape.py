"""A record's shape, declared once: its fields, their types, nullability and defaults.

Each record kind declares the shapes its producer writes as :class:`Shape`
objects (a decision nested or flat, a plan canonical or flat, ...), each a
tree of :class:`Field`. From that one declaration the kit derives:

- the JSON Schema that ``explicit-audit schema KIND`` prints
  (:func:`json_schema`), for producers to validate before they write;
- the field tables of ``docs/formats.md`` (:func:`markdown_table`), which a
  test regenerates and compares, so that the document cannot drift;
- the Arrow type of a field (:func:`arrow_type`), for the columnar reading
  path, and the defaults the value-by-value path fills in (:func:`defaults`).

Field types are few, and named for what they hold:

=============  ==========================================================
type           a value of it
=============  ==========================================================
string         a JSON string
integer        a whole number
count          a whole number from 0 to 2**63-1
number         any JSON number
probability    a number in [0, 1]
boolean        ``true`` or ``false``
strings        an array of strings
object         an object whose keys are the field's ``fields`` (or any key,
               when ``open``)
array          an array whose items are the field's ``items``
any            any JSON value
=============  ==========================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

__all__ = [
    "NO_DEFAULT",
    "TYPES",
    "Field",
    "Shape",
    "arrow_type",
    "defaults",
    "json_schema",
    "markdown_table",
    "walk",
]

#: Every field type a declaration may use, and its JSON Schema.
TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "count": {"type": "integer", "minimum": 0, "maximum": 2**63 - 1},
    "number": {"type": "number"},
    "probability": {"type": "number", "minimum": 0, "maximum": 1},
    "boolean": {"type": "boolean"},
    "strings": {"type": "array", "items": {"type": "string"}},
    "object": {"type": "object"},
    "array": {"type": "array"},
    "any": {},
}

_ARROW = {
    "string": pa.string(),
    "integer": pa.int64(),
    "count": pa.int64(),
    "number": pa.float64(),
    "probability": pa.float64(),
    "boolean": pa.bool_(),
    "strings": pa.list_(pa.string()),
}


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        # Unpickled (a Dask worker process) as the one module-level object, so
        # that ``is NO_DEFAULT`` holds there too.
        return "NO_DEFAULT"


#: A field the producer gives no default: absent, it is missing.
NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class Field:
    """One field of a record, or of an object inside it.

    Attributes
    ----------
    name : str
        The key as the producer writes it.
    type : str
        One of :data:`TYPES`.
    doc : str
        What it holds, in a few words (the tables of ``docs/formats.md``).
    required : bool, default True
        Whether the producer always writes it; a field with a ``default`` is
        not required (absent, the producer's default is used).
    nullable : bool, default False
        Whether ``null`` is a value it may hold.
    default : any, optional
        The producer's default when the field is absent.
    fields : tuple of Field, optional
        For an ``object``: its declared keys.
    open : bool, default False
        For an ``object``: any key is allowed (a payload hashed as written).
    items : Field, optional
        For an ``array``: what each item is.
    values : tuple, optional
        The only values it may hold (``schemaVersion``: 0).
    """

    name: str
    type: str
    doc: str = ""
    required: bool = True
    nullable: bool = False
    default: Any = NO_DEFAULT
    fields: tuple[Field, ...] = ()
    open: bool = False
    items: Field | None = None
    values: tuple = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"field {self.name!r}: unknown type {self.type!r}")
        if self.default is not NO_DEFAULT and self.required:
            object.__setattr__(self, "required", False)

    @property
    def has_default(self) -> bool:
        """Whether the producer fills the field in when it is absent."""
        return self.default is not NO_DEFAULT


@dataclass(frozen=True)
class Shape:
    """One shape a record kind's producer writes: its top-level fields.

    Attributes
    ----------
    kind : str
        The record kind (``"decisions"``).
    name : str
        The shape's name (``"nested"``), as the kind's ``shape`` column says it.
    doc : str
        How it is recognised, in a few words.
    fields : tuple of Field
        The top-level fields.
    record : tuple of str, optional
        The dotted paths of the record's id, the first present one used
        (``("decision_id",)``), for the findings about its keys.
    """

    kind: str
    name: str
    doc: str
    fields: tuple[Field, ...]
    record: tuple[str, ...] = ()

    def field(self, path: str) -> Field:
        """The field at the dotted ``path`` (``"inputs.confidence"``)."""
        for found_path, found in walk(self.fields):
            if found_path == path:
                return found
        raise KeyError(f"{self.kind} ({self.name}) declares no field {path!r}")


def walk(fields: Iterable[Field], prefix: str = "") -> Iterator[tuple[str, Field]]:
    """Every field and nested field, with its dotted path, in declaration order."""
    for field in fields:
        path = f"{prefix}{field.name}"
        yield path, field
        yield from walk(field.fields, path + ".")
        if field.items is not None and field.items.fields:
            yield from walk(field.items.fields, path + "[].")


def defaults(fields: Iterable[Field]) -> dict[str, Any]:
    """``{name: the producer's default}`` for the fields that have one."""
    return {field.name: field.default for field in fields if field.has_default}


def arrow_type(field: Field) -> pa.DataType:
    """The Arrow type a field's values are read into, for a field of a scalar or strings type."""
    if field.type not in _ARROW:
        raise ValueError(f"field {field.name!r} of type {field.type!r} has no Arrow type")
    return _ARROW[field.type]


def _field_schema(field: Field) -> dict[str, Any]:
    schema = dict(TYPES[field.type])
    if field.type == "object" and (field.fields or not field.open):
        schema |= _object_schema(field.fields, extra_keys=field.open)
    if field.type == "array" and field.items is not None:
        schema["items"] = _field_schema(field.items)
    if field.values:
        schema = {"enum": list(field.values)}
    if field.nullable:
        schema = {"anyOf": [schema, {"type": "null"}]}
    if field.doc:
        schema["description"] = field.doc
    if field.has_default:
        schema["default"] = field.default
    return schema


def _object_schema(fields: Iterable[Field], *, extra_keys: bool) -> dict[str, Any]:
    fields = list(fields)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {field.name: _field_schema(field) for field in fields},
        "required": [field.name for field in fields if field.required],
    }
    if not extra_keys:
        schema["additionalProperties"] = False
    return schema


def json_schema(kind: str, shapes: Iterable[Shape], *, title: str = "") -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a record of ``kind``: any one of its shapes.

    A record's top level may carry keys a logger adds (``timestamp``,
    ``request_id``); nested objects hold their declared keys only, but where
    declared ``open``.
    """
    variants = []
    for shape in shapes:
        variant = _object_schema(shape.fields, extra_keys=True)
        variant["title"] = f"{kind} ({shape.name})"
        variant["description"] = shape.doc
        variants.append(variant)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": title or kind,
    }
    if len(variants) == 1:
        return schema | {k: v for k, v in variants[0].items() if k != "title"}
    return schema | {"anyOf": variants}


def _type_text(field: Field) -> str:
    text = field.type
    if field.type == "array" and field.items is not None:
        text = f"array of {field.items.type}"
    if field.values:
        text = " or ".join(f"`{value!r}`" if isinstance(value, str) else f"`{value}`"
                           for value in field.values)  # fmt: skip
    return text + (" or null" if field.nullable else "")


def _presence(field: Field) -> str:
    if field.has_default:
        default = "null" if field.default is None else repr(field.default)
        default = {"True": "true", "False": "false"}.get(default, default)
        return f"default `{default}`"
    return "required" if field.required else "optional"


def markdown_table(shape: Shape) -> str:
    """The field table of one shape, as ``docs/formats.md`` shows it (nested fields dotted)."""
    lines = ["| field | type | presence | meaning |", "|---|---|---|---|"]
    for path, field in walk(shape.fields):
        doc = field.doc.replace("|", "\\|")
        lines.append(f"| `{path}` | {_type_text(field)} | {_presence(field)} | {doc} |")
    return "\n".join(lines) + "\n"
