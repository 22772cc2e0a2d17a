"""Keys a record carries beyond those of its kind, as extra DataFrame columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["extra_columns"]


def _dtype(values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return object
    kinds = {type(v) for v in present}
    if kinds == {str}:
        return "str"
    if kinds == {bool}:
        return "boolean"
    if kinds == {int} and all(-(2**63) <= v < 2**63 for v in present):
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
    columns = {}
    for name in names:
        values = [record.get(name) for record in records]
        columns[name] = pd.Series(values, index=index, dtype=_dtype(values))
    return pd.DataFrame(columns, index=index)
