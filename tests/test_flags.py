"""The flag rule as array operations (requires_by_state) equals the loop (flag_outcome)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import explicit_audit as ea
from explicit_audit.decisions._encoded import apply_policy, encode_inputs
from explicit_audit.decisions._flags import (
    FLAG_LOW_CONFIDENCE,
    FLAG_MULTI_DOC,
    flag_outcome,
    requires_by_state,
)
from explicit_audit.decisions.routing import escalates

LISTS = pd.ArrowDtype(pa.list_(pa.string()))
DERIVED = ((), (FLAG_LOW_CONFIDENCE,), (FLAG_MULTI_DOC,), (FLAG_MULTI_DOC, FLAG_LOW_CONFIDENCE))


def _policy(*, multi: bool | None, low: bool | None, fallback_flags=()) -> ea.Policy:
    flags = {
        "legal_advice": {"requires_26b": True, "synthesis_directive": "Cite the clause."},
        "numeric_claims": {"requires_26b": False, "synthesis_directive": "Show sources."},
        "quiet": {"requires_26b": False},
    }
    for name, requires in ((FLAG_MULTI_DOC, multi), (FLAG_LOW_CONFIDENCE, low)):
        if requires is not None:  # None: the policy does not list the derived flag
            flags[name] = {"requires_26b": requires}
    return ea.Policy.from_dict(
        {
            "policy_id": f"flags-{multi}-{low}",
            "escalation": {
                "context_char_cap_4b": 6000,
                "escalate_on_multi_doc_count": 3,
                "confidence_threshold": 0.6,
            },
            "subject_domains": {
                "legal": {"high_impact": True, "default_risk_flags": ["legal_advice"]},
                "finance": {"high_impact": False, "default_risk_flags": ["numeric_claims"]},
                "plain": {"high_impact": False, "default_risk_flags": []},
            },
            "fallback_domain": {
                "name": "general",
                "high_impact": False,
                "default_risk_flags": list(fallback_flags),
            },
            "risk_flags": flags,
        }
    )


POLICIES = [
    _policy(multi=multi, low=low, fallback_flags=fallback)
    for multi, low, fallback in itertools.product(
        (None, False, True), (None, False, True), ((), ("legal_advice",))
    )
]

#: Flags a set may hold: one that requires 26B, ones that do not, one the policy does not
#: list, and the two derived ones declared by the model itself.
VOCABULARY = [
    "legal_advice",
    "numeric_claims",
    "quiet",
    "unlisted",
    FLAG_MULTI_DOC,
    FLAG_LOW_CONFIDENCE,
]


def _loop(policy, sets, defaults, groups) -> np.ndarray:
    return np.array(
        [
            flag_outcome(policy, set(flags) | set(defaults[group]) | set(derived))[1]
            for flags, group in zip(sets, groups, strict=True)
            for derived in DERIVED
        ],
        dtype=bool,
    )


def _arrays(sets: list[tuple[str, ...]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    names = sorted({flag for flags in sets for flag in flags})
    code = {name: i for i, name in enumerate(names)}
    codes = [code[flag] for flags in sets for flag in flags]
    owner = [k for k, flags in enumerate(sets) for _ in flags]
    return names, np.array(codes, dtype=np.int64), np.array(owner, dtype=np.int64)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.policy_id)
def test_every_small_set_matches_the_loop(policy):
    # Every subset of the vocabulary (the empty one included), under every default group.
    subsets = [
        combo
        for size in range(len(VOCABULARY) + 1)
        for combo in itertools.combinations(VOCABULARY, size)
    ]
    defaults = [(), ("legal_advice",), ("numeric_claims", "quiet"), ("unlisted",)]
    sets = [subset for subset in subsets for _ in defaults]
    groups = np.array([group for _ in subsets for group in range(len(defaults))], dtype=np.int64)
    names, codes, owner = _arrays(sets)
    got = requires_by_state(policy, names, codes, owner, defaults, groups)
    np.testing.assert_array_equal(got, _loop(policy, sets, defaults, groups))


@pytest.mark.parametrize("policy", POLICIES[:6], ids=lambda p: p.policy_id)
def test_repeated_flags_and_random_sets_match_the_loop(policy):
    rng = np.random.default_rng(22)
    sets = [
        tuple(rng.choice(VOCABULARY, size=rng.integers(0, 9), replace=True)) for _ in range(300)
    ]
    defaults = [(), ("legal_advice",), ("quiet",)]
    groups = rng.integers(0, len(defaults), size=len(sets))
    names, codes, owner = _arrays(sets)
    got = requires_by_state(policy, names, codes, owner, defaults, groups)
    np.testing.assert_array_equal(got, _loop(policy, sets, defaults, groups))


def test_no_sets_and_no_flags():
    policy = POLICIES[-1]
    empty = np.array([], dtype=np.int64)
    assert requires_by_state(policy, [], empty, empty, [()], empty).shape == (0,)
    got = requires_by_state(policy, [], empty, empty, [(), ("legal_advice",)], np.array([0, 1]))
    np.testing.assert_array_equal(got, _loop(policy, [(), ()], [(), ("legal_advice",)], [0, 1]))


def _ties() -> pd.DataFrame:
    """Rows at, just below and just above each threshold, with empty and odd flag lists."""
    rows = []
    flag_lists = [[], ["quiet"], ["unlisted", "unlisted"], [FLAG_MULTI_DOC], [FLAG_LOW_CONFIDENCE]]
    for domain, chars, docs, conf, flags in itertools.product(
        ["legal", "finance", "plain", "nowhere"],
        [5999, 6000, 6001],
        [2, 3, 4],
        [0.59, 0.6, 0.61],
        flag_lists,
    ):
        rows.append(
            {
                "subject_domain": domain,
                "content_chars": chars,
                "deterministic_keyword_hits": [],
                "self_declared_high_impact": False,
                "self_declared_risk_flags": flags,
                "confidence": conf,
                "evidence_doc_count": docs,
            }
        )
    frame = pd.DataFrame(rows)
    for name in ("deterministic_keyword_hits", "self_declared_risk_flags"):
        frame[name] = frame[name].astype(LISTS)
    frame["subject_domain"] = frame["subject_domain"].astype("category")
    return frame


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.policy_id)
def test_replay_at_the_thresholds_equals_route(policy):
    frame = _ties()
    replayed = ea.replay(frame, policy)
    records = frame.to_dict("records")
    for inputs, (_, row) in zip(records, replayed.iterrows(), strict=True):
        inputs = {k: list(v) if isinstance(v, np.ndarray | list) else v for k, v in inputs.items()}
        expected = ea.route(policy, **inputs)
        assert ea.RoutingDecision(**row.to_dict()) == expected, inputs
    np.testing.assert_array_equal(escalates(frame, policy), replayed["escalate_to_26b"])


def test_tables_are_built_when_read():
    frame = _ties()
    policy = POLICIES[0]
    view = apply_policy(encode_inputs(frame), policy)
    assert "_outcomes" not in vars(view)  # a sweep never reads them
    assert len(view.flag_table) == len(view.requires_table) == len(view.directive_table)
    assert "_outcomes" in vars(view)
