"""Threshold sweeps: what escalation would look like under other thresholds and policies.

For each policy and each point of a grid over the three escalation thresholds,
:func:`sweep` counts exactly what :func:`~explicit_audit.replay` under that
policy with those thresholds would give, without deciding every row at every
point. It counts instead:

- only three things change with the thresholds: ``long`` (``content_chars >
  cap``), ``multi`` (``evidence_doc_count >= count``) and ``low`` (``confidence
  < threshold``); whether a row is high impact, uses the fallback domain, or
  carries a flag other than the two derived ones that requires 26B (``base``)
  does not;
- a row escalates unless it is neither high impact nor ``base`` and none of
  the three trips: since the derived flags appear only when ``multi`` or
  ``low`` already escalates, they never change *whether* a row escalates,
  only whether ``risk_flag_requires_26b`` is among its reasons;
- "none of the three trips" is ``cap >= chars``, ``count > docs`` and
  ``threshold <= confidence``: each row falls in one bucket per axis (found by
  ``searchsorted`` on the sorted axis values), a 3-D histogram of buckets is
  summed cumulatively along the axes, and the count at every grid point is
  read off. The same is done for the rows that were recorded as escalated or
  not (flips) and for the rows without ``base`` (the risk-flag reason).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.columns import INT64_MAX
from ..errors import AuditError
from ._encoded import EncodedInputs, apply_policy
from ._flags import FLAG_LOW_CONFIDENCE, FLAG_MULTI_DOC
from ._input_cache import encoded_inputs
from .policies import policies_by_id
from .policy import Policy

__all__ = ["GRID_AXES", "SWEEP_COLUMNS", "sweep"]

#: The thresholds a grid may vary.
GRID_AXES = ("context_char_cap_4b", "escalate_on_multi_doc_count", "confidence_threshold")

#: Columns of the DataFrame :func:`sweep` returns, one row per policy and grid point.
SWEEP_COLUMNS = {
    "policy_id": "the policy (variant) applied",
    "context_char_cap_4b": "grid point: the context cap",
    "escalate_on_multi_doc_count": "grid point: the document count",
    "confidence_threshold": "grid point: the confidence threshold",
    "decisions": "decisions evaluated",
    "escalations": "decisions escalated to 26B",
    "escalation_rate": "escalations / decisions",
    "flips": "decisions whose escalation differs from the recorded one",
    "flips_to_26b": "recorded not escalated, escalated here",
    "flips_to_4b": "recorded escalated, not escalated here",
    "reason_high_impact": "decisions with that reason",
    "reason_long_context": "decisions with that reason",
    "reason_multi_doc": "decisions with that reason",
    "reason_low_confidence": "decisions with that reason",
    "reason_risk_flag_requires_26b": "decisions with that reason",
    "reason_fallback_domain": "decisions with that reason (it never escalates by itself)",
}


def _axis(name: str, values: Any) -> np.ndarray:
    values = [values] if np.isscalar(values) else list(values)
    if not values:
        raise AuditError(f"grid axis {name!r} is empty; give at least one value.")
    for value in values:
        if isinstance(value, bool | np.bool_):
            raise AuditError(f"grid axis {name!r}: {value!r} is not a number.")
        if name == "confidence_threshold":
            if not isinstance(value, int | float | np.integer | np.floating) or not (
                0 <= value <= 1 and math.isfinite(value)  # a huge int: no float()
            ):
                raise AuditError(f"grid axis {name!r}: {value!r} is not a number in [0, 1].")
        elif not isinstance(value, int | np.integer) or not 0 <= value <= INT64_MAX:
            raise AuditError(f"grid axis {name!r}: {value!r} is not a whole number >= 0.")
    dtype = np.float64 if name == "confidence_threshold" else np.int64
    return np.unique(np.asarray(values, dtype=dtype))


def _axes(grid: Mapping[str, Any], policy: Policy) -> list[np.ndarray]:
    unknown = set(grid) - set(GRID_AXES)
    if unknown:
        raise AuditError(
            f"grid: unknown axis {sorted(unknown)}; the axes are {', '.join(GRID_AXES)}."
        )
    own = policy.escalation
    return [_axis(name, grid.get(name, getattr(own, name))) for name in GRID_AXES]


def _cumulative(index: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Rows with chars <= cap, docs < count and confidence >= threshold, at every point.

    ``index`` holds each row's flat bucket ``(i * (K + 1) + k) * (L + 1) + l``
    where the row counts at cap ``j >= i``, count ``k' >= k`` and threshold ``l' < l``.
    """
    caps, counts, thresholds = shape
    size = (caps + 1) * (counts + 1) * (thresholds + 1)
    histogram = np.bincount(index, minlength=size).reshape(caps + 1, counts + 1, thresholds + 1)
    histogram = histogram.cumsum(axis=0).cumsum(axis=1)
    histogram = histogram[:, :, ::-1].cumsum(axis=2)[:, :, ::-1]
    return histogram[:caps, :counts, 1:]


