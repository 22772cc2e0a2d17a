"""Routing decisions: one at a time (:func:`route`) and for a whole table (:func:`replay`).

The decision is exactly hyungi's ``decide_routing``, including its edges:

- the subject domain resolves to the policy's domain of that name, else to the
  fallback domain (``used_fallback``);
- ``high_impact_task``: any keyword hit, or a high-impact domain, or the
  model's own declaration (which can only add, never remove);
- risk flags: the union of the domain's default flags, the self-declared ones,
  and two derived ones, ``multi_doc_dependency`` (when
  ``evidence_doc_count >= escalate_on_multi_doc_count``) and
  ``low_confidence_reasoning`` (when ``confidence < confidence_threshold``);
  the derived flags join before ``requires_26b`` is checked, and a flag the
  policy does not list never requires 26B and has no directive;
- reasons in this order, each at most once: ``high_impact``, ``long_context``
  (``content_chars > context_char_cap_4b``), ``multi_doc``, ``low_confidence``,
  ``risk_flag_requires_26b``, ``fallback_domain`` (recorded, but the fallback
  alone never escalates);
- ``risk_flags`` sorted; ``synthesis_directives`` in the order of the sorted flags;
- escalate when high impact, or a flag requires 26B, or any threshold trips.

:func:`replay` computes the same for every row of a decisions table with
array operations: rows are grouped by (domain, set of self-declared flags),
which are few; each group's flags, directives and ``requires_26b`` are worked
out once for the four ways the two derived flags can join, and gathered back
(:mod:`explicit_audit.decisions._encoded`). Each row's reasons are a bit mask,
bit ``i`` standing for ``REASONS[i]``, so the order of :data:`REASONS` is the
one place the order of reasons is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.lists import entries_used, tuple_series
from .._core.overlap import THREADS, both
from ._encoded import INPUT_COLUMNS, apply_policy
from ._flags import FLAG_LOW_CONFIDENCE, FLAG_MULTI_DOC, flag_outcome
from ._input_cache import encoded_inputs
from .policy import Policy

__all__ = [
    "FLAG_LOW_CONFIDENCE",
    "FLAG_MULTI_DOC",
    "INPUT_COLUMNS",
    "REASONS",
    "REPLAY_COLUMNS",
    "RoutingDecision",
    "replay",
    "route",
]

REASON_HIGH_IMPACT = "high_impact"
REASON_RISK_FLAG = "risk_flag_requires_26b"
REASON_LOW_CONFIDENCE = "low_confidence"
REASON_LONG_CONTEXT = "long_context"
REASON_MULTI_DOC = "multi_doc"
REASON_FALLBACK_DOMAIN = "fallback_domain"

#: Every escalation reason, in the order a decision lists them.
REASONS = (
    REASON_HIGH_IMPACT,
    REASON_LONG_CONTEXT,
    REASON_MULTI_DOC,
    REASON_LOW_CONFIDENCE,
    REASON_RISK_FLAG,
    REASON_FALLBACK_DOMAIN,
)

#: The reasons that escalate by themselves (the fallback domain is only recorded).
_ESCALATING = frozenset(REASONS) - {REASON_FALLBACK_DOMAIN}


def _in_order(fired: Mapping[str, bool]) -> tuple[str, ...]:
    """The reasons that fired, in the order of :data:`REASONS`."""
    return tuple(reason for reason in REASONS if fired[reason])


@cache
def _reason_table(reasons: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The reasons of every code: bit ``i`` of a code stands for ``reasons[i]``.

    Derived from the order of ``reasons``, so that reordering :data:`REASONS`
    reorders what :func:`replay` lists exactly as it does for :func:`route`.
    """
    return [
        tuple(reason for bit, reason in enumerate(reasons) if code >> bit & 1)
        for code in range(1 << len(reasons))
    ]


#: Columns of the DataFrame :func:`replay` returns (the fields of RoutingDecision).
REPLAY_COLUMNS = {
    "escalate_to_26b": "bool: the answer goes to the 26B model",
    "escalation_reasons": "tuple of str: reasons, in the decision's order",
    "risk_flags": "tuple of str: every risk flag, sorted",
    "high_impact_task": "bool",
    "synthesis_directives": "tuple of str: directives of the known flags, in flag order",
    "subject_domain_used": "category: the domain applied (the fallback's name if used)",
    "used_fallback": "bool: the subject domain was not in the policy",
}


