"""The routing explorer's chart: the escalation rate across one threshold, per variant.

:func:`curve_sweep` runs the one :func:`~explicit_audit.sweep` behind it: every
column, over the threshold charted, the other two held where the explorer
holds them, and the value each variant stands at among the points. That point
is the explorer's table row (:func:`~explicit_audit.views.sweep_view` reads
it from here when a panel shares one sweep between its views), and
:func:`escalation_curve_view` the chart's data.
"""

from __future__ import annotations

import html
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..decisions.sweep import GRID_AXES, sweep
from ._shared import ALL
from .routing import _point, _variants, threshold_spans

__all__ = ["CurveSweep", "EscalationCurve", "curve_of", "curve_sweep", "escalation_curve_view"]


@dataclass(frozen=True)
class CurveSweep:
    """The sweep across one threshold, every column, and the value each variant stands at.

    Attributes
    ----------
    axis : str
        The threshold varied, one of :data:`~explicit_audit.decisions.sweep.GRID_AXES`.
    swept : DataFrame
        What :func:`~explicit_audit.sweep` returned: one row per variant and
        value of ``axis``, the other two thresholds at one value per variant.
    at : dict
        Per ``policy_id``: the value of ``axis`` the variant stands at (the
        slider's, or the variant's own), exactly as swept.
    """

    axis: str
    swept: pd.DataFrame
    at: dict[str, Any]

    def rows_at(self) -> pd.DataFrame | None:
        """Each variant's row where it stands, in variant order; None if one is missing.

        Returns
        -------
        DataFrame or None
            The rows of :attr:`swept` whose ``axis`` equals :attr:`at` exactly:
            what a sweep at that one point gives.
        """
        ids = self.swept["policy_id"].astype(str).to_numpy()
        values = self.swept[self.axis].to_numpy()
        picked = []
        for policy_id, value in self.at.items():
            hit = np.flatnonzero((ids == policy_id) & (values == value))
            if len(hit) != 1:
                return None
            picked.append(hit[0])
        return self.swept.iloc[picked].reset_index(drop=True)


