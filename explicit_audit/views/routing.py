"""The routing explorer's views: escalations, flips and one threshold's curve.

Every view takes the three thresholds the explorer's sliders hold and
``own_thresholds``: when True, each policy variant is evaluated at its own
thresholds and the sliders are ignored; when False, a threshold given applies
to every variant picked (one left None keeps each variant's own value).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.engine import concat_parts
from ..decisions.routing import escalates
from ..decisions.sweep import GRID_AXES, sweep
from ._shared import ALL, rounded

__all__ = [
    "EscalationCurve",
    "escalation_curve_view",
    "flips_view",
    "sweep_view",
    "threshold_spans",
]


def _variants(data: Any, variant: str) -> list[Any]:
    policies = data.policies
    if variant == ALL:
        return list(policies.values())
    if variant not in policies:
        known = ", ".join(map(repr, policies)) or "none"
        raise ValueError(f"no policy variant {variant!r} was loaded (loaded: {known})")
    return [policies[variant]]


def _point(own_thresholds: bool = False, **thresholds: Any) -> dict[str, Any]:
    if own_thresholds:
        return {}
    return {name: value for name, value in thresholds.items() if value is not None}


def sweep_view(
    data: Any,
    *,
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
    own_thresholds: bool = False,
    digits: int = 3,
) -> pd.DataFrame:
    """Escalations and flips per policy variant at chosen thresholds, against the policy as written.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies``.
    variant : str, default ALL
        One ``policy_id``, or :data:`ALL` for every variant.
    context_char_cap_4b, escalate_on_multi_doc_count, confidence_threshold : optional
        The thresholds to apply; one left None keeps each policy's own value.
    only_named : bool, default False
        Count for each variant only the decisions that name it (as
        :func:`~explicit_audit.sweep`); by default every decision.
    own_thresholds : bool, default False
        Evaluate each variant at its own thresholds, ignoring the three above.
    digits : int, default 3
        Rates are rounded to this many decimals.

    Returns
    -------
    DataFrame
        Indexed by ``policy_id``: the three thresholds applied,
        ``decisions``, ``escalations``, ``escalation_rate``,
        ``escalations_as_written`` (at the policy's own thresholds),
        ``escalation_change`` (the difference), ``flips``, ``flips_to_26b``
        and ``flips_to_4b`` (against the recorded decisions).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import sweep_view
    >>> sweep_view(ea.load("data/"), confidence_threshold=0.7)  # doctest: +SKIP
    """
    policies = _variants(data, variant)
    grid = {
        name: [value]
        for name, value in _point(
            own_thresholds,
            context_char_cap_4b=context_char_cap_4b,
            escalate_on_multi_doc_count=escalate_on_multi_doc_count,
            confidence_threshold=confidence_threshold,
        ).items()
    }
    chosen = sweep(data.decisions, policies, grid, only_named=only_named)
    # At each variant's own thresholds (no grid) the sweep as written is the one just done.
    written = sweep(data.decisions, policies, {}, only_named=only_named) if grid else chosen
    table = chosen.set_index("policy_id")
    table.index = table.index.astype(str)
    as_written = written.set_index(written["policy_id"].astype(str))["escalations"]
    table["escalations_as_written"] = as_written
    table["escalation_change"] = table["escalations"] - as_written
    columns = [
        *GRID_AXES,
        "decisions",
        "escalations",
        "escalation_rate",
        "escalations_as_written",
        "escalation_change",
        "flips",
        "flips_to_26b",
        "flips_to_4b",
    ]
    return rounded(table[columns], digits)


def flips_view(
    data: Any,
    *,
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
    own_thresholds: bool = False,
    limit: int | None = 10,
) -> pd.DataFrame:
    """The decisions whose escalation would differ from the record at chosen thresholds.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` (with ``recorded_escalate_to_26b``) and
        ``policies``.
    variant, context_char_cap_4b, escalate_on_multi_doc_count, confidence_threshold : optional
        As for :func:`sweep_view`.
    only_named, own_thresholds : bool, default False
        As for :func:`sweep_view`.
    limit : int or None, default 10
        At most this many decisions per variant, in table order; None for all.

    Returns
    -------
    DataFrame
        One row per flipped decision and variant: ``policy_id`` (the variant
        applied), ``decision_id``, ``recorded_policy_id``, the inputs that
        move with the thresholds, ``recorded_escalate_to_26b`` and
        ``escalate_to_26b`` (the replay), the decision's table index kept in
        ``decision_row``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import flips_view
    >>> flips_view(ea.load("data/", progress=False), variant="strict", limit=5).shape
    (5, 10)
    """
    decisions = data.decisions
    point = _point(
        own_thresholds,
        context_char_cap_4b=context_char_cap_4b,
        escalate_on_multi_doc_count=escalate_on_multi_doc_count,
        confidence_threshold=confidence_threshold,
    )
    frames = []
    for policy in _variants(data, variant):
        applied = policy.with_escalation(**point)
        flips = engine.reduce(
            _flips,
            _joined,
            decisions,
            what="flips_view",
            whole=_flips,
            policy=applied,
            policy_id=policy.policy_id,
            only_named=only_named,
            limit=limit,
        )
        frames.append(flips if limit is None else flips.head(limit))
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The partitions' flips in table order; a partition without any adds no row, nor types."""
    found = [part for part in parts if len(part)]
    return concat_parts(found or parts[:1])


_SHOWN = ["decision_id", "subject_domain", "content_chars", "evidence_doc_count", "confidence"]


def _flips(
    decisions: pd.DataFrame, policy: Any, policy_id: str, only_named: bool, limit: int | None
) -> pd.DataFrame:
    """The decisions (at most ``limit``, in table order) that ``policy`` decides otherwise."""
    rows = decisions
    if only_named:
        rows = decisions[(decisions["policy_id"] == policy_id).to_numpy(dtype=bool)]
    escalate = escalates(rows, policy)  # replay's escalate_to_26b, alone
    recorded = rows["recorded_escalate_to_26b"].to_numpy(dtype=bool)
    flipped = np.flatnonzero(escalate != recorded)
    if limit is not None:
        flipped = flipped[:limit]  # as DataFrame.head(limit)
    picked = rows.iloc[flipped]
    return pd.DataFrame(
        {
            "policy_id": policy_id,
            "decision_row": picked.index,
            "recorded_policy_id": picked["policy_id"].astype(str).to_numpy(),
            **{name: picked[name].to_numpy() for name in _SHOWN if name in picked},
            "recorded_escalate_to_26b": recorded[flipped],
            "escalate_to_26b": escalate[flipped],
        }
    )


def threshold_spans(data: Any) -> dict[str, tuple[float, float, float]]:
    """The range a slider covers for each threshold: ``(minimum, maximum, step)``.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies``.

    Returns
    -------
    dict
        For each of :data:`~explicit_audit.decisions.sweep.GRID_AXES`: the context cap
        from 0 to the larger of the longest decision and twice any policy's
        cap, in steps of 250 characters; the multi-document count from 1 to
        one past the larger of the most documents and any policy's count; the
        confidence threshold from 0 to 1 in steps of 0.01.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import threshold_spans
    >>> threshold_spans(ea.load("data/", progress=False))["confidence_threshold"]
    (0.0, 1.0, 0.01)
    """
    decisions = data.decisions
    policies = list(data.policies.values())
    most_chars, most_docs, rows = _largest(decisions)
    chars_top = max(
        int(most_chars) if rows else 0,
        *(2 * p.escalation.context_char_cap_4b for p in policies),
        250,
    )
    docs_top = max(
        int(most_docs) + 1 if rows else 1,
        *(p.escalation.escalate_on_multi_doc_count + 1 for p in policies),
        2,
    )
    return {
        "context_char_cap_4b": (0, chars_top, 250),
        "escalate_on_multi_doc_count": (1, docs_top, 1),
        "confidence_threshold": (0.0, 1.0, 0.01),
    }


def _largest(decisions: Any) -> tuple[Any, Any, int]:
    """The most content characters and evidence documents of any decision, and the rows."""
    return engine.computed(
        decisions["content_chars"].max(),
        decisions["evidence_doc_count"].max(),
        decisions.shape[0],
    )


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
        policy.policy_id: point.get(axis, getattr(policy.escalation, axis)) for policy in policies
    }
    values = _axis_values(threshold_spans(data)[axis], points, list(at.values()))
    grid: dict[str, Any] = {name: [value] for name, value in point.items() if name != axis}
    grid[axis] = values
    curve = sweep(data.decisions, policies, grid, only_named=only_named)
    curve = curve[["policy_id", *GRID_AXES, "decisions", "escalations", "escalation_rate"]]
    rows = []
    for policy_id, value in at.items():
        mine = curve[(curve["policy_id"] == policy_id).to_numpy(dtype=bool)]
        hit = mine[np.isclose(mine[axis].to_numpy(dtype=float), float(value))].iloc[0]
        rows.append(
            {
                "policy_id": str(policy_id),
                axis: hit[axis],
                "escalations": int(hit["escalations"]),
                "escalation_rate": float(hit["escalation_rate"]),
            }
        )
    markers = pd.DataFrame(rows, columns=["policy_id", axis, "escalations", "escalation_rate"])
    return EscalationCurve(
        axis, curve.reset_index(drop=True), markers.set_index("policy_id"), own_thresholds
    )
