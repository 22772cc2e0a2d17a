"""Sample routing decisions and policies (hyungi document server).

Policies, under ``data/policies/``: three variants of one routing policy.

- ``baseline.yaml``: the policy in force in January;
- ``strict.yaml``: February, after a review: lower context cap, escalate from
  two documents, higher confidence bar, finance high impact, personal data and
  multi-document answers forced to 26B;
- ``cost_saver.yaml``: March, to cut 26B load: higher cap, five documents,
  lower confidence bar, low confidence no longer forces 26B.

Decisions, under ``data/decisions/``, each recorded by the engine under the
policy it names:

- ``2026-01_baseline.jsonl``: nested records;
- ``2026-02_strict.jsonl``: nested records wrapped with a timestamp and request id;
- ``2026-03_cost_saver.jsonl``: flat records from another logger.

Planted, by ``decision_id`` (records altered after the decision was made):
d-01-0040 escalation dropped for a long context (replay, INV-3);
d-02-0050 high impact dropped for a legal question (replay, INV-1);
d-03-0060 an unknown domain recorded as if named (replay, INV-6);
d-01-0070 names the retired policy ``baseline-v0`` (unknown_policy);
d-02-0080 a self-declared flag dropped from the risk flags (replay, INV-5);
d-03-0090 two escalation reasons swapped (replay);
d-02-0100 ``multi_doc_dependency`` and its directive dropped for a multi-document
answer (replay, INV-4, INV-5).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import yaml

from explicit_audit.decisions.policy import Policy
from explicit_audit.decisions.routing import route

__all__ = ["write"]

_POLICIES = {
    "baseline": """\
policy_id: baseline
description: Routing policy in force from 2026-01-01.
escalation:
  context_char_cap_4b: 6000          # content_chars > cap escalates
  escalate_on_multi_doc_count: 3     # evidence_doc_count >= count escalates
  confidence_threshold: 0.6          # confidence < threshold escalates
subject_domains:
  legal: {high_impact: true,  default_risk_flags: [legal_advice]}
  medical: {high_impact: true,  default_risk_flags: [medical_advice]}
  finance: {high_impact: false, default_risk_flags: [numeric_claims]}
  hr: {high_impact: false, default_risk_flags: [personal_data]}
  engineering: {high_impact: false, default_risk_flags: []}
fallback_domain: {name: general, high_impact: false, default_risk_flags: []}
risk_flags:
  legal_advice: {requires_26b: true,  synthesis_directive: "Cite the governing clause."}
  medical_advice: {requires_26b: true,  synthesis_directive: "Point to the clinical source."}
  numeric_claims: {requires_26b: false, synthesis_directive: "Show every figure's source."}
  personal_data: {requires_26b: false, synthesis_directive: "Redact personal identifiers."}
  multi_doc_dependency: {requires_26b: false, synthesis_directive: "Reconcile the documents."}
  low_confidence_reasoning: {requires_26b: true}
""",
    "strict": """\
policy_id: strict
description: Tightened after the January review, from 2026-02-01.
escalation:
  context_char_cap_4b: 4000
  escalate_on_multi_doc_count: 2
  confidence_threshold: 0.75
subject_domains:
  legal: {high_impact: true,  default_risk_flags: [legal_advice]}
  medical: {high_impact: true,  default_risk_flags: [medical_advice]}
  finance: {high_impact: true,  default_risk_flags: [numeric_claims]}
  hr: {high_impact: false, default_risk_flags: [personal_data]}
  engineering: {high_impact: false, default_risk_flags: []}
fallback_domain: {name: general, high_impact: false, default_risk_flags: [unverified_scope]}
risk_flags:
  legal_advice: {requires_26b: true,  synthesis_directive: "Cite the governing clause."}
  medical_advice: {requires_26b: true,  synthesis_directive: "Point to the clinical source."}
  numeric_claims: {requires_26b: false, synthesis_directive: "Show every figure's source."}
  personal_data: {requires_26b: true,  synthesis_directive: "Redact personal identifiers."}
  multi_doc_dependency: {requires_26b: true,  synthesis_directive: "Reconcile the documents."}
  low_confidence_reasoning: {requires_26b: true,  synthesis_directive: "State what is uncertain."}
""",
    "cost_saver": """\
policy_id: cost_saver
description: Cheaper routing trialled from 2026-03-01.
escalation:
  context_char_cap_4b: 9000
  escalate_on_multi_doc_count: 5
  confidence_threshold: 0.45
subject_domains:
  legal: {high_impact: true,  default_risk_flags: [legal_advice]}
  medical: {high_impact: true,  default_risk_flags: [medical_advice]}
  finance: {high_impact: false, default_risk_flags: [numeric_claims]}
  hr: {high_impact: false, default_risk_flags: [personal_data]}
  engineering: {high_impact: false, default_risk_flags: []}
fallback_domain: {name: general, high_impact: false, default_risk_flags: []}
risk_flags:
  legal_advice: {requires_26b: true,  synthesis_directive: "Cite the governing clause."}
  medical_advice: {requires_26b: true,  synthesis_directive: "Point to the clinical source."}
  numeric_claims: {requires_26b: false, synthesis_directive: "Show every figure's source."}
  personal_data: {requires_26b: false, synthesis_directive: "Redact personal identifiers."}
  multi_doc_dependency: {requires_26b: false, synthesis_directive: "Reconcile the documents."}
  low_confidence_reasoning: {requires_26b: false, synthesis_directive: "State what is uncertain."}
