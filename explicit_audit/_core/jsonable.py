"""Tables as plain JSON values, for ``--json`` output and reports."""

from __future__ import annotations

import math

import pandas as pd

__all__ = ["json_rows"]


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
        item = {}
        for name, value in zip(frame.columns, row, strict=True):
            if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
                item[name] = None
            else:
                item[name] = value.item() if hasattr(value, "item") else value
        rows.append(item)
    return rows
