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
out once for the four ways the two derived flags can join, and gathered back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import AuditError
from ._lists import FlatList, flat_list, tuple_series
from .policy import Policy

__all__ = ["INPUT_COLUMNS", "REASONS", "REPLAY_COLUMNS", "RoutingDecision", "replay", "route"]

REASON_HIGH_IMPACT = "high_impact"
REASON_RISK_FLAG = "risk_flag_requires_26b"
REASON_LOW_CONFIDENCE = "low_confidence"
REASON_LONG_CONTEXT = "long_context"
REASON_MULTI_DOC = "multi_doc"
REASON_FALLBACK_DOMAIN = "fallback_domain"
FLAG_MULTI_DOC = "multi_doc_dependency"
FLAG_LOW_CONFIDENCE = "low_confidence_reasoning"

#: Every escalation reason, in the order a decision lists them.
REASONS = (
    REASON_HIGH_IMPACT,
    REASON_LONG_CONTEXT,
    REASON_MULTI_DOC,
    REASON_LOW_CONFIDENCE,
    REASON_RISK_FLAG,
    REASON_FALLBACK_DOMAIN,
)

#: Reasons for each 6-bit code (high_impact = 32 ... fallback_domain = 1).
_REASON_TABLE = [
    tuple(reason for bit, reason in enumerate(REASONS) if code >> (5 - bit) & 1)
    for code in range(64)
]

#: The inputs of ``decide_routing``, in its order: the input columns replay reads.
INPUT_COLUMNS = (
    "subject_domain",
    "content_chars",
    "deterministic_keyword_hits",
    "self_declared_high_impact",
    "self_declared_risk_flags",
    "confidence",
    "evidence_doc_count",
)

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


def _flag_outcome(policy: Policy, flags: Iterable[str]) -> tuple[tuple[str, ...], bool, tuple]:
    """Sorted flags, whether one requires 26B, and the directives in flag order."""
    ordered = tuple(sorted(set(flags)))
    known = [policy.risk_flags[f] for f in ordered if f in policy.risk_flags]
    requires = any(flag.requires_26b for flag in known)
    directives = tuple(flag.synthesis_directive for flag in known if flag.synthesis_directive)
    return ordered, requires, directives


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
    ordered, requires, directives = _flag_outcome(policy, flags)
    fired = (high_impact, long_context, multi_doc, low_confidence, requires, used_fallback)
    return RoutingDecision(
        escalate_to_26b=any(fired[:5]),
        escalation_reasons=tuple(r for r, on in zip(REASONS, fired, strict=True) if on),
        risk_flags=ordered,
        high_impact_task=high_impact,
        synthesis_directives=directives,
        subject_domain_used=domain_used,
        used_fallback=used_fallback,
    )


@dataclass(frozen=True)
class EncodedInputs:
    """The inputs of a decisions table as arrays, independent of any policy.

    ``combo`` numbers each row's (subject domain, set of self-declared flags);
    ``combo_domain`` and ``combo_flags`` describe each such combination.
    """

    index: pd.Index
    domain_codes: np.ndarray
    domain_names: list
    keyword_hit: np.ndarray
    self_high_impact: np.ndarray
    content_chars: np.ndarray
    evidence_doc_count: np.ndarray
    confidence: np.ndarray
    combo: np.ndarray
    combo_domain: np.ndarray
    combo_flags: list[frozenset[str]]


def _column(decisions: pd.DataFrame, name: str, dtype: type) -> np.ndarray:
    column = decisions[name]
    missing = int(column.isna().sum())
    if missing:
        raise AuditError(
            f"column {name!r}: {missing} row(s) have no value; every decision input is "
            "required (decisions loaded by ea.load are always complete)."
        )
    return column.to_numpy(dtype=dtype)


def _compact(key: np.ndarray, bound: int) -> np.ndarray:
    """Number the distinct values of a non-negative key 0, 1, 2, ... (in value order)."""
    if bound <= max(4 * len(key), 1 << 16):
        seen = np.zeros(bound, dtype=np.int64)
        seen[key] = 1
        return (np.cumsum(seen) - 1)[key]
    return pd.factorize(key, sort=True)[0].astype(np.int64)


