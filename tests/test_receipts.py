"""Loading retrieval receipts: the three line shapes, dtypes, both reading paths."""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_receipt, rows_by_path, without_columnar

import explicit_audit as ea
from explicit_audit import receipts as receipts_module
from explicit_audit._core import registry
from explicit_audit.reading.groups import SMALLEST_HALF

FIXTURES = Path(__file__).parent / "data" / "engram"


def _write_lines(path: Path, values) -> Path:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), "utf-8")
    return path


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(path, progress=False)


def _value_by_value(path, monkeypatch):
    """Load with the columnar fast path switched off."""
    slow = without_columnar(receipts_module.KIND)
    with registry.replaced([slow]):
        return ea.load_receipts_and_exposed(path, progress=False)


def test_engram_fixtures_load_with_nothing_rejected():
    audit = _load(FIXTURES)
    assert audit.rejected.empty
    # 15 outcomes, 12 recall outputs, and the 2 receipts embedded in presentations.
    assert len(audit.receipts) == 29
    assert set(audit.receipts["shape"]) == {"cli", "outcome", "presentation"}
    assert set(audit.receipts["outcome"]) == {"hit", "miss", "failed", "presented"}
    assert audit.receipts["withheld_count"].sum() > 0


def test_declared_dtypes():
    receipts = _load(FIXTURES).receipts
    assert receipts["source_line"].dtype == "int64"
    for name in ("shape", "outcome", "scope", "kind"):
        assert isinstance(receipts[name].dtype, pd.CategoricalDtype), name
    assert receipts["source_file"].dtype == "str"  # as in every table
    for name in ("withheld_count", "n_exposed", "n_records", "schema_version"):
        assert receipts[name].dtype == "Int64", name
    assert receipts["relevance_threshold"].dtype == "Float64"
    for name in ("record_ids", "locator_uris", "error_codes", "requested_source_classes"):
        assert isinstance(receipts[name].dtype, pd.ArrowDtype), name
    assert receipts["query"].dtype == "str"


def test_three_line_shapes(tmp_path):
    bare = make_receipt()
    cli = {
        "schema_version": 0,
        "status": "failed",
        "errors": [{"code": "qmd_exit"}],
        "receipt": make_receipt(kind="miss", locatorUris=[], recordIds=[], exposedResults=[]),
    }
    internal = {"kind": "hit", "records": [{}, {}], "receipt": make_receipt()}
    audit = _load(_write_lines(tmp_path / "log.jsonl", [bare, cli, internal]))
    receipts = audit.receipts
    assert receipts["shape"].tolist() == ["receipt", "cli", "outcome"]
    assert receipts["outcome"].tolist()[1:] == ["failed", "hit"]
    assert pd.isna(receipts["outcome"].iloc[0])
    assert list(receipts["error_codes"].iloc[1]) == ["qmd_exit"]
    assert receipts["n_records"].tolist()[1:] == [0, 2]


def test_exposed_rows_are_keyed_to_theirmake_receipt(tmp_path):
    first = make_receipt()
    second = make_receipt(
        exposedResults=[
            {
                "recordId": "a",
                "sourceUri": "qmd://c/a.md",
                "relativePath": "a.md",
                "sourceClasses": ["status"],
            },
            {
                "recordId": "b",
                "sourceUri": "qmd://c/b.md",
                "relativePath": "b.md",
                "sourceClasses": ["risk", "status"],
                "score": 0.7,
            },
        ]
    )
    audit = _load(_write_lines(tmp_path / "log.jsonl", [first, second]))
    exposed = audit.exposed
    assert exposed["receipt_row"].tolist() == [0, 1, 1]
    assert exposed["position"].tolist() == [0, 0, 1]
    assert exposed["record_id"].tolist() == ["brief", "a", "b"]
    assert pd.isna(exposed["score"].iloc[1]) and exposed["score"].iloc[2] == 0.7
    assert audit.receipts["n_exposed"].tolist() == [1, 2]


def test_logger_keys_are_kept_as_columns(tmp_path):
    lines = [
        {
            "timestamp": "2026-10-01T10:00:00Z",
            "request_id": f"r{i}",
            "schema_version": 0,
            "status": "hit",
            "records": [],
            "receipt": make_receipt(),
        }
        for i in range(3)
    ]
    receipts = _load(_write_lines(tmp_path / "log.jsonl", lines)).receipts
    # A time as a UTC time; the text would be kept beside it had it not been one.
    assert receipts["timestamp"].tolist() == [pd.Timestamp("2026-10-01T10:00:00Z")] * 3
    assert receipts["timestamp_unparsed"].isna().all()
    assert receipts["request_id"].tolist() == ["r0", "r1", "r2"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (
            {"withheld": {"audienceId": "peer", "count": "3"}},
            "withheld.count must be an integer, got the string '3'",
        ),
        (
            {"withheld": {"audienceId": "peer", "count": 1.5}},
            "withheld.count must be an integer, got the number 1.5",
        ),
        (
            {"withheld": {"audienceId": "peer", "count": True}},
            "withheld.count must be an integer, got a boolean",
        ),
        ({"schemaVersion": 1}, "schemaVersion is 1, a receipt schema this kit does not know"),
        ({"scope": "global"}, "scope must be one of search, space"),
        ({"recordIds": "brief"}, "recordIds must be an array of strings"),
        ({"recordIds": ["r-1", 7, None]}, "recordIds[1] must be a string, got the number 7"),
        ({"relevanceThreshold": "high"}, "relevanceThreshold must be a finite number or null"),
    ],
)
def test_misfit_receipts_are_rejected_naming_the_field(tmp_path, change, reason):
    path = _write_lines(
        tmp_path / "log.jsonl", [make_receipt(), make_receipt(**change), make_receipt()]
    )
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    assert audit.receipts["source_line"].tolist() == [1, 3]
    rejected = audit.rejected.iloc[0]
    assert (rejected.source_line, rejected.kind) == (2, "receipts")
    assert reason in rejected.reason