def _policy_counts(
    encoded: EncodedInputs,
    policy: Policy,
    axes: list[np.ndarray],
    rows: np.ndarray,
    recorded: np.ndarray | None,
) -> dict[str, np.ndarray]:
    caps, counts, thresholds = axes
    shape = (len(caps), len(counts), len(thresholds))
    view = apply_policy(encoded, policy)
    high = view.high_impact[rows]
    base = view.base_requires(encoded.combo)[rows]
    cap_bucket = np.searchsorted(caps, encoded.content_chars[rows], side="left")
    doc_bucket = np.searchsorted(counts, encoded.evidence_doc_count[rows], side="right")
    conf_bucket = np.searchsorted(thresholds, encoded.confidence[rows], side="right")
    stride = len(thresholds) + 1
    bucket = (cap_bucket * (len(counts) + 1) + doc_bucket) * stride + conf_bucket
    n = len(bucket)
    free = ~high & ~base
    out: dict[str, Any] = {"decisions": np.full(shape, n)}
    if recorded is None:
        quiet = _cumulative(bucket[free], shape)
    else:
        recorded = recorded[rows]
        quiet_was_26b = _cumulative(bucket[free & recorded], shape)
        quiet_was_4b = _cumulative(bucket[free & ~recorded], shape)
        quiet = quiet_was_26b + quiet_was_4b
        out["flips_to_26b"] = int((~recorded).sum()) - quiet_was_4b
        out["flips_to_4b"] = quiet_was_26b
        out["flips"] = out["flips_to_26b"] + out["flips_to_4b"]
    out["escalations"] = n - quiet
    tripped_cap = n - np.cumsum(np.bincount(cap_bucket, minlength=len(caps) + 1))[:-1]
    tripped_docs = n - np.cumsum(np.bincount(doc_bucket, minlength=len(counts) + 1))[:-1]
    tripped_conf = np.cumsum(np.bincount(conf_bucket, minlength=len(thresholds) + 1))[:-1]
    # The risk-flag reason: a base flag, or a derived flag that the policy marks requires_26b.
    flags = policy.risk_flags
    multi_forces = FLAG_MULTI_DOC in flags and flags[FLAG_MULTI_DOC].requires_26b
    low_forces = FLAG_LOW_CONFIDENCE in flags and flags[FLAG_LOW_CONFIDENCE].requires_26b
    risk_bucket = (doc_bucket if multi_forces else 0) * stride + (
        conf_bucket if low_forces else len(thresholds)
    )
    risk_bucket = np.broadcast_to(risk_bucket, (n,))
    out["reason_high_impact"] = np.full(shape, int(high.sum()))
    out["reason_long_context"] = np.broadcast_to(tripped_cap[:, None, None], shape)
    out["reason_multi_doc"] = np.broadcast_to(tripped_docs[None, :, None], shape)
    out["reason_low_confidence"] = np.broadcast_to(tripped_conf[None, None, :], shape)
    out["reason_risk_flag_requires_26b"] = n - _cumulative(risk_bucket[~base], shape)
    out["reason_fallback_domain"] = np.full(shape, int(view.used_fallback[rows].sum()))
    return out