@dataclass(frozen=True, slots=True)
class RoutingDecision:
    """One routing decision; the same fields as the reference ``RoutingDecision``."""

    escalate_to_26b: bool
    escalation_reasons: tuple[str, ...]
    risk_flags: tuple[str, ...]
    high_impact_task: bool
    synthesis_directives: tuple[str, ...]
    subject_domain_used: str
    used_fallback: bool = False


def route(
    policy: Policy,
    *,
    subject_domain: str,
    content_chars: int,
    deterministic_keyword_hits: Iterable[str] = (),
    self_declared_high_impact: bool = False,
    self_declared_risk_flags: Iterable[str] = (),
    confidence: float = 1.0,
    evidence_doc_count: int = 0,
) -> RoutingDecision:
    """Decide one request, exactly as the reference ``decide_routing`` does.

    Parameters
    ----------
    policy : Policy
    subject_domain : str
        The domain upstream matched.
    content_chars : int
        Characters of content given to the 4B model.
    deterministic_keyword_hits : iterable of str
        Keyword matches; any hit makes the task high impact.
    self_declared_high_impact : bool
        The 4B model's own declaration; it can only add high impact.
    self_declared_risk_flags : iterable of str
        Flags the 4B model declared; they join the union.
    confidence : float
        The 4B model's confidence.
    evidence_doc_count : int
        Documents the answer is synthesised from.

    Returns
    -------
    RoutingDecision

    Raises
    ------
    TypeError
        When a list of flags or hits is given as one string.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> ea.route(policy, subject_domain="legal", content_chars=5400)  # doctest: +SKIP
    RoutingDecision(escalate_to_26b=True, escalation_reasons=('high_impact', ...), ...)
    """
    for name, value in (
        ("deterministic_keyword_hits", deterministic_keyword_hits),
        ("self_declared_risk_flags", self_declared_risk_flags),
    ):
        if isinstance(value, str):
            raise TypeError(f"{name} must be a list of strings, not the string {value!r}")
    spec = policy.subject_domains.get(subject_domain)
    used_fallback = spec is None
    if used_fallback:
        spec = policy.fallback_domain
    domain_used = policy.fallback_domain.name if used_fallback else subject_domain
    escalation = policy.escalation
    high_impact = bool(list(deterministic_keyword_hits)) or spec.high_impact
    high_impact = high_impact or bool(self_declared_high_impact)
    long_context = content_chars > escalation.context_char_cap_4b
    multi_doc = evidence_doc_count >= escalation.escalate_on_multi_doc_count
    low_confidence = confidence < escalation.confidence_threshold
    flags = {*spec.default_risk_flags, *self_declared_risk_flags}
    if multi_doc:
        flags.add(FLAG_MULTI_DOC)
    if low_confidence:
        flags.add(FLAG_LOW_CONFIDENCE)
    ordered, requires, directives = flag_outcome(policy, flags)
    fired = {
        REASON_HIGH_IMPACT: high_impact,
        REASON_LONG_CONTEXT: long_context,
        REASON_MULTI_DOC: multi_doc,
        REASON_LOW_CONFIDENCE: low_confidence,
        REASON_RISK_FLAG: requires,
        REASON_FALLBACK_DOMAIN: used_fallback,
    }
    return RoutingDecision(
        escalate_to_26b=any(fired[reason] for reason in _ESCALATING),
        escalation_reasons=_in_order(fired),
        risk_flags=ordered,
        high_impact_task=high_impact,
        synthesis_directives=directives,
        subject_domain_used=domain_used,
        used_fallback=used_fallback,
    )


