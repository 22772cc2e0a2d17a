"""engram's presentation outcomes: loading all three shapes, and the presentation checks.

The two real lines in tests/data/engram/presentations.jsonl come from engram's
own ``renderPresentation``; every check must stay silent on them. Each rule is
then shown to catch an edited copy, built here in code.
"""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import orjson
import pandas as pd
import pytest
from conftest import make_receipt, rows_by_path, without_columnar

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.receipts._js_json import canonical_json, js_number, presentation_id
from explicit_audit.receipts.presentation_checks import RULES
from explicit_audit.receipts.presentations import PRESENTATION_COLUMNS
from explicit_audit.verify import FINDING_COLUMNS

DATA = Path(__file__).parent / "data"
ENGRAM = DATA / "engram"
LINES = (ENGRAM / "presentations.jsonl").read_text(encoding="utf-8").splitlines()


def presented() -> dict:
    """Line 1: a presented space view (audience peer, 4 sources, withheld 1)."""
    return json.loads(LINES[0])


def failed() -> dict:
    """Line 2: a failed view whose retrieval failed (path_escape), receipt a miss."""
    return json.loads(LINES[1])


def before_retrieval() -> dict:
    """A failure before retrieval, as ``failure([...])`` writes it: no receipt."""
    error = {
        "kind": "authorization",
        "code": "model_not_allowed",
        "field": "model",
        "message": "model m is not allowed by the active space",
    }
    return {"schema_version": 0, "status": "failed", "errors": [error]}


def after_hit() -> dict:
    """A failure after a hit (word limit), carrying the hit's receipt at ``retrieval``."""
    error = {
        "kind": "presentation",
        "code": "delivery_limit_exceeded",
        "field": "deliveryId",
        "message": "rendered presentation exceeds the 10-word delivery limit",
    }
    receipt = presented()["receipt"]["retrievalReceipt"]
    return {"schema_version": 0, "status": "failed", "errors": [error], "retrieval": receipt}


def _write(path: Path, values) -> Path:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), "utf-8")
    return path


def _load(path) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        # The logger's "ts" of some of these logs is not a time (kept in ts_unparsed).
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        return ea.load(path, progress=False)


def _rules(audit: ea.Audit) -> set[str]:
    return set(ea.check_presentations(audit)["rule"].astype(str))


# --- loading ---------------------------------------------------------------


def test_real_engram_outputs_load_and_every_check_is_silent():
    audit = ea.load(ENGRAM, progress=False)
    assert audit.rejected.empty
    assert (audit.sources["loaded"] == audit.sources["values_read"]).all()
    presentations = audit.presentations
    assert list(presentations["status"]) == ["presented", "failed"]
    assert list(presentations["source_line"]) == [1, 2]
    embedded = audit.receipts.loc[presentations["receipt_row"].to_numpy()]
    assert list(embedded["shape"]) == ["presentation", "presentation"]
    assert list(embedded["outcome"]) == ["presented", "failed"]
    assert list(embedded["withheld_count"]) == [1, 1]
    assert list(embedded["collection"]) == ["retrieval-space-0", "retrieval-space-1"]
    assert ea.check_presentations(audit).empty
    assert ea.check_receipts(audit).empty
    result = ea.verify_all(audit)
    assert result.clean and result.findings.empty
    assert result.checked["presentation_rules"] == 2


#: The columns of presentations: generatedAt typed as a time, the text beside it where it is not.
LOADED_COLUMNS = {
    **{k: v for k, v in PRESENTATION_COLUMNS.items() if k != "generated_at"},
    "generated_at": "datetime64[ns, UTC]",
    "generated_at_unparsed": "str",
}


def _in_declared_order(columns) -> list[str]:
    declared = list(PRESENTATION_COLUMNS)
    at = declared.index("generated_at") + 1
    return [*declared[:at], "generated_at_unparsed", *declared[at:]]


