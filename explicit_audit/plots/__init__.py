"""Pictures of what the computing functions return.

Every function draws one picture from one table that a computing function
returned, and nothing it has to compute on its own beyond counting rows:

==============================  =========================================================
function                        draws
==============================  =========================================================
``plot_hash_verification``      plans per verification status (``ea.verify_plans``)
``plot_finding_counts``         findings per rule (``ea.check_receipts``,
                                ``ea.verify_requests``, ``ea.verify_decisions``)
``plot_withheld_by``            a column of ``ea.withheld_summary``, one bar per group
``plot_withheld_oracle``        queries whose withheld count revealed restricted
                                matches (``ea.withheld_oracle``)
``plot_escalation_curve``       one line per policy across one threshold (``ea.sweep``)
``plot_escalation_at``          the same, with a marker where each policy stands now
                                (the routing explorer's live chart)
``plot_reason_mix``             escalation reasons per policy (rows of ``ea.sweep``)
``plot_trend``                  measures per period, one line each (``ea.trend``)
==============================  =========================================================

Each reads ``plot_x(frame, *, ..., ax=None, **kwargs)``: it draws on ``ax``
(the current Axes when None), passes ``kwargs`` to the matplotlib call that
draws the data, never calls ``plt.show()``, and returns the Axes. What a
plot computes from its table (counts in order, a bar per group, a curve per
policy) is apart from what it draws, in ``_data``; the sentences their
docstrings share are written once, in ``_docs``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._core.extras import needs

with needs("report", "explicit_audit.plots"):
    from matplotlib.axes import Axes
    from matplotlib.ticker import PercentFormatter

from .._plot_style import (
    AXIS_LABELS,
    PERCENT_COLUMNS,
    barh_counts,
    current_axes,
    group_label,
    require,
)
from . import _data
from ._docs import plot_docs
from .routing import plot_escalation_at, plot_escalation_curve, plot_reason_mix
from .trend import plot_trend

__all__ = [
    "plot_escalation_at",
    "plot_escalation_curve",
    "plot_finding_counts",
    "plot_hash_verification",
    "plot_reason_mix",
    "plot_trend",
    "plot_withheld_by",
    "plot_withheld_oracle",
]


@plot_docs()
def plot_hash_verification(
    checked: pd.DataFrame,
    *,
    by: str = "status",
    title: str = "Recorded hashes rebuilt",
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Bar chart: how many recorded hashes fall under each verification status.

    Parameters
    ----------
    checked : DataFrame
        The table :func:`~explicit_audit.plan_verdicts` returned; on Dask
        tables only the counts are computed.
    by : str, default "status"
        The column to count by (``"status"`` or ``"variant"``). Every category
        of a categorical column is shown, empty ones too.
    %(title)s
    %(drawn)s

    %(axes)s

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_hash_verification
    >>> ax = plot_hash_verification(ea.plan_verdicts(ea.load("data/", progress=False).plans))
    >>> ax.get_title(), ax.get_xlabel()
    ('Recorded hashes rebuilt', 'recorded hashes (count, log scale)')
    """
    require(checked, [by], "plot_hash_verification")
    ax = current_axes(ax)
    counts = _data.status_counts(checked, by)
    kwargs.setdefault("log", bool(len(counts)) and counts.max() >= 20 * max(counts.min(), 1))
    barh_counts(ax, [group_label(v) for v in counts.index], counts.to_numpy(), **kwargs)
    ax.set_xlabel("recorded hashes (count, log scale)" if kwargs["log"] else "recorded hashes")
    ax.set_ylabel(by)
    ax.set_title(title)
    return ax


