"""verify_all: every check over one audit, gathered into one result."""

from __future__ import annotations

import dataclasses
import json
import shutil
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_receipt

import explicit_audit as ea
from explicit_audit.verify import CHECKS, FINDING_COLUMNS, NOTICES, RULES, verify_all

POLICY_YAML = Path(__file__).parent / "data" / "routing_policy_example.yaml"
PLAN = {
    "retrieval_keywords": "seoul subway",
    "top_k": 8,
    "over_fetch": 2,
    "max_context_chars": 12000,
    "shard_ids": ["s1", "s2"],
}
PAYLOAD = {"question": "Which bar is tallest?", "choices": ["A", "B"], "base_id": "c2/0001"}
# Every input written, as the producer logs them (a field left out is a defaulted_field notice).
INPUTS = {
    "subject_domain": "legal",
    "content_chars": 5400,
    "deterministic_keyword_hits": [],
    "self_declared_high_impact": False,
    "self_declared_risk_flags": [],
    "confidence": 0.9,
    "evidence_doc_count": 0,
}


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _decision_record(decision_id: str, **changes) -> dict:
    policy = ea.load_policy(POLICY_YAML)
    decision = dataclasses.asdict(ea.route(policy, **INPUTS))
    decision = {k: list(v) if isinstance(v, tuple) else v for k, v in decision.items()}
    decision.update(changes)
    return {
        "decision_id": decision_id,
        "policy_id": "baseline",
        "inputs": INPUTS,
        "decision": decision,
    }


def _request(model: str, payload: dict, digest: str | None = None) -> dict:
    return {
        "model": model,
        "base_id": payload["base_id"],
        "dsl": "chart-v1",
        "request_sha256": digest or ea.request_hash(payload),
        "payload": payload,
    }


@pytest.fixture
def clean_data(tmp_path) -> Path:
    """One record of every kind, each as its producer writes it."""
    root = tmp_path / "data"
    _jsonl(root / "receipts" / "r.jsonl", [make_receipt()])
    plan_record = {
        "run_id": "r-1",
        "retrieval_plan": PLAN,
        "retrieval_plan_hash": ea.plan_hash(PLAN),
    }
    _jsonl(root / "plans" / "p.jsonl", [plan_record])
    _jsonl(root / "requests" / "q.jsonl", [_request("m-a", PAYLOAD), _request("m-b", PAYLOAD)])
    (root / "policies").mkdir()
    shutil.copy(POLICY_YAML, root / "policies" / "baseline.yaml")
    _jsonl(root / "decisions" / "d.jsonl", [_decision_record("d-1")])
    return root


def test_clean_data_has_no_finding(clean_data):
    result = verify_all(ea.load(clean_data, progress=False))
    assert result.clean
    assert list(result.findings.columns) == list(FINDING_COLUMNS)
    assert result.findings.empty
    summary = result.summary()
    assert summary["check"].tolist() == list(CHECKS)
    assert (summary["findings"] == 0).all()
    checked = dict(zip(summary["check"], summary["checked"], strict=True))
    assert checked["rejected_rows"] == 6  # 5 records and 1 policy document read
    assert checked["plan_hashes"] == 1 and checked["receipt_rules"] == 1
    assert checked["request_hashes"] == 2 and checked["decision_policy"] == 1
    assert result.to_dict()["clean"] is True


def _bad_line(root: Path) -> tuple[str, int]:
    path = root / "receipts" / "bad.jsonl"
    path.write_text('{"schemaVersion": 0, "scope": \n', encoding="utf-8")
    return "bad.jsonl", 1


def _bad_plan_hash(root: Path) -> tuple[str, int]:
    other = dict(PLAN, top_k=9)
    record = {"run_id": "r-2", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(other)}
    _jsonl(
        root / "plans" / "p2.jsonl",
        [
            {"run_id": "r-0", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)},
            record,
        ],
    )
    return "p2.jsonl", 2


def _bad_request_hash(root: Path) -> tuple[str, int]:
    payload = dict(PAYLOAD, base_id="c2/0002")
    _jsonl(root / "requests" / "q2.jsonl", [_request("m-a", payload, "0" * 64)])
    return "q2.jsonl", 1


def _forbidden_key(root: Path) -> tuple[str, int]:
    payload = dict(PAYLOAD, base_id="c2/0003", original_answer="B")
    _jsonl(root / "requests" / "q3.jsonl", [_request("m-a", payload)])
    return "q3.jsonl", 1


def _independence(root: Path) -> tuple[str, int]:
    one = dict(PAYLOAD, base_id="c2/0004")
    other = dict(one, question="Which bar is shortest?")
    _jsonl(root / "requests" / "q4.jsonl", [_request("m-a", one), _request("m-b", other)])
    return "q4.jsonl", 1


def _receipt_rule(root: Path) -> tuple[str, int]:
    receipt = make_receipt(scope="space", query="<script>alert(1)</script>")
    _jsonl(root / "receipts" / "r2.jsonl", [make_receipt(), receipt])
    return "r2.jsonl", 2


