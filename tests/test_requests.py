"""C2 compile requests: loading, request_hash known answers, check_requests findings."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit._core.records import RawValue
from explicit_audit.requests import FORBIDDEN_PAYLOAD_KEYS, KIND
from explicit_audit.requests.checks import FINDING_COLUMNS
from scripts.sample_data import plans as sample_data

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "request_hash_vectors.json").read_text(encoding="utf-8"))
CASES = [(v, d) for v in VECTORS["vectors"] for d in v["expected"]]
PAYLOAD = {
    "dsl": "chart",
    "question": "몇 개입니까?",
    "choices": [{"key": "A", "text": "3"}, {"key": "B", "text": "4"}],
    "image_sha256": "aa" * 32,
    "base_id": "chartqa-h/000001",
}


def _request(model, payload, digest=None, **extra):
    return {
        "model": model,
        "base_id": payload["base_id"],
        "dsl": payload["dsl"],
        "request_sha256": digest or ea.request_hash(payload),
        "image_sha256": payload["image_sha256"],
        "payload": payload,
        **extra,
    }


def _frame(records) -> pd.DataFrame:
    values = [
        RawValue("mem.jsonl", i + 1, r, json.dumps(r).encode()) for i, r in enumerate(records)
    ]
    built = KIND.build([("values", values)])
    assert not built.rejected
    return built.tables["requests"]


def _dialect(detail: str) -> str | None:
    """The dialect a finding's detail says reproduces the recorded hash, if any."""
    named = re.search(r"matches dialect '([^']+)'", detail)
    return named.group(1) if named else None


def _findings(records):
    found = ea.check_requests(_frame(records))
    return [
        (line, rule, _dialect(detail))
        for line, rule, detail in zip(
            found["source_line"], found["rule"], found["detail"], strict=True
        )
    ]


# --- known answers ----------------------------------------------------------------------------
@pytest.mark.parametrize(("vector", "dialect"), CASES, ids=[f"{v['name']}-{d}" for v, d in CASES])
def test_request_hash_equals_the_reference_writers(vector, dialect):
    assert ea.request_hash(vector["payload"], dialect) == vector["expected"][dialect]


def test_default_dialect_is_the_seeds_compact_json():
    for vector in VECTORS["vectors"]:
        assert ea.request_hash(vector["payload"]) == vector["expected"]["python-utf8"]


def test_forbidden_keys_are_the_seeds():
    assert sorted(FORBIDDEN_PAYLOAD_KEYS) == VECTORS["forbidden_payload_keys"]


def test_request_hash_refuses_what_is_not_a_json_object():
    with pytest.raises(ea.AuditError, match="not list"):
        ea.request_hash([PAYLOAD])
    with pytest.raises(ea.AuditError, match=r"\$\.world\.series\[0\] is NaN or infinite"):
        ea.request_hash(dict(PAYLOAD, world={"series": [float("nan")]}))
    with pytest.raises(ea.AuditError, match="NaN or infinite"):
        ea.request_hash(dict(PAYLOAD, score=float("inf")), "orjson-sorted")
    with pytest.raises(ea.AuditError, match="unknown canonical-JSON dialect"):
        ea.request_hash(PAYLOAD, "python")


# --- loading ----------------------------------------------------------------------------------
def test_load_requests_keeps_the_payload_as_written(tmp_path):
    payload = dict(PAYLOAD, world_candidates={"series": [{"points": [[1, 12.0]]}]})
    path = tmp_path / "requests.jsonl"
    records = [_request("m-a", payload, sent_at="t1"), _request("m-b", payload, sent_at="t2")]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    with pytest.warns(ea.UnparsedTimeWarning, match=r"requests\.sent_at \(2\)"):
        requests = ea.load_requests(path, progress=False)
    assert requests["sent_at"].isna().all()
    assert requests["sent_at_unparsed"].tolist() == ["t1", "t2"]  # as written
    assert list(requests.columns[:2]) == ["source_file", "source_line"]
    assert requests["model"].dtype == "category"
    assert requests["n_choices"].tolist() == [2, 2]
    assert requests["has_world_candidates"].all()
    assert requests["payload_keys"].iloc[0] == sorted(payload)
    assert requests["payload"].iloc[0]["world_candidates"]["series"][0]["points"][0][1] == 12.0
    assert len(ea.check_requests(requests)) == 0


