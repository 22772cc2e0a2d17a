"""What the views share: the "no filter" control values, and rounding for display."""

from __future__ import annotations

import pandas as pd

from .._core.columns import ALL_LABEL

__all__ = ["ALL", "NO_AUDIENCE", "rounded"]

#: Control value meaning "no filter" (every audience, space or policy variant).
ALL = ALL_LABEL

NO_AUDIENCE = "(none)"
"""Audience control value selecting the receipts with no audience (unguarded retrieval)."""


def rounded(frame: pd.DataFrame, digits: int) -> pd.DataFrame:
    """``frame`` with its float columns rounded to ``digits`` decimals, for display."""
    if not frame.columns.is_unique:
        floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
        return frame.round(dict.fromkeys(floats, digits))
    # Column by column: DataFrame.round(mapping) joins the columns again, which costs more
    # than the rounding of a small table.
    out = frame.copy(deep=False)
    for name, dtype in frame.dtypes.items():
        if pd.api.types.is_float_dtype(dtype):
            out[name] = frame[name].round(digits)
    return out