""",
}

_MONTHS = (("01", "baseline", "nested"), ("02", "strict", "wrapped"), ("03", "cost_saver", "flat"))
_DOMAINS = ["engineering"] * 5 + ["finance"] * 3 + ["legal"] * 2 + ["hr"] * 2 + ["medical", "sales"]
_KEYWORDS = ["contract", "lawsuit", "diagnosis", "salary", "merger"]
_SELF_FLAGS = ["numeric_claims", "personal_data", "speculative", "needs_citation", "legal_advice"]
_PER_MONTH = 1200


def _inputs(rng: random.Random) -> dict:
    return {
        "subject_domain": rng.choice(_DOMAINS),
        "content_chars": int(rng.lognormvariate(8.2, 0.6)),
        "deterministic_keyword_hits": rng.sample(_KEYWORDS, 1) if rng.random() < 0.08 else [],
        "self_declared_high_impact": rng.random() < 0.04,
        "self_declared_risk_flags": (
            rng.sample(_SELF_FLAGS, rng.choice([1, 1, 2])) if rng.random() < 0.25 else []
        ),
        "confidence": round(rng.betavariate(5, 2), 3),
        "evidence_doc_count": min(int(rng.expovariate(0.7)), 9),
    }


def _plant(month: str, number: int, inputs: dict, decision: dict, policy_id: str) -> str:
    """Alter the planted records; return the policy id to record."""
    planted = f"{month}-{number:04d}"
    if planted == "01-0040":
        decision.update(escalate_to_26b=False, escalation_reasons=[])
    elif planted == "02-0050":
        decision["high_impact_task"] = False
        decision["escalation_reasons"] = [
            r for r in decision["escalation_reasons"] if r != "high_impact"
        ]
    elif planted == "03-0060":
        decision.update(subject_domain_used=inputs["subject_domain"], used_fallback=False)
        decision["escalation_reasons"] = [
            r for r in decision["escalation_reasons"] if r != "fallback_domain"
        ]
    elif planted == "01-0070":
        return "baseline-v0"
    elif planted == "02-0080":
        decision["risk_flags"] = [f for f in decision["risk_flags"] if f != "speculative"]
    elif planted == "03-0090":
        reasons = decision["escalation_reasons"]
        reasons[0], reasons[1] = reasons[1], reasons[0]
    elif planted == "02-0100":
        decision["risk_flags"] = [f for f in decision["risk_flags"] if f != "multi_doc_dependency"]
        decision["synthesis_directives"] = [
            d for d in decision["synthesis_directives"] if d != "Reconcile the documents."
        ]
    return policy_id


def _fix_preconditions(planted: str, inputs: dict) -> None:
    """Shape the inputs of a planted record so that its alteration shows."""
    if planted == "01-0040":
        inputs.update(subject_domain="engineering", content_chars=8200, confidence=0.9)
        inputs.update(deterministic_keyword_hits=[], self_declared_high_impact=False)
        inputs.update(self_declared_risk_flags=[], evidence_doc_count=1)
    elif planted == "02-0050":
        inputs.update(subject_domain="legal", deterministic_keyword_hits=[])
        inputs.update(self_declared_high_impact=False)
    elif planted == "03-0060":
        inputs["subject_domain"] = "sales"
    elif planted == "02-0080":
        inputs["self_declared_risk_flags"] = ["speculative"]
    elif planted == "03-0090":
        inputs.update(subject_domain="legal", content_chars=12000)
    elif planted == "02-0100":
        inputs.update(subject_domain="engineering", evidence_doc_count=4)


def write(data_dir: Path) -> None:
    """Write the routing sample data under ``data_dir/policies`` and ``data_dir/decisions``.

    Parameters
    ----------
    data_dir : pathlib.Path
    """
    policy_dir = data_dir / "policies"
    decision_dir = data_dir / "decisions"
    policy_dir.mkdir(parents=True, exist_ok=True)
    decision_dir.mkdir(parents=True, exist_ok=True)
    policies = {}
    for name, text in _POLICIES.items():
        path = policy_dir / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        policies[name] = Policy.from_dict(yaml.safe_load(text), source=str(path))
    rng = random.Random(20260104)
    for month, policy_id, shape in _MONTHS:
        lines = []
        for number in range(1, _PER_MONTH + 1):
            inputs = _inputs(rng)
            _fix_preconditions(f"{month}-{number:04d}", inputs)
            decision = route(policies[policy_id], **inputs)
            recorded = {
                name: list(getattr(decision, name))
                if isinstance(getattr(decision, name), tuple)
                else getattr(decision, name)
                for name in decision.__dataclass_fields__
            }
            named = _plant(month, number, inputs, recorded, policy_id)
            decision_id = f"d-{month}-{number:04d}"
            if shape == "flat":
                record = {"decision_id": decision_id, "policy_id": named, **inputs, **recorded}
            else:
                record = {"decision_id": decision_id, "policy_id": named}
                if shape == "wrapped":
                    minute = number * 7
                    stamp = f"2026-{month}-{1 + minute // 1440:02d}T"
                    stamp += f"{minute % 1440 // 60:02d}:{minute % 60:02d}:00Z"
                    record |= {"ts": stamp, "request_id": f"req-{month}{number:05d}"}
                record |= {"inputs": inputs, "decision": recorded}
            lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
        path = decision_dir / f"2026-{month}_{policy_id}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
