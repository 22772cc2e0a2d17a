"""route and replay: the known answers of the reference engine, and replay == route on every row."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import explicit_audit as ea
from explicit_audit.decisions.routing import REPLAY_COLUMNS

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
KNOWN = json.loads((DATA / "routing_known_answers.json").read_text(encoding="utf-8"))
POLICIES = {name: ea.Policy.from_dict(spec) for name, spec in KNOWN["policies"].items()}
LISTS = pd.ArrowDtype(pa.list_(pa.string()))
INPUTS = (
    "subject_domain",
    "content_chars",
    "deterministic_keyword_hits",
    "self_declared_high_impact",
    "self_declared_risk_flags",
    "confidence",
    "evidence_doc_count",
)


def _as_json(decision: ea.RoutingDecision) -> dict:
    values = {name: getattr(decision, name) for name in REPLAY_COLUMNS}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


def _frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(INPUTS))
    for name in ("deterministic_keyword_hits", "self_declared_risk_flags"):
        frame[name] = frame[name].astype(LISTS)
    frame["subject_domain"] = frame["subject_domain"].astype("category")
    return frame


def _rows_equal_route(frame: pd.DataFrame, policy: ea.Policy) -> None:
    replayed = ea.replay(frame, policy)
    assert list(replayed.columns) == list(REPLAY_COLUMNS)
    assert replayed.index.equals(frame.index)
    records = frame[list(INPUTS)].to_dict("records")
    for position, (inputs, row) in enumerate(
        zip(records, replayed.to_dict("records"), strict=True)
    ):
        inputs = {k: list(v) if isinstance(v, np.ndarray | list) else v for k, v in inputs.items()}
        expected = ea.route(policy, **inputs)
        got = ea.RoutingDecision(
            **{k: v.item() if hasattr(v, "item") else v for k, v in row.items()}
        )
        assert got == expected, (position, inputs)


@pytest.mark.parametrize("case", KNOWN["cases"], ids=[c["name"] for c in KNOWN["cases"]])
def test_route_matches_known_answers(case):
    decision = ea.route(POLICIES[case["policy_id"]], **case["inputs"])
    assert _as_json(decision) == case["expected"]


@pytest.mark.parametrize("policy_id", sorted(POLICIES))
def test_replay_matches_known_answers(policy_id):
    cases = [c for c in KNOWN["cases"] if c["policy_id"] == policy_id]
    frame = _frame([c["inputs"] for c in cases])
    frame.index = pd.Index([c["name"] for c in cases])
    replayed = ea.replay(frame, POLICIES[policy_id])
    for case in cases:
        row = replayed.loc[case["name"]]
        got = {
            name: list(row[name]) if isinstance(row[name], tuple) else row[name]
            for name in REPLAY_COLUMNS
        }
        assert got == case["expected"], case["name"]


def test_replay_output_types():
    cases = KNOWN["cases"][:20]
    replayed = ea.replay(_frame([c["inputs"] for c in cases]), POLICIES["kat_base"])
    assert replayed["escalate_to_26b"].dtype == bool
    assert replayed["used_fallback"].dtype == bool
    assert isinstance(replayed["risk_flags"].dtype, pd.CategoricalDtype)
    assert all(isinstance(value, tuple) for value in replayed["escalation_reasons"])
    counts = replayed["escalation_reasons"].value_counts()
    assert counts.sum() == len(cases) and (counts > 0).all()


def _random_inputs(rng: np.random.Generator, n: int, flag_pool: list[str]) -> list[dict]:
    domains = ["legal", "finance", "medical", "notes", "ops", "hr", "any", "general", "x"]
    rows = []
    for _ in range(n):
        rows.append(
            {
                "subject_domain": str(rng.choice(domains)),
                "content_chars": int(rng.integers(0, 12000)),
                "deterministic_keyword_hits": ["kw"] * int(rng.integers(0, 2)),
                "self_declared_high_impact": bool(rng.random() < 0.1),
                "self_declared_risk_flags": [
                    str(f) for f in rng.choice(flag_pool, int(rng.integers(0, 4)))
                ],
                "confidence": float(rng.choice([0.0, 0.25, 0.6, 1.0, rng.random()])),
                "evidence_doc_count": int(rng.integers(0, 6)),
            }
        )
    return rows


@pytest.mark.parametrize("policy_id", sorted(POLICIES))
def test_replay_equals_route_on_random_rows(policy_id):
    rng = np.random.default_rng(7)
    pool = [*KNOWN["policies"]["kat_base"]["risk_flags"], "Zeta", "alpha", "émigré", "zz"]
    frame = _frame(_random_inputs(rng, 600, pool))
    _rows_equal_route(frame, POLICIES[policy_id])


def test_replay_with_many_distinct_flags():
    """More distinct self-declared flags than one 62-bit word holds."""
    rng = np.random.default_rng(11)
    pool = [f"flag_{i:03d}" for i in range(150)] + ["legal_advice", "multi_doc_dependency"]
    frame = _frame(_random_inputs(rng, 800, pool))
    policy = POLICIES["kat_base"].replace(
        risk_flags=dict(POLICIES["kat_base"].risk_flags)
        | {f"flag_{i:03d}": ea.RiskFlag(i % 7 == 0, f"directive {i % 5}") for i in range(150)}
    )
    _rows_equal_route(frame, policy)


@pytest.mark.parametrize("distinct", [1, 7, 8, 9, 16, 17, 61, 62, 63, 124, 125])
def test_replay_flag_masks_at_every_word_width(distinct):
    """Flag sets packed into 8-, 16- and 64-bit masks, one word or several.

    The first and last rows hold no flag, and so do runs in between: an empty
    row sits where a mask's reduction would read its neighbour's flags.
    """
    rng = np.random.default_rng(distinct)
    pool = [f"flag_{i:03d}" for i in range(distinct)]
    rows = _random_inputs(rng, 300, pool)
    for position in (0, 1, 2, 150, 151, 297, 298, 299):
        rows[position]["self_declared_risk_flags"] = []
    rows[3]["self_declared_risk_flags"] = list(pool)
    frame = _frame(rows)
    policy = POLICIES["kat_base"].replace(
        risk_flags=dict(POLICIES["kat_base"].risk_flags)
        | {name: ea.RiskFlag(i % 3 == 0, f"directive {i % 4}") for i, name in enumerate(pool)}
    )
    _rows_equal_route(frame, policy)
    _rows_equal_route(frame.iloc[1:-1], policy)


def test_replay_accepts_plain_object_columns_and_sliced_frames():
    rows = _random_inputs(np.random.default_rng(3), 200, ["numeric_claims", "zz"])
    plain = pd.DataFrame(rows)
    arrow = _frame(rows)
    policy = POLICIES["kat_base"]
    left = ea.replay(plain, policy)
    right = ea.replay(arrow, policy)
    for name in REPLAY_COLUMNS:
        assert left[name].astype(object).tolist() == right[name].astype(object).tolist()
    sliced = arrow.iloc[50:120]
    _rows_equal_route(sliced, policy)


def test_replay_equals_route_on_the_sample_data():
    audit_decisions = ea.load_decisions(ROOT / "data" / "decisions", progress=False)
    policies = ea.load_policies(ROOT / "data" / "policies")
    assert len(audit_decisions) >= 3000
    for policy in policies.values():
        _rows_equal_route(audit_decisions, policy)


def test_route_refuses_a_string_for_a_list():
    with pytest.raises(TypeError, match="self_declared_risk_flags"):
        ea.route(
            POLICIES["kat_base"],
            subject_domain="legal",
            content_chars=1,
            self_declared_risk_flags="legal_advice",
        )


def test_replay_reports_missing_inputs():
    frame = _frame(_random_inputs(np.random.default_rng(1), 5, ["zz"]))
    with pytest.raises(ea.AuditError, match="confidence"):
        ea.replay(frame.drop(columns="confidence"), POLICIES["kat_base"])
    frame["content_chars"] = pd.array([1, None, 3, 4, 5], dtype="Int64")
    with pytest.raises(ea.AuditError, match="content_chars"):
        ea.replay(frame, POLICIES["kat_base"])


def test_replay_of_no_rows():
    replayed = ea.replay(_frame([]), POLICIES["kat_base"])
    assert len(replayed) == 0 and list(replayed.columns) == list(REPLAY_COLUMNS)


def test_replay_reads_the_order_of_reasons_from_reasons(monkeypatch):
    # The bit of each reason is derived from REASONS: reversing the tuple reverses
    # every row's reasons in replay exactly as in route, and no reason is lost.
    from explicit_audit.decisions import routing

    rng = np.random.default_rng(11)
    pool = list(KNOWN["policies"]["kat_base"]["risk_flags"])
    frame = _frame(_random_inputs(rng, 400, pool))
    policy = POLICIES["kat_base"]
    before = ea.replay(frame, policy)["escalation_reasons"].tolist()
    assert max(len(reasons) for reasons in before) >= 3
    monkeypatch.setattr(routing, "REASONS", tuple(reversed(routing.REASONS)))
    after = ea.replay(frame, policy)["escalation_reasons"].tolist()
    assert after == [tuple(reversed(reasons)) for reasons in before]
    _rows_equal_route(frame, policy)


@pytest.mark.parametrize(
    ("value", "message"),
    [(None, "hold no list"), ("legal_advice", "expected lists of strings")],
)
def test_replay_refuses_a_missing_list_or_a_string_for_a_list(value, message):
    frame = _frame([c["inputs"] for c in KNOWN["cases"][:3]])
    frame["self_declared_risk_flags"] = pd.Series([[], value, []], dtype=object)
    with pytest.raises(ea.AuditError, match=f"'self_declared_risk_flags'.*{message}"):
        ea.replay(frame, POLICIES["kat_base"])


def _with_long_rows(rows: list[dict], rng: np.random.Generator, pool: list[str]) -> list[dict]:
    """Some rows of up to 12 flags, repeats included: longer than one position at a time."""
    for position in rng.choice(len(rows), len(rows) // 10, replace=False).tolist():
        rows[position]["self_declared_risk_flags"] = [
            str(f) for f in rng.choice(pool, int(rng.integers(4, 13)))
        ]
    return rows


@pytest.mark.parametrize("distinct", [2, 5, 12, 40, 130])
def test_replay_is_the_same_with_one_thread_and_with_two(distinct):
    from explicit_audit.decisions.routing import _replay

    rng = np.random.default_rng(distinct)
    pool = [f"flag_{i:03d}" for i in range(distinct)] + ["legal_advice", "multi_doc_dependency"]
    frame = _frame(_with_long_rows(_random_inputs(rng, 3000, pool), rng, pool))
    policy = POLICIES["kat_base"].replace(
        risk_flags=dict(POLICIES["kat_base"].risk_flags)
        | {name: ea.RiskFlag(i % 3 == 0, f"directive {i % 4}") for i, name in enumerate(pool)}
    )
    for table in (frame, frame.iloc[7:2900:3], pd.DataFrame(frame.astype(object).to_dict("list"))):
        # A copy each: a table replayed again finds its inputs encoded already.
        one = _replay(table.copy(deep=True), policy, threads=1)
        two = _replay(table.copy(deep=True), policy, threads=2)
        pd.testing.assert_frame_equal(one, two, check_exact=True)
        for name in ("escalation_reasons", "risk_flags", "synthesis_directives"):
            assert list(one[name].cat.categories) == list(two[name].cat.categories)
        _rows_equal_route(table.iloc[:200], policy)


@pytest.mark.parametrize(
    ("wrong", "named"),
    [
        (("self_declared_risk_flags", "confidence"), "self_declared_risk_flags"),
        (("subject_domain", "self_declared_risk_flags"), "subject_domain"),
        (("deterministic_keyword_hits", "self_declared_risk_flags"), "deterministic_keyword_hits"),
        (("subject_domain", "deterministic_keyword_hits"), "subject_domain"),
        (("confidence", "content_chars"), "content_chars"),
    ],
)
def test_a_table_wrong_twice_raises_the_same_error_with_one_thread_and_with_two(wrong, named):
    """The first wrong column in the order the columns are read, whichever thread reads it."""
    from explicit_audit.decisions.routing import _replay

    frame = _frame(_random_inputs(np.random.default_rng(5), 50, ["zz"]))
    broken = {
        "subject_domain": pd.Series([None] + ["legal"] * 49, dtype="category"),
        "deterministic_keyword_hits": pd.Series([["kw", None]] * 50, dtype=LISTS),
        "self_declared_risk_flags": pd.Series([["zz", None]] * 50, dtype=LISTS),
        "confidence": np.nan,
        "content_chars": pd.array([None] * 50, dtype="Int64"),
    }
    for column in wrong:
        frame[column] = broken[column]
    for threads in (1, 2):
        with pytest.raises(ea.AuditError, match=named):
            _replay(frame.copy(deep=True), POLICIES["kat_base"], threads=threads)


@pytest.mark.parametrize("named", [3, 63, 64, 127, 128, 150])
def test_replay_with_many_domains_in_the_policy(named):
    """The applied domain's code, whether it fell back and its impact, for few and many domains."""
    base = POLICIES["kat_base"]
    domains = {
        f"domain_{i:03d}": ea.SubjectDomain(
            high_impact=i % 4 == 0, default_risk_flags=("legal_advice",) if i % 3 else ()
        )
        for i in range(named)
    }
    policy = base.replace(subject_domains=domains)
    rng = np.random.default_rng(named)
    rows = _random_inputs(rng, 400, ["legal_advice", "zz"])
    for row in rows:
        row["subject_domain"] = f"domain_{int(rng.integers(0, named + 5)):03d}"
    _rows_equal_route(_frame(rows), policy)
    few = [dict(row, subject_domain=f"domain_{i % 3:03d}") for i, row in enumerate(rows)]
    _rows_equal_route(_frame(few), policy)