def replay(decisions: pd.DataFrame, policy: Policy) -> pd.DataFrame:
    """The decision ``policy`` makes for every row of a decisions table.

    Vectorised: no Python loop over rows. Row ``i`` equals
    ``route(policy, **inputs_of_row_i)`` field by field.

    Parameters
    ----------
    decisions : DataFrame
        A decisions table (``audit.decisions``), or any frame with the input
        columns ``subject_domain``, ``content_chars``,
        ``deterministic_keyword_hits``, ``self_declared_high_impact``,
        ``self_declared_risk_flags``, ``confidence``, ``evidence_doc_count``.
    policy : Policy
        Applied to every row, whatever policy a row names.

    Returns
    -------
    DataFrame
        Same index as ``decisions``; the columns of :data:`REPLAY_COLUMNS`.
        The three list fields are categoricals whose categories are tuples
        (a replay has few distinct ones): each value is a tuple, exactly as in
        :class:`RoutingDecision`, so ``RoutingDecision(**row)`` of a row equals
        :func:`route` for its inputs. Compare with a recorded list column as
        ``tuple(recorded)``, or use :func:`~explicit_audit.verify_decisions`.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/", progress=False)
    >>> replayed = ea.replay(audit.decisions, audit.policies["baseline"])
    >>> round(float(replayed.escalate_to_26b.mean()), 3)
    0.647

    A Dask decisions table (``ea.load(..., engine="dask")``) gives a lazy
    table of the same rows, partition by partition.

    On a machine of two cores or more, some independent steps run in a
    second thread (none where ``OMP_NUM_THREADS`` is 1); the table is the
    same either way.
    """
    return engine.each_row(_replay, decisions, policy=policy)


def _keyed(encoded: Any, policy: Policy, threads: int) -> tuple[Any, np.ndarray]:
    """The policy's view of the inputs, and each row's outcome key (:func:`_outcome_keys`)."""
    view, (long_context, multi_doc, low_confidence) = both(
        lambda: apply_policy(encoded, policy),
        lambda: _tripped(encoded, policy),
        threads,
    )
    key = _outcome_keys(encoded.combo, multi_doc, low_confidence, view.high_impact, long_context)
    return view, key