def test_missing_withheld_is_rejected(tmp_path):
    receipt = make_receipt()
    del receipt["withheld"]
    wrapped = {"kind": "miss", "records": [], "receipt": receipt}
    audit = _load(_write_lines(tmp_path / "log.jsonl", [wrapped]))
    assert audit.receipts.empty
    assert audit.rejected.reason.tolist() == ["receipt.withheld is missing"]


def test_negative_count_loads_for_the_checks_to_flag(tmp_path):
    path = _write_lines(
        tmp_path / "log.jsonl", [make_receipt(withheld={"audienceId": "x", "count": -2})]
    )
    audit = _load(path)
    assert audit.rejected.empty and audit.receipts["withheld_count"].tolist() == [-2]


def test_fast_path_takes_clean_files_and_equals_the_exact_path(tmp_path, monkeypatch):
    source = tmp_path / "outcomes.jsonl"
    shutil.copy(FIXTURES / "outcomes.jsonl", source)
    assert rows_by_path(source)["exact"] == 0
    fast = ea.load_receipts_and_exposed(source, progress=False)
    slow = _value_by_value(source, monkeypatch)
    pd.testing.assert_frame_equal(fast[0], slow[0])
    pd.testing.assert_frame_equal(fast[1], slow[1])


def test_fast_path_equals_exact_path_on_gzip_bare_receipts_with_blank_lines(tmp_path, monkeypatch):
    values = [
        make_receipt(query=f"q{i}", withheld={"audienceId": None, "count": i % 3})
        for i in range(50)
    ]
    text = "".join(json.dumps(v) + ("\n\n" if i % 7 == 0 else "\n") for i, v in enumerate(values))
    path = tmp_path / "bare.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode()))
    assert rows_by_path(path)["exact"] == 0
    fast = ea.load_receipts_and_exposed(path, progress=False)
    slow = _value_by_value(path, monkeypatch)
    pd.testing.assert_frame_equal(fast[0], slow[0])
    pd.testing.assert_frame_equal(fast[1], slow[1])
    assert fast[0]["source_line"].iloc[:3].tolist() == [1, 3, 4]


def test_a_misfit_line_takes_few_neighbours_to_the_exact_path(tmp_path):
    """A refused group is halved while its halves are worth a bulk parse: a misfit
    among 1,000 receipts takes fewer than ``2 * SMALLEST_HALF`` of them to the exact
    path; in a file of 5, all 5 go there at once."""
    misfit = make_receipt(withheld={"audienceId": "peer", "count": "many"})
    values = [make_receipt(query=f"q{i}") for i in range(1000)]
    values[600] = misfit
    many = _write_lines(tmp_path / "many.jsonl", values)
    rows = rows_by_path(many)
    # Fewer than 128, as docs/reading.md says.
    assert 1 <= rows["exact"] < 2 * SMALLEST_HALF <= 128
    assert rows["columnar"] + rows["exact"] == 1000
    audit = _load(many)
    assert audit.rejected.source_line.tolist() == [601]
    assert audit.receipts["query"].tolist() == [f"q{i}" for i in range(1000) if i != 600]
    with registry.replaced([without_columnar(receipts_module.KIND)]):
        exact = _load(many)
    for name, table in exact.tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], table, obj=name)
    pd.testing.assert_frame_equal(audit.rejected, exact.rejected)

    few = _write_lines(tmp_path / "few.jsonl", [*values[:3], misfit, values[4]])
    assert rows_by_path(few) == {"columnar": 0, "exact": 5}
    audit = _load(few)
    assert audit.rejected.source_line.tolist() == [4]
    assert len(audit.receipts) == 4


def test_load_receipts_warns_and_returns_the_frame(tmp_path):
    path = _write_lines(tmp_path / "log.jsonl", [make_receipt(), {"receipt": 1, "kind": "hit"}])
    with pytest.warns(ea.RejectedRowsWarning, match="1 input value"):
        receipts = ea.load_receipts(path, progress=False)
    assert len(receipts) == 1


