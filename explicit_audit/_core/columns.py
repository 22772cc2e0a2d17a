"""Column helpers shared by the record builders.

Arrow-backed string columns hold UTF-8 only, and a JSON string may carry a
lone surrogate (``"\\ud800"``, which the standard library's parser accepts).
Such a value is shown with U+FFFD in a flattened column; the record's own
object column (``plan``, ``payload``) keeps it exactly as written, and hashes
are rebuilt from that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = [
    "ALL_LABEL",
    "INT64_MAX",
    "INT64_MIN",
    "extra_columns",
    "fits_int64",
    "text_safe_series",
    "typed_columns",
]

#: The label of a row, or a choice, that stands for every group: the overall
#: row of a withheld summary, "every audience" or "every variant" in a panel.
ALL_LABEL = "(all)"

#: The bounds of an int64 column: a whole number outside them cannot be stored.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def fits_int64(value: int) -> bool:
    """Whether a whole number fits an int64 column."""
    return INT64_MIN <= value <= INT64_MAX


_SURROGATE = re.compile("[\ud800-\udfff]")


def _displayable(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_displayable(item) for item in value]
    return value


def text_safe_series(values: Sequence[Any], dtype: Any, index: pd.Index | None = None) -> pd.Series:
    """``pd.Series(values, dtype=dtype)``, lone surrogates shown as U+FFFD if Arrow refuses them."""
    try:
        return pd.Series(values, dtype=dtype, index=index)
    except UnicodeEncodeError:
        return pd.Series([_displayable(v) for v in values], dtype=dtype, index=index)


def _dtype(values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return object
    kinds = {type(v) for v in present}
    if kinds == {str}:
        return "str"
    if kinds == {bool}:
        return "boolean"
    if kinds == {int} and all(fits_int64(v) for v in present):
        return "Int64"
    if kinds <= {int, float} and kinds != {int}:
        return "Float64"
    return object


def extra_columns(records: Sequence[dict[str, Any]], index: pd.Index) -> pd.DataFrame:
    """One column per extra key, in first-seen order, with a declared dtype.

    Strings become ``str``, booleans ``boolean``, integers ``Int64``, numbers
    ``Float64`` (a missing value is <NA>); anything else (objects, arrays,
    mixed types) stays ``object``, holding the values as written.
    """
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record))
    return typed_columns({name: [record.get(name) for record in records] for name in names}, index)


def typed_columns(columns: dict[str, list[Any]], index: pd.Index) -> pd.DataFrame:
    """Columns of parsed values (None where absent), each with a declared dtype.

    The dtypes are those of :func:`extra_columns`.
    """
    safe: dict[str, pd.Series] = {}
    for name, values in columns.items():
        safe[_column_name(name, safe)] = text_safe_series(values, _dtype(values), index)
    return pd.DataFrame(safe, index=index)


def _column_name(name: str, taken: dict[str, Any]) -> str:
    """A key as a column name: one holding a lone surrogate (a JSON escape) as its escape.

    Arrow cannot store a lone surrogate; written as ``\\ud800`` it may meet a
    key written that way, so a name already taken gets a ``#2``, ``#3``, ... suffix.
    """
    try:
        name.encode("utf-8")
        if name not in taken:
            return name
    except UnicodeEncodeError:
        name = name.encode("utf-8", errors="backslashreplace").decode("utf-8")
    found, number = name, 1
    while found in taken:
        number += 1
        found = f"{name}#{number}"
    return found
