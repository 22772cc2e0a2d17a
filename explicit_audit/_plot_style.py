"""Shared look of the kit's plots: one colour-blind-safe palette, axis labels, bar helpers.

Every plot draws in the Okabe–Ito palette (:data:`PALETTE`), whose eight
colours stay distinct under the common colour-vision deficiencies and in
greyscale print; blue comes first, yellow (weak on white) late.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._core.columns import ALL_LABEL
from ._core.extras import needs

with needs("report", "explicit_audit.plots"):
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.ticker import FuncFormatter, PercentFormatter

__all__ = [
    "ALL_LABEL",
    "AXIS_LABELS",
    "MISSING_LABEL",
    "PALETTE",
    "PERCENT_COLUMNS",
    "THRESHOLD_NAMES",
    "barh_counts",
    "current_axes",
    "group_label",
    "number_ticks",
    "require",
    "thousands",
    "threshold_name",
]

MISSING_LABEL = "(none)"

AXIS_LABELS = {
    "context_char_cap_4b": "context cap for the 4B model (characters)",
    "escalate_on_multi_doc_count": "multi-document escalation count (documents)",
    "confidence_threshold": "confidence threshold (4B model confidence, 0 to 1)",
    "escalation_rate": "decisions escalated to 26B (%)",
    "escalations": "decisions escalated to 26B (count)",
    "flips": "decisions whose escalation differs from the record (count)",
    "flips_to_26b": "decisions newly escalated to 26B (count)",
    "flips_to_4b": "decisions no longer escalated (count)",
    "records_withheld": "records withheld (count)",
    "receipts_withheld": "receipts that withheld anything (count)",
    "receipts": "receipts (count)",
    "withheld_rate": "receipts that withheld anything (%)",
    "withheld_share": "records withheld, of records matched (%)",
    "records_returned": "records returned (count)",
}
#: Each routing threshold as a title names it ("Escalation rate across the ...").
THRESHOLD_NAMES = {
    "context_char_cap_4b": "4B model's context cap",
    "escalate_on_multi_doc_count": "multi-document escalation count",
    "confidence_threshold": "confidence threshold",
}
PERCENT_COLUMNS = {"escalation_rate", "withheld_rate", "withheld_share", "query_share"}

#: Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008),
#: in the order series take them.
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermilion
    "#56B4E9",  # sky blue
    "#CC79A7",  # reddish purple
    "#F0E442",  # yellow
    "#000000",  # black
)


def current_axes(ax: Axes | None) -> Axes:
    """The Axes to draw on, in :data:`PALETTE` when nothing is drawn on it yet.

    An Axes that already holds lines or bars keeps its colour cycle, so that
    two plots drawn on one Axes do not repeat a colour.
    """
    ax = plt.gca() if ax is None else ax
    if not ax.lines and not ax.patches and not ax.collections:
        ax.set_prop_cycle(color=list(PALETTE))
    return ax


def group_label(value: Any) -> str:
    """A value from the data as a label drawn literally.

    A ``$`` is escaped: matplotlib would otherwise read text between two of
    them as mathematics, and fail on some.
    """
    if isinstance(value, tuple):
        return " / ".join(group_label(v) for v in value)
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return MISSING_LABEL
    return str(value).replace("$", r"\$")


def require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ValueError(
            f"{what} needs the column(s) {', '.join(map(repr, missing))}; pass the table the "
            "computing function returned"
        )


def threshold_name(threshold: str) -> str:
    """A threshold's column as a title names it.

    Examples
    --------
    >>> threshold_name("escalate_on_multi_doc_count"), threshold_name("other_cap")
    ('multi-document escalation count', 'other cap')
    """
    return THRESHOLD_NAMES.get(threshold, threshold.replace("_", " "))


def thousands(value: Any, _position: Any = None) -> str:
    """A number as the kit's tables write it: thousands separated, no trailing zeros.

    Also a matplotlib tick formatter (``FuncFormatter(thousands)``).

    Examples
    --------
    >>> thousands(1828), thousands(1828.0), thousands(0.25), thousands(-12500)
    ('1,828', '1,828', '0.25', '-12,500')
    """
    number = float(value)
    if number.is_integer():
        return f"{int(number):,}"
    return f"{number:,.6g}"


def number_ticks(ax: Axes, *, y_percent: bool = False) -> None:
    """Ticks as the tables write numbers: x thousands separated, y too or in percent."""
    ax.xaxis.set_major_formatter(FuncFormatter(thousands))
    ax.yaxis.set_major_formatter(PercentFormatter() if y_percent else FuncFormatter(thousands))


def barh_counts(ax: Axes, labels: Sequence[str], counts: Sequence[float], **kwargs) -> None:
    positions = np.arange(len(labels))
    bars = ax.barh(positions, counts, **kwargs)
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()  # first row on top, as in the table
    ax.bar_label(bars, padding=2, fmt=thousands)
    ax.xaxis.set_major_formatter(FuncFormatter(thousands))  # a percent column sets its own
    ax.margins(x=0.15)
