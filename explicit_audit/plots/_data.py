"""What each plot computes from the table it is given, apart from drawing it.

Plain pandas and numpy, no matplotlib: counts in the order they are drawn,
one bar per group, one curve per policy. Each plot in
:mod:`explicit_audit.plots` reads one of these and draws what it returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._plot_style import ALL_LABEL, PERCENT_COLUMNS, group_label
from ..partitioned.results import collect

__all__ = [
    "THRESHOLDS",
    "Curve",
    "curves",
    "finding_counts",
    "group_labels",
    "grouping",
    "oracle_bars",
    "reason_counts",
    "status_counts",
    "withheld_bars",
]

#: The thresholds a sweep varies (:data:`explicit_audit.decisions.sweep.GRID_AXES`).
THRESHOLDS = ("context_char_cap_4b", "escalate_on_multi_doc_count", "confidence_threshold")


def group_labels(index: pd.Index) -> list[str]:
    """Each value of ``index`` as a label drawn literally (:func:`group_label`)."""
    return [group_label(value) for value in index]


def grouping(index: pd.Index, fallback: str) -> str:
    """The names of the levels a table is grouped by, as an axis label."""
    return " / ".join(str(name) for name in index.names if name) or fallback


def _in_order(counts: pd.Series, column: pd.Series) -> pd.Series:
    """``column``'s value counts in category order for a categorical, else sorted by value."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        counts = counts.sort_index()
    return counts


def status_counts(checked: pd.DataFrame, by: str) -> pd.Series:
    """Rows per value of ``by``, missing values and empty categories too (computed on Dask)."""
    return _in_order(collect(checked[by].value_counts(sort=False, dropna=False)), checked[by])


def finding_counts(findings: pd.DataFrame, by: str, show_empty: bool) -> pd.Series:
    """Findings per value of ``by``; the values with none only when ``show_empty``."""
    counts = _in_order(findings[by].value_counts(sort=False), findings[by])
    return counts if show_empty else counts[counts > 0]


def withheld_bars(summary: pd.DataFrame, column: str) -> tuple[list[str], np.ndarray]:
    """Each group's label and value of ``column`` (a share in percent), the overall row out."""
    rows = summary[[group_label(v) != ALL_LABEL for v in summary.index]]
    values = rows[column].astype("Float64").fillna(0).to_numpy(dtype=float)
    return group_labels(rows.index), values * 100 if column in PERCENT_COLUMNS else values


def oracle_bars(oracle: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per audience: queries whose count revealed a match, the other queries, the share's label."""
    revealed = oracle["queries_withheld"].to_numpy(dtype=float)
    rest = oracle["queries"].to_numpy(dtype=float) - revealed
    shares = oracle["query_share"].astype("Float64").fillna(0).to_numpy(dtype=float)
    return revealed, rest, [f"{share:.0%} revealed" for share in shares]


class Curve(NamedTuple):
    """One policy's line: its label, its points, and the point of its own value (or None)."""

    label: str
    x: np.ndarray
    y: np.ndarray
    marker: tuple[float, float] | None


def curves(
    sweep: pd.DataFrame, threshold: str, metric: str, current: Mapping[str, float] | None
) -> list[Curve]:
    """Each policy's curve of ``metric`` (a rate in percent) across ``threshold``.

    Raises
    ------
    ValueError
        When a policy's rows vary another threshold too.
    """
    others = [name for name in THRESHOLDS if name != threshold and name in sweep]
    scale = 100 if metric in PERCENT_COLUMNS else 1
    found = []
    for policy_id, rows in sweep.groupby("policy_id", observed=True, sort=False):
        varying = [name for name in others if rows[name].nunique() > 1]
        if varying:
            raise ValueError(
                f"policy {policy_id!r} varies {', '.join(varying)} as well as {threshold}; "
                "select the rows with one value of each other threshold first"
            )
        rows = rows.sort_values(threshold)
        x = rows[threshold].to_numpy(dtype=float)
        y = rows[metric].to_numpy(dtype=float) * scale
        marker = None
        if current is not None and policy_id in current:
            x0 = float(current[policy_id])
            marker = (x0, np.interp(x0, x, y))
        found.append(Curve(group_label(policy_id), x, y, marker))
    return found


def reason_counts(
    sweep: pd.DataFrame, label: str
) -> tuple[list[str], list[tuple[str, np.ndarray]]]:
    """The escalation reasons, and per row of a sweep its label and count of each.

    Raises
    ------
    ValueError
        When the sweep has no ``reason_*`` column.
    """
    reasons = [c for c in sweep.columns if c.startswith("reason_")]
    if not reasons:
        raise ValueError("plot_reason_mix needs the reason_* columns of ea.sweep")
    rows = [
        (group_label(row[label]), row[reasons].to_numpy(dtype=float)) for _, row in sweep.iterrows()
    ]
    return [r[len("reason_") :] for r in reasons], rows
