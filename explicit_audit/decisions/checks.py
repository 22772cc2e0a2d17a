"""Decision checks: recorded routing decisions against the policy each one names.

Two kinds of check, both per decision:

- ``replay``: the recorded decision equals, field by field, the decision the
  named policy makes for the recorded inputs (:func:`~explicit_audit.replay`);
- ``INV-1`` ... ``INV-6``: the reference engine's six invariants, checked on
  the recorded outputs alone (so a finding names the rule a log breaks, not
  only that it differs).

A decision naming a policy that was not loaded gets one ``unknown_policy``
finding and no other check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.deprecation import deprecated_alias
from .._core.describe import quote
from .._core.findings import FINDING_COLUMNS, FindingsBuilder, Rule, RuleTable
from .._core.lists import flat_list, flat_tuples, lists_equal, sets_equal
from .loader import NAME
from .policies import policies_by_id
from .policy import Policy
from .routing import (
    FLAG_MULTI_DOC,
    REASON_LONG_CONTEXT,
    REASON_MULTI_DOC,
    REPLAY_COLUMNS,
    replay,
)

__all__ = [
    "DECISION_RULES",
    "FINDING_COLUMNS",
    "RULES",
    "check_decisions",
    "verify_decisions",
]

#: Every rule :func:`check_decisions` applies. Each is an error: the reference
#: engine cannot record a decision that breaks one, and a decision whose policy
#: was not loaded cannot be checked at all.
RULES = RuleTable(
    Rule(name, text, check="decision_policy", kind=NAME)
    for name, text in (
        ("unknown_policy", "The decision names a policy (policy_id) that was loaded."),
        (
            "replay",
            "Every recorded field equals the decision the named policy makes for the "
            "recorded inputs.",
        ),
        (
            "INV-1",
            "self_declare_add_only: a task high impact by keyword hit or by its domain, or "
            "declared so by the 4B model, is recorded high impact (a declaration only adds).",
        ),
        (
            "INV-2",
            "risk_flag_requires_26b_forces_escalation: a decision whose recorded risk flags "
            "include one the policy marks requires_26b is escalated.",
        ),
        (
            "INV-3",
            "context_cap_forces_escalation: content_chars > context_char_cap_4b is escalated "
            "with reason 'long_context'.",
        ),
        (
            "INV-4",
            "multi_doc_forces_escalation: evidence_doc_count >= escalate_on_multi_doc_count "
            "is escalated with reason 'multi_doc' and flag 'multi_doc_dependency'.",
        ),
        (
            "INV-5",
            "risk_flags_union: the recorded risk flags are the union of the domain's default "
            "flags, the self-declared flags and the derived flags.",
        ),
        (
            "INV-6",
            "fallback_domain for unknown: a subject domain the policy does not name is "
            "recorded under the fallback domain's name with used_fallback true; a named one "
            "under its own name with used_fallback false.",
        ),
    )
)

DECISION_RULES = RULES.descriptions
"""Every rule :func:`check_decisions` applies: name -> what it requires."""

_LIST_FIELDS = {"escalation_reasons", "risk_flags", "synthesis_directives"}

# One finding before it is placed: (position in the checked rows, rule, decision
# fields at fault, detail).
_Found = tuple[int, str, list[str], str]


def _columns(fields: list[str]) -> str:
    """The decisions-table columns of recorded decision fields, as the field column names them."""
    return ", ".join(name if name == "policy_id" else f"recorded_{name}" for name in fields)


def _replay_findings(sub: pd.DataFrame, replayed: pd.DataFrame) -> list[_Found]:
    differs: dict[str, np.ndarray] = {}
    for name in REPLAY_COLUMNS:
        recorded = sub[f"recorded_{name}"]
        if name in _LIST_FIELDS:
            same = lists_equal(flat_list(recorded), flat_tuples(replayed[name]))
        else:
            left = recorded.to_numpy(dtype=object)
            same = left == replayed[name].to_numpy(dtype=object)
        differs[name] = ~np.asarray(same, dtype=bool)
    found = []
    for pos in np.flatnonzero(np.logical_or.reduce(list(differs.values()))):
        fields = [name for name, bad in differs.items() if bad[pos]]
        detail = "; ".join(
            f"{name}: recorded {quote(sub[f'recorded_{name}'].iat[pos])}, "
            f"the policy gives {quote(replayed[name].iat[pos])}"
            for name in fields
        )
        found.append((pos, "replay", fields, detail))
    return found


def _invariant_findings(sub: pd.DataFrame, replayed: pd.DataFrame, policy: Policy) -> list[_Found]:
    escalation = policy.escalation
    escalated = sub["recorded_escalate_to_26b"].to_numpy(dtype=bool)
    reasons = flat_list(sub["recorded_escalation_reasons"])
    flags = flat_list(sub["recorded_risk_flags"])
    chars = sub["content_chars"].to_numpy(dtype=np.int64)
    docs = sub["evidence_doc_count"].to_numpy(dtype=np.int64)
    found: list[_Found] = []

    expected_high = replayed["high_impact_task"].to_numpy(dtype=bool)
    for pos in np.flatnonzero(expected_high & ~sub["recorded_high_impact_task"].to_numpy(bool)):
        hits = sub["deterministic_keyword_hits"].iat[pos]
        domain = sub["subject_domain"].iat[pos]
        spec = policy.subject_domains.get(domain, policy.fallback_domain)
        why = (
            f"keyword hits {quote(hits)}, domain {quote(domain)} high_impact "
            f"{quote(spec.high_impact)}, self-declared "
            f"{quote(sub['self_declared_high_impact'].iat[pos])}"
        )
        found.append((pos, "INV-1", ["high_impact_task"], f"{why}; recorded high_impact false"))

    codes, names = flags.codes()
    requires = np.array(
        [name in policy.risk_flags and policy.risk_flags[name].requires_26b for name in names]
        + [False],
        dtype=bool,
    )
    forcing = np.zeros(len(sub), dtype=bool)
    forcing[flags.parents[requires[codes]]] = True
    for pos in np.flatnonzero(forcing & ~escalated):
        forced = [f for f in flags.row(pos) if f in policy.risk_flags]
        forced = [f for f in forced if policy.risk_flags[f].requires_26b]
        detail = f"recorded flags {quote(forced)} require 26B, but escalate_to_26b is false"
        found.append((pos, "INV-2", ["escalate_to_26b"], detail))

    for rule, tripped, reason, what in (
        ("INV-3", chars > escalation.context_char_cap_4b, REASON_LONG_CONTEXT, "content_chars"),
        ("INV-4", docs >= escalation.escalate_on_multi_doc_count, REASON_MULTI_DOC, "docs"),
    ):
        lacks_reason = ~reasons.contains(reason)
        lacks_flag = ~flags.contains(FLAG_MULTI_DOC) if rule == "INV-4" else ~tripped
        for pos in np.flatnonzero(tripped & (~escalated | lacks_reason | lacks_flag)):
            fields, parts = [], []
            if not escalated[pos]:
                fields.append("escalate_to_26b")
                parts.append("escalate_to_26b is false")
            if lacks_reason[pos]:
                fields.append("escalation_reasons")
                parts.append(f"escalation_reasons lacks {reason!r}")
            if rule == "INV-4" and lacks_flag[pos]:
                fields.append("risk_flags")
                parts.append(f"risk_flags lacks {FLAG_MULTI_DOC!r}")
            if what == "content_chars":
                cause = f"content_chars {chars[pos]} > cap {escalation.context_char_cap_4b}"
            else:
                cause = (
                    f"evidence_doc_count {docs[pos]} >= {escalation.escalate_on_multi_doc_count}"
                )
            found.append((pos, rule, fields, f"{cause}, but " + " and ".join(parts)))

    expected_flags = flat_tuples(replayed["risk_flags"])
    for pos in np.flatnonzero(~sets_equal(flags, expected_flags)):
        recorded, expected = set(flags.row(pos)), set(expected_flags.row(pos))
        detail = (
            f"recorded flags miss {quote(sorted(expected - recorded))} and add "
            f"{quote(sorted(recorded - expected))} against the union {quote(sorted(expected))}"
        )
        found.append((pos, "INV-5", ["risk_flags"], detail))

    used = sub["recorded_subject_domain_used"].to_numpy(dtype=object)
    fallback = sub["recorded_used_fallback"].to_numpy(dtype=bool)
    expected_used = replayed["subject_domain_used"].to_numpy(dtype=object)
    expected_fallback = replayed["used_fallback"].to_numpy(dtype=bool)
    for pos in np.flatnonzero((used != expected_used) | (fallback != expected_fallback)):
        domain = sub["subject_domain"].iat[pos]
        known = "names" if domain in policy.subject_domains else "does not name"
        detail = (
            f"the policy {known} domain {quote(domain)}, so subject_domain_used "
            f"{quote(expected_used[pos])} and used_fallback {quote(expected_fallback[pos])}; "
            f"recorded {quote(used[pos])} and {quote(fallback[pos])}"
        )
        found.append((pos, "INV-6", ["subject_domain_used", "used_fallback"], detail))
    return found


def _policies_of(decisions: Any, policies: Any) -> tuple[pd.DataFrame, Any]:
    if policies is None and hasattr(decisions, "decisions") and hasattr(decisions, "policies"):
        return decisions.decisions, decisions.policies
    return decisions, policies


def check_decisions(decisions: pd.DataFrame, policies: Any = None) -> pd.DataFrame:
    """Check every recorded decision against the policy it names.

    Parameters
    ----------
    decisions : DataFrame or Audit
        A decisions table (``audit.decisions`` or
        :func:`~explicit_audit.load_decisions`), or an ``Audit``, whose
        ``decisions`` and ``policies`` are used.
    policies : PolicySet, mapping of policy_id to Policy, Policy, or list of Policy
        The policies in force (``audit.policies``).

    Returns
    -------
    DataFrame
        The findings table of the kit (:data:`FINDING_COLUMNS`), one row per
        finding, ordered by decision and rule (rules in :data:`DECISION_RULES`);
        ``record`` is the ``decision_id``, ``field`` the recorded columns at
        fault. Every rule is an error. Empty when every decision follows its
        policy; join on ``row`` for the decision's other columns
        (``audit.decisions.loc[findings.row, "policy_id"]``).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/", progress=False)
    >>> findings = ea.check_decisions(audit.decisions, audit.policies)
    >>> len(findings), int((findings.rule == "replay").sum())
    (13, 6)
    """
    decisions, policies = _policies_of(decisions, policies)
    return engine.findings(decision_findings, decisions, what="check_decisions", policies=policies)


def decision_findings(decisions: pd.DataFrame, policies: Any) -> pd.DataFrame:
    """:func:`check_decisions` of an in-memory table (or one partition of it)."""
    by_id = policies_by_id(policies)
    group, named = pd.factorize(decisions["policy_id"], use_na_sentinel=True)
    found = FindingsBuilder(
        RULES, decisions, record=decisions.get("decision_id"), what="check_decisions"
    )
    loaded = ", ".join(map(repr, by_id)) or "none"
    for code in range(-1, len(named)):
        positions = np.flatnonzero(group == code)
        if not len(positions):
            continue
        policy = by_id.get(named[code]) if code >= 0 else None
        if policy is None:
            what = f"names policy {named[code]!r}" if code >= 0 else "names no policy"
            detail = f"the decision {what}, which was not loaded (loaded: {loaded})"
            for position in positions:
                found.add(position, "unknown_policy", detail, field="policy_id")
            continue
        sub = decisions.iloc[positions]
        replayed = replay(sub, policy)
        for pos, rule, fields, detail in _replay_findings(sub, replayed) + _invariant_findings(
            sub, replayed, policy
        ):
            found.add(positions[pos], rule, detail, field=_columns(fields))
    return found.frame()


verify_decisions = deprecated_alias(
    "verify_decisions",
    check_decisions,
    use="ea.check_decisions",
    changes="It returns the findings of :func:`check_decisions`, in the kit's findings shape: "
    "the 0.1 columns ``decision_row``, ``decision_id`` and ``fields`` are now ``row``, "
    "``record`` and ``field``; ``policy_id`` is the decision's own column "
    '(``decisions.loc[findings.row, "policy_id"]``).',
)