def test_columns_and_dtypes_are_declared():
    presentations = ea.load(ENGRAM / "presentations.jsonl", progress=False).presentations
    assert list(presentations.columns) == _in_declared_order(PRESENTATION_COLUMNS)
    for name, dtype in LOADED_COLUMNS.items():
        if dtype == "category":
            assert isinstance(presentations[name].dtype, pd.CategoricalDtype), name
        else:
            assert presentations[name].dtype == dtype, name
    row = presentations.iloc[0]
    assert row["presentation_id"] == "presentation-6c37cd8e93b03eeaa342360d008a28ea"
    assert (row["view_id"], row["audience_id"], row["delivery_id"]) == (
        "project-status",
        "peer",
        "space-check",
    )
    assert row["view_version"] == 1 and row["pack_id"] == "fictional-integrity"
    assert list(row["source_record_ids"])[:2] == ["recommendation", "recommendation-alt"]
    assert row["source_references"][3]["relativePath"] == "status-brief.md"
    assert list(row["recommendation_ids"]) == ["recommendation"]
    assert row["content"].startswith("Working project status\n")
    assert row["generated_at"].tzname() == "UTC" and pd.isna(row["generated_at_unparsed"])
    assert list(presentations.iloc[1]["error_codes"]) == ["path_escape"]
    assert pd.isna(presentations.iloc[1]["view_id"])


def test_no_presentations_gives_an_empty_table_with_the_columns():
    audit = ea.load(ENGRAM / "outcomes.jsonl", progress=False)
    assert audit.presentations.empty
    assert list(audit.presentations.columns) == _in_declared_order(PRESENTATION_COLUMNS)
    assert ea.check_presentations(audit).empty


def test_all_three_shapes_in_one_log_with_a_logger_around_them(tmp_path):
    lines = [presented(), failed(), before_retrieval(), after_hit()]
    lines = [{"ts": f"2026-08-05T12:0{i}:00Z", **line} for i, line in enumerate(lines)]
    path = _write(tmp_path / "render.jsonl", lines)
    audit = ea.load(path, progress=False)
    assert audit.rejected.empty
    presentations = audit.presentations
    assert list(presentations["status"]) == ["presented", "failed", "failed", "failed"]
    assert presentations["receipt_row"].isna().tolist() == [False, False, True, False]
    assert len(audit.receipts) == 3
    written = [pd.Timestamp(line["ts"]) for line in lines]
    assert list(presentations["ts"]) == written
    assert list(audit.receipts["ts"]) == [written[0], written[1], written[3]]
    assert audit.sources.loc[0, ["values_read", "loaded", "rejected"]].tolist() == [4, 4, 0]
    assert ea.check_presentations(audit).empty
    # A failure after a hit carries kind "hit": the outcome rules must not fire.
    assert ea.check_receipts(audit).empty


def test_a_pretty_printed_render_log_keeps_each_line(tmp_path):
    # `engram render >> log.json` appends JSON.stringify(value, null, 2) outputs.
    text = "".join(json.dumps(v, indent=2, ensure_ascii=False) + "\n" for v in
                   (presented(), before_retrieval(), failed()))  # fmt: skip
    (tmp_path / "render.json").write_text(text, encoding="utf-8")
    audit = ea.load(tmp_path / "render.json", progress=False)
    starts = [n for n, line in enumerate(text.splitlines(), 1) if line == "{"]
    assert list(audit.presentations["source_line"]) == starts
    assert audit.rejected.empty and ea.check_presentations(audit).empty


def test_presentations_after_receipts_in_one_file(tmp_path):
    # The first line is a plain CLI output, so the file is offered to the
    # columnar reader, which must give it up for the value-by-value one.
    cli = json.loads((ENGRAM / "outcomes.jsonl").read_text("utf-8").splitlines()[0])
    path = _write(tmp_path / "mixed.jsonl", [cli, cli, presented(), before_retrieval(), failed()])
    audit = ea.load(path, progress=False)
    assert audit.rejected.empty
    assert list(audit.receipts["source_line"]) == [1, 2, 3, 5]
    assert list(audit.presentations["source_line"]) == [3, 4, 5]
    assert list(audit.presentations["receipt_row"].astype("Int64")) == [2, pd.NA, 3]


