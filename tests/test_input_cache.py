"""A table's encoded inputs are reused only while every input column is unchanged."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pyarrow as pa

import explicit_audit as ea
from explicit_audit.decisions import _input_cache
from explicit_audit.decisions._input_cache import encoded_inputs

LISTS = pd.ArrowDtype(pa.list_(pa.string()))


def _frame(rows: int = 40, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    flags = [[], ["legal_advice"], ["numeric_claims", "unlisted"]]
    frame = pd.DataFrame(
        {
            "subject_domain": pd.Categorical(rng.choice(["legal", "finance", "x"], rows)),
            "content_chars": rng.integers(0, 12000, rows),
            "deterministic_keyword_hits": pd.Series(
                [["k"] if i % 5 == 0 else [] for i in range(rows)], dtype=LISTS
            ),
            "self_declared_high_impact": rng.random(rows) < 0.1,
            "self_declared_risk_flags": pd.Series([flags[i % 3] for i in range(rows)], dtype=LISTS),
            "confidence": rng.random(rows).round(2),
            "evidence_doc_count": rng.integers(0, 6, rows),
        }
    )
    return frame


def test_the_same_table_is_encoded_once():
    frame = _frame()
    assert encoded_inputs(frame) is encoded_inputs(frame)


def test_a_value_set_in_place_is_seen():
    frame = _frame()
    first = encoded_inputs(frame)
    frame.loc[3, "confidence"] = 0.0
    second = encoded_inputs(frame)
    assert second is not first and second.confidence[3] == 0.0
    flags = frame["self_declared_risk_flags"].copy()
    flags.iloc[4] = pa.scalar(["legal_advice", "quiet"], type=pa.list_(pa.string()))
    frame["self_declared_risk_flags"] = flags
    third = encoded_inputs(frame)
    assert third is not second
    assert third.combo_flags[third.combo[4]] == {"legal_advice", "quiet"}
    frame.loc[5, "subject_domain"] = "legal"
    fourth = encoded_inputs(frame)
    assert fourth is not third
    frame["content_chars"] = frame["content_chars"] + 1
    assert encoded_inputs(frame) is not fourth


def test_a_new_index_is_seen():
    frame = _frame()
    first = encoded_inputs(frame)
    frame.index = frame.index + 100
    assert encoded_inputs(frame) is not first
    assert encoded_inputs(frame).index.equals(frame.index)


def test_replay_after_a_change_in_place_equals_route():
    frame = _frame()
    policy = ea.Policy.from_dict(
        {
            "policy_id": "p",
            "escalation": {
                "context_char_cap_4b": 20000,
                "escalate_on_multi_doc_count": 10,
                "confidence_threshold": 0.0,
            },
            "subject_domains": {"legal": {"high_impact": True, "default_risk_flags": []}},
            "fallback_domain": {"name": "general", "high_impact": False, "default_risk_flags": []},
            "risk_flags": {"legal_advice": {"requires_26b": True}},
        }
    )
    before = ea.replay(frame, policy)
    row = int(np.flatnonzero(~before["escalate_to_26b"].to_numpy())[0])
    frame.loc[row, "content_chars"] = 20001
    after = ea.replay(frame, policy)
    assert after["escalate_to_26b"].iloc[row]
    inputs = frame.iloc[row].to_dict()
    inputs = {k: list(v) if isinstance(v, np.ndarray | list) else v for k, v in inputs.items()}
    assert ea.RoutingDecision(**after.iloc[row].to_dict()) == ea.route(policy, **inputs)


def test_python_lists_are_never_kept():
    frame = _frame()
    frame["self_declared_risk_flags"] = frame["self_declared_risk_flags"].astype(object)
    frame["self_declared_risk_flags"] = [list(v) for v in frame["self_declared_risk_flags"]]
    assert encoded_inputs(frame) is not encoded_inputs(frame)


def test_an_entry_goes_with_its_table():
    frame = _frame()
    encoded_inputs(frame)
    key = id(frame)
    assert key in _input_cache._ENTRIES
    del frame
    gc.collect()
    assert key not in _input_cache._ENTRIES


def test_at_most_a_few_tables_are_kept():
    frames = [_frame(seed=seed) for seed in range(_input_cache.CACHED_TABLES + 2)]
    for frame in frames:
        encoded_inputs(frame)
    assert len(_input_cache._ENTRIES) <= _input_cache.CACHED_TABLES
    assert encoded_inputs(frames[-1]) is encoded_inputs(frames[-1])
