"""sweep: exact counts, equal to replaying every decision at every grid point."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import explicit_audit as ea
from explicit_audit.decisions.routing import REASONS
from explicit_audit.decisions.sweep import GRID_AXES, SWEEP_COLUMNS

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
KNOWN = json.loads((DATA / "routing_known_answers.json").read_text(encoding="utf-8"))
POLICIES = ea.PolicySet(ea.Policy.from_dict(spec) for spec in KNOWN["policies"].values())
LISTS = pd.ArrowDtype(pa.list_(pa.string()))


def _decisions(rng: np.random.Generator, n: int) -> pd.DataFrame:
    domains = ["legal", "finance", "medical", "notes", "ops", "hr", "any", "elsewhere"]
    flags = ["numeric_claims", "legal_advice", "multi_doc_dependency", "Zeta", "zz", "émigré"]
    flags.append("low_confidence_reasoning")
    confidence = rng.choice([0.0, 0.25, 0.6, 1.0, 0.5999999999999999], n)
    confidence = np.where(rng.random(n) < 0.5, rng.random(n), confidence)
    frame = pd.DataFrame(
        {
            "policy_id": pd.Categorical(rng.choice(list(POLICIES), n)),
            "subject_domain": pd.Categorical(rng.choice(domains, n)),
            # a third of the rows sit exactly on a grid value, to test the edges
            "content_chars": np.where(
                rng.random(n) < 0.3,
                rng.choice([0, 1, 100, 5999, 6000, 6001, 11999, 12000], n),
                rng.integers(0, 12000, n),
            ),
            "deterministic_keyword_hits": pd.Series(
                [["kw"] * k for k in rng.choice([0, 0, 0, 1], n)], dtype=LISTS
            ),
            "self_declared_high_impact": rng.random(n) < 0.05,
            "self_declared_risk_flags": pd.Series(
                [list(rng.choice(flags, k)) for k in rng.choice([0, 0, 1, 2], n)], dtype=LISTS
            ),
            "confidence": confidence,
            "evidence_doc_count": rng.integers(0, 7, n),
            "recorded_escalate_to_26b": rng.random(n) < 0.5,
        }
    )
    return frame


def _brute_force(decisions, policy, point, recorded=True) -> dict:
    replayed = ea.replay(decisions, policy.with_escalation(**point))
    escalated = replayed["escalate_to_26b"].to_numpy()
    out = {"decisions": len(decisions), "escalations": int(escalated.sum())}
    if recorded:
        was = decisions["recorded_escalate_to_26b"].to_numpy()
        out["flips_to_26b"] = int((escalated & ~was).sum())
        out["flips_to_4b"] = int((~escalated & was).sum())
        out["flips"] = out["flips_to_26b"] + out["flips_to_4b"]
    reasons = replayed["escalation_reasons"].astype(object)
    for reason in REASONS:
        out[f"reason_{reason}"] = int(sum(reason in r for r in reasons))
    return out


def _random_grid(rng: np.random.Generator) -> dict:
    caps = rng.choice([0, 1, 100, 5999, 6000, 6001, 11999, 12000, 10**9], rng.integers(1, 5))
    counts = rng.choice([0, 1, 2, 3, 6, 7, 100], rng.integers(1, 4))
    thresholds = rng.choice([0.0, 0.25, 0.6, 0.5999999999999999, 1.0, 0.73], rng.integers(1, 4))
    return {
        "context_char_cap_4b": [int(c) for c in caps],
        "escalate_on_multi_doc_count": [int(c) for c in counts],
        "confidence_threshold": [float(t) for t in thresholds],
    }


@pytest.mark.parametrize("seed", range(4))
def test_sweep_equals_brute_force_replay(seed):
    rng = np.random.default_rng(seed)
    decisions = _decisions(rng, 500)
    grid = _random_grid(rng)
    result = ea.sweep(decisions, POLICIES, grid)
    assert list(result.columns) == list(SWEEP_COLUMNS)
    points = np.prod([len(set(v)) for v in grid.values()])
    assert len(result) == len(POLICIES) * points
    for row in result.to_dict("records"):
        point = {axis: row[axis] for axis in GRID_AXES}
        point = {k: (float(v) if k == "confidence_threshold" else int(v)) for k, v in point.items()}
        expected = _brute_force(decisions, POLICIES[row["policy_id"]], point)
        assert {k: row[k] for k in expected} == expected, (row["policy_id"], point)
        assert row["escalation_rate"] == expected["escalations"] / expected["decisions"]


def test_sweep_on_the_sample_data_and_its_own_thresholds():
    audit = ea.load([ROOT / "data" / "decisions", ROOT / "data" / "policies"], progress=False)
    decisions, policies = audit.decisions, audit.policies
    # without a grid, each policy is swept at its own thresholds: that is replay
    own = ea.sweep(decisions, policies, {})
    assert len(own) == 3
    for row in own.to_dict("records"):
        policy = policies[row["policy_id"]]
        assert row["context_char_cap_4b"] == policy.escalation.context_char_cap_4b
        expected = _brute_force(decisions, policy, {})
        assert {k: row[k] for k in expected} == expected
    grid = {"context_char_cap_4b": [3000, 6000, 9000], "confidence_threshold": [0.45, 0.6]}
    named = ea.sweep(decisions, policies, grid, only_named=True)
    for row in named.to_dict("records"):
        subset = decisions[decisions["policy_id"] == row["policy_id"]]
        point = {"context_char_cap_4b": row["context_char_cap_4b"]}
        point["confidence_threshold"] = row["confidence_threshold"]
        expected = _brute_force(subset, policies[row["policy_id"]], point)
        assert {k: row[k] for k in expected} == expected


def test_flips_against_the_recorded_outcome_at_the_policy_in_force():
    audit = ea.load([ROOT / "data" / "decisions", ROOT / "data" / "policies"], progress=False)
    result = ea.sweep(audit.decisions, audit.policies, {}, only_named=True)
    # at its own thresholds a policy flips exactly the planted decision whose escalation was dropped
    assert result.set_index("policy_id")["flips"].to_dict() == {
        "baseline": 1,
        "cost_saver": 0,
        "strict": 0,
    }


def test_sweep_without_recorded_outcomes():
    decisions = _decisions(np.random.default_rng(5), 50).drop(columns="recorded_escalate_to_26b")
    result = ea.sweep(decisions, POLICIES["kat_base"], {"confidence_threshold": [0.2, 0.8]})
    assert result["flips"].isna().all() and result["flips"].dtype == "Int64"
    for row in result.to_dict("records"):
        point = {"confidence_threshold": row["confidence_threshold"]}
        expected = _brute_force(decisions, POLICIES["kat_base"], point, recorded=False)
        assert {k: row[k] for k in expected} == expected


def test_grid_axes_are_sorted_and_deduplicated():
    decisions = _decisions(np.random.default_rng(9), 20)
    grid = {"context_char_cap_4b": [9000, 10, 9000], "escalate_on_multi_doc_count": range(3)}
    result = ea.sweep(decisions, [POLICIES["kat_base"]], grid)
    assert result["context_char_cap_4b"].tolist() == [10] * 3 + [9000] * 3
    assert result["escalate_on_multi_doc_count"].tolist() == [0, 1, 2] * 2
    assert (result["confidence_threshold"] == 0.6).all()


@pytest.mark.parametrize(
    ("grid", "reason"),
    [
        ({"confidence_threshold": [1.5]}, r"\[0, 1\]"),
        ({"context_char_cap_4b": [-1]}, "whole number"),
        ({"escalate_on_multi_doc_count": [2.5]}, "whole number"),
        ({"context_char_cap_4b": []}, "empty"),
        ({"cap": [1]}, "unknown axis"),
    ],
)
def test_bad_grids(grid, reason):
    decisions = _decisions(np.random.default_rng(1), 5)
    with pytest.raises(ea.AuditError, match=reason):
        ea.sweep(decisions, POLICIES, grid)


def test_sweep_of_no_decisions():
    decisions = _decisions(np.random.default_rng(1), 0)
    result = ea.sweep(decisions, POLICIES["kat_never"], {"confidence_threshold": [0.5]})
    assert result["decisions"].tolist() == [0] and result["escalations"].tolist() == [0]
    assert result["escalation_rate"].isna().all()