def test_presentations_sharing_a_line_each_keep_their_own_receipt(tmp_path):
    # An array on one line: its elements share line 1. The second's receipt does not
    # fit, so it has no receipt row; the third must not take the first's, nor the first
    # the third's.
    first, broken, third = presented(), presented(), presented()
    first["receipt"]["retrievalReceipt"]["query"] = "first"
    broken["receipt"]["retrievalReceipt"]["withheld"]["count"] = "many"
    third["receipt"]["retrievalReceipt"]["query"] = "third"
    path = tmp_path / "render.json"
    path.write_text(json.dumps([first, broken, third], ensure_ascii=False) + "\n", "utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(path, progress=False)
    assert audit.rejected["source_line"].tolist() == [1]
    assert "withheld.count" in audit.rejected["reason"].iloc[0]
    presentations = audit.presentations
    assert presentations["source_line"].tolist() == [1, 1]
    own = [record["receipt"]["retrievalReceipt"]["query"] for record in presentations["record"]]
    embedded = audit.receipts.loc[presentations["receipt_row"].to_numpy(), "query"]
    assert own == embedded.tolist() == ["first", "third"]


def _mixed_logs(root: Path) -> list[Path]:
    """Receipt logs with presentation lines among them, each first line a different shape."""
    cli = json.loads((ENGRAM / "outcomes.jsonl").read_text("utf-8").splitlines()[0])
    bare, bad = make_receipt(), make_receipt(scope="everywhere")
    shapes = {
        "bare_first": [bare] * 3 + [before_retrieval(), presented(), bare, failed()] + [bare] * 3,
        "before_first": [before_retrieval()] * 3 + [bare] * 3 + [presented(), bad, failed()],
        "cli_first": [cli] * 3 + [before_retrieval(), presented(), cli, after_hit(), cli],
        "logged": [
            {"ts": f"t{i}", "request_id": f"q{i}", **line}
            for i, line in enumerate([bare, bare, presented(), before_retrieval(), bare, failed()])
        ],
    }
    return [_write(root / f"{name}.jsonl", lines) for name, lines in shapes.items()]


def test_mixed_logs_load_the_same_with_and_without_the_columnar_path(tmp_path, monkeypatch):
    paths = _mixed_logs(tmp_path)
    assert rows_by_path(paths)["columnar"] > 0  # both paths really take part
    fast = _load(paths)
    kinds = tuple(
        without_columnar(kind) if kind.name == "receipts" else kind for kind in registry.kinds()
    )
    with registry.replaced(kinds):
        assert rows_by_path(paths)["columnar"] == 0
        slow = _load(paths)
    for name in ("receipts", "exposed", "presentations", "rejected", "sources"):
        pd.testing.assert_frame_equal(getattr(fast, name), getattr(slow, name), obj=name)
    sources = fast.sources
    assert (sources["loaded"] + sources["rejected"] == sources["values_read"]).all()
    assert sources["values_read"].tolist() == [10, 9, 8, 6]
    # the bad bare receipt of before_first.jsonl, line 8, and nothing else
    assert fast.rejected[["source_line"]].to_numpy().ravel().tolist() == [8]
    assert fast.presentations.groupby("source_file", observed=True).size().tolist() == [3, 5, 3, 3]
    for frame in (fast.receipts, fast.presentations):
        order = frame[["source_file", "source_line"]].astype({"source_file": "str"})
        assert order.equals(order.sort_values(["source_file", "source_line"]))
    # every presentation row points at the receipt row of its own line
    keyed = fast.presentations.dropna(subset=["receipt_row"])
    embedded = fast.receipts.loc[keyed["receipt_row"].to_numpy()]
    assert embedded["source_line"].tolist() == keyed["source_line"].tolist()
    assert embedded["source_file"].astype(str).tolist() == keyed["source_file"].astype(str).tolist()
    assert set(embedded["shape"]) == {"presentation"}
    assert ea.check_presentations(fast).empty and ea.check_receipts(fast).empty


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda v: v["receipt"].update(viewVersion="1"), "receipt.viewVersion"),
        (lambda v: v["receipt"].pop("audienceId"), "receipt.audienceId is missing"),
        (lambda v: v["receipt"]["sourceReferences"][1].pop("sourceUri"), "sourceReferences[1]"),
        (lambda v: v["receipt"].update(pack="fictional-integrity"), "receipt.pack"),
        (lambda v: v.update(content=None), "content"),
        (lambda v: v["receipt"]["retrievalReceipt"].pop("withheld"), "retrievalReceipt.withheld"),
        (lambda v: v.update(schema_version=1), "schema_version"),
    ],
)
def test_a_line_that_does_not_fit_is_rejected_naming_the_field(tmp_path, edit, field):
    line = presented()
    edit(line)
    path = _write(tmp_path / "render.jsonl", [before_retrieval(), line, failed()])
    audit = _load(path)
    assert list(audit.rejected["source_line"]) == [2]
    assert field in audit.rejected["reason"].iat[0]
    assert list(audit.presentations["source_line"]) == [1, 3]
    assert list(audit.receipts["source_line"]) == [3]
    assert audit.sources.loc[0, ["values_read", "loaded", "rejected"]].tolist() == [3, 2, 1]
    with pytest.raises(ea.InputError, match=r"render\.jsonl:2: "):
        ea.load(path, strict=True, progress=False)