def _tripped(encoded: Any, policy: Policy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row, whether each threshold trips: long context, many documents, low confidence."""
    escalation = policy.escalation
    return (
        encoded.content_chars > escalation.context_char_cap_4b,
        encoded.evidence_doc_count >= escalation.escalate_on_multi_doc_count,
        encoded.confidence < escalation.confidence_threshold,
    )


def escalates(decisions: pd.DataFrame, policy: Policy) -> np.ndarray:
    """Per row of an in-memory table, whether ``policy`` escalates it to 26B.

    The ``escalate_to_26b`` column of :func:`replay`, computed alone (no
    reasons, flags or directives): for a caller that needs only that.

    Parameters
    ----------
    decisions : DataFrame
        An in-memory decisions table (or one partition of a Dask one).
    policy : Policy

    Returns
    -------
    numpy.ndarray of bool
    """
    encoded = encoded_inputs(decisions)
    view, key = _keyed(encoded, policy, THREADS)
    return np.take(_outcomes(view, len(encoded.combo_domain))["escalate"], key)


def _replay(decisions: pd.DataFrame, policy: Policy, threads: int = THREADS) -> pd.DataFrame:
    """:func:`replay` of an in-memory table (or one partition of it).

    Each row's answer depends on its combination, the two derived flags and
    two more bits (high impact, long context): an outcome key (see
    :func:`_outcome_keys`). The reasons, flags, directives and whether the
    row escalates are worked out once per key and gathered by it. With
    ``threads`` of 2 or more, independent steps run two at a time
    (:func:`~explicit_audit._core.overlap.both`); the table is the same with one.
    """
    encoded = encoded_inputs(decisions, threads)
    view, key = _keyed(encoded, policy, threads)
    outcomes = _outcomes(view, len(encoded.combo_domain))
    used = entries_used(key, len(outcomes["state"]))
    index = encoded.index
    (risk_flags, directives), (reasons, escalate, domain_used) = both(
        lambda: _flag_columns(view, key, outcomes["state"], used, index),
        lambda: (
            _reason_column(key, outcomes["reasons"], used, index),
            np.take(outcomes["escalate"], key),
            _domain_column(view, index),
        ),
        threads,
    )
    # Not copied: every array here is this call's own. A Series of each bool
    # array, then a frame of them, copied each one twice (a million rows).
    return pd.DataFrame(
        {
            "escalate_to_26b": np.asarray(escalate, dtype=bool),
            "escalation_reasons": reasons,
            "risk_flags": risk_flags,
            "high_impact_task": np.asarray(view.high_impact, dtype=bool),
            "synthesis_directives": directives,
            "subject_domain_used": domain_used,
            "used_fallback": np.asarray(view.used_fallback, dtype=bool),
        },
        index=index,
        copy=False,
    )


def _outcome_keys(
    combo: np.ndarray,
    multi_doc: np.ndarray,
    low_confidence: np.ndarray,
    high_impact: np.ndarray,
    long_context: np.ndarray,
) -> np.ndarray:
    """Per row, the outcome key ``4 * state + 2 * high_impact + long_context``.

    The state, ``4 * combo + 2 * multi_doc + low_confidence``, is the row's
    flag state (:class:`~._encoded.PolicyView`). In numpy's index type:
    the key indexes four tables and is counted, and any other type would be
    converted to it, into a fresh array, at each use.
    """
    low = np.zeros(len(combo), dtype=np.uint8)
    term = np.empty_like(low)
    for bit, fired in enumerate((long_context, high_impact, low_confidence, multi_doc)):
        # A bool array viewed as bytes holds 0 or 1; numpy's shift of a byte
        # array is not vectorised, a multiplication is.
        np.multiply(np.ascontiguousarray(fired, dtype=bool).view(np.uint8), 1 << bit, out=term)
        low |= term
    key = combo.astype(np.intp)
    key <<= 4
    key |= low
    return key


def _outcomes(view: Any, combinations: int) -> dict[str, np.ndarray]:
    """Per outcome key (:func:`_outcome_keys`): its state, its reason code, whether it escalates.

    The reason code has bit ``i`` set when ``REASONS[i]`` fired, as
    :func:`_reason_table` reads it.
    """
    key = np.arange(16 * combinations)
    state = key >> 2
    fired = {
        REASON_HIGH_IMPACT: (key >> 1 & 1).astype(bool),
        REASON_LONG_CONTEXT: (key & 1).astype(bool),
        REASON_MULTI_DOC: (state >> 1 & 1).astype(bool),
        REASON_LOW_CONFIDENCE: (state & 1).astype(bool),
        REASON_RISK_FLAG: np.asarray(view.requires_table, dtype=bool)[state],
        REASON_FALLBACK_DOMAIN: view.combo_fallback[state >> 2],
    }
    reasons = np.zeros(len(key), dtype=np.int64)
    escalate = np.zeros(len(key), dtype=bool)
    for bit, reason in enumerate(REASONS):
        reasons |= fired[reason].astype(np.int64) << bit
        if reason in _ESCALATING:
            escalate |= fired[reason]
    return {"state": state, "reasons": reasons, "escalate": escalate}


def _reason_column(
    key: np.ndarray, key_reasons: np.ndarray, used: np.ndarray, index: pd.Index
) -> pd.Series:
    """Each row's reasons, through its outcome key's reason code."""
    table = _reason_table(REASONS)
    reasons_used = np.zeros(len(table), dtype=bool)
    reasons_used[key_reasons[used]] = True
    return tuple_series(table, key, index, reasons_used, through=key_reasons)


def _flag_columns(
    view: Any, key: np.ndarray, key_state: np.ndarray, used: np.ndarray, index: pd.Index
) -> tuple[pd.Series, pd.Series]:
    """Each row's risk flags and directives, through its outcome key's state."""
    states_used = np.zeros(len(view.flag_table), dtype=bool)  # flags and directives share it
    states_used[key_state[used]] = True
    return (
        tuple_series(view.flag_table, key, index, states_used, through=key_state),
        tuple_series(view.directive_table, key, index, states_used, through=key_state),
    )


def _domain_column(view: Any, index: pd.Index) -> pd.Series:
    """Each row's applied domain, as a categorical of the policy's names."""
    return pd.Series(
        pd.Categorical.from_codes(view.domain_used, categories=view.used_names), index=index
    )
