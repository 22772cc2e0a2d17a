"""A record's shape, declared once: its fields, their types, nullability and defaults.

Each record kind declares the shapes its producer writes as :class:`Shape`
objects (a decision nested or flat, a plan canonical or flat, ...), each a
tree of :class:`Field`. From that one declaration the kit derives:

- the JSON Schema that ``explicit-audit schema KIND`` prints
  (:func:`json_schema`), for producers to validate before they write;
- the field tables of ``docs/formats.md``
  (:func:`~explicit_audit._core.shape_table.markdown_table`), which a
  test regenerates and compares, so that the document cannot drift;
- the Arrow type of a field, nested objects and arrays included, and of
  several shapes' fields read as one (:mod:`explicit_audit._core.shape_arrow`):
  what the columnar reading paths expect of a line and the columns it
  fills; and the defaults the value-by-value path fills in (:func:`defaults`).

Field types are few, and named for what they hold:

=============  ==========================================================
type           a value of it
=============  ==========================================================
string         a JSON string
name           a JSON string that is not empty
integer        a whole number
count          a whole number from 0 to 2**63-1
number         any JSON number
probability    a number in [0, 1]
boolean        ``true`` or ``false``
strings        an array of strings
object         an object whose keys are the field's ``fields`` (or any key,
               when ``open``; or any key, each value an ``items``, a map)
array          an array whose items are the field's ``items``
any            any JSON value
=============  ==========================================================

A field may also name the types the kit *accepts* there beyond the declared
one (``accepts``): values the producer's own code reads though its type does
not declare them (arborist hashes ``"top_k": "5"`` as ``int("5")``). The JSON
Schema allows them, marked ``deprecated``, and the check ``record_keys``
notes each one (``undeclared_value``, :mod:`explicit_audit._core.keys`): the
schema and the loader agree in both directions.

:func:`published` gathers the shapes of every registered kind by the name
they are published under (``explicit-audit schema NAME``): a kind's record
shapes, the shapes of a table it fills from lines of its own (engram's
presentations) and of the documents it reads (routing policies).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = [
    "NO_DEFAULT",
    "TYPES",
    "UNDECLARED",
    "Field",
    "Shape",
    "defaults",
    "is_map",
    "json_schema",
    "published",
    "quoted",
    "shape_problems",
    "type_fits",
    "walk",
]

#: Every field type a declaration may use, and its JSON Schema.
TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "name": {"type": "string", "minLength": 1},
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

#: How the JSON Schema describes a value of a type a field ``accepts`` but does not declare.
UNDECLARED = (
    "not of the type the producer declares: the kit reads it as the producer's own code "
    "does, and notes it (record_keys: undeclared_value)"
)


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
        For an ``array``: what each item is; for an ``object`` without
        ``fields``: what each value is, under any key (a map).
    values : tuple, optional
        The only values it may hold (``schemaVersion``: 0).
    accepts : tuple of str, optional
        Types (of :data:`TYPES`, or ``"null"``) the kit accepts here though the
        producer's type does not declare them; each such value is noted.
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
    accepts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for type_ in (self.type, *(t for t in self.accepts if t != "null")):
            if type_ not in TYPES:
                raise ValueError(f"field {self.name!r}: unknown type {type_!r}")
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
        The name it is published under (``explicit-audit schema KIND``): the
        record kind (``"decisions"``), or the table or documents it fills
        (``"presentations"``, ``"policies"``).
    name : str
        The shape's name (``"nested"``), as the kind's ``shape`` column says it.
    doc : str
        How it is recognised, in a few words.
    fields : tuple of Field
        The top-level fields.
    record : tuple of str, optional
        The dotted paths of the record's id, the first present one used
        (``("decision_id",)``), for the findings about its keys.
    open : bool, default True
        Whether the top level may hold keys it does not declare (a logger's
        ``timestamp`` beside a record's fields); False for a whole document.
    identity : tuple of str, optional
        The columns of the table it fills that together identify one record,
        each a top-level field or the column one is read into
        (``("decision_id",)``; a C2 request's ``("base_id", "model")``; an
        engram presentation's ``receipt.presentationId`` is
        ``presentation_id``): two records with the same values there
        are one record written twice (the check ``record_duplicates``,
        :mod:`explicit_audit._core.duplicates`). Empty where the producer
        writes no id (a bare retrieval receipt).
    """

    kind: str
    name: str
    doc: str
    fields: tuple[Field, ...]
    record: tuple[str, ...] = ()
    open: bool = True
    identity: tuple[str, ...] = ()

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
            below = "[]." if field.type == "array" else ".*."
            yield from walk(field.items.fields, path + below)


def defaults(fields: Iterable[Field]) -> dict[str, Any]:
    """``{name: the producer's default}`` for the fields that have one."""
    return {field.name: field.default for field in fields if field.has_default}


def is_map(field: Field) -> bool:
    """Whether ``field`` is an object whose every value is its ``items`` (a map by name)."""
    return field.type == "object" and field.items is not None


