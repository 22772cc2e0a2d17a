"""Time columns typed as UTC times, the text kept where it is not one."""

from __future__ import annotations

import inspect
import json
import warnings

import pandas as pd
import pytest
from conftest import make_receipt

import explicit_audit as ea


def _log(tmp_path, stamps) -> str:
    path = tmp_path / "logged.jsonl"
    lines = []
    for number, stamp in enumerate(stamps):
        value = {"request_id": f"q{number}", **make_receipt()}
        if stamp is not None:
            value["timestamp"] = stamp
        lines.append(json.dumps(value))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_timestamps_are_utc_times_whatever_zone_they_were_written_in(tmp_path):
    stamps = ["2025-03-04T09:00:00+09:00", "2025-03-04T00:00:00Z", "2025-03-03T19:00:00-05:00"]
    receipts = ea.load(_log(tmp_path, stamps), progress=False).receipts
    assert str(receipts["timestamp"].dtype) == "datetime64[ns, UTC]"
    assert receipts["timestamp"].tolist() == [pd.Timestamp("2025-03-04T00:00:00Z")] * 3
    assert receipts["timestamp_unparsed"].isna().all()


def test_text_that_is_not_a_time_is_kept_and_named(tmp_path):
    stamps = ["2025-03-04T00:00:00Z", "yesterday", None, "03/04/2025"]
    path = _log(tmp_path, stamps)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        receipts = ea.load(path, progress=False).receipts
    found = [w for w in caught if issubclass(w.category, ea.UnparsedTimeWarning)]
    assert len(found) == 1 and "receipts.timestamp (2)" in str(found[0].message)
    assert (found[0].filename, found[0].lineno) == (__file__, line)
    assert receipts["timestamp"].isna().tolist() == [False, True, True, True]
    unparsed = receipts["timestamp_unparsed"]
    assert [None if pd.isna(v) else v for v in unparsed] == [None, "yesterday", None, "03/04/2025"]


def test_numbers_are_not_read_as_times(tmp_path):
    path = tmp_path / "epoch.jsonl"
    path.write_text(json.dumps({"timestamp": 1741000000, **make_receipt()}) + "\n", "utf-8")
    receipts = ea.load(path, progress=False).receipts
    assert receipts["timestamp"].tolist() == [1741000000]
    assert "timestamp_unparsed" not in receipts


def test_typed_times_travel_through_parquet(tmp_path):
    with pytest.warns(ea.UnparsedTimeWarning):
        audit = ea.load(_log(tmp_path, ["2025-03-04T00:00:00Z", "soon"]), progress=False)
    back = ea.read_parquet(audit.to_parquet(tmp_path / "audit"))
    pd.testing.assert_frame_equal(back.receipts, audit.receipts, check_exact=True)


def test_the_window_counts_a_time_that_did_not_parse_as_unreadable(tmp_path):
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    with pytest.warns(ea.UnparsedTimeWarning):
        audit = ea.load(_log(tmp_path, ["2025-03-04T00:00:00Z", "soon", None]), progress=False)
    window = Window(since=parse_time("2025-03-01"), until=parse_time("2025-03-10"))
    placed = apply_window(ea.verify_all(audit), audit, window)
    counts = next(t for t in placed.to_dict()["tables"] if t["table"] == "receipts")
    assert (counts["inside"], counts["unreadable"], counts["undated"]) == (1, 1, 1)