def _row_keys(domain_codes: np.ndarray, n_domains: int, flags: FlatList) -> np.ndarray:
    """A code per row naming its (domain, set of flags); order and repeats of flags ignored.

    Each row's flags become a bit mask (62 distinct flags per word), packed
    next to the domain code, and the packed keys are numbered.
    """
    codes, names = flags.codes()
    key, bound = domain_codes, max(n_domains, 1)
    nonempty = flags.lengths > 0
    starts = flags.offsets[:-1][nonempty]
    for word in range(0, len(names), 62):
        width = min(62, len(names) - word)
        if len(names) <= 62:
            bits = np.left_shift(np.int64(1), codes)
        else:
            in_word = (codes >= word) & (codes < word + width)
            bits = np.where(in_word, np.left_shift(1, np.clip(codes - word, 0, 61)), 0)
        mask = np.zeros(len(key), dtype=np.int64)
        if len(bits):
            mask[nonempty] = np.bitwise_or.reduceat(bits, starts)
        shift = (bound - 1).bit_length()
        if shift + width <= 62:
            key, bound = key | (mask << shift), 1 << (shift + width)
        else:
            mask = _compact(mask, 1 << width)
            key, bound = key * (int(mask.max()) + 1) + mask, 1 << 62
        key = _compact(key, bound)
        bound = int(key.max()) + 1 if len(key) else 1
    return key if len(names) else _compact(key, bound)


def encode_inputs(decisions: pd.DataFrame) -> EncodedInputs:
    """Take the input columns of a decisions table apart (see :class:`EncodedInputs`)."""
    missing = [name for name in INPUT_COLUMNS if name not in decisions.columns]
    if missing:
        raise AuditError(
            f"the decisions table lacks the input column(s) {', '.join(missing)}; "
            "pass a table loaded by ea.load or ea.load_decisions."
        )
    n = len(decisions)
    domains = decisions["subject_domain"]
    if isinstance(domains.dtype, pd.CategoricalDtype):
        domain_codes = domains.cat.codes.to_numpy(dtype=np.int64)
        domain_names = list(domains.cat.categories)
    else:
        domain_codes, uniques = pd.factorize(domains)
        domain_names = list(uniques)
    if (domain_codes < 0).any():
        raise AuditError("column 'subject_domain': some rows have no value.")
    hits = flat_list(decisions["deterministic_keyword_hits"], "deterministic_keyword_hits")
    self_flags = flat_list(decisions["self_declared_risk_flags"], "self_declared_risk_flags")
    combo = _row_keys(domain_codes, len(domain_names), self_flags)
    representative = np.zeros(int(combo.max()) + 1 if n else 0, dtype=np.int64)
    representative[combo] = np.arange(n)
    return EncodedInputs(
        index=decisions.index,
        domain_codes=domain_codes,
        domain_names=domain_names,
        keyword_hit=hits.lengths > 0,
        self_high_impact=_column(decisions, "self_declared_high_impact", bool),
        content_chars=_column(decisions, "content_chars", np.int64),
        evidence_doc_count=_column(decisions, "evidence_doc_count", np.int64),
        confidence=_column(decisions, "confidence", np.float64),
        combo=combo.astype(np.int64),
        combo_domain=domain_codes[representative],
        combo_flags=[frozenset(self_flags.row(int(row))) for row in representative],
    )


@dataclass(frozen=True)
class PolicyView:
    """What one policy makes of encoded inputs, before any threshold is applied.

    Per row: ``high_impact``, ``used_fallback``, ``domain_used`` (a code into
    ``used_names``). Per combination ``k`` and derived-flag state
    ``4 * k + 2 * multi_doc + low_confidence``: ``flag_table``,
    ``requires_table``, ``directive_table``.
    """

    high_impact: np.ndarray
    used_fallback: np.ndarray
    domain_used: np.ndarray
    used_names: list[str]
    flag_table: list[tuple[str, ...]]
    requires_table: np.ndarray
    directive_table: list[tuple[str, ...]]

    def base_requires(self, combo: np.ndarray) -> np.ndarray:
        """Per row: whether a flag other than the two derived ones requires 26B."""
        return self.requires_table[combo * 4]


