"""Receipt checks: silent on engram's own output, exact on planted violations."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import explicit_audit as ea
from explicit_audit.receipts.checks import FINDING_COLUMNS, RECEIPT_RULES, check_receipts

ENGRAM = Path(__file__).parent / "data" / "engram"
FIXTURE_LINES = (ENGRAM / "outcomes.jsonl").read_text(encoding="utf-8").splitlines()


def _fixture(line: int) -> dict:
    """A real engram outcome: line ``line`` (1-based) of outcomes.jsonl."""
    return json.loads(FIXTURE_LINES[line - 1])


def _findings(tmp_path: Path, *values: dict) -> pd.DataFrame:
    path = tmp_path / "case.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    audit = ea.load(path, progress=False)
    assert len(audit.rejected) == 0, audit.rejected.reason.tolist()
    return check_receipts(audit.receipts, audit.exposed)


def test_real_engram_outputs_give_no_findings():
    audit = ea.load(ENGRAM, progress=False)
    assert len(audit.receipts) == 29 and len(audit.rejected) == 0
    findings = check_receipts(audit.receipts, audit.exposed)
    assert findings.empty, findings.to_dict("records")
    assert list(findings.columns) == list(FINDING_COLUMNS)


# Fixture lines used below: 1 guarded search hit (3 exposed, threshold 0.5,
# audience peer); 4 guarded miss with a withheld count; 8 failed search;
# 11 guarded space hit (4 exposed, no scores); 14 internal failure;
# 15 unguarded internal hit (no audience, nothing exposed).
def _set(path):
    def mutate(value, new):
        *parents, last = path
        target = value
        for key in parents:
            target = target[key]
        target[last] = new

    return mutate


def _bare(value):
    receipt = value["receipt"]
    value.clear()
    value.update(receipt)


def _presentation(value):
    receipt = value["receipt"]
    receipt["allowedSourceClasses"].append("presentation")
    receipt["requestedSourceClasses"].append("presentation")
    receipt["exposedResults"][0]["sourceClasses"] = ["status", "presentation"]


def _swap_exposed(value):
    exposed = value["receipt"]["exposedResults"]
    exposed[0], exposed[1] = exposed[1], exposed[0]


def _duplicate_locator(value):
    receipt = value["receipt"]
    receipt["locatorUris"][1] = receipt["locatorUris"][0]
    receipt["recordIds"][1] = receipt["recordIds"][0]


def _nest_enumerated(value):
    receipt = value["receipt"]
    nested = "qmd://retrieval-space-0/old/recommendation-alt.md"
    receipt["locatorUris"][0] = nested
    receipt["exposedResults"][0].update(sourceUri=nested, relativePath="old/recommendation-alt.md")


def _drop_score(value):
    del value["receipt"]["exposedResults"][2]["score"]


MUTATIONS = [
    # (rule, fixture line, change, findings expected)
    ("space_query", 11, lambda v: _set(["receipt", "query"])(v, "weekly"), 1),
    ("space_threshold", 11, lambda v: _set(["receipt", "relevanceThreshold"])(v, 0.5), 1),
    ("unresolved_space_collection", 14, lambda v: _set(["receipt", "activeSpace"])(v, None), 1),
    ("kind_record_ids", 4, lambda v: (_bare(v), _set(["kind"])(v, "hit")), 1),
    ("kind_outcome", 4, lambda v: _set(["status"])(v, "hit"), 1),
    ("kind_outcome", 15, lambda v: _set(["kind"])(v, "miss"), 1),
    ("outcome_records", 1, lambda v: v["records"].pop(), 1),
    ("outcome_errors", 8, lambda v: _set(["errors"])(v, []), 1),
    ("locator_count", 15, lambda v: v["receipt"]["locatorUris"].pop(), 1),
    (
        "locator_foreign",
        15,
        lambda v: _set(["receipt", "locatorUris", 0])(v, "qmd://retrieval-space-9/risk-note.md"),
        1,
    ),
    (
        "locator_unsafe",
        15,
        lambda v: _set(["receipt", "locatorUris", 0])(v, "qmd://retrieval-space-0/./risk-note.md"),
        1,
    ),
    (
        "locator_unsafe",
        15,
        lambda v: _set(["receipt", "locatorUris", 0])(v, "qmd://retrieval-space-0/risk%2Dnote.md"),
        1,
    ),
    ("locator_duplicate", 15, _duplicate_locator, 1),
    ("space_locator_nested", 11, _nest_enumerated, 1),
    ("record_id_locator", 15, lambda v: _set(["receipt", "recordIds", 0])(v, "risk-note-2"), 1),
    ("exposed_count", 1, lambda v: v["receipt"]["exposedResults"].pop(), 1),
    ("exposed_count", 1, lambda v: _set(["receipt", "exposedResults"])(v, []), 1),
    (
        "exposed_count",
        15,
        lambda v: _set(["receipt", "withheld", "audienceId"])(v, "peer"),
        1,
    ),
    (
        "exposed_not_in_records",
        1,
        lambda v: _set(["receipt", "exposedResults", 2, "recordId"])(v, "ghost"),
        1,
    ),
    ("exposed_misaligned", 1, _swap_exposed, 2),
    (
        "exposed_misaligned",
        1,
        lambda v: _set(["receipt", "exposedResults", 1, "relativePath"])(v, "other.md"),
        1,
    ),
    (
        "exposed_misaligned",
        1,
        lambda v: _set(["receipt", "exposedResults", 1, "sourceUri"])(
            v, "qmd://retrieval-space-0/recommendation.md"
        ),
        1,
    ),
    (
        "exposed_source_class",
        1,
        lambda v: _set(["receipt", "exposedResults", 0, "sourceClasses"])(v, ["secret"]),
        1,
    ),
    (
        "exposed_source_class",
        1,
        lambda v: _set(["receipt", "exposedResults", 0, "sourceClasses"])(v, []),
        1,
    ),
    (
        "exposed_source_class",
        12,
        lambda v: _set(["receipt", "requestedSourceClasses"])(v, ["status", "risk"]),
        3,
    ),
    ("exposed_presentation", 1, _presentation, 1),
    (
        "exposed_below_threshold",
        1,
        lambda v: _set(["receipt", "exposedResults", 2, "score"])(v, 0.49),
        1,
    ),
    ("exposed_below_threshold", 1, _drop_score, 1),
    (
        "exposed_enumerated_score",
        11,
        lambda v: _set(["receipt", "exposedResults", 0, "score"])(v, 0.9),
        1,
    ),
    ("withheld_count_invalid", 4, lambda v: _set(["receipt", "withheld", "count"])(v, -1), 1),
    (
        "withheld_without_audience",
        15,
        lambda v: _set(["receipt", "withheld", "count"])(v, 2),
        1,
    ),
]


def test_every_rule_has_a_case():
    assert {rule for rule, *_ in MUTATIONS} == set(RECEIPT_RULES)


@pytest.mark.parametrize(
    ("rule", "line", "change", "expected"),
    MUTATIONS,
    ids=[f"{m[0]}-{i}" for i, m in enumerate(MUTATIONS)],
)
def test_rule_fires_on_minimal_change(tmp_path, rule, line, change, expected):
    original = _fixture(line)
    assert _findings(tmp_path, original).empty
    altered = copy.deepcopy(original)
    change(altered)
    assert altered != original
    findings = _findings(tmp_path, original, altered)
    assert findings.rule.astype(str).tolist() == [rule] * expected, findings.to_dict("records")
    assert set(findings.row) == {1}
    assert set(findings.source_line) == {2}
    assert findings.detail.str.len().min() > 10


def _dot_md(value):
    value["receipt"]["locatorUris"][0] = "qmd://retrieval-space-0/notes/.md"
    value["receipt"]["recordIds"][0] = ".md"  # Node: basename("notes/.md", ".md")


SILENT = [
    # engram would write these; the checks must stay silent.
    (1, lambda v: _set(["receipt", "exposedResults", 2, "score"])(v, 0.5)),
    (8, lambda v: _set(["receipt", "withheld", "count"])(v, 2)),
    (15, _dot_md),
    (14, lambda v: v["receipt"].update(activeSpace=None, collection="")),
]


@pytest.mark.parametrize(("line", "change"), SILENT)
def test_boundaries_stay_silent(tmp_path, line, change):
    value = _fixture(line)
    change(value)
    assert _findings(tmp_path, value).empty


def test_findings_frame_shape(tmp_path):
    altered = _fixture(4)
    altered["receipt"]["withheld"]["count"] = -3
    findings = _findings(tmp_path, altered)
    assert findings.dtypes.astype(str).to_dict() == {
        "check": "category",
        "kind": "category",
        "source_file": "str",
        "source_line": "Int64",
        "row": "Int64",
        "record": "str",
        "rule": "category",
        "severity": "category",
        "field": "str",
        "detail": "str",
    }
    assert list(findings.rule.cat.categories) == list(RECEIPT_RULES)
    assert findings.source_file.iat[0].endswith("case.jsonl")
    assert findings[["check", "kind", "row", "severity", "field"]].iloc[0].tolist() == [
        "receipt_rules",
        "receipts",
        0,
        "error",
        "withheld_count",
    ]
    assert findings.detail.iat[0] == "withheld count is -3"


def test_subset_keeps_receipt_labels_and_ignores_other_exposed(tmp_path):
    bad = _fixture(1)
    bad["receipt"]["exposedResults"][2]["score"] = 0.1
    path = tmp_path / "mixed.jsonl"
    rows = [_fixture(11), bad, _fixture(12), bad]
    path.write_text("".join(json.dumps(v) + "\n" for v in rows), encoding="utf-8")
    audit = ea.load(path, progress=False)
    subset = audit.receipts.iloc[[2, 3]]
    findings = check_receipts(subset, audit.exposed)
    assert findings.row.tolist() == [3]
    assert findings.rule.astype(str).tolist() == ["exposed_below_threshold"]
    assert check_receipts(audit).row.tolist() == [1, 3]


def test_repeated_labels_are_refused():
    audit = ea.load(ENGRAM, progress=False)
    twice = pd.concat([audit.receipts, audit.receipts])
    with pytest.raises(ea.AuditError, match="repeated index labels"):
        check_receipts(twice, audit.exposed)


def test_without_exposed_only_receipt_rules_run(tmp_path):
    bad = _fixture(1)
    bad["receipt"]["exposedResults"][2]["score"] = 0.1
    bad["receipt"]["withheld"]["count"] = -1
    path = tmp_path / "case.jsonl"
    path.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    receipts = ea.load_receipts(path, progress=False)
    assert check_receipts(receipts).rule.astype(str).tolist() == ["withheld_count_invalid"]


def test_plain_object_columns_work_too():
    lists = {
        "requested_source_classes": [["status"]],
        "allowed_source_classes": [["status"]],
        "locator_uris": [["qmd://c/a.md", "qmd://c/a.md"]],
        "record_ids": [["a", "b"]],
        "error_codes": [None],
    }
    receipts = pd.DataFrame(
        {
            "source_file": ["log.jsonl"],
            "source_line": [5],
            "outcome": [None],
            "n_records": [None],
            "scope": ["search"],
            "query": ["q"],
            "active_space": ["s"],
            "collection": ["c"],
            "kind": ["hit"],
            "relevance_threshold": [None],
            "withheld_audience": [None],
            "withheld_count": [0],
            "n_exposed": [0],
            **lists,
        },
        index=[40],
    )
    findings = check_receipts(receipts)
    assert findings.rule.astype(str).tolist() == ["locator_duplicate", "record_id_locator"]
    assert findings.row.tolist() == [40, 40]
    arrow = receipts.astype({k: pd.ArrowDtype(pa.list_(pa.string())) for k in lists})
    pd.testing.assert_frame_equal(check_receipts(arrow), findings)


# What scripts/sample_data/receipts.py plants, and nothing else.
PLANTED = {
    ("harness_outcomes.jsonl.gz", 401, "exposed_below_threshold"),
    ("harness_outcomes.jsonl.gz", 904, "withheld_without_audience"),
    ("operator_receipts.jsonl", 251, "locator_unsafe"),
    ("operator_receipts.jsonl", 382, "exposed_source_class"),
    ("recall_cli.jsonl", 212, "space_query"),
    ("recall_cli.jsonl", 556, "kind_outcome"),
    ("recall_log.json", 1089, "withheld_count_invalid"),
}
BROKEN = {
    ("recall_cli.jsonl", 151, "invalid JSON"),
    ("recall_cli.jsonl", 334, "receipt.withheld.count must be an integer, got the string"),
    ("recall_cli.jsonl", 522, "receipt.withheld is missing"),
    ("recall_cli.jsonl", 578, "receipt.schemaVersion is 1"),
}


def _check_sample(audit, folder: Path) -> None:
    assert len(audit.receipts) > 2000
    shapes = {"receipt", "cli", "outcome", "presentation"}
    assert set(audit.receipts["shape"].astype(str)) == shapes
    findings = check_receipts(audit)
    found = {
        (Path(f).name, line, rule)
        for f, line, rule in findings[["source_file", "source_line", "rule"]]
        .astype({"rule": str})
        .itertuples(index=False)
    }
    assert found == PLANTED
    in_folder = audit.rejected.source_file.map(lambda f: Path(f).parent == folder)
    rejected = audit.rejected[in_folder.astype(bool)]
    assert len(rejected) == len(BROKEN)
    for name, line, reason in BROKEN:
        row = rejected[
            (rejected.source_file.map(lambda f: Path(f).name) == name)
            & (rejected.source_line == line)
        ]
        assert len(row) == 1 and row.reason.iat[0].startswith(reason), (name, line)
    assert "<script>alert(1)</script>" in set(audit.receipts["query"].dropna())


def _load_sample(folder: Path):
    with pytest.warns(ea.RejectedRowsWarning):
        return ea.load(folder, progress=False)


def test_sample_generator_plants_exactly_the_expected(tmp_path):
    from scripts.sample_data import receipts as sample

    sample.write(tmp_path)
    folder = tmp_path / "receipts"
    _check_sample(_load_sample(folder), folder)
    assert sum(p.stat().st_size for p in (tmp_path / "receipts").iterdir()) < 2_000_000


def test_bundled_sample_is_current_and_flags_exactly_the_planted(tmp_path):
    from scripts.sample_data import receipts as sample

    bundled = Path(__file__).parents[1] / "data" / "receipts"
    sample.write(tmp_path)
    fresh = sorted(p.name for p in (tmp_path / "receipts").iterdir())
    assert sorted(p.name for p in bundled.iterdir()) == fresh
    for name in fresh:
        assert (bundled / name).read_bytes() == (tmp_path / "receipts" / name).read_bytes(), name
    _check_sample(_load_sample(bundled), bundled)


def test_whole_data_folder_gives_the_same_findings():
    data = Path(__file__).parents[1] / "data"
    _check_sample(_load_sample(data), data / "receipts")
