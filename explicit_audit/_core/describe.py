"""Values as an error message or a finding shows them: described, quoted, bounded.

Every message of the kit names the value at fault the same way:

- :func:`describe` says what a value *is*, in JSON's terms, for a message
  about a value of the wrong type (``must be an integer, got the string '3'``);
- :func:`yaml_type` says the same in YAML's terms, without the value, for a
  policy file (``expected a mapping, got a list``);
- :func:`json_type` names the JSON type alone (``got a JSON array``);
- :func:`quote` writes a value as JSON would, for a finding's detail
  (``query is "<script>"``, ``recorded ["a", "b"]``, ``null``);
- :func:`short_repr` writes it as Python would, cut to a length, for a
  message about a value the producer's Python code reads (``int()`` of it).

A message about a record's shape points to :data:`FORMATS_DOC`, the format
contract that ships with the kit.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FORMATS_DOC",
    "describe",
    "json_type",
    "quote",
    "short_repr",
    "yaml_type",
]
#: Where the record shapes the kit reads are documented, as a message names it.
FORMATS_DOC = "docs/formats.md (installed with the kit as explicit_audit/docs/formats.md)"


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: object, array, string, number, boolean or null."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe(value: Any) -> str:
    """What a parsed JSON value is, with the value itself where it is short.

    Examples
    --------
    >>> describe("3"), describe(1.5), describe(True), describe(None), describe([1])
    ("the string '3'", 'the number 1.5', 'a boolean', 'null', 'an array')
    """
    kind = json_type(value)
    if kind == "number":
        return f"the number {value!r}"
    if kind == "string":
        return f"the string {_excerpt(value, 40)!r}"
    return {"null": "null", "boolean": "a boolean", "array": "an array", "object": "an object"}.get(
        kind, kind
    )


def yaml_type(value: Any) -> str:
    """What a parsed YAML value is, in YAML's terms, without the value.

    Examples
    --------
    >>> yaml_type({}), yaml_type(3), yaml_type(0.5), yaml_type(None)
    ('a mapping', 'an integer', 'a number', 'null')
    """
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


def _plain(value: Any) -> Any:
    """The value in JSON's types: numpy scalars, tuples, arrays and missing values unwrapped."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, tuple | list | np.ndarray):
        return [_plain(item) for item in value]
    return value


def quote(value: Any) -> str:
    """A value written as JSON, for a finding's detail.

    Missing values (``None``, ``pd.NA``, NaN) are ``null``; tuples and arrays
    are lists; anything JSON cannot write is shown with ``str``.

    Examples
    --------
    >>> quote("qmd://a/b.md"), quote(None), quote(("x", "y")), quote(True), quote(3)
    ('"qmd://a/b.md"', 'null', '["x", "y"]', 'true', '3')
    """
    return json.dumps(_plain(value), ensure_ascii=False, default=str)


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters.

    Examples
    --------
    >>> short_repr("x" * 100, limit=8)
    "'xxxxxx…"
    """
    return _excerpt(repr(value), limit)