@plot_docs()
def plot_finding_counts(
    findings: pd.DataFrame,
    *,
    by: str = "rule",
    title: str = "Findings per rule",
    show_empty: bool = False,
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Bar chart: findings per rule, from any findings table of the kit.

    Parameters
    ----------
    findings : DataFrame
        What :func:`~explicit_audit.check_receipts` (``by="rule"``),
        :func:`~explicit_audit.verify_decisions` (``by="rule"``) or
        :func:`~explicit_audit.verify_requests` (``by="finding"``) returned.
    by : str, default "rule"
        The column naming the rule.
    %(title)s
    show_empty : bool, default False
        Also show the rules of a categorical column with no finding.
    %(drawn)s

    %(axes)s

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_finding_counts
    >>> audit = ea.load("data/", progress=False)
    >>> plot_finding_counts(ea.check_receipts(audit)).get_title()
    'Findings per rule'
    """
    require(findings, [by], "plot_finding_counts")
    ax = current_axes(ax)
    counts = _data.finding_counts(findings, by, show_empty)
    if counts.empty:
        ax.text(0.5, 0.5, "no findings", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
    else:
        barh_counts(ax, [group_label(v) for v in counts.index], counts.to_numpy(), **kwargs)
    ax.set_xlabel("findings (count)")
    ax.set_ylabel(by)
    ax.set_title(title)
    return ax


@plot_docs()
def plot_withheld_by(
    summary: pd.DataFrame,
    *,
    column: str = "records_withheld",
    title: str | None = None,
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Bar chart: one column of a withheld summary, one bar per group.

    Parameters
    ----------
    summary : DataFrame
        What :func:`~explicit_audit.withheld_summary` returned, grouped by one
        or more columns. The overall row (``"(all)"``) is left out.
    column : str, default "records_withheld"
        The column to draw (``"records_withheld"``, ``"receipts_withheld"``,
        ``"withheld_rate"``, ``"withheld_share"``, ...).
    title : str, optional
        The Axes title; by default it names the column and the grouping.
    %(drawn)s

    %(axes)s

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_withheld_by
    >>> receipts = ea.load("data/", progress=False).receipts
    >>> plot_withheld_by(ea.withheld_summary(receipts, by="active_space")).get_title()
    'Records withheld by active_space'
    """
    require(summary, [column], "plot_withheld_by")
    ax = current_axes(ax)
    labels, values = _data.withheld_bars(summary, column)
    percent = column in PERCENT_COLUMNS
    positions = np.arange(len(labels))
    bars = ax.barh(positions, values, **kwargs)
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()
    ax.bar_label(bars, fmt="%.1f%%" if percent else "%g", padding=2)
    ax.margins(x=0.15)
    if percent:
        ax.xaxis.set_major_formatter(PercentFormatter())
    grouping = _data.grouping(summary.index, "group")
    ax.set_xlabel(AXIS_LABELS.get(column, column))
    ax.set_ylabel(grouping)
    ax.set_title(
        title if title is not None else f"{column.replace('_', ' ').capitalize()} by {grouping}"
    )
    return ax


@plot_docs()
def plot_withheld_oracle(
    oracle: pd.DataFrame,
    *,
    title: str = "What withheld counts reveal: queries that matched restricted content",
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Stacked bars: per audience, distinct queries whose count revealed restricted matches.

    Parameters
    ----------
    oracle : DataFrame
        What :func:`~explicit_audit.withheld_oracle` returned.
    %(title)s
    %(drawn)s
        Both calls, the revealed queries and the rest, take them.

    Returns
    -------
    Axes
        Bars of ``queries``, split into ``queries_withheld`` (a non-zero count
        at least once) and the rest, labelled with ``query_share``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_withheld_oracle
    >>> ax = plot_withheld_oracle(ea.withheld_oracle(ea.load("data/", progress=False).receipts))
    >>> ax.get_xlabel()
    'distinct queries asked (count)'
    """
    require(oracle, ["queries", "queries_withheld", "query_share"], "plot_withheld_oracle")
    ax = current_axes(ax)
    positions = np.arange(len(oracle))
    revealed, rest, shares = _data.oracle_bars(oracle)
    ax.barh(positions, revealed, label="count > 0 at least once", **kwargs)
    bars = ax.barh(positions, rest, left=revealed, label="count always 0", alpha=0.45, **kwargs)
    ax.bar_label(bars, labels=shares, padding=2)
    ax.set_yticks(positions, _data.group_labels(oracle.index))
    ax.invert_yaxis()
    ax.margins(x=0.25)
    ax.set_xlabel("distinct queries asked (count)")
    ax.set_ylabel(_data.grouping(oracle.index, "audience"))
    ax.set_title(title)
    ax.legend(loc="best")
    return ax
