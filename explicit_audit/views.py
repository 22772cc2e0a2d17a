"""The views behind the interactive panels: pure functions that render in a plain cell.

Each view is ``x_view(data, **control_values)``: it calls the kit's public
computing functions and returns what a plain cell displays, a DataFrame or a
:class:`PlanPreview`. :mod:`explicit_audit.widgets` wraps each in controls
named after its parameters; a notebook renders each view once with its
defaults, so a static report and nbval see the same content a reader starts
from. Views import neither matplotlib nor ipywidgets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .decisions.routing import replay
from .decisions.sweep import GRID_AXES, sweep
from .plans.preview import PlanPreview, plan_view
from .receipts.withheld import withheld_summary, within_time_window

__all__ = [
    "ALL",
    "NO_AUDIENCE",
    "PlanPreview",
    "flips_view",
    "plan_view",
    "sweep_view",
    "time_range",
    "withheld_view",
]

ALL = "(all)"
"""Control value meaning "no filter" (every audience, space or policy variant)."""

NO_AUDIENCE = "(none)"
"""Audience control value selecting the receipts with no audience (unguarded retrieval)."""


def _receipts(data: Any) -> pd.DataFrame:
    return getattr(data, "receipts", data)


def time_range(receipts: Any, column: str = "timestamp") -> list[pd.Timestamp] | None:
    """The whole UTC days the receipts' timestamps span, for a window control.

    Parameters
    ----------
    receipts : DataFrame or Audit
        The ``receipts`` table (or an ``Audit``).
    column : str, default "timestamp"
        The column holding ISO 8601 times.

    Returns
    -------
    list of Timestamp or None
        Midnight of each day from the first timestamp's day to the day after
        the last (so a window ``[first, last)`` holds every receipt); None
        when the column is missing, empty, or not ISO 8601 times.

    Examples
    --------
    >>> import pandas as pd
    >>> from explicit_audit.views import time_range
    >>> days = time_range(pd.DataFrame({"timestamp": ["2025-03-03T08:00:00Z"]}))
    >>> [str(day.date()) for day in days]
    ['2025-03-03', '2025-03-04']
    """
    frame = _receipts(receipts)
    if column not in frame or frame[column].isna().all():
        return None
    try:
        times = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    except (ValueError, TypeError):
        return None
    first, last = times.min().floor("D"), times.max().floor("D") + pd.Timedelta(days=1)
    return list(pd.date_range(first, last, freq="D"))


def _rounded(frame: pd.DataFrame, digits: int) -> pd.DataFrame:
    floats = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
    return frame.round(dict.fromkeys(floats, digits))


def withheld_view(
    data: Any,
    *,
    audience: str = ALL,
    space: str = ALL,
    by: str | Sequence[str] = "scope",
    window: tuple[Any, Any] | None = None,
    digits: int = 3,
) -> pd.DataFrame:
    """Withheld counts for one audience and space, in a time window, per group.

    Parameters
    ----------
    data : DataFrame or Audit
        The ``receipts`` table (or an ``Audit``).
    audience : str, default ALL
        A ``withheld_audience``; :data:`ALL` for every one, :data:`NO_AUDIENCE`
        for receipts with none.
    space : str, default ALL
        An ``active_space``; :data:`ALL` for every one.
    by : str or list of str, default "scope"
        Grouping passed to :func:`~explicit_audit.withheld_summary`.
    window : (start, end), optional
        Keep receipts whose ``timestamp`` is in ``[start, end)``; a None bound
        is open. With any bound set, receipts without a timestamp are left
        out; None (or ``(None, None)``) keeps every receipt.
    digits : int, default 3
        Rates are rounded to this many decimals.

    Returns
    -------
    DataFrame
        :func:`~explicit_audit.withheld_summary` of the selected receipts,
        with an overall ``(all)`` row.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import withheld_view
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> withheld_view(audit, audience="peer", window=("2025-03-03", "2025-03-05"))  # doctest: +SKIP
    """
    receipts = _receipts(data)
    keep = pd.Series(True, index=receipts.index)
    if audience == NO_AUDIENCE:
        keep &= receipts["withheld_audience"].isna()
    elif audience != ALL:
        keep &= (receipts["withheld_audience"] == audience).fillna(False).astype(bool)
    if space != ALL:
        keep &= (receipts["active_space"] == space).fillna(False).astype(bool)
    selected = receipts[keep.to_numpy(dtype=bool)]
    if window is not None and any(bound is not None for bound in window):
        selected = within_time_window(selected, window[0], window[1])
    return _rounded(withheld_summary(selected, by=by, overall=True), digits)


def _variants(data: Any, variant: str) -> list[Any]:
    policies = data.policies
    if variant == ALL:
        return list(policies.values())
    if variant not in policies:
        known = ", ".join(map(repr, policies)) or "none"
        raise ValueError(f"no policy variant {variant!r} was loaded (loaded: {known})")
    return [policies[variant]]


def _point(**thresholds: Any) -> dict[str, Any]:
    return {name: value for name, value in thresholds.items() if value is not None}


def sweep_view(
    data: Any,
    *,
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
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
            context_char_cap_4b=context_char_cap_4b,
            escalate_on_multi_doc_count=escalate_on_multi_doc_count,
            confidence_threshold=confidence_threshold,
        ).items()
    }
    chosen = sweep(data.decisions, policies, grid, only_named=only_named)
    written = sweep(data.decisions, policies, {}, only_named=only_named)
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
    return _rounded(table[columns], digits)


def flips_view(
    data: Any,
    *,
    variant: str = ALL,
    context_char_cap_4b: int | None = None,
    escalate_on_multi_doc_count: int | None = None,
    confidence_threshold: float | None = None,
    only_named: bool = False,
    limit: int | None = 10,
) -> pd.DataFrame:
    """The decisions whose escalation would differ from the record at chosen thresholds.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` (with ``recorded_escalate_to_26b``) and
        ``policies``.
    variant, context_char_cap_4b, escalate_on_multi_doc_count, confidence_threshold, only_named
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
    >>> flips_view(ea.load("data/"), variant="strict", limit=5)  # doctest: +SKIP
    """
    decisions = data.decisions
    point = _point(
        context_char_cap_4b=context_char_cap_4b,
        escalate_on_multi_doc_count=escalate_on_multi_doc_count,
        confidence_threshold=confidence_threshold,
    )
    shown = ["decision_id", "subject_domain", "content_chars", "evidence_doc_count", "confidence"]
    frames = []
    for policy in _variants(data, variant):
        rows = decisions
        if only_named:
            rows = decisions[(decisions["policy_id"] == policy.policy_id).to_numpy(dtype=bool)]
        replayed = replay(rows, policy.with_escalation(**point))
        recorded = rows["recorded_escalate_to_26b"].to_numpy(dtype=bool)
        flipped = replayed["escalate_to_26b"].to_numpy(dtype=bool) != recorded
        picked = rows[flipped]
        frame = pd.DataFrame(
            {
                "policy_id": policy.policy_id,
                "decision_row": picked.index,
                "recorded_policy_id": picked["policy_id"].astype(str).to_numpy(),
                **{name: picked[name].to_numpy() for name in shown if name in picked},
                "recorded_escalate_to_26b": recorded[flipped],
                "escalate_to_26b": replayed["escalate_to_26b"].to_numpy(dtype=bool)[flipped],
            }
        )
        frames.append(frame if limit is None else frame.head(limit))
    if not frames:
        return pd.DataFrame()
    result = pd.concat(frames, ignore_index=True)
    return result