def _field_schema(field: Field) -> dict[str, Any]:
    schema = dict(TYPES[field.type])
    if is_map(field):
        schema["additionalProperties"] = _field_schema(field.items)
    elif field.type == "object" and (field.fields or not field.open):
        schema |= _object_schema(field.fields, extra_keys=field.open)
    if field.type == "array" and field.items is not None:
        schema["items"] = _field_schema(field.items)
    if field.values:
        schema = {"enum": list(field.values)}
    if field.nullable:
        schema = {"anyOf": [schema, {"type": "null"}]}
    if field.accepts:
        accepted = [{"type": "null"} if t == "null" else TYPES[t] for t in field.accepts]
        schema = {"anyOf": [schema, {"anyOf": accepted, "deprecated": True,
                                     "description": UNDECLARED}]}  # fmt: skip
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
    ``request_id``), but where the shape is not ``open``; nested objects hold
    their declared keys only, but where declared ``open``.
    """
    variants = []
    for shape in shapes:
        variant = _object_schema(shape.fields, extra_keys=shape.open)
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


def _type_problem(kind: str, value: Any) -> str | None:
    whole = isinstance(value, int) and not isinstance(value, bool)
    number = whole or isinstance(value, float)
    if kind == "string" and not isinstance(value, str):
        return "must be a string"
    if kind == "name" and not (isinstance(value, str) and value):
        return "must be a string that is not empty"
    if kind == "integer" and not whole:
        return "must be a whole number"
    if kind == "count" and not (whole and 0 <= value <= 2**63 - 1):
        return "must be a whole number from 0 to 2**63-1"
    if kind == "number" and not number:
        return "must be a number"
    if kind == "probability" and not (number and 0 <= value <= 1):
        return "must be a number from 0 to 1"
    if kind == "boolean" and not isinstance(value, bool):
        return "must be true or false"
    if kind == "strings" and not (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return "must be an array of strings"
    if kind == "object" and not isinstance(value, dict):
        return "must be an object"
    if kind == "array" and not isinstance(value, list):
        return "must be an array"
    return None


def type_fits(type_: str, value: Any) -> bool:
    """Whether ``value`` is a value of ``type_`` (of :data:`TYPES`, or ``"null"``)."""
    if type_ in ("null", "any"):
        return value is None or type_ == "any"
    return value is not None and _type_problem(type_, value) is None


def quoted(value: Any) -> str:
    """``value`` as JSON text for a message, cut at 40 characters.

    Where orjson cannot write it (an integer beyond 64 bits, a lone surrogate
    parsed from a ``\\udXXX`` escape), the standard library writes it, the
    surrogate as that escape.

    Examples
    --------
    >>> quoted({"k": 2**70}), quoted(chr(0xD800))
    ('{"k":1180591620717411303424}', '"\\\\ud800"')
    """
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = json.dumps(value, separators=(",", ":"), default=repr)
    return text if len(text) <= 40 else text[:39] + "…"


def _closed_object(field: Field) -> bool:
    return field.type == "object" and not field.open


def _problems(
    fields: Sequence[Field],
    value: dict,
    prefix: str,
    out: list[str],
    keys: bool = False,
    here: bool = False,
) -> None:
    """The problems of ``value`` against ``fields``; with ``keys``, the undeclared keys of
    the objects below it too, and of ``value`` itself where ``here``."""
    if here:
        names = {field.name for field in fields}
        out.extend(f"{prefix}{key}: not a declared key" for key in value if key not in names)
    for field in fields:
        path = f"{prefix}{field.name}"
        if field.name not in value:
            if field.required:
                out.append(f"{path}: missing")
            continue
        item = value[field.name]
        if item is None:
            if not field.nullable:
                out.append(f"{path}: must not be null")
            continue
        problem = _type_problem(field.type, item)
        if problem is None and field.values and item not in field.values:
            problem = "must be " + " or ".join(quoted(v) for v in field.values)
        if problem is not None:
            out.append(f"{path}: {problem}, got {quoted(item)}")
            continue
        if is_map(field):
            for key in item:
                one = (dataclasses.replace(field.items, name=key),)
                _problems(one, item, path + ".", out, keys)
        elif _closed_object(field):
            _problems(field.fields, item, path + ".", out, keys, keys)
        elif field.type == "array" and field.items is not None and _closed_object(field.items):
            for index, element in enumerate(item):
                if not isinstance(element, dict):
                    out.append(f"{path}[{index}]: must be an object, got {quoted(element)}")
                else:
                    at = f"{path}[{index}]."
                    _problems(field.items.fields, element, at, out, keys, keys)


def shape_problems(shape: Shape, value: dict, *, keys: bool = False) -> list[str]:
    """Every field of ``value`` that does not fit ``shape`` (missing, null, type, values).

    With ``keys``, also every key of an object the shape declares closed (the
    top level where the shape is not ``open``) that it does not declare: then
    the problems are those of the shape's JSON Schema (:func:`json_schema`),
    but for the values a field ``accepts``, which are problems here.
    """
    out: list[str] = []
    _problems(shape.fields, value, "", out, keys, keys and not shape.open)
    return out


def published(kinds: Iterable[Any]) -> dict[str, tuple[Shape, ...]]:
    """Every shape the registered ``kinds`` declare, by the name it is published under.

    A kind's record shapes (``RecordKind.shapes``), those of a table it fills
    from its own lines (``Table.shapes``) and those of the documents it reads
    (``Documents.shapes``), grouped by :attr:`Shape.kind`, in kind order: the
    names ``explicit-audit schema`` offers.
    """
    found: dict[str, list[Shape]] = {}
    for kind in kinds:
        documents = kind.documents.shapes if kind.documents is not None else ()
        tables = [shape for table in kind.tables for shape in table.shapes]
        for shape in (*kind.shapes, *tables, *documents):
            found.setdefault(shape.kind, []).append(shape)
    return {name: tuple(shapes) for name, shapes in found.items()}