def test_rows_keep_file_order_across_both_reading_paths(tmp_path):
    clean = [make_receipt(query=f"clean{i}") for i in range(3)]
    # A nested logger value is read exactly; the second line is no record at all.
    damaged = [{"ctx": {"a": 1}, **make_receipt(query="damaged0")}, {"kind": "hit", "receipt": 3}]
    _write_lines(tmp_path / "a.jsonl", clean)
    _write_lines(tmp_path / "b.jsonl", damaged)
    _write_lines(tmp_path / "c.jsonl", clean)
    assert rows_by_path(tmp_path / "a.jsonl") == {"columnar": 3, "exact": 0}
    assert rows_by_path(tmp_path / "b.jsonl")["exact"] == 1
    audit = _load(tmp_path)
    files = audit.receipts["source_file"].astype(str).map(lambda f: Path(f).name).tolist()
    assert files == ["a.jsonl"] * 3 + ["b.jsonl"] + ["c.jsonl"] * 3
    assert audit.exposed["receipt_row"].tolist() == list(range(7))
    assert audit.exposed["record_id"].tolist() == ["brief"] * 7


def test_fast_path_equals_exact_path_on_awkward_logger_keys(tmp_path, monkeypatch):
    lines = []
    for i in range(6):
        line = {"host": f"h{i % 2}", "latency": i if i % 2 else i + 0.5, "ok": i % 3 == 0}
        if i % 2:
            line["late"] = "x"
        line |= {"schema_version": 0, "status": "hit", "records": [{}], "receipt": make_receipt()}
        line["outcome"] = "logged"  # named like a column of the table
        lines.append(line)
    path = _write_lines(tmp_path / "log.jsonl", lines)
    assert rows_by_path(path)["exact"] == 0
    fast = ea.load_receipts_and_exposed(path, progress=False)
    slow = _value_by_value(path, monkeypatch)
    pd.testing.assert_frame_equal(fast[0], slow[0])
    receipts = fast[0]
    assert receipts["extra.outcome"].tolist() == ["logged"] * 6
    assert receipts["outcome"].tolist() == ["hit"] * 6
    assert list(receipts.columns[-5:]) == ["host", "latency", "ok", "extra.outcome", "late"]


@pytest.mark.parametrize(
    "change",
    [
        lambda line: line.update(ctx={"a": 1}),  # nested logger value
        lambda line: line.update(at="2025-03-03T08:06:42Z") if line["n"] > 2 else None,
        lambda line: line["receipt"].update(relevanceThreshold="NaN-free text NaN"),
        lambda line: line.update(status=None, kind="miss"),
    ],
)
def test_doubtful_receipt_files_read_the_same_by_both_paths(tmp_path, monkeypatch, change):
    lines = []
    for n in range(5):
        line = {"n": n, "schema_version": 0, "status": "hit", "receipt": make_receipt()}
        change(line)
        lines.append(line)
    path = _write_lines(tmp_path / "log.jsonl", lines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        fast = ea.load_receipts_and_exposed(path, progress=False)
        slow = _value_by_value(path, monkeypatch)
    pd.testing.assert_frame_equal(fast[0], slow[0])
    pd.testing.assert_frame_equal(fast[1], slow[1])


def test_nan_in_a_line_is_refused_by_both_paths(tmp_path):
    text = json.dumps(make_receipt()) + "\n"
    text += json.dumps(make_receipt()).replace(
        '"relevanceThreshold": 0.5', '"relevanceThreshold": NaN'
    )
    path = tmp_path / "log.jsonl"
    path.write_text(text + "\n")
    audit = _load(path)
    assert len(audit.receipts) == 1 and audit.rejected["source_line"].tolist() == [2]


@pytest.mark.parametrize(
    ("changed", "reason"),
    [
        ({"recordId": None}, "exposedResults[0].recordId"),
        ({"sourceClasses": ["status", None]}, "exposedResults[0].sourceClasses[1]"),
        ({"score": None}, None),  # declared nullable: loads
    ],
)
def test_a_null_inside_an_exposed_result_is_judged_as_its_shape_declares(tmp_path, changed, reason):
    """Among 1,000 clean receipts read in bulk, one exposed result with a null field is
    rejected where the shape does not allow the null, and loaded where it does: the
    columnar path checks each field of the exposed results by its declaration, and
    gives what the value-by-value path gives."""
    good = make_receipt()
    bad = make_receipt(exposedResults=[{**good["exposedResults"][0], **changed}])
    path = _write_lines(tmp_path / "receipts.jsonl", [good] * 500 + [bad] + [good] * 499)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        bulk = ea.load(path, progress=False)
        with registry.replaced([without_columnar(receipts_module.KIND)]):
            exact = ea.load(path, progress=False)
    if reason is None:
        assert bulk.rejected.empty
        assert len(bulk.receipts) == 1_000
        assert bulk.exposed["score"].isna().sum() == 1
    else:
        assert bulk.rejected["source_line"].tolist() == [501]
        assert reason in bulk.rejected["reason"].iloc[0]
        assert len(bulk.receipts) == 999
    pd.testing.assert_frame_equal(bulk.rejected, exact.rejected)
    pd.testing.assert_frame_equal(bulk.receipts, exact.receipts)