def _axis_values(span: tuple[float, float, float], points: int, extra: list[float]) -> np.ndarray:
    low, high, step = span
    if float(step).is_integer():
        count = int((high - low) // step) + 1
        values = low + step * np.unique(np.round(np.linspace(0, count - 1, min(points, count))))
        values = values.astype(np.int64)
        extra_values = np.asarray([int(v) for v in extra], dtype=np.int64)
    else:
        values = np.round(np.linspace(low, high, points), 6)
        extra_values = np.asarray(extra, dtype=float)
    return np.union1d(values, extra_values)


def curve_sweep(
    data: Any,
    *,
    axis: str = "confidence_threshold",
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
    own_thresholds: bool = False,
    points: int = 41,
) -> CurveSweep:
    """One :func:`~explicit_audit.sweep` over ``axis``, the other two thresholds held.

    Parameters
    ----------
    data, axis, variant, context_char_cap_4b, escalate_on_multi_doc_count, \
confidence_threshold, only_named, own_thresholds, points
        As for :func:`escalation_curve_view`.

    Returns
    -------
    CurveSweep
        ``points`` values across the slider span of ``axis`` (see
        :func:`~explicit_audit.views.threshold_spans`) and every variant's own
        value of it.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views.escalation_curve import curve_sweep
    >>> swept = curve_sweep(ea.load("data/", progress=False), confidence_threshold=0.7)
    >>> swept.at
    {'baseline': 0.7, 'cost_saver': 0.7, 'strict': 0.7}
    """
    if axis not in GRID_AXES:
        raise ValueError(f"axis must be one of {', '.join(GRID_AXES)}, not {axis!r}")
    policies = _variants(data, variant)
    point = _point(
        own_thresholds,
        context_char_cap_4b=context_char_cap_4b,
        escalate_on_multi_doc_count=escalate_on_multi_doc_count,
        confidence_threshold=confidence_threshold,
    )
    at = {
        str(policy.policy_id): point.get(axis, getattr(policy.escalation, axis))
        for policy in policies
    }
    values = _axis_values(threshold_spans(data)[axis], points, list(at.values()))
    grid: dict[str, Any] = {name: [value] for name, value in point.items() if name != axis}
    grid[axis] = values
    return CurveSweep(axis, sweep(data.decisions, policies, grid, only_named=only_named), at)


#: The parameters of :func:`curve_sweep` after ``data``: the view takes each by the same name.
_CURVE_CHOICES = tuple(inspect.signature(curve_sweep).parameters)[1:]


@dataclass(frozen=True)
class EscalationCurve:
    """The escalation rate across one threshold, per variant, and where each variant stands.

    Attributes
    ----------
    axis : str
        The threshold on the x axis, one of :data:`~explicit_audit.decisions.sweep.GRID_AXES`.
    curve : DataFrame
        Rows of :func:`~explicit_audit.sweep` over ``axis`` (the other two
        thresholds held at one value per variant), ascending in ``axis``.
    markers : DataFrame
        Indexed by ``policy_id``: the ``axis`` value each variant stands at
        (the slider's value, or the variant's own), with ``escalations`` and
        ``escalation_rate`` there; every one is a row of ``curve``.
    own_thresholds : bool
        Whether each variant stands at its own thresholds.
    """

    axis: str
    curve: pd.DataFrame
    markers: pd.DataFrame
    own_thresholds: bool

    @property
    def at(self) -> dict[str, float]:
        """Each variant's position on the x axis, by ``policy_id``."""
        return {str(k): float(v) for k, v in self.markers[self.axis].items()}

    def caption(self) -> str:
        """One line naming the axis and each marker's position and rate."""
        where = "each variant at its own thresholds" if self.own_thresholds else "the sliders"
        marks = "; ".join(
            f"{policy_id} at {_number(row[self.axis])}: {row['escalation_rate']:.1%} "
            f"({int(row['escalations'])} escalated)"
            for policy_id, row in self.markers.iterrows()
        )
        return f"Escalation rate across {self.axis} ({where}). Markers: {marks or 'none'}."

    def __repr__(self) -> str:
        return self.caption()

    def _repr_html_(self) -> str:
        table = self.markers.to_html(float_format=lambda x: f"{x:.3f}")
        return f"<p>{html.escape(self.caption())}</p>{table}"


def _number(value: float) -> str:
    return f"{value:g}" if float(value) != int(value) else f"{int(value)}"


def escalation_curve_view(
    data: Any,
    *,
    axis: str = "confidence_threshold",
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
    own_thresholds: bool = False,
    points: int = 41,
    swept: Callable[..., CurveSweep] | None = None,
) -> EscalationCurve:
    """The escalation rate across one threshold, with each variant's position on it.

    One :func:`~explicit_audit.sweep` over ``axis`` (``points`` values across
    its slider span, plus every marker's value), the other two thresholds
    held where the explorer holds them.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies``.
    axis : str, default "confidence_threshold"
        The threshold to vary, one of :data:`~explicit_audit.decisions.sweep.GRID_AXES`.
    variant, context_char_cap_4b, escalate_on_multi_doc_count, confidence_threshold : optional
        As for :func:`sweep_view`: the thresholds applied to every variant
        picked; one left None keeps each variant's own value.
    only_named, own_thresholds : bool, default False
        As for :func:`sweep_view`.
    points : int, default 41
        Values of ``axis`` across its span (see :func:`threshold_spans`).
    swept : callable, optional
        What runs the sweep, called as :func:`curve_sweep` (the default); a
        panel passes one that remembers its last call
        (:class:`~explicit_audit.widgets.panel.LastCall`), so that its table
        and chart share one sweep.

    Returns
    -------
    EscalationCurve

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import escalation_curve_view
    >>> audit = ea.load("data/", progress=False)
    >>> escalation_curve_view(audit, confidence_threshold=0.7).at
    {'baseline': 0.7, 'cost_saver': 0.7, 'strict': 0.7}
    """
    # Every argument but ``swept`` is one of curve_sweep's, passed on by its name.
    given = locals()
    swept = (swept or curve_sweep)(data, **{name: given[name] for name in _CURVE_CHOICES})
    return curve_of(swept, own_thresholds=own_thresholds)


def curve_of(swept: CurveSweep, *, own_thresholds: bool = False) -> EscalationCurve:
    """The :class:`EscalationCurve` of a sweep across its axis.

    Parameters
    ----------
    swept : CurveSweep
        What :func:`curve_sweep` returned.
    own_thresholds : bool, default False
        Whether each variant stands at its own thresholds (for the caption).

    Returns
    -------
    EscalationCurve
        Its markers at the first value of the axis close to each variant's.
    """
    axis = swept.axis
    curve = swept.swept[["policy_id", *GRID_AXES, "decisions", "escalations", "escalation_rate"]]
    ids = curve["policy_id"].astype(str).to_numpy()
    axis_values = curve[axis].to_numpy()
    escalations = curve["escalations"].to_numpy()
    rates = curve["escalation_rate"].to_numpy()
    rows = []
    for policy_id, value in swept.at.items():
        close = np.isclose(axis_values.astype(float), float(value))
        hit = np.flatnonzero((ids == str(policy_id)) & close)[0]
        rows.append(
            {
                "policy_id": str(policy_id),
                axis: axis_values[hit],
                "escalations": int(escalations[hit]),
                "escalation_rate": float(rates[hit]),
            }
        )
    markers = pd.DataFrame(rows, columns=["policy_id", axis, "escalations", "escalation_rate"])
    return EscalationCurve(
        axis, curve.reset_index(drop=True), markers.set_index("policy_id"), own_thresholds
    )
