"""Compact tables for a panel: short headers, rates as percentages, in a box that scrolls.

A view returns a DataFrame with the kit's long column names (what code reads);
a panel shows it through :class:`CompactTable`: each header short, its long
name and meaning in the header's ``title`` (a tooltip, and what a screen
reader announces), rates as percentages, counts with thousands separators,
yes and no for a flag, and the table in a box of its own that scrolls
sideways only when the notebook is narrower than a laptop's beside JupyterLab's
file browser (every panel's table fits 930 px). No cell is cut: a long value
wraps.
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._plot_style import AXIS_LABELS, MISSING_LABEL

__all__ = [
    "FLIPS_HEADERS",
    "SWEEP_HEADERS",
    "WITHHELD_HEADERS",
    "CompactTable",
    "compact_flips",
    "compact_sweep",
    "compact_withheld",
]

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

#: The withheld-count explorer's table: each column's short header (and the groupings').
WITHHELD_HEADERS = {
    "scope": "scope",
    "withheld_audience": "audience",
    "active_space": "space",
    "outcome": "outcome",
    "receipts": "receipts",
    "receipts_withheld": "withholding",
    "records_withheld": "withheld",
    "withheld_rate": "rate",
    "records_returned": "returned",
    "withheld_share": "share",
    "invalid_counts": "invalid",
}

#: The routing explorer's decisions that flip: each column's short header.
FLIPS_HEADERS = {
    "policy_id": "policy",
    "decision_row": "row",
    "recorded_policy_id": "recorded policy",
    "decision_id": "decision",
    "subject_domain": "domain",
    "content_chars": "chars",
    "evidence_doc_count": "docs",
    "confidence": "conf.",
    "recorded_escalate_to_26b": "26B recorded",
    "escalate_to_26b": "26B now",
}

_MEANINGS = {
    **AXIS_LABELS,
    "escalate_on_multi_doc_count": "multi-document escalation count (documents)",
    "escalations_as_written": "decisions escalated at the policy's own thresholds (count)",
    "escalation_change": "escalated, less escalated as written (count)",
    "decisions": "decisions counted",
    "policy_id": "policy variant",
    "invalid_counts": "receipts whose withheld count is negative, left out of the sums (count)",
    "decision_row": "the decision's row in audit.decisions",
    "recorded_policy_id": "the policy the decision was recorded under",
    "decision_id": "decision id",
    "subject_domain": "subject domain",
    "content_chars": "context characters (count)",
    "evidence_doc_count": "evidence documents (count)",
    "confidence": "4B model confidence, 0 to 1",
    "recorded_escalate_to_26b": "escalated to 26B, as recorded",
    "escalate_to_26b": "escalated to 26B, replayed at these thresholds",
    "scope": "receipt scope",
    "withheld_audience": "withheld audience",
    "active_space": "active space",
    "outcome": "receipt outcome",
}


def _row_label(label: Any) -> str:
    """A row's label: a missing group named as the charts name it."""
    if isinstance(label, tuple):
        return " / ".join(map(_row_label, label))
    if label is None or (not isinstance(label, str) and pd.isna(label)):
        return MISSING_LABEL
    return str(label)


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
        if isinstance(value, bool | np.bool_):
            return "yes" if value else "no"
        if not isinstance(value, numbers.Real):
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
            f"<tr><th>{html.escape(_row_label(label))}</th>"
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


def compact_withheld(table: pd.DataFrame) -> CompactTable:
    """The withheld-count explorer's table (:func:`~explicit_audit.views.withheld_view`), compact.

    Parameters
    ----------
    table : DataFrame
        What :func:`~explicit_audit.views.withheld_view` returned.

    Returns
    -------
    CompactTable
        Headers from :data:`WITHHELD_HEADERS`, the rate and share as percentages.
    """
    return CompactTable(table, WITHHELD_HEADERS, percent=["withheld_rate", "withheld_share"])


def compact_flips(table: pd.DataFrame) -> CompactTable:
    """The decisions that flip (:func:`~explicit_audit.views.flips_view`), compact.

    Parameters
    ----------
    table : DataFrame
        What :func:`~explicit_audit.views.flips_view` returned.

    Returns
    -------
    CompactTable
        One row per decision, labelled by the variant applied; headers from
        :data:`FLIPS_HEADERS`, the escalations as yes or no.
    """
    return CompactTable(table.set_index("policy_id"), FLIPS_HEADERS)