def _presentation_rule(root: Path) -> tuple[str, int]:
    # A failure before retrieval (no receipt) names a code only retrieval returns.
    def failed(kind: str, code: str, field: str) -> dict:
        error = {"kind": kind, "code": code, "field": field, "message": f"{code} here"}
        return {"schema_version": 0, "status": "failed", "errors": [error]}

    lines = [
        failed("authorization", "model_not_allowed", "model"),
        failed("retrieval", "path_escape", "query"),
    ]
    _jsonl(root / "receipts" / "pr.jsonl", lines)
    return "pr.jsonl", 2


def _policy_breach(root: Path) -> tuple[str, int]:
    _jsonl(root / "decisions" / "d2.jsonl", [_decision_record("d-2", escalate_to_26b=False)])
    return "d2.jsonl", 1


@pytest.mark.parametrize(
    ("plant", "check", "rule"),
    [
        (_bad_line, "rejected_rows", "rejected_row"),
        (_bad_plan_hash, "plan_hashes", "no_known_variant"),
        (_bad_request_hash, "request_hashes", "hash_mismatch"),
        (_forbidden_key, "request_hiding_rule", "forbidden_key"),
        (_independence, "request_independence", "independence"),
        (_receipt_rule, "receipt_rules", "space_query"),
        (_presentation_rule, "presentation_rules", "failure_stage"),
        (_policy_breach, "decision_policy", "replay"),
    ],
)
def test_each_check_reports_its_finding(clean_data, plant, check, rule):
    file_name, line = plant(clean_data)
    # Any other warning fails the test (filterwarnings = error).
    expected = pytest.warns(ea.RejectedRowsWarning) if check == "rejected_rows" else nullcontext()
    with expected:
        audit = ea.load(clean_data, progress=False)
    result = verify_all(audit)
    assert not result.clean
    assert set(result.findings["check"]) == {check}
    first = result.findings.iloc[0]
    assert first["rule"] == rule
    assert Path(first["source_file"]).name == file_name
    assert first["source_line"] == line
    assert isinstance(first["detail"], str) and first["detail"]
    assert first["severity"] == RULES[rule].severity == "error"
    assert first["check"] == RULES[rule].check
    # the row names the record in its table; a rejected input is in no table
    if check == "rejected_rows":
        assert pd.isna(first["row"]) and first["kind"] == "unknown"
    else:
        table = getattr(audit, first["kind"])
        assert table.loc[first["row"], "source_line"] == line
    summary = result.summary().set_index("check")
    assert summary.loc[check, "findings"] == len(result.findings)
    assert summary.drop(check)["findings"].sum() == 0
    document = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert document["clean"] is False
    assert len(document["findings"]) == len(result.findings)
    assert document["findings"][0]["source_line"] == line


def test_record_names_the_record(clean_data):
    _bad_plan_hash(clean_data)
    _independence(clean_data)
    _policy_breach(clean_data)
    findings = verify_all(ea.load(clean_data, progress=False)).findings.set_index("check")
    assert findings.loc["plan_hashes", "record"] == "r-2"
    assert set(findings.loc["request_independence", "record"]) == {
        "c2/0004 (m-a)",
        "c2/0004 (m-b)",
    }
    assert set(findings.loc["decision_policy", "record"]) == {"d-2"}


def test_findings_are_ordered_by_check_then_place(clean_data):
    _policy_breach(clean_data)
    _receipt_rule(clean_data)
    _bad_plan_hash(clean_data)
    findings = verify_all(ea.load(clean_data, progress=False)).findings
    order = [list(CHECKS).index(c) for c in findings["check"]]
    assert order == sorted(order)


def test_a_forbidden_name_nested_in_a_payload_is_a_notice(clean_data):
    # explicit_learning's builder refuses these names only at the payload's top level.
    payload = dict(PAYLOAD, base_id="c2/0005", world_candidates={"rows": [{"operator_name": "K"}]})
    _jsonl(clean_data / "requests" / "q5.jsonl", [_request("m-a", payload)])
    result = verify_all(ea.load(clean_data, progress=False))
    assert result.clean
    assert result.findings[["rule", "severity"]].values.tolist() == [
        ["forbidden_key_nested", "notice"]
    ]
    summary = result.summary().set_index("check")
    assert summary.loc["request_hiding_rule", ["findings", "notices"]].tolist() == [0, 1]
    _forbidden_key(clean_data)
    assert not verify_all(ea.load(clean_data, progress=False)).clean


