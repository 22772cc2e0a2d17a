"""Withheld-count views, checked against a plain row-by-row recount."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit.receipts.withheld import ALL_LABEL

ENGRAM = Path(__file__).parent / "data" / "engram"


@pytest.fixture(scope="module")
def sample_receipts(tmp_path_factory):
    from scripts.sample_data import receipts as sample

    folder = tmp_path_factory.mktemp("sample")
    sample.write(folder)
    with pytest.warns(ea.RejectedRowsWarning):
        return ea.load(folder / "receipts", progress=False).receipts


def _rows(receipts: pd.DataFrame) -> list[dict]:
    out = []
    for label, row in receipts.iterrows():
        out.append(
            {
                "label": label,
                "audience": None if pd.isna(row.withheld_audience) else row.withheld_audience,
                "scope": str(row.scope),
                "space": None if pd.isna(row.active_space) else row.active_space,
                "query": None if pd.isna(row.query) else row.query,
                "outcome": None if pd.isna(row.outcome) else str(row.outcome),
                "count": int(row.withheld_count),
                "returned": len(row.record_ids),
                "timestamp": None if pd.isna(row.get("timestamp")) else row.get("timestamp"),
            }
        )
    return out


def _label(value):
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else value


def _recount(rows, key):
    groups = defaultdict(lambda: [0, 0, 0, 0, 0])
    for row in rows:
        g = groups[key(row)]
        g[0] += 1
        g[1] += row["count"] > 0
        # A negative count is invalid: never summed, counted apart.
        g[2] += max(row["count"], 0)
        g[3] += row["returned"]
        g[4] += row["count"] < 0
    return groups


def _assert_summary_row(table_row, expected):
    receipts, withheld, records, returned, invalid = expected
    assert table_row["invalid_counts"] == invalid
    assert table_row["receipts"] == receipts
    assert table_row["receipts_withheld"] == withheld
    assert table_row["records_withheld"] == records
    assert table_row["records_returned"] == returned
    assert table_row["withheld_rate"] == pytest.approx(withheld / receipts)
    if records + returned:
        assert table_row["withheld_share"] == pytest.approx(records / (records + returned))
    else:
        assert pd.isna(table_row["withheld_share"])


@pytest.mark.parametrize(
    "by",
    [["withheld_audience"], ["active_space", "scope"], ["outcome"], ["withheld_audience", "scope"]],
)
def test_summary_matches_recount(sample_receipts, by):
    column = {"withheld_audience": "audience", "active_space": "space"}
    rows = _rows(sample_receipts)
    expected = _recount(rows, lambda r: tuple(r[column.get(k, k)] for k in by))
    table = ea.withheld_summary(sample_receipts, by=by if len(by) > 1 else by[0])
    assert len(table) == len(expected)
    for index, table_row in table.iterrows():
        key = index if isinstance(index, tuple) else (index,)
        _assert_summary_row(table_row, expected[tuple(_label(k) for k in key)])
    assert table.index.names == by


def test_summary_overall(sample_receipts):
    rows = _rows(sample_receipts)
    total = _recount(rows, lambda r: "all")["all"]
    alone = ea.withheld_summary(sample_receipts)
    assert len(alone) == 1
    _assert_summary_row(alone.iloc[0], total)
    table = ea.withheld_summary(sample_receipts, by=["withheld_audience", "scope"], overall=True)
    assert table.index[-1] == (ALL_LABEL, ALL_LABEL)
    _assert_summary_row(table.iloc[-1], total)
    assert table.iloc[:-1]["receipts"].sum() == total[0]
    one = ea.withheld_summary(sample_receipts, by="scope", overall=True)
    assert one.index[-1] == ALL_LABEL and one.index.name == "scope"


def test_summary_dtypes(sample_receipts):
    table = ea.withheld_summary(sample_receipts, by="withheld_audience")
    assert table.dtypes.astype(str).to_dict() == {
        "receipts": "int64",
        "receipts_withheld": "int64",
        "records_withheld": "Int64",
        "withheld_rate": "Float64",
        "records_returned": "int64",
        "withheld_share": "Float64",
        "invalid_counts": "int64",
    }


def test_sample_counts_follow_clearance(sample_receipts):
    table = ea.withheld_summary(sample_receipts, by="withheld_audience")
    # The supervisor is cleared for everything; the planted -1 is set apart, not summed.
    assert table.loc["supervisor", "receipts_withheld"] == 0
    assert table.loc["supervisor", "records_withheld"] == 0
    assert table.loc["supervisor", "invalid_counts"] == 1
    assert table.loc["status-only", "withheld_rate"] > table.loc["peer", "withheld_rate"]


def test_oracle_matches_recount(sample_receipts):
    rows = _rows(sample_receipts)
    per_query = defaultdict(list)
    for row in rows:
        per_query[(row["audience"], row["space"], row["scope"], row["query"])].append(row["count"])
    expected = defaultdict(lambda: defaultdict(int))
    for (audience, *_), counts in per_query.items():
        e = expected[audience]
        e["queries"] += 1
        e["queries_withheld"] += max(counts) > 0
        e["queries_always_withheld"] += min(counts) > 0
        e["queries_count_varies"] += min(counts) != max(counts)
        e["receipts"] += len(counts)
        e["receipts_withheld"] += sum(c > 0 for c in counts)
        e["records_withheld"] += sum(max(c, 0) for c in counts)
    table = ea.withheld_oracle(sample_receipts)
    assert len(table) == len(expected)
    for audience, table_row in table.iterrows():
        e = expected[_label(audience)]
        for column, value in e.items():
            assert table_row[column] == value, (audience, column)
        assert table_row["query_share"] == pytest.approx(e["queries_withheld"] / e["queries"])
    assert list(table.columns[:3]) == ["queries", "queries_withheld", "query_share"]


def test_oracle_on_real_engram_output():
    receipts = ea.load(ENGRAM, progress=False).receipts
    table = ea.withheld_oracle(receipts)
    # status-only enumerated the space once and was told 4 records were withheld.
    assert table.loc["status-only", "queries"] == 1
    assert table.loc["status-only", "records_withheld"] == 4
    per_query = ea.withheld_queries(receipts)
    assert per_query["receipts"].sum() == len(receipts)
    assert (per_query["min_count"] <= per_query["max_count"]).all()


def test_queries_by_other_grouping(sample_receipts):
    table = ea.withheld_oracle(sample_receipts, by=["withheld_audience", "active_space"])
    assert table.index.names == ["withheld_audience", "active_space"]
    assert table["receipts"].sum() == len(sample_receipts)


def _when(value) -> datetime:
    # The loader types the logger's timestamp as a UTC time; a text one is read here as written.
    return (
        value.to_pydatetime() if isinstance(value, pd.Timestamp) else datetime.fromisoformat(value)
    )


def test_time_window(sample_receipts):
    rows = _rows(sample_receipts)
    start, end = "2025-03-05T00:00:00Z", "2025-03-07T12:00:00+00:00"
    lo, hi = datetime.fromisoformat(start), datetime.fromisoformat(end)
    expected = [
        r["label"] for r in rows if r["timestamp"] is not None and lo <= _when(r["timestamp"]) < hi
    ]
    window = ea.within_time_window(sample_receipts, start, end)
    assert 0 < len(window) < len(sample_receipts)
    assert window.index.tolist() == expected
    naive = ea.within_time_window(sample_receipts, "2025-03-05", "2025-03-07 12:00")
    assert naive.index.tolist() == expected
    opened = ea.within_time_window(sample_receipts, start=start)
    assert len(opened) == sum(
        r["timestamp"] is not None and _when(r["timestamp"]) >= lo for r in rows
    )


def test_time_window_errors(tmp_path):
    value = json.loads((ENGRAM / "outcomes.jsonl").read_text().splitlines()[0])
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"ts": 1741000000, **value}) + "\n")
    receipts = ea.load_receipts(path, progress=False)
    with pytest.raises(ea.AuditError, match="no 'timestamp' column"):
        ea.within_time_window(receipts, "2025-03-01")
    with pytest.raises(ea.AuditError, match="unit="):
        ea.within_time_window(receipts, "2025-03-01", column="ts")
    window = ea.within_time_window(receipts, "2025-03-03", "2025-03-04", column="ts", unit="s")
    assert len(window) == 1  # 1741000000 is 2025-03-03T11:06:40Z
    path.write_text(json.dumps({"ts": "last tuesday", **value}) + "\n")
    with pytest.warns(ea.UnparsedTimeWarning, match="receipts.ts"):
        receipts = ea.load_receipts(path, progress=False)
    assert receipts["ts_unparsed"].tolist() == ["last tuesday"]
    # A record without a time is outside every window, never in one by default.
    assert ea.within_time_window(receipts, "2025-03-01", column="ts").empty
