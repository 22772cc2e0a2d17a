"""Tables as plain JSON values, for ``--json`` output and reports.

What comes out is strict JSON (RFC 8259) once written: a missing value of any
kind (``None``, ``pd.NA``, ``NaN``, ``NaT``) is ``None``, never a float NaN,
and an infinite float is ``None`` too, as JSON has no word for it.
"""

from __future__ import annotations

import math
from datetime import date, datetime

import pandas as pd

__all__ = ["json_rows", "json_value"]


def json_value(value):
    """One cell as a plain JSON value: missing values and non-finite floats as ``None``.

    Parameters
    ----------
    value : object
        A cell of a table (a NumPy scalar, a pandas scalar, a plain value).

    Returns
    -------
    object
        ``None``, a bool, an int, a finite float, a str, or the value itself
        when it is already a plain container (a list or a dict).

    Examples
    --------
    >>> [json_value(v) for v in (float("nan"), pd.NA, pd.NaT, float("inf"), 1.5)]
    [None, None, None, None, 1.5]
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, list | dict | str):
        try:
            value = value.item()
        except (ValueError, TypeError):  # an array of more than one element: leave as is
            return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, pd.Timestamp | datetime | date):
        return value.isoformat()
    return value


def json_rows(frame: pd.DataFrame) -> list[dict]:
    """A table as a list of row objects of plain JSON values (``None`` for missing).

    A missing value is ``None`` whatever marks it in the column (``None``,
    ``pd.NA``, or NaN, which a ``str`` column uses), so the rows always make
    valid JSON.

    Parameters
    ----------
    frame : DataFrame

    Returns
    -------
    list of dict

    Examples
    --------
    >>> json_rows(pd.DataFrame({"a": pd.array([1, None], dtype="Int64")}))
    [{'a': 1}, {'a': None}]
    >>> json_rows(pd.DataFrame({"s": pd.Series(["x", None], dtype="str")}))
    [{'s': 'x'}, {'s': None}]
    """
    rows = []
    for row in frame.astype(object).itertuples(index=False):
        rows.append(
            {name: json_value(value) for name, value in zip(frame.columns, row, strict=True)}
        )
    return rows