def test_bad_records_are_rejected_naming_file_line_and_field():
    path = DATA / "requests_bad.jsonl"
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    rejected = audit.rejected.set_index("source_line")
    assert set(rejected["kind"]) == {"requests"}
    expected = {
        2: "payload: is list, not an object",
        3: "payload: is null, not an object",
        4: "request_sha256: is missing",
        5: "base_id: is not a string",
        6: "model: is int, not a string",
    }
    assert sorted(rejected.index) == sorted(expected)
    for line, reason in expected.items():
        assert rejected.loc[line, "reason"].startswith(reason)
    findings = ea.check_requests(audit.requests)
    got = sorted(zip(findings["source_line"], findings["rule"], strict=True))
    assert got == [(7, "hash_malformed"), (8, "payload_unhashable")]
    assert "NaN" not in findings["detail"].iloc[1]


def test_strict_load_raises_at_the_first_bad_record():
    with pytest.raises(ea.InputError, match=r"requests_bad\.jsonl:2: payload"):
        ea.load_requests(DATA / "requests_bad.jsonl", strict=True, progress=False)


# --- verification -----------------------------------------------------------------------------
def test_a_hash_in_another_dialect_is_named():
    ascii_hash = ea.request_hash(PAYLOAD, "python-ascii")
    records = [_request("m-a", PAYLOAD), _request("m-b", PAYLOAD, ascii_hash)]
    assert _findings(records) == [(2, "hash_mismatch", "python-ascii")]
    found = ea.check_requests(_frame(records))
    # explained, but still not the hash the producer promises
    assert found["severity"].tolist() == ["error"]
    assert ea.request_hash(PAYLOAD) in found["detail"].iloc[0]


def test_the_expected_dialect_is_a_parameter():
    whole = {"dsl": "chart", "base_id": "x", "image_sha256": "aa" * 32, "n": 12.0}
    records = [_request("m-a", whole, ea.request_hash(whole, "rfc8785"))]
    assert len(ea.check_requests(_frame(records), dialect="rfc8785")) == 0
    assert _findings(records) == [(1, "hash_mismatch", "rfc8785")]


def test_an_edited_payload_matches_no_dialect():
    edited = dict(PAYLOAD, question="몇 개입니까? (수정)")
    records = [_request("m-a", edited, ea.request_hash(PAYLOAD))]
    found = ea.check_requests(_frame(records))
    assert found["rule"].tolist() == ["hash_mismatch"]
    assert found["severity"].tolist() == ["error"] and _dialect(found["detail"].iloc[0]) is None
    assert "changed after hashing" in found["detail"].iloc[0]


def test_forbidden_keys_top_level_and_nested_are_separate_findings():
    leaked = dict(
        PAYLOAD,
        other_model_output={"program": "x"},
        world_candidates={"rows": [{"intended_state": 1}]},
    )
    found = ea.check_requests(_frame([_request("m-a", leaked), _request("m-b", leaked)]))
    assert sorted(zip(found["rule"], found["field"], found["severity"], strict=True)) == [
        ("forbidden_key", "payload.other_model_output", "error"),
        ("forbidden_key", "payload.other_model_output", "error"),
        ("forbidden_key_nested", "payload.world_candidates.rows[0].intended_state", "notice"),
        ("forbidden_key_nested", "payload.world_candidates.rows[0].intended_state", "notice"),
    ]
    assert set(found["check"]) == {"request_hiding_rule"}


def test_independence_breach_is_reported_on_every_request_of_the_base_id():
    other = copy.deepcopy(PAYLOAD)
    other["choices"].reverse()
    records = [
        _request("m-a", PAYLOAD),
        _request("m-b", other),
        _request("m-a", dict(PAYLOAD, base_id="chartqa-h/000002")),
    ]
    found = ea.check_requests(_frame(records))
    assert found["rule"].tolist() == ["independence", "independence"]
    assert found["record"].tolist() == ["chartqa-h/000001 (m-a)", "chartqa-h/000001 (m-b)"]
    assert found["source_line"].tolist() == [1, 2]
    assert "2 different payloads" in found["detail"].iloc[0]


def test_same_payload_with_a_different_hash_is_a_hash_finding_not_independence():
    records = [_request("m-a", PAYLOAD), _request("m-b", PAYLOAD, "0" * 64)]
    assert _findings(records) == [(2, "hash_mismatch", None)]


