"""Compact tables for a panel: short headers, rates as percentages, in a box that scrolls.

A view returns a DataFrame with the kit's long column names (what code reads);
a panel shows it through :class:`CompactTable`: each header short, its long
name and meaning in the header's ``title`` (a tooltip, and what a screen
reader announces), rates as percentages, counts with thousands separators,
and the table in a box of its own that scrolls sideways when the notebook is
narrow, so that nothing is cut.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .._plot_style import AXIS_LABELS

__all__ = ["SWEEP_HEADERS", "CompactTable", "compact_sweep"]

#: The routing explorer's table: each column's short header.
SWEEP_HEADERS = {
    "policy_id": "policy",
    "context_char_cap_4b": "cap",
    "escalate_on_multi_doc_count": "docs",
    "confidence_threshold": "conf.",
    "decisions": "decisions",
    "escalations": "escalated",
    "escalation_rate": "rate",
    "escalations_as_written": "as written",
    "escalation_change": "change",
    "flips": "flips",
    "flips_to_26b": "→ 26B",
    "flips_to_4b": "→ 4B",
}

_MEANINGS = {
    **AXIS_LABELS,
    "escalate_on_multi_doc_count": "multi-document escalation count (documents)",
    "escalations_as_written": "decisions escalated at the policy's own thresholds (count)",
    "escalation_change": "escalated, less escalated as written (count)",
    "decisions": "decisions counted",
    "policy_id": "policy variant",
}


class CompactTable:
    """A DataFrame shown compactly: short headers with their long names as titles.

    Parameters
    ----------
    frame : DataFrame
        The table; its index is shown as the first column.
    headers : mapping of str to str
        The short header of each column (a column without one keeps its name).
    percent : iterable of str, optional
        Columns of fractions, written as percentages with one decimal.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"escalation_rate": [0.1234]})
    >>> shown = CompactTable(frame, {"escalation_rate": "rate"}, percent=["escalation_rate"])
    >>> markup = shown._repr_html_()
    >>> "<th title='escalation_rate: decisions escalated to 26B (%)'>rate</th>" in markup
    True
    >>> "<td>12.3%</td>" in markup
    True
    """

    def __init__(
        self, frame: pd.DataFrame, headers: Mapping[str, str], *, percent: Any = ()
    ) -> None:
        self.frame = frame
        self.headers = dict(headers)
        self.percent = set(percent)

    def __repr__(self) -> str:
        return repr(self.frame)

    def _cell(self, column: str, value: Any) -> str:
        if pd.isna(value):
            return ""
        if column in self.percent:
            return f"{float(value):.1%}"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return str(value)
        if not float(value).is_integer():
            return f"{float(value):g}"
        return f"{int(value):,}"

    def _repr_html_(self) -> str:
        def header(name: str) -> str:
            meaning = _MEANINGS.get(name)
            title = f"{name}: {meaning}" if meaning else name
            short = self.headers.get(name, name)
            return f"<th title='{html.escape(title)}'>{html.escape(short)}</th>"

        index = str(self.frame.index.name or "")
        head = header(index) + "".join(header(str(c)) for c in self.frame.columns)
        rows = "".join(
            f"<tr><th>{html.escape(str(label))}</th>"
            + "".join(
                f"<td>{html.escape(self._cell(str(column), value))}</td>"
                for column, value in row.items()
            )
            + "</tr>"
            for label, row in self.frame.iterrows()
        )
        return (
            "<div class='ea-table' style='overflow-x:auto;max-width:100%'>"
            f"<table class='dataframe'><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table></div>"
        )


def compact_sweep(table: pd.DataFrame) -> CompactTable:
    """The routing explorer's table (:func:`~explicit_audit.views.sweep_view`), compact.

    Parameters
    ----------
    table : DataFrame
        What :func:`~explicit_audit.views.sweep_view` returned.

    Returns
    -------
    CompactTable
        Headers from :data:`SWEEP_HEADERS`, the escalation rate as a percentage.
    """
    return CompactTable(table, SWEEP_HEADERS, percent=["escalation_rate"])