def test_failed_lines_that_do_not_fit_are_rejected(tmp_path):
    not_a_list = {**before_retrieval(), "errors": "model_not_allowed"}
    bad_receipt = failed()
    bad_receipt["retrieval"]["scope"] = "everywhere"
    path = _write(tmp_path / "render.jsonl", [not_a_list, bad_receipt])
    audit = _load(path)
    assert audit.rejected["reason"].str.split(" ").str[0].tolist() == ["errors", "retrieval.scope"]
    assert audit.presentations.empty and audit.receipts.empty


# --- presentationId, byte for byte ---------------------------------------------


def test_presentation_id_is_rebuilt_exactly():
    line = presented()
    assert presentation_id(line) == line["receipt"]["presentationId"]
    line["content"] += " "
    assert presentation_id(line) != line["receipt"]["presentationId"]


def test_numbers_are_written_as_javascript_writes_them():
    vectors = json.loads((DATA / "js_number_vectors.json").read_text("utf-8"))["vectors"]
    assert len(vectors) > 20
    for vector in vectors:
        assert js_number(orjson.loads(vector["json"])) == vector["javascript"], vector


def test_keys_are_sorted_as_locale_compare_sorts_them():
    # localeCompare is case-insensitive first: "b" < "C" < "d", unlike code points.
    assert canonical_json({"d": 1, "C": 2, "b": 3}) == '{"b":3,"C":2,"d":1}'
    # Keys it cannot order exactly give no answer rather than a guess.
    assert canonical_json({"a_b": 1}) is None and canonical_json({"a": 1, "A": 2}) is None


# --- each rule catches an edited copy -------------------------------------------


def _rr(line: dict) -> dict:
    return line["receipt"]["retrievalReceipt"]


def _swap_first_two(items: list) -> None:
    items[0], items[1] = items[1], items[0]


