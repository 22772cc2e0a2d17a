"""Pictures of the routing sweep: escalation curves across a threshold, reasons per policy.

See :mod:`explicit_audit.plots` for what every plot shares.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._core.extras import needs

with needs("report", "explicit_audit.plots"):
    from matplotlib.axes import Axes

from .._plot_style import (
    AXIS_LABELS,
    PERCENT_COLUMNS,
    current_axes,
    group_label,
    number_ticks,
    require,
    thousands,
    threshold_name,
)
from . import _data
from ._docs import plot_docs

__all__ = ["plot_escalation_at", "plot_escalation_curve", "plot_reason_mix"]


@plot_docs("plot")
def plot_escalation_curve(
    sweep: pd.DataFrame,
    *,
    threshold: str = "confidence_threshold",
    metric: str = "escalation_rate",
    current: Mapping[str, float] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Line chart: a sweep metric across one threshold, one line per policy.

    Parameters
    ----------
    sweep : DataFrame
        What :func:`~explicit_audit.sweep` returned, varying ``threshold``
        and holding the other two thresholds at one value per policy (a grid
        over ``threshold`` alone does that).
    threshold : str, default "confidence_threshold"
        The threshold on the x axis, one of
        :data:`explicit_audit.decisions.sweep.GRID_AXES`.
    metric : str, default "escalation_rate"
        The column on the y axis (``"escalation_rate"``, ``"escalations"``,
        ``"flips"``, ``"flips_to_26b"``, ``"flips_to_4b"``, a ``reason_*``).
    current : mapping of policy_id to float, optional
        Each policy's own value of ``threshold``, marked on its line.
    title : str, optional
        The Axes title; by default it names the metric and the threshold.
    %(drawn)s

    %(axes)s

    Raises
    ------
    ValueError
        When a policy's rows vary another threshold too: one line would mix
        several curves. Select the rows first, or sweep one axis.

    Examples
    --------
    >>> import numpy as np
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_escalation_curve
    >>> audit = ea.load("data/", progress=False)
    >>> swept = ea.sweep(audit.decisions, audit.policies,
    ...                  {"confidence_threshold": np.linspace(0, 1, 21)})
    >>> plot_escalation_curve(swept, threshold="confidence_threshold").get_title()
    'Escalation rate across the confidence threshold'
    """
    require(sweep, ["policy_id", threshold, metric], "plot_escalation_curve")
    curves = _data.curves(sweep, threshold, metric, current)
    ax = current_axes(ax)
    for curve in curves:
        (line,) = ax.plot(curve.x, curve.y, label=curve.label, **kwargs)
        if curve.marker is not None:
            x0, y0 = curve.marker
            ax.plot([x0], [y0], marker="o", color=line.get_color(), linestyle="none")
    number_ticks(ax, y_percent=metric in PERCENT_COLUMNS)
    ax.set_xlabel(AXIS_LABELS.get(threshold, threshold))
    ax.set_ylabel(AXIS_LABELS.get(metric, metric))
    what = metric.replace("_", " ")
    if title is None:
        marked = "; dots: each policy's own value" if current is not None and len(current) else ""
        title = f"{what.capitalize()} across the {threshold_name(threshold)}{marked}"
    ax.set_title(title)
    ax.legend(title="policy")
    ax.grid(alpha=0.3)
    return ax


@plot_docs()
def plot_reason_mix(
    sweep: pd.DataFrame,
    *,
    label: str = "policy_id",
    title: str = "Escalation reasons per policy",
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Grouped bars: decisions carrying each escalation reason, per row of a sweep.

    Parameters
    ----------
    sweep : DataFrame
        Rows of :func:`~explicit_audit.sweep` (for example one per policy, from
        an empty grid: each policy at its own thresholds), with the
        ``reason_*`` columns.
    label : str, default "policy_id"
        The column naming each row.
    %(title)s
    %(drawn)s

    %(axes)s

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_reason_mix
    >>> audit = ea.load("data/", progress=False)
    >>> plot_reason_mix(ea.sweep(audit.decisions, audit.policies, {})).get_title()
    'Escalation reasons per policy'
    """
    require(sweep, [label], "plot_reason_mix")
    reasons, rows = _data.reason_counts(sweep, label)
    ax = current_axes(ax)
    positions = np.arange(len(reasons))
    height = 0.8 / max(len(rows), 1)
    for i, (name, counts) in enumerate(rows):
        ax.barh(positions + i * height, counts, height=height, label=name, **kwargs)
    ax.set_yticks(positions + height * (len(rows) - 1) / 2, reasons)
    ax.invert_yaxis()
    ax.set_xlabel("decisions with the reason (count)")
    ax.set_ylabel("escalation reason")
    ax.set_title(title)
    ax.legend(title=label.replace("_", " "))
    return ax


@plot_docs("plot")
def plot_escalation_at(
    curve: pd.DataFrame,
    markers: pd.DataFrame,
    *,
    threshold: str = "confidence_threshold",
    title: str | None = None,
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Line chart: the escalation rate across one threshold, marked where each policy stands.

    Parameters
    ----------
    curve : DataFrame
        Rows of :func:`~explicit_audit.sweep` over ``threshold`` alone (the
        ``curve`` of :func:`~explicit_audit.views.escalation_curve_view`).
    markers : DataFrame
        Indexed by ``policy_id``, with ``threshold`` and ``escalation_rate``:
        the point each policy stands at (the view's ``markers``).
    threshold : str, default "confidence_threshold"
        The threshold on the x axis.
    title : str, optional
        The Axes title; by default it names the threshold and, when every
        marker stands at one value, that value.
    %(drawn)s
        They draw the lines.

    Returns
    -------
    Axes
        One line per policy, a dot on each at its marker, labelled with the
        rate there, and a dashed vertical line at each marker's value.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_escalation_at
    >>> from explicit_audit.views import escalation_curve_view
    >>> chosen = escalation_curve_view(ea.load("data/", progress=False), confidence_threshold=0.7)
    >>> plot_escalation_at(chosen.curve, chosen.markers).get_title()
    'Escalation rate across the confidence threshold (marker at 0.7)'
    """
    require(markers, [threshold, "escalation_rate"], "plot_escalation_at")
    ax = current_axes(ax)
    plot_escalation_curve(curve, threshold=threshold, title="", ax=ax, **kwargs)
    colours = {text.get_text(): line.get_color() for line, text in _legend_pairs(ax)}
    values = markers[threshold].to_numpy(dtype=float)
    for value in np.unique(values):
        ax.axvline(value, color="0.35", linestyle="--", linewidth=1, zorder=1)
    for policy_id, row in markers.iterrows():
        x0, rate = float(row[threshold]), float(row["escalation_rate"])
        colour = colours.get(group_label(policy_id), "black")
        ax.plot([x0], [rate * 100], marker="o", markersize=8, color=colour, linestyle="none")
        ax.annotate(
            f"{rate:.1%}", (x0, rate * 100), xytext=(6, 4), textcoords="offset points", fontsize=8
        )
    ax.set_ylim(-2, 102)
    if title is None:
        at = f" (marker at {thousands(values[0])})" if len(np.unique(values)) == 1 else ""
        title = f"Escalation rate across the {threshold_name(threshold)}{at}"
    ax.set_title(title)
    return ax


def _legend_pairs(ax: Axes) -> list:
    legend = ax.get_legend()
    if legend is None:
        return []
    return list(zip(legend.get_lines(), legend.get_texts(), strict=False))