def apply_policy(encoded: EncodedInputs, policy: Policy) -> PolicyView:
    """Resolve domains and flag sets of encoded inputs under one policy."""
    names = list(policy.subject_domains)
    specs = [policy.subject_domains[name] for name in names] + [policy.fallback_domain]
    fallback = len(names)
    position = {name: i for i, name in enumerate(names)}
    spec_of_domain = np.array(
        [position.get(name, fallback) for name in encoded.domain_names] or [0], dtype=np.int64
    )
    row_spec = spec_of_domain[encoded.domain_codes]
    spec_high_impact = np.array([spec.high_impact for spec in specs], dtype=bool)
    applied_names = [*names, policy.fallback_domain.name]
    used_names = list(dict.fromkeys(applied_names))
    spec_to_used = np.array([used_names.index(name) for name in applied_names], dtype=np.int64)
    flag_table, requires_table, directive_table = [], [], []
    for domain_code, own_flags in zip(encoded.combo_domain, encoded.combo_flags, strict=True):
        base = set(specs[spec_of_domain[domain_code]].default_risk_flags) | own_flags
        for derived in ((), (FLAG_LOW_CONFIDENCE,), (FLAG_MULTI_DOC,), _BOTH_DERIVED):
            ordered, requires, directives = _flag_outcome(policy, base.union(derived))
            flag_table.append(ordered)
            requires_table.append(requires)
            directive_table.append(directives)
    return PolicyView(
        high_impact=encoded.keyword_hit | spec_high_impact[row_spec] | encoded.self_high_impact,
        used_fallback=row_spec == fallback,
        domain_used=spec_to_used[row_spec],
        used_names=used_names,
        flag_table=flag_table,
        requires_table=np.array(requires_table, dtype=bool),
        directive_table=directive_table,
    )


_BOTH_DERIVED = (FLAG_MULTI_DOC, FLAG_LOW_CONFIDENCE)


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
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> replayed = ea.replay(audit.decisions, audit.policies["baseline"])  # doctest: +SKIP
    >>> replayed.escalate_to_26b.mean()  # doctest: +SKIP
    """
    encoded = encode_inputs(decisions)
    view = apply_policy(encoded, policy)
    escalation = policy.escalation
    long_context = encoded.content_chars > escalation.context_char_cap_4b
    multi_doc = encoded.evidence_doc_count >= escalation.escalate_on_multi_doc_count
    low_confidence = encoded.confidence < escalation.confidence_threshold
    state = encoded.combo * 4 + multi_doc * 2 + low_confidence
    requires = view.requires_table[state]
    escalate = view.high_impact | requires | long_context | multi_doc | low_confidence
    reason_code = view.high_impact.astype(np.uint8) << 5
    for shift, fired in ((4, long_context), (3, multi_doc), (2, low_confidence), (1, requires)):
        reason_code |= fired.view(np.uint8) << shift
    reason_code |= view.used_fallback.view(np.uint8)
    index = encoded.index
    return pd.DataFrame(
        {
            "escalate_to_26b": pd.Series(escalate, index=index, dtype=bool),
            "escalation_reasons": tuple_series(_REASON_TABLE, reason_code, index),
            "risk_flags": tuple_series(view.flag_table, state, index),
            "high_impact_task": pd.Series(view.high_impact, index=index, dtype=bool),
            "synthesis_directives": tuple_series(view.directive_table, state, index),
            "subject_domain_used": pd.Series(
                pd.Categorical.from_codes(view.domain_used, categories=view.used_names),
                index=index,
            ),
            "used_fallback": pd.Series(view.used_fallback, index=index, dtype=bool),
        },
        index=index,
    )