def test_record_and_payload_disagreeing_is_an_error():
    # build_compile_request writes both from one candidate: they cannot differ.
    records = [dict(_request("m-a", PAYLOAD), dsl="table")]
    found = ea.check_requests(_frame(records))
    assert found["rule"].tolist() == ["record_payload_mismatch"]
    assert found["severity"].tolist() == ["error"]
    assert found["field"].tolist() == ["dsl"]


def test_a_payload_the_dialect_cannot_write_is_unhashable_and_names_a_dialect_that_can():
    payload = dict(PAYLOAD, question="x\ud800y")
    records = [_request("m-a", payload, ea.request_hash(payload, "python-ascii"))]
    found = ea.check_requests(_frame(records))
    assert found["rule"].tolist() == ["payload_unhashable"]
    assert _dialect(found["detail"].iloc[0]) == "python-ascii"
    assert "no 'python-utf8' digest exists" in found["detail"].iloc[0]


def test_unknown_expected_dialect_is_an_error():
    with pytest.raises(ea.AuditError, match="unknown canonical-JSON dialect"):
        ea.check_requests(_frame([_request("m-a", PAYLOAD)]), dialect="js")


def test_findings_have_the_documented_columns_even_when_empty():
    found = ea.check_requests(_frame([_request("m-a", PAYLOAD)]))
    assert found.empty and list(found.columns) == list(FINDING_COLUMNS)


def test_verify_needs_the_requests_table():
    with pytest.raises(ea.AuditError, match="requests table"):
        ea.check_requests(pd.DataFrame({"payload": [{}]}))


# --- sample data ------------------------------------------------------------------------------
PLANTED = {
    ("chartqa-h/000104", "internvl3-78b", "hash_mismatch", "python-ascii"),
    ("chartqa-h/000112", "qwen2.5-vl-72b-instruct", "hash_mismatch", "rfc8785"),
    ("mmk12/000121", "qwen2.5-vl-72b-instruct", "hash_mismatch", None),
    ("mmk12/000121", "internvl3-78b", "hash_mismatch", None),
    ("mmk12/000133", "qwen2.5-vl-72b-instruct", "forbidden_key", None),
    ("mmk12/000133", "internvl3-78b", "forbidden_key", None),
    ("chartqa-h/000140", "qwen2.5-vl-72b-instruct", "forbidden_key_nested", None),
    ("chartqa-h/000140", "internvl3-78b", "forbidden_key_nested", None),
    ("chartqa-h/000152", "qwen2.5-vl-72b-instruct", "independence", None),
    ("chartqa-h/000152", "internvl3-78b", "independence", None),
}


def test_sample_requests_verification_flags_exactly_the_planted_rows(tmp_path):
    sample_data.write(tmp_path)
    requests = ea.load_requests(tmp_path / "requests", progress=False)
    assert len(requests) == 140
    assert requests.groupby("base_id")["model"].nunique().eq(2).all()
    assert (~requests["question"].str.isascii()).mean() > 0.3
    found = ea.check_requests(requests)
    got = {
        (b, m, rule, _dialect(detail))
        for b, m, rule, detail in zip(
            requests.loc[found["row"], "base_id"],
            requests.loc[found["row"], "model"],
            found["rule"],
            found["detail"],
            strict=True,
        )
    }
    assert got == PLANTED and len(found) == len(PLANTED)
    late = found[found["source_file"].str.endswith(".gz")]
    assert set(late["record"].str.split(" ").str[0]) == {"chartqa-h/000152"}
    committed = Path(__file__).parents[1] / "data" / "requests"
    if committed.exists():
        for path in sorted((tmp_path / "requests").iterdir()):
            assert path.read_bytes() == (committed / path.name).read_bytes(), path.name


def test_sample_hashes_are_sha256_of_the_seeds_writer(tmp_path):
    sample_data.write(tmp_path)
    requests = ea.load_requests(tmp_path / "requests", progress=False)
    payload = requests["payload"].iloc[0]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert requests["request_sha256"].iloc[0] == hashlib.sha256(text.encode()).hexdigest()


def test_verify_requests_is_a_deprecated_alias():
    records = [_request("m-a", PAYLOAD), _request("m-b", PAYLOAD, "0" * 64)]
    with pytest.warns(DeprecationWarning, match="check_requests"):
        old = ea.verify_requests(_frame(records))
    pd.testing.assert_frame_equal(old, ea.check_requests(_frame(records)))
