"""Tables as plain JSON values, for ``--json`` output and reports."""

from __future__ import annotations

import pandas as pd

__all__ = ["json_rows"]


def json_rows(frame: pd.DataFrame) -> list[dict]:
    """A table as a list of row objects of plain JSON values (``None`` for missing).

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
    """
    rows = []
    for row in frame.astype(object).itertuples(index=False):
        item = {}
        for name, value in zip(frame.columns, row, strict=True):
            if value is None or value is pd.NA:
                item[name] = None
            else:
                item[name] = value.item() if hasattr(value, "item") else value
        rows.append(item)
    return rows
