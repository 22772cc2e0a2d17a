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
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    return frame.round(dict.fromkeys(floats, digits))
