"""Audit.to_parquet and ea.read_parquet: every table written and read back, by
pandas, polars and DuckDB, with the values hashes are rebuilt from kept exactly."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

import explicit_audit as ea
from explicit_audit.parquet import MANIFEST

DATA = Path(__file__).resolve().parents[1] / "data"


def _load(source, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


@pytest.fixture(scope="module")
def bundled():
    return _load(DATA)


def _every_table(audit: ea.Audit) -> dict[str, pd.DataFrame]:
    return {**audit.tables, "rejected": audit.rejected, "sources": audit.sources}


def test_every_table_round_trips_exactly(bundled, tmp_path):
    folder = bundled.to_parquet(tmp_path / "audit")
    back = ea.read_parquet(folder)
    assert list(back.tables) == list(bundled.tables)
    for name, frame in _every_table(bundled).items():
        pd.testing.assert_frame_equal(_every_table(back)[name], frame, check_exact=True)
    pd.testing.assert_frame_equal(back.keys, bundled.keys, check_exact=True)
    assert back.files == bundled.files
    assert back.policies == bundled.policies
    assert [p.source_file for p in back.policies.values()] == [
        p.source_file for p in bundled.policies.values()
    ]


def test_a_category_column_without_a_value_round_trips_exactly(tmp_path, monkeypatch):
    # Arrow gives an empty dictionary back with object categories; a load's are text. The
    # three ways back: a Parquet folder, the load cache, an audit state's rows kept.
    monkeypatch.setenv("EXPLICIT_AUDIT_CACHE_SECRET", str(tmp_path / "secret"))
    lines = (DATA / "plans" / "arborist_runs.jsonl").read_bytes().splitlines(keepends=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "plans.jsonl").write_bytes(b"".join(lines[:3]))
    state = tmp_path / "state"
    _load(logs, state=state)
    with open(logs / "plans.jsonl", "ab") as out:
        out.write(b"".join(lines[3:5]))
    whole = _load(logs)
    assert not len(whole.plans["mt_engine"].cat.categories)  # no plan names an engine
    back = [
        ea.read_parquet(whole.to_parquet(tmp_path / "audit")),
        _load(logs, cache=tmp_path / "cache"),
        _load(logs, cache=tmp_path / "cache"),  # from the cache
        _load(logs, state=state),  # the rows of lines 1 to 3 from the state
    ]
    for audit in back:
        pd.testing.assert_frame_equal(audit.plans, whole.plans, check_exact=True)


def test_a_json_column_with_a_missing_cell_round_trips_exactly(tmp_path, monkeypatch):
    # A key beside the records in some of them only (and a plan without sources_summary):
    # Arrow's null came back as NaN, which the folder refused and the cache called tampered.
    monkeypatch.setenv("EXPLICIT_AUDIT_CACHE_SECRET", str(tmp_path / "secret"))
    lines = (DATA / "plans" / "arborist_runs.jsonl").read_text("utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    second.pop("sources_summary", None)
    records = [first, {**second, "note": {"ticket": 7}}, {**first, "run_id": "r-again"}]
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "plans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    whole = _load(logs)
    assert whole.plans["note"].isna().tolist() == [True, False, True]
    back = [
        ea.read_parquet(whole.to_parquet(tmp_path / "audit")),
        _load(logs, cache=tmp_path / "cache"),
        _load(logs, cache=tmp_path / "cache"),  # from the cache, with no warning
        _load(logs, state=tmp_path / "state"),
        _load(logs, state=tmp_path / "state"),  # the rows kept in the state
    ]
    for audit in back:
        pd.testing.assert_frame_equal(audit.plans, whole.plans, check_exact=True)
        assert audit.plans["note"].tolist()[1] == {"ticket": 7}


def test_the_empty_tables_of_kinds_not_there_round_trip_with_their_categories(
    tmp_path, monkeypatch
):
    # A table without rows came back from Arrow without its declared categories
    # (plan_shape: canonical, flat), from a Parquet folder and the load cache alike.
    monkeypatch.setenv("EXPLICIT_AUDIT_CACHE_SECRET", str(tmp_path / "secret"))
    whole = _load(DATA / "decisions")
    assert list(whole.plans["plan_shape"].cat.categories) == ["canonical", "flat"]
    back = [
        ea.read_parquet(whole.to_parquet(tmp_path / "audit")),
        _load(DATA / "decisions", cache=tmp_path / "cache"),
        _load(DATA / "decisions", cache=tmp_path / "cache"),  # from the cache
    ]
    for audit in back:
        for name, table in whole.tables.items():
            pd.testing.assert_frame_equal(audit.tables[name], table, check_exact=True, obj=name)
        pd.testing.assert_frame_equal(audit.rejected, whole.rejected)


def test_a_read_back_audit_verifies_with_the_same_findings(bundled, tmp_path):
    back = ea.read_parquet(bundled.to_parquet(tmp_path / "audit"))
    before, after = ea.verify_all(bundled), ea.verify_all(back)
    assert len(before.findings) > 0  # the bundled data is tampered with on purpose
    pd.testing.assert_frame_equal(after.findings, before.findings)
    pd.testing.assert_frame_equal(after.summary(), before.summary())


def _plan(keywords, top_k, **more):
    return {"retrieval_keywords": keywords, "top_k": top_k, **more}


def test_values_hashes_are_rebuilt_from_are_kept_as_written(tmp_path):
    plans = [
        _plan("alpha", 5),
        _plan("alpha", "5"),  # the same number written as text: another hash
        _plan("big", 10**20),  # past 64 bits
        _plan("float", 3, over_fetch=1e16, max_context_chars=-0.0),
        _plan("lone \udc80 surrogate", 2),
        _plan("서울 지하철", 8),
    ]
    lines = []
    for number, plan in enumerate(plans):
        recorded = ea.plan_hash(plan) if number % 2 == 0 else "0" * 64
        lines.append(
            json.dumps(
                {"run_id": f"r-{number}", "retrieval_plan": plan, "retrieval_plan_hash": recorded}
            )
        )
    source = tmp_path / "plans.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    audit = _load(source)
    assert len(audit.plans) == len(plans)
    back = ea.read_parquet(audit.to_parquet(tmp_path / "audit"))
    # The plan is its text as written, kept byte for byte.
    assert back.plans["plan"].tolist() == audit.plans["plan"].tolist()
    assert back.plans["plan"].tolist() == [json.dumps(plan) for plan in plans]
    written = [json.loads(text) for text in back.plans["plan"].tolist()]
    assert written == plans
    # Types as written, not as equal: "5" stays text, 5 an int, -0.0 a float with its sign.
    assert [type(p["top_k"]) for p in written] == [type(p["top_k"]) for p in plans]
    assert str(written[3]["max_context_chars"]) == "-0.0"
    pd.testing.assert_frame_equal(ea.plan_verdicts(back.plans), ea.plan_verdicts(audit.plans))
    assert len(ea.check_plans(back.plans)) == len(ea.check_plans(audit.plans)) > 0
    # The text column is text in the file, readable as such by any reader.
    texts = pq.read_table(tmp_path / "audit" / "plans.parquet").column("plan").to_pylist()
    assert [json.loads(text) for text in texts] == plans


@pytest.mark.parametrize(
    "read",
    [
        pytest.param(lambda path: pd.read_parquet(path), id="pandas"),
        pytest.param(lambda path: pl.read_parquet(path).to_pandas(), id="polars"),
        pytest.param(lambda path: duckdb.sql(f"SELECT * FROM '{path}'").df(), id="duckdb"),
    ],
)
def test_pandas_polars_and_duckdb_read_every_table(bundled, tmp_path, read):
    folder = bundled.to_parquet(tmp_path / "audit")
    for name, frame in _every_table(bundled).items():
        got = read(folder / f"{name}.parquet")
        assert len(got) == len(frame), name
        assert set(frame.columns) <= set(got.columns), name
        # A value read back by another library: the first row's source_line, where there is one.
        if "source_line" in frame.columns and len(frame):
            assert got["source_line"].tolist() == frame["source_line"].tolist(), name


def test_a_folder_without_an_audit_is_refused(tmp_path):
    with pytest.raises(ea.AuditError, match=re.escape(MANIFEST)):
        ea.read_parquet(tmp_path)
    (tmp_path / MANIFEST).write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(ea.AuditError, match="not a folder this kit reads"):
        ea.read_parquet(tmp_path)


def test_a_missing_table_file_is_named(bundled, tmp_path):
    folder = bundled.to_parquet(tmp_path / "audit")
    (folder / "plans.parquet").unlink()
    with pytest.raises(ea.AuditError, match=r"plans\.parquet"):
        ea.read_parquet(folder)


@pytest.mark.parametrize("left_out", [["plans"], ["plans", "receipts", "presentations"]])
def test_a_manifest_that_leaves_out_a_table_is_refused_naming_it(bundled, tmp_path, left_out):
    # Read as it was, the audit lacked the table: verify_all raised AttributeError.
    folder = bundled.to_parquet(tmp_path / "audit")
    manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
    manifest["tables"] = [name for name in manifest["tables"] if name not in left_out]
    (folder / MANIFEST).write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(ea.AuditError, match=r"audit\.json: 'tables' leaves out '") as refused:
        ea.read_parquet(folder)
    assert all(f"'{name}'" in str(refused.value) for name in left_out)
