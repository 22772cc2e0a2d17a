"""The routing explorer's views: escalations and flips (the curve: :mod:`.escalation_curve`).

Every view takes the three thresholds the explorer's sliders hold and
``own_thresholds``: when True, each policy variant is evaluated at its own
thresholds and the sliders are ignored; when False, a threshold given applies
to every variant picked (one left None keeps each variant's own value).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.engine import concat_parts
from ..decisions.routing import escalates
from ..decisions.sweep import GRID_AXES, sweep
from ._shared import ALL, rounded

__all__ = [
    "as_written",
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
    swept: Callable[..., Any] | None = None,
    written: Callable[..., pd.DataFrame] | None = None,
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
    swept : callable, optional
        Called as :func:`~explicit_audit.views.escalation_curve.curve_sweep`
        with every parameter above but ``digits``, it returns a sweep across
        some threshold that holds the chosen point: the rows are then read
        from it rather than swept again (the same rows). A panel passes the
        sweep its chart draws, so that one sweep serves both.
    written : callable, optional
        :func:`as_written` or one that remembers its last call; by default
        :func:`as_written`.

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
    thresholds = {
        "context_char_cap_4b": context_char_cap_4b,
        "escalate_on_multi_doc_count": escalate_on_multi_doc_count,
        "confidence_threshold": confidence_threshold,
    }
    grid = {name: [value] for name, value in _point(own_thresholds, **thresholds).items()}
    chosen = None
    if swept is not None:
        along = swept(
            data,
            variant=variant,
            **thresholds,
            only_named=only_named,
            own_thresholds=own_thresholds,
        )
        chosen = along.rows_at()
    if chosen is None:
        chosen = sweep(data.decisions, _variants(data, variant), grid, only_named=only_named)
    # At each variant's own thresholds (no grid) the sweep as written is the one just done.
    if grid:
        written_rows = (written or as_written)(data, variant=variant, only_named=only_named)
    else:
        written_rows = chosen
    table = chosen.set_index("policy_id")
    table.index = table.index.astype(str)
    escalations = written_rows.set_index(written_rows["policy_id"].astype(str))["escalations"]
    table["escalations_as_written"] = escalations
    table["escalation_change"] = table["escalations"] - escalations
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


def as_written(data: Any, *, variant: str = ALL, only_named: bool = False) -> pd.DataFrame:
    """Each variant picked at its own thresholds: the sweep :func:`sweep_view` compares with.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies``.
    variant : str, default ALL
        One ``policy_id``, or :data:`ALL` for every variant.
    only_named : bool, default False
        As for :func:`sweep_view`.

    Returns
    -------
    DataFrame
        :func:`~explicit_audit.sweep` with an empty grid: one row per variant.
    """
    return sweep(data.decisions, _variants(data, variant), {}, only_named=only_named)


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
    key = tuple((name, type(value), value) for name, value in point.items())
    applied = [
        (policy.policy_id, _with_escalation(policy, key)) for policy in _variants(data, variant)
    ]
    if not applied:
        return pd.DataFrame()
    # Every variant decided in one pass over the table (over each partition of a Dask one).
    frames = engine.reduce(
        _flips,
        _joined_per_variant,
        decisions,
        what="flips_view",
        whole=_flips,
        applied=applied,
        only_named=only_named,
        limit=limit,
    )
    return pd.concat(
        [frame if limit is None else frame.head(limit) for frame in frames], ignore_index=True
    )


@functools.lru_cache(maxsize=64)
def _with_escalation(policy: Any, point: tuple[tuple[str, type, Any], ...]) -> Any:
    """``policy.with_escalation(**point)``, made once per policy and point (a policy is frozen).

    Each value comes with its type, so that ``1`` and ``1.0`` (equal, and hashed alike) are
    checked apart.
    """
    return policy.with_escalation(**{name: value for name, _, value in point})


def _joined(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The partitions' flips in table order; a partition without any adds no row, nor types."""
    found = [part for part in parts if len(part)]
    return concat_parts(found or parts[:1])


def _joined_per_variant(parts: list[list[pd.DataFrame]]) -> list[pd.DataFrame]:
    """Per variant, its flips in every partition joined in table order."""
    return [_joined(list(frames)) for frames in zip(*parts, strict=True)]


_SHOWN = ["decision_id", "subject_domain", "content_chars", "evidence_doc_count", "confidence"]


def _flips(
    decisions: pd.DataFrame, applied: list[tuple[str, Any]], only_named: bool, limit: int | None
) -> list[pd.DataFrame]:
    """Per variant ``(policy_id, policy)``: the decisions (at most ``limit``, in table order)
    that the policy decides otherwise."""
    recorded = decisions["recorded_escalate_to_26b"].to_numpy(dtype=bool)
    picks, escalated = [], []
    for policy_id, policy in applied:
        escalate = escalates(decisions, policy)  # replay's escalate_to_26b, alone
        differs = escalate != recorded
        if only_named:
            differs &= (decisions["policy_id"] == policy_id).to_numpy(dtype=bool)
        flipped = np.flatnonzero(differs)
        if limit is not None:
            flipped = flipped[:limit]  # as DataFrame.head(limit)
        picks.append(flipped)
        escalated.append(escalate[flipped])
    # The shown columns taken once for every variant's rows, then cut per variant: never the
    # whole table.
    rows = np.concatenate(picks)
    taken = {
        "decision_row": decisions.index[rows],
        "recorded_policy_id": decisions["policy_id"].iloc[rows].astype(str).to_numpy(),
        **{name: decisions[name].iloc[rows].to_numpy() for name in _SHOWN if name in decisions},
    }
    frames, start = [], 0
    for (policy_id, _), flipped, escalate in zip(applied, picks, escalated, strict=True):
        cut = slice(start, start + len(flipped))
        start = cut.stop
        frames.append(
            pd.DataFrame(
                {
                    "policy_id": policy_id,
                    **{name: values[cut] for name, values in taken.items()},
                    "recorded_escalate_to_26b": recorded[flipped],
                    "escalate_to_26b": escalate,
                }
            )
        )
    return frames


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