def test_every_check_function_returns_the_one_findings_shape(clean_data):
    for plant in (
        _bad_plan_hash,
        _forbidden_key,
        _receipt_rule,
        _presentation_rule,
        _policy_breach,
    ):
        plant(clean_data)
    audit = ea.load(clean_data, progress=False)
    parts = {
        "plans": ea.check_plans(audit.plans),
        "requests": ea.check_requests(audit.requests),
        "receipts": ea.check_receipts(audit.receipts, audit.exposed),
        "presentations": ea.check_presentations(audit.presentations),
        "decisions": ea.check_decisions(audit.decisions, audit.policies),
    }
    dtypes = None
    for kind, found in parts.items():
        assert len(found) > 0, kind
        assert list(found.columns) == list(FINDING_COLUMNS), kind
        assert set(found["kind"]) == {kind}
        assert dtypes is None or found.dtypes.astype(str).tolist() == dtypes
        dtypes = found.dtypes.astype(str).tolist()
        # severity is the rule's own, nothing else decides it
        assert found["severity"].tolist() == [RULES[r].severity for r in found["rule"]]
    gathered = verify_all(audit).findings
    assert len(gathered) == sum(len(found) for found in parts.values())
    assert gathered.dtypes.astype(str).tolist() == dtypes


def test_the_rule_table_is_the_one_source_of_severity():
    assert set(RULES.checks) == set(CHECKS)
    # what the producer allows, and what engram's unstable presentation schema may add
    assert NOTICES == {
        "forbidden_key_nested",
        "receipt_keys",
        "error_code_unknown",
        "unknown_key",
        "defaulted_field",
        "undeclared_value",
        "presentation_shape",
        "repeated_record",
        "unparsed_time",
        "future_time",
        "past_time",
    }
    table = RULES.frame()
    assert table["rule"].is_unique and len(table) == len(RULES)
    assert set(table["severity"]) == {"error", "notice"}
    assert set(ea.RECEIPT_RULES) | set(ea.DECISION_RULES) <= set(RULES)


def test_to_dict_is_strict_json_with_nulls_for_missing_values(clean_data):
    _bad_line(clean_data)  # a rejected row: it names no record
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(clean_data, progress=False)
    document = verify_all(audit).to_dict()
    # allow_nan=False refuses NaN and infinities: the result is RFC 8259 JSON.
    text = json.dumps(document, allow_nan=False)
    (rejected,) = [f for f in json.loads(text)["findings"] if f["check"] == "rejected_rows"]
    assert rejected["record"] is None
    assert isinstance(rejected["source_line"], int)


def test_a_check_that_looked_at_no_record_is_not_run_never_clean(clean_data):
    shutil.rmtree(clean_data / "receipts")
    result = verify_all(ea.load(clean_data, progress=False))
    statuses = dict(zip(result.summary()["check"], result.summary()["status"], strict=True))
    assert statuses["receipt_rules"] == "not run"
    assert statuses["presentation_rules"] == "not run"
    assert statuses["plan_hashes"] == "clean" and statuses["decision_policy"] == "clean"
    assert result.state == "clean"  # on what was checked
    assert result.clean and result.exit_status == 0
    assert result.summary()["status"].dtype == pd.CategoricalDtype(["clean", "findings", "not run"])


def test_a_check_with_findings_is_findings(clean_data):
    _jsonl(clean_data / "plans" / "p.jsonl", [{"run_id": "r-2", "retrieval_plan": PLAN,
                                              "retrieval_plan_hash": "0" * 64}])  # fmt: skip
    result = verify_all(ea.load(clean_data, progress=False))
    assert result.statuses["plan_hashes"] == "findings"
    assert (result.state, result.clean, result.exit_status) == ("findings", False, 1)


def test_data_with_no_record_is_nothing_to_check(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    result = verify_all(ea.load(tmp_path, progress=False))
    assert set(result.statuses.values()) == {"not run"}
    assert result.state == "nothing to check"
    assert not result.clean
    assert result.exit_status == 3
    assert result.to_dict()["state"] == "nothing to check"


def test_expect_names_the_kinds_that_are_absent_or_empty(clean_data):
    shutil.rmtree(clean_data / "receipts")
    audit = ea.load(clean_data, progress=False)
    result = verify_all(audit, expect="plans, receipts,presentations,policies")
    assert result.expected == {"plans": 1, "receipts": 0, "presentations": 0, "policies": 1}
    assert result.missing == ["receipts", "presentations"]
    assert result.state == "clean" and not result.clean and result.exit_status == 3
    assert result.to_dict()["missing"] == ["receipts", "presentations"]
    assert verify_all(audit, expect=["plans", "requests", "decisions"]).clean
    with pytest.raises(ea.AuditError, match="'reciepts'"):
        verify_all(audit, expect=["reciepts"])


def test_statuses_are_the_same_on_dask(clean_data):
    shutil.rmtree(clean_data / "receipts")
    in_memory = verify_all(ea.load(clean_data, progress=False), expect="receipts,plans")
    lazy = verify_all(ea.load(clean_data, engine="dask"), expect="receipts,plans")
    pd.testing.assert_frame_equal(lazy.summary(), in_memory.summary())
    assert (lazy.state, lazy.missing, lazy.expected) == (
        in_memory.state,
        in_memory.missing,
        in_memory.expected,
    )