EDITS = {
    # rule: (base line, edit, rules expected to fire)
    "status_fields": (presented, lambda v: v.update(errors=[]), set()),
    "status_fields (failed)": (failed, lambda v: v.update(errors=[]), set()),
    "error_shape": (failed, lambda v: v["errors"][0].update(field=None), {"presentation_shape"}),
    # A key the embedded receipt does not declare, which no other rule reads.
    "presentation_shape": (failed, lambda v: v["retrieval"]["withheld"].update(hint="x"), set()),
    "receipt_keys": (presented, lambda v: v["receipt"].update(viewTitle="x"), set()),
    "presentation_id_format": (
        presented,
        lambda v: v["receipt"].update(presentationId="presentation-XYZ"),
        {"presentation_id_hash"},
    ),
    "presentation_id_hash": (presented, lambda v: v.update(content=v["content"] + "!"), set()),
    "active_space": (
        presented,
        lambda v: v["receipt"].update(activeSpace="other-space"),
        {"presentation_id_hash"},
    ),
    "audience_withheld": (
        presented,
        lambda v: v["receipt"].update(audienceId="supervisor"),
        {"presentation_id_hash"},
    ),
    "definition_versions": (
        presented,
        lambda v: v["receipt"].update(deliveryVersion=-1),
        {"presentation_id_hash", "presentation_shape"},
    ),
    "generated_at": (
        presented,
        lambda v: v["receipt"].update(generatedAt="2026-08-05 12:00"),
        {"presentation_id_hash"},
    ),
    "presented_retrieval_hit": (
        presented,
        lambda v: _rr(v).update(kind="miss"),
        {"presentation_id_hash"},
    ),
    "source_record_ids": (
        presented,
        lambda v: v["receipt"]["sourceRecordIds"].append("restricted-note"),
        {"presentation_id_hash"},
    ),
    "source_references": (
        presented,
        lambda v: _swap_first_two(v["receipt"]["sourceReferences"]),
        {"presentation_id_hash"},
    ),
    "source_reference_locator": (
        presented,
        lambda v: [
            r.update(sourceUri=r["sourceUri"].replace("-0/", "-9/"))
            for r in [*v["receipt"]["sourceReferences"], *_rr(v)["exposedResults"]]
        ],
        {"presentation_id_hash"},
    ),
    "recommendation_ids": (
        presented,
        lambda v: v["receipt"].update(recommendationIds=["recommendation", "recommendation"]),
        {"presentation_id_hash"},
    ),
    "requested_equals_allowed": (
        failed,
        lambda v: v["retrieval"].update(requestedSourceClasses=["status"]),
        set(),
    ),
    "presented_policy_nonempty": (
        presented,
        lambda v: _rr(v).update(allowedSourceClasses=[], requestedSourceClasses=[]),
        {"presentation_id_hash"},
    ),
    "presented_search_query": (
        presented,
        lambda v: _rr(v).update(scope="search", query="  "),
        {"presentation_id_hash"},
    ),
    "space_locator_order": (
        presented,
        lambda v: _swap_first_two(_rr(v)["locatorUris"]),
        {"presentation_id_hash"},
    ),
    "retention": (
        presented,
        lambda v: v.update(retained={"artifactPath": "/a", "receiptPath": "/b"}),
        set(),
    ),
    "failure_stage": (
        before_retrieval,
        lambda v: v.update(retrieval=failed()["retrieval"]),
        set(),
    ),
    "failure_stage (after a hit)": (
        after_hit,
        lambda v: v["errors"][0].update(code="qmd_exit", kind="retrieval"),
        set(),
    ),
    "retrieval_miss_error": (
        failed,
        lambda v: v["errors"][0].update(code="retrieval_miss"),
        set(),
    ),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_each_rule_catches_an_edited_copy(tmp_path, name):
    base, edit, also = EDITS[name]
    rule = name.split(" ")[0]
    line = copy.deepcopy(base())
    _write(tmp_path / "clean.jsonl", [line])
    assert _rules(_load(tmp_path / "clean.jsonl")) == set(), "the base line must be clean"
    edit(line)
    audit = _load(_write(tmp_path / "edited.jsonl", [line]))
    assert audit.rejected.empty, audit.rejected["reason"].tolist()
    assert _rules(audit) == {rule} | also
    findings = ea.check_presentations(audit)
    assert list(findings.columns) == list(FINDING_COLUMNS)
    assert (findings["source_line"] == 1).all() and (findings["row"] == 0).all()
    assert set(findings["kind"]) == {"presentations"}
    assert set(findings["check"]) == {"presentation_rules"}
    # severity is the rule's own; the finding names the line by its presentationId
    assert findings["severity"].tolist() == [RULES[r].severity for r in findings["rule"]]
    assert findings["record"].tolist() == [audit.presentations["presentation_id"].iat[0]] * len(
        findings
    )
    verified = ea.verify_all(audit).findings.query("check == 'presentation_rules'")
    assert set(verified["rule"]) == {rule} | also


def test_a_known_shape_with_an_unknown_code_is_a_notice(tmp_path):
    line = failed()
    line["errors"][0]["code"] = "qmd_timeout"
    audit = _load(_write(tmp_path / "render.jsonl", [line]))
    findings = ea.check_presentations(audit)
    assert findings[["rule", "severity"]].astype(str).values.tolist() == [
        ["error_code_unknown", "notice"]
    ]
    assert ea.verify_all(audit).clean


def test_outcome_rules_on_presentation_receipts(tmp_path):
    hit_then_failed = after_hit()
    presented_miss = presented()
    _rr(presented_miss).update(kind="miss")
    audit = _load(_write(tmp_path / "render.jsonl", [hit_then_failed, presented_miss]))
    findings = ea.check_receipts(audit)
    # The failed rendering after a hit is no kind_outcome finding; a presented
    # view over a miss is (with the receipt's own kind_record_ids).
    assert findings[["source_line", "rule"]].astype(str).values.tolist() == [
        ["2", "kind_record_ids"],
        ["2", "kind_outcome"],
    ]