def sweep(
    decisions: pd.DataFrame,
    policies: Any,
    grid: Mapping[str, Sequence[float] | float],
    *,
    only_named: bool = False,
) -> pd.DataFrame:
    """Escalation counts for every policy and every point of a threshold grid, exactly.

    Parameters
    ----------
    decisions : DataFrame
        A decisions table (``audit.decisions``).
    policies : PolicySet, mapping, Policy or list of Policy
        The policy variants; each is swept over the whole grid.
    grid : mapping
        Values for any of :data:`GRID_AXES` (``context_char_cap_4b``,
        ``escalate_on_multi_doc_count``, ``confidence_threshold``); every
        combination is a grid point. An axis left out keeps each policy's own value.
    only_named : bool, default False
        Count for each policy only the decisions that name it; by default
        every decision is evaluated under every policy.

    Returns
    -------
    DataFrame
        One row per policy and grid point (axes ascending), columns
        :data:`SWEEP_COLUMNS`. Each row equals counting over
        ``ea.replay(decisions, policy.with_escalation(**point))``; flips
        compare with ``recorded_escalate_to_26b`` (missing if that column is).

    Examples
    --------
    >>> import numpy as np
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> grid = {"context_char_cap_4b": range(2000, 12001, 500),
    ...         "confidence_threshold": np.linspace(0, 1, 21)}
    >>> ea.sweep(audit.decisions, audit.policies, grid)  # doctest: +SKIP

    On a Dask decisions table, each partition's counts are summed: the grid
    is never evaluated per row, and the answer is the in-memory one.
    """
    return engine.reduce(
        _sweep,
        _summed,
        decisions,
        what="sweep",
        whole=_sweep,
        policies=policies,
        grid=grid,
        only_named=only_named,
    )


def _sweep(
    decisions: pd.DataFrame, policies: Any, grid: Mapping[str, Any], only_named: bool
) -> pd.DataFrame:
    """:func:`sweep` of an in-memory table (or one partition of it)."""
    by_id = policies_by_id(policies)
    encoded = encoded_inputs(decisions)
    recorded = None
    if "recorded_escalate_to_26b" in decisions:
        recorded = decisions["recorded_escalate_to_26b"].to_numpy(dtype=bool)
    # Each column's values gathered over the policies, one frame built at the end.
    codes, gathered = [], {}
    for code, (policy_id, policy) in enumerate(by_id.items()):
        axes = _axes(grid, policy)
        if only_named:
            rows = np.flatnonzero((decisions["policy_id"] == policy_id).to_numpy(dtype=bool))
        else:
            rows = np.arange(len(decisions))
        counts = _policy_counts(encoded, policy, axes, rows, recorded)
        points = np.meshgrid(*axes, indexing="ij")
        codes.append(np.full(points[0].size, code, dtype=np.int64))
        for name, point in zip(GRID_AXES, points, strict=True):
            gathered.setdefault(name, []).append(point.ravel())
        for name, value in counts.items():
            gathered.setdefault(name, []).append(np.asarray(value).ravel())
    columns = list(SWEEP_COLUMNS)
    if not codes:
        return pd.DataFrame(columns=columns)
    result = pd.DataFrame(
        {
            "policy_id": pd.Categorical.from_codes(np.concatenate(codes), categories=list(by_id)),
            **{name: np.concatenate(parts) for name, parts in gathered.items()},
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        result["escalation_rate"] = result["escalations"] / result["decisions"]
    for name in ("flips", "flips_to_26b", "flips_to_4b"):
        if name not in result:
            result[name] = pd.array([pd.NA] * len(result), dtype="Int64")
    return result[columns]


#: The columns of a sweep that are counts, summed over partitions.
_COUNTS = tuple(
    name for name in SWEEP_COLUMNS if name not in (*GRID_AXES, "policy_id", "escalation_rate")
)


def _summed(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-partition sweeps of one grid as one: counts added, the rate computed again."""
    result = parts[0].copy()
    for name in _COUNTS:
        if result[name].dtype == "Int64" and result[name].isna().all():
            continue
        total = np.sum([part[name].to_numpy(dtype=np.int64) for part in parts], axis=0)
        result[name] = total.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        result["escalation_rate"] = result["escalations"] / result["decisions"]
    return result
