"""Decision records: loading (nested, flat, bad input) and verification against policies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import rows_by_path
from exact_values import read_exactly

import explicit_audit as ea
from explicit_audit._core.records import RawValue
from explicit_audit.decisions import KIND
from explicit_audit.decisions.loader import COLUMN_DTYPES
from explicit_audit.reading.tables import build_kind

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
KNOWN = json.loads((DATA / "routing_known_answers.json").read_text(encoding="utf-8"))
PLANTED = json.loads((DATA / "routing_sample_planted.json").read_text(encoding="utf-8"))
POLICIES = ea.PolicySet(ea.Policy.from_dict(spec) for spec in KNOWN["policies"].values())


def _records(shape: str) -> list[dict]:
    records = []
    for case in json.loads(json.dumps(KNOWN["cases"])):
        ids = {"decision_id": case["name"], "policy_id": case["policy_id"]}
        if shape == "flat":
            records.append(ids | case["inputs"] | case["expected"])
        else:
            records.append(ids | {"inputs": case["inputs"], "decision": case["expected"]})
    return records


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


@pytest.mark.parametrize("shape", ["nested", "flat"])
def test_load_known_answers_as_records(tmp_path, shape):
    path = _write_jsonl(tmp_path / f"{shape}.jsonl", _records(shape))
    audit = ea.load(path, progress=False)
    decisions = audit.decisions
    assert list(decisions.columns) == list(COLUMN_DTYPES)
    for name, dtype in COLUMN_DTYPES.items():
        assert decisions[name].dtype == dtype, name
    assert decisions["source_line"].tolist() == list(range(1, len(KNOWN["cases"]) + 1))
    assert (decisions["shape"] == shape).all()
    first = KNOWN["cases"][22]
    row = decisions.iloc[22]
    assert row["decision_id"] == first["name"]
    assert row["content_chars"] == first["inputs"]["content_chars"]
    assert list(row["self_declared_risk_flags"]) == first["inputs"]["self_declared_risk_flags"]
    assert list(row["recorded_risk_flags"]) == first["expected"]["risk_flags"]
    assert row["recorded_subject_domain_used"] == first["expected"]["subject_domain_used"]
    assert ea.check_decisions(decisions, POLICIES).empty


def test_defaults_and_extra_keys(tmp_path):
    case = KNOWN["cases"][0]
    inputs = {"subject_domain": "legal", "content_chars": 10, "channel": "web"}
    decision = dict(case["expected"], note="reviewed")
    del decision["used_fallback"]
    records = [
        {"policy_id": "kat_base", "ts": "2026-01-01", "inputs": inputs, "decision": decision},
        {"policy_id": "kat_base", "confidence": "top-level extra", **inputs, **decision},
    ]
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(_write_jsonl(tmp_path / "d.jsonl", records), progress=False)
    # the flat record's extra "confidence" is an input name: it is read as the input and fails
    assert len(audit.decisions) == 1
    row = audit.decisions.iloc[0]
    assert row["confidence"] == 1.0 and row["evidence_doc_count"] == 0
    assert list(row["deterministic_keyword_hits"]) == []
    assert not row["recorded_used_fallback"]
    assert pd.isna(row["decision_id"])
    assert row["ts"] == pd.Timestamp("2026-01-01", tz="UTC") and row["inputs.channel"] == "web"
    assert row["decision.note"] == "reviewed"
    assert audit.rejected["reason"].str.contains("confidence").any()


def test_nested_extra_key_named_like_a_column(tmp_path):
    case = KNOWN["cases"][0]
    record = {"shape": "mine", "inputs": case["inputs"], "decision": case["expected"]}
    audit = ea.load(_write_jsonl(tmp_path / "d.jsonl", [record]), progress=False)
    assert audit.decisions["shape"].tolist() == ["nested"]
    assert audit.decisions["extra.shape"].tolist() == ["mine"]


BAD = [
    ("inputs.confidence", 1.01, "inputs.confidence", r"\[0, 1\]"),
    ("inputs.confidence", -0.5, "inputs.confidence", r"\[0, 1\]"),
    ("inputs.confidence", "0.7", "inputs.confidence", "number"),
    ("inputs.confidence", None, "inputs.confidence", "null"),
    ("inputs.content_chars", -1, "inputs.content_chars", "negative"),
    ("inputs.evidence_doc_count", -2, "inputs.evidence_doc_count", "negative"),
    ("inputs.content_chars", 10.5, "inputs.content_chars", "whole number"),
    ("inputs.self_declared_risk_flags", "legal_advice", "self_declared_risk_flags", "string"),
    ("inputs.deterministic_keyword_hits", "contract", "deterministic_keyword_hits", "string"),
    ("inputs.self_declared_risk_flags", ["a", 3], "self_declared_risk_flags", "holds"),
    ("inputs.self_declared_high_impact", 1, "self_declared_high_impact", "true or false"),
    ("inputs.subject_domain", None, "inputs.subject_domain", "string"),
    ("decision.escalation_reasons", "high_impact", "decision.escalation_reasons", "string"),
    ("decision.escalate_to_26b", "yes", "decision.escalate_to_26b", "true or false"),
    ("decision.risk_flags", None, "decision.risk_flags", "list"),
]


@pytest.mark.parametrize(("key", "value", "field", "reason"), BAD)
def test_bad_decision_is_rejected_naming_file_line_and_field(tmp_path, key, value, field, reason):
    records = _records("nested")[:3]
    section, name = key.split(".")
    records[1][section][name] = value
    path = _write_jsonl(tmp_path / "bad.jsonl", records)
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    assert len(audit.decisions) == 2
    rejected = audit.rejected
    assert rejected[["source_file", "source_line", "kind"]].values.tolist() == [
        [str(path), 2, "decisions"]
    ]
    assert field in rejected["reason"].iloc[0]
    assert pd.Series(rejected["reason"]).str.contains(reason).all()
    with pytest.raises(ea.InputError, match=f"{path}:2"):
        ea.load(path, strict=True, progress=False)


def test_nan_confidence_is_rejected(tmp_path):
    records = _records("nested")[:2]
    records[1]["inputs"]["confidence"] = float("nan")
    values = [RawValue("log.jsonl", i + 1, r, b"{}") for i, r in enumerate(records)]
    built = KIND.build([("values", values)])
    assert len(built.tables["decisions"]) == 1
    [rejection] = built.rejected
    assert (rejection.source_file, rejection.source_line, rejection.kind) == (
        "log.jsonl",
        2,
        "decisions",
    )
    assert rejection.reason == "inputs.confidence: must be a number in [0, 1], got nan"
    # written by a Python logger (json.dumps writes NaN), the line is rejected, not loaded
    path = tmp_path / "nan.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    assert len(audit.decisions) == 1
    assert audit.rejected["source_line"].tolist() == [2]


def test_missing_required_fields(tmp_path):
    records = _records("nested")[:2]
    del records[0]["inputs"]["content_chars"]
    del records[1]["decision"]["risk_flags"]
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(_write_jsonl(tmp_path / "d.jsonl", records), progress=False)
    assert audit.rejected["reason"].tolist() == [
        "inputs.content_chars: missing (a required field)",
        "decision.risk_flags: missing (a required field)",
    ]


def test_matches_is_a_shape_test():
    assert KIND.matches({"inputs": {}, "decision": {}})
    assert KIND.matches({"subject_domain": "x", "escalate_to_26b": True})
    assert not KIND.matches({"inputs": {}})
    assert not KIND.matches({"retrieval_plan": {}, "run_id": "r"})
    assert not KIND.matches([1])


def test_load_decisions_one_liner(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", _records("flat")[:5])
    frame = ea.load_decisions(path, progress=False)
    assert len(frame) == 5 and (frame["shape"] == "flat").all()


def _sample():
    audit = ea.load([ROOT / "data" / "decisions", ROOT / "data" / "policies"], progress=False)
    return audit.decisions, audit.policies


def test_sample_data_breaches_are_exactly_the_planted_ones():
    decisions, policies = _sample()
    assert list(policies) == ["baseline", "cost_saver", "strict"]
    findings = ea.check_decisions(decisions, policies)
    found: dict[str, list[str]] = {}
    for decision_id, rule in zip(findings["record"], findings["rule"], strict=True):
        found.setdefault(decision_id, []).append(rule)
    assert found == PLANTED["planted"]
    assert list(findings.columns) == list(ea.decisions.checks.FINDING_COLUMNS)
    assert set(findings["check"]) == {"decision_policy"} and set(findings["kind"]) == {"decisions"}
    assert set(findings["severity"]) == {"error"}
    assert (decisions.loc[findings["row"], "decision_id"].to_numpy() == findings["record"]).all()
    row = findings[findings["rule"] == "INV-3"].iloc[0]
    assert row["source_file"].endswith("2026-01_baseline.jsonl") and row["source_line"] == 40
    assert "content_chars 8200 > cap 6000" in row["detail"]
    assert row["field"] == "recorded_escalate_to_26b, recorded_escalation_reasons"


def test_unknown_policy_and_single_policy_argument():
    decisions, policies = _sample()
    only_strict = ea.check_decisions(decisions, policies["strict"])
    unknown = only_strict[only_strict["rule"] == "unknown_policy"]
    assert set(unknown["field"]) == {"policy_id"}
    named = decisions.loc[unknown["row"], "policy_id"].astype("str")
    assert named.value_counts().to_dict() == {
        "baseline": 1199,
        "cost_saver": 1200,
        "baseline-v0": 1,
    }
    assert "was not loaded (loaded: 'strict')" in unknown["detail"].iloc[0]


@pytest.mark.parametrize(
    ("field", "change", "rules"),
    [
        ("recorded_escalate_to_26b", lambda v: not v, {"replay"}),
        ("recorded_high_impact_task", lambda v: False, {"replay", "INV-1"}),
        ("recorded_risk_flags", lambda v: [*v, "extra_flag"], {"replay", "INV-5"}),
        ("recorded_synthesis_directives", lambda v: [*v, "x"], {"replay"}),
        ("recorded_escalation_reasons", lambda v: list(v)[::-1], {"replay"}),
        ("recorded_subject_domain_used", lambda v: "somewhere", {"replay", "INV-6"}),
        ("recorded_used_fallback", lambda v: not v, {"replay", "INV-6"}),
    ],
)
def test_each_altered_field_is_named(tmp_path, field, change, rules):
    records = _records("nested")
    # 022_all_reasons_legal: every reason, several flags and directives
    target = next(i for i, c in enumerate(KNOWN["cases"]) if c["name"] == "022_all_reasons_legal")
    name = field.removeprefix("recorded_")
    records[target]["decision"][name] = change(records[target]["decision"][name])
    decisions = ea.load(_write_jsonl(tmp_path / "d.jsonl", records), progress=False).decisions
    findings = ea.check_decisions(decisions, POLICIES)
    assert set(findings["row"]) == {target}
    got = set(findings["rule"])
    if name == "escalate_to_26b":  # escalation is forced by several rules at once
        assert {"replay", "INV-2", "INV-3", "INV-4"} == got
    else:
        assert got == rules
    replay_row = findings[findings["rule"] == "replay"].iloc[0]
    assert field in replay_row["field"].split(", ")


def test_invariants_on_recorded_outputs():
    records = _records("nested")
    cases = KNOWN["cases"]
    # a multi-document decision (not high impact) whose record lost the reason and the flag
    target = next(i for i, c in enumerate(cases) if c["name"] == "068_docs_2")
    assert "multi_doc" in cases[target]["expected"]["escalation_reasons"]
    decision = records[target]["decision"]
    decision["escalation_reasons"].remove("multi_doc")
    decision["risk_flags"].remove("multi_doc_dependency")
    values = [
        RawValue("mem.jsonl", i + 1, r, json.dumps(r).encode()) for i, r in enumerate(records)
    ]
    built = KIND.build([("values", values)])
    findings = ea.check_decisions(built.tables["decisions"], list(POLICIES.values()))
    assert findings["rule"].astype(str).tolist() == ["replay", "INV-4", "INV-5"]
    assert findings["field"].iloc[1] == "recorded_escalation_reasons, recorded_risk_flags"
    assert np.array_equal(findings["row"].unique(), [target])


# --- the columnar fast path --------------------------------------------------------------


def _exact(path: Path) -> pd.DataFrame:
    """The decisions of a file read value by value (the columnar path not asked)."""
    values = [v for v in read_exactly(path) if isinstance(v, RawValue)]
    return build_kind(KIND, [("values", values)]).tables["decisions"]


def _all_columnar(path: Path) -> bool:
    return rows_by_path(path)["exact"] == 0


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "data" / "decisions").iterdir()))
def test_fast_path_equals_the_exact_path_on_the_sample(name):
    path = ROOT / "data" / "decisions" / name
    assert _all_columnar(path)
    loaded = ea.load_decisions(path, progress=False)
    pd.testing.assert_frame_equal(loaded, _exact(path))


@pytest.mark.parametrize("shape", ["nested", "flat"])
def test_fast_path_equals_the_exact_path_on_known_answers(tmp_path, shape):
    path = _write_jsonl(tmp_path / f"{shape}.jsonl", _records(shape))
    assert _all_columnar(path)
    pd.testing.assert_frame_equal(ea.load_decisions(path, progress=False), _exact(path))


def test_fast_path_reads_confidence_to_the_last_bit(tmp_path):
    records = _records("nested")[:6]
    tricky = ["0.30000000000000004", "0.6", "1e-320", "0.5999999999999999", "1", "0.1e1"]
    lines = []
    for record, text in zip(records, tricky, strict=True):
        line = json.dumps(record)
        confidence = json.dumps(record["inputs"]["confidence"])
        lines.append(line.replace(f'"confidence": {confidence}', f'"confidence": {text}', 1))
    path = tmp_path / "tricky.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert _all_columnar(path)
    loaded = ea.load_decisions(path, progress=False)
    assert loaded["confidence"].tolist() == [float(t) for t in tricky]
    pd.testing.assert_frame_equal(loaded, _exact(path))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda r: r["inputs"].pop("confidence"), None),
        (lambda r: r["inputs"].update(confidence=None), "confidence"),
        (lambda r: r["inputs"].update(evidence_doc_count=-1), "evidence_doc_count"),
        (lambda r: r["inputs"].update(confidence=1.5), "confidence"),
        (lambda r: r["inputs"].update(self_declared_risk_flags="legal_advice"), "risk_flags"),
        (lambda r: r["decision"].update(risk_flags=[None]), "risk_flags"),
        (lambda r: r.update(trace={"span": 1}), None),
    ],
)
def test_doubtful_files_go_to_the_exact_path(tmp_path, change, reason):
    records = _records("nested")[:5]
    change(records[3])
    path = _write_jsonl(tmp_path / "log.jsonl", records)
    # Refused, and too few to halve into groups worth a bulk parse: all read value by value.
    assert rows_by_path(path) == {"columnar": 0, "exact": 5}
    if reason is None:
        pd.testing.assert_frame_equal(ea.load_decisions(path, progress=False), _exact(path))
        return
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    assert audit.rejected["source_line"].tolist() == [4]
    assert reason in audit.rejected["reason"].iloc[0]
    assert audit.decisions["source_line"].tolist() == [1, 2, 3, 5]


def test_verify_decisions_is_a_deprecated_alias():
    decisions, policies = _sample()
    with pytest.warns(DeprecationWarning, match="check_decisions"):
        old = ea.verify_decisions(decisions, policies)
    pd.testing.assert_frame_equal(old, ea.check_decisions(decisions, policies))


def test_an_audit_alone_is_enough():
    audit = ea.load([ROOT / "data" / "decisions", ROOT / "data" / "policies"], progress=False)
    pd.testing.assert_frame_equal(
        ea.check_decisions(audit), ea.check_decisions(audit.decisions, audit.policies)
    )
