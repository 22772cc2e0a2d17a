"""Pictures of threshold sweeps: escalation curves and reason mix (re-exported by ``plots``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import PercentFormatter

from ._plot_style import AXIS_LABELS, PERCENT_COLUMNS, current_axes, group_label, require

__all__ = ["plot_escalation_curve", "plot_reason_mix"]


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
        :data:`explicit_audit.sweep.GRID_AXES`.
    metric : str, default "escalation_rate"
        The column on the y axis (``"escalation_rate"``, ``"escalations"``,
        ``"flips"``, ``"flips_to_26b"``, ``"flips_to_4b"``, a ``reason_*``).
    current : mapping of policy_id to float, optional
        Each policy's own value of ``threshold``, marked on its line.
    title : str, optional
        The Axes title; by default it names the metric and the threshold.
    ax : Axes, optional
        Where to draw; the current Axes when None.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.plot`.

    Returns
    -------
    Axes

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
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> swept = ea.sweep(audit.decisions, audit.policies,
    ...                  {"confidence_threshold": np.linspace(0, 1, 21)})  # doctest: +SKIP
    >>> plot_escalation_curve(swept, threshold="confidence_threshold")  # doctest: +SKIP
    """
    axes_names = ("context_char_cap_4b", "escalate_on_multi_doc_count", "confidence_threshold")
    require(sweep, ["policy_id", threshold, metric], "plot_escalation_curve")
    others = [name for name in axes_names if name != threshold and name in sweep]
    ax = current_axes(ax)
    percent = metric in PERCENT_COLUMNS
    for policy_id, rows in sweep.groupby("policy_id", observed=True, sort=False):
        varying = [name for name in others if rows[name].nunique() > 1]
        if varying:
            raise ValueError(
                f"policy {policy_id!r} varies {', '.join(varying)} as well as {threshold}; "
                "select the rows with one value of each other threshold first"
            )
        rows = rows.sort_values(threshold)
        y = rows[metric].to_numpy(dtype=float) * (100 if percent else 1)
        (line,) = ax.plot(
            rows[threshold].to_numpy(dtype=float), y, label=group_label(policy_id), **kwargs
        )
        if current is not None and policy_id in current:
            x0 = float(current[policy_id])
            y0 = np.interp(x0, rows[threshold].to_numpy(dtype=float), y)
            ax.plot([x0], [y0], marker="o", color=line.get_color(), linestyle="none")
    if percent:
        ax.yaxis.set_major_formatter(PercentFormatter())
    ax.set_xlabel(AXIS_LABELS.get(threshold, threshold))
    ax.set_ylabel(AXIS_LABELS.get(metric, metric))
    what = metric.replace("_", " ")
    if title is None:
        marked = "; dots: each policy's own value" if current is not None and len(current) else ""
        title = f"{what.capitalize()} across the {threshold.replace('_', ' ')}{marked}"
    ax.set_title(title)
    ax.legend(title="policy")
    ax.grid(alpha=0.3)
    return ax


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
    title : str
        The Axes title.
    ax : Axes, optional
        Where to draw; the current Axes when None.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.barh`.

    Returns
    -------
    Axes

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_reason_mix
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> plot_reason_mix(ea.sweep(audit.decisions, audit.policies, {}))  # doctest: +SKIP
    """
    reasons = [c for c in sweep.columns if c.startswith("reason_")]
    require(sweep, [label], "plot_reason_mix")
    if not reasons:
        raise ValueError("plot_reason_mix needs the reason_* columns of ea.sweep")
    ax = current_axes(ax)
    positions = np.arange(len(reasons))
    height = 0.8 / max(len(sweep), 1)
    for i, (_, row) in enumerate(sweep.iterrows()):
        counts = row[reasons].to_numpy(dtype=float)
        ax.barh(
            positions + i * height, counts, height=height, label=group_label(row[label]), **kwargs
        )
    ax.set_yticks(positions + height * (len(sweep) - 1) / 2, [r[len("reason_") :] for r in reasons])
    ax.invert_yaxis()
    ax.set_xlabel("decisions with the reason (count)")
    ax.set_ylabel("escalation reason")
    ax.set_title(title)
    ax.legend(title=label.replace("_", " "))
    return ax
