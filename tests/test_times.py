"""Time columns typed as UTC times, the text kept where it is not one."""

from __future__ import annotations

import inspect
import json
import warnings
from pathlib import Path

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


# -- record_times: what verify says of the times -----------------------------------------------


def _times_found(audit, **options):
    found = ea.verify_all(audit, **options).findings
    found = found.loc[found["check"] == "record_times"]
    return [(int(row.source_line), row.rule, row.field) for row in found.itertuples()]


def test_a_receipt_dated_2099_and_one_dated_yesterday_are_notices_in_the_cli(tmp_path, capsys):
    stamps = ["2025-03-04T00:00:00Z", "2099-01-01T00:00:00Z", "yesterday", "9999-12-31T00:00:00Z"]
    path = _log(tmp_path, stamps)
    from explicit_audit.cli import main

    main(["verify", str(path)])
    out = capsys.readouterr().out
    assert (
        "logged.jsonl:2: future_time (notice) [q1]: timestamp 2099-01-01T00:00:00+00:00 is later"
        in out
    )
    assert (
        "logged.jsonl:3: unparsed_time (notice) [q2]: timestamp 'yesterday' is not an ISO 8601"
        in out
    )
    assert (
        "logged.jsonl:4: future_time (notice) [q3]: timestamp 9999-12-31T00:00:00Z is later" in out
    )
    assert main(["verify", str(path), "--json"]) == main(
        ["verify", str(_log(tmp_path, stamps[:1]))]
    )


def test_future_is_read_against_an_explicit_now_with_a_few_minutes_of_skew(tmp_path):
    stamps = ["2025-03-04T00:04:00Z", "2025-03-04T00:06:00+00:00", "2025-03-04T09:10:00+09:00"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        audit = ea.load(_log(tmp_path, stamps), progress=False)
    assert _times_found(audit, now="2025-03-04T00:00:00Z") == [
        (2, "future_time", "timestamp"),
        (3, "future_time", "timestamp"),
    ]
    # 00:06 is 5 minutes after 00:01, no more: within the skew.
    assert _times_found(audit, now="2025-03-04T00:01:00") == [(3, "future_time", "timestamp")]
    assert _times_found(audit) == []


def test_a_time_before_the_producers_existed_is_a_notice(tmp_path):
    stamps = ["1970-01-01T00:00:00Z", "2019-12-31T23:59:59Z", "2020-01-01T00:00:00Z", "0001-01-01"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        audit = ea.load(_log(tmp_path, stamps), progress=False)
    # The year 1 no nanosecond column holds: kept as text, and read from it.
    assert _times_found(audit) == [
        (1, "past_time", "timestamp"),
        (2, "past_time", "timestamp"),
        (4, "past_time", "timestamp"),
    ]
    found = ea.verify_all(audit).findings.set_index("source_line")["detail"]
    assert found[1] == (
        "timestamp 1970-01-01T00:00:00+00:00 is earlier than 2020-01-01T00:00:00+00:00, the "
        "earliest time a record of these kinds holds (earliest=, --earliest)"
    )
    assert found[4].startswith("timestamp 0001-01-01 is earlier than 2020-01-01")
    assert _times_found(audit, earliest="1960-01-01") == [(4, "past_time", "timestamp")]
    with pytest.raises(ea.AuditError, match="earliest: 'soon' is not a time"):
        ea.verify_all(audit, earliest="soon")


def test_now_and_earliest_are_options_of_verify(tmp_path, capsys):
    from explicit_audit.cli import main

    path = _log(tmp_path, ["2025-03-04T00:00:00Z", "2025-03-05T00:00:00Z"])
    assert main(["verify", str(path)]) == 0
    assert "(notice)" not in capsys.readouterr().out
    assert main(["verify", str(path), "--now", "2025-03-04T12:00", "--earliest", "2025-03-04"]) == 0
    out = capsys.readouterr().out
    assert "logged.jsonl:2: future_time (notice) [q1]: timestamp 2025-03-05T00:00:00+00:00" in out
    assert main(["verify", str(path), "--earliest", "2025-03-04T00:00:01"]) == 0
    assert "logged.jsonl:1: past_time (notice) [q0]" in capsys.readouterr().out
    assert main(["verify", str(path), "--now", "tomorrow"]) == 2
    assert "--now: 'tomorrow' is not a time" in capsys.readouterr().err


def test_the_dask_engine_finds_the_same_times(tmp_path):
    import dask

    stamps = ["2025-03-04T00:00:00Z", "2099-01-01T00:00:00Z", "yesterday", "1999-01-01"] * 40
    path = _log(tmp_path, stamps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        memory = _times_found(ea.load(path, progress=False), now="2026-01-01")
        with dask.config.set(scheduler="synchronous"):
            lazy = ea.load(path, progress=False, engine="dask", blocksize=8192)
            assert lazy.tables["receipts"].npartitions > 1
            assert _times_found(lazy, now="2026-01-01") == memory
    assert len(memory) == 120


# -- one time per record, read alike by the window, the trend and record_times -----------------


def _placed(audit, since=None, until=None):
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    window = Window(
        since=parse_time(since) if since else None, until=parse_time(until) if until else None
    )
    placed = apply_window(ea.verify_all(audit), audit, window)
    counts = next(t for t in placed.to_dict()["tables"] if t["table"] == "receipts")
    return placed, (counts["inside"], counts["before"], counts["after"])


@pytest.mark.parametrize(
    ("since", "until", "where"),
    [
        ("9999-01-01", None, (0, 1, 0)),
        ("2300-01-01", None, (0, 1, 0)),
        ("2000-01-01", "9999-12-31", (1, 0, 0)),
        ("2000-01-01", "2262-04-12", (1, 0, 0)),
        ("0001-01-02", "2025-03-01", (0, 0, 1)),
    ],
)
def test_a_window_bound_past_the_nanosecond_range_places_records_on_their_side(
    tmp_path, since, until, where
):
    audit = ea.load(_log(tmp_path, ["2025-03-04T10:00:00Z"]), progress=False)
    placed, counts = _placed(audit, since, until)
    assert counts == where
    iso = placed.to_dict()
    assert iso["since"] == f"{since}T00:00:00Z"
    assert iso["until"] in (None, f"{until}T00:00:00Z")


def test_a_window_bound_is_written_to_the_nanosecond():
    from explicit_audit.verdicts.window import Window, parse_time

    window = Window(since=parse_time("2025-03-04T00:00:00.000000001Z"))
    assert window.describe() == "[2025-03-04T00:00:00.000000001Z, open)"


def test_a_time_column_with_text_and_numbers_dates_its_text_for_trend_and_window(tmp_path):
    path = tmp_path / "mixed.jsonl"
    values = [
        {"timestamp": "2025-03-04T12:00:00Z", **make_receipt(kind="miss")},
        {"timestamp": 1741046400, **make_receipt(kind="miss")},
    ]
    path.write_text("".join(json.dumps(value) + "\n" for value in values), "utf-8")
    audit = ea.load(path, progress=False)
    assert audit.receipts["timestamp"].dtype == object
    _, counts = _placed(audit, "2025-03-04", "2025-03-05")
    table = ea.trend(audit, "D")
    day = pd.Timestamp("2025-03-04", tz="UTC")
    assert counts[0] == 1 == table.loc[day, "records.receipts"]
    assert table.loc[day, "findings.receipt_rules"] == 1
    assert table["records.receipts"].sum() == 2


@pytest.mark.parametrize("freq", ["W", "MS", "ME", "YE", "QS"])
def test_a_trend_holds_records_at_the_ends_of_the_nanosecond_range(tmp_path, freq):
    stamps = ["2025-03-04T10:00:00Z", "2262-04-11T12:00:00Z", "1677-09-22T12:00:00Z"]
    audit = ea.load(_log(tmp_path, stamps), progress=False)
    assert audit.receipts["timestamp"].notna().all()
    table = ea.trend(audit, freq)
    assert table.loc[table.index.notna(), "records.receipts"].sum() == 3


def test_a_presentations_time_places_its_findings_by_its_own_row(tmp_path):
    receipt = {"timestamp": "2025-03-01T00:00:00Z", **make_receipt()}
    (tmp_path / "a_receipts.jsonl").write_text(json.dumps(receipt) + "\n", "utf-8")
    presented = json.loads(
        (Path(__file__).parent / "data/engram/presentations.jsonl")
        .read_text("utf-8")
        .splitlines()[0]
    )
    presented["receipt"]["generatedAt"] = "2099-01-01T00:00:00Z"
    (tmp_path / "b_presentations.jsonl").write_text(json.dumps(presented) + "\n", "utf-8")
    audit = ea.load(tmp_path, progress=False)
    verification = ea.verify_all(audit)
    found = verification.findings
    future = found[found["rule"] == "future_time"]
    assert future["kind"].astype(str).tolist() == ["presentations"]
    table = ea.trend(audit, "YS", verification=verification)
    assert table.loc[pd.Timestamp("2099-01-01", tz="UTC"), "notices.record_times"] == 1
    assert table.loc[pd.Timestamp("2025-01-01", tz="UTC"), "notices.record_times"] == 0
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    later = apply_window(verification, audit, Window(since=parse_time("2099-01-01")))
    assert "future_time" in set(later.verification.findings["rule"].astype(str))


def test_record_times_notes_every_time_the_loader_could_not_read(tmp_path):
    stamps = ["2025-03-04T10:00:00Z", "2025-W10-2", "2025-03-04T10:00:00,5Z", " 2025-03-04", "x"]
    with pytest.warns(ea.UnparsedTimeWarning):
        audit = ea.load(_log(tmp_path, stamps), progress=False)
    found = ea.verify_all(audit).findings
    noted = found[found["check"] == "record_times"]
    assert sorted(zip(noted["rule"].astype(str), noted["source_line"], strict=True)) == [
        ("unparsed_time", line) for line in (2, 3, 5)
    ]
    assert audit.receipts["timestamp"].notna().tolist() == [True, False, False, True, False]
    with pytest.warns(ea.UnparsedTimeWarning):
        far = ea.load(_log(tmp_path, ["9999-12-31T00:00:00Z"]), progress=False)
    rules = ea.verify_all(far).findings["rule"].astype(str).tolist()
    assert rules == ["future_time"]


def test_nanosecond_times_with_findings_and_a_far_time_are_read_alike_by_every_path(tmp_path):
    """A 9-digit fraction with a finding about it; a year-9999 time beside it in a mixed column."""
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    def write(name, stamps):
        values = [{"timestamp": stamp, **make_receipt(kind="miss")} for stamp in stamps]
        (tmp_path / name).write_text("".join(json.dumps(v) + "\n" for v in values), "utf-8")
        return tmp_path / name

    typed = ea.load(write("typed.jsonl", ["2025-03-04T10:00:00.123456789Z"]), progress=False)
    assert typed.receipts["timestamp"].dt.unit == "ns"
    table = ea.trend(typed)
    assert table[["records.receipts", "findings.receipt_rules"]].sum().tolist() == [1, 1]
    stamps = ["9999-12-31T00:00:00Z", 5, *["2025-03-04T10:00:00Z"] * 30]
    mixed = write("mixed.jsonl", [*stamps, "2025-03-04T00:00:00.123456789Z"])
    window = Window(since=parse_time("9999-01-01"))
    placed = []
    for engine, options in (("pandas", {}), ("dask", {"blocksize": 2000})):
        audit = ea.load(mixed, progress=False, engine=engine, **options)
        counts = apply_window(ea.verify_all(audit), audit, window).to_dict()["tables"]
        receipts = next(t for t in counts if t["table"] == "receipts")
        placed.append((receipts["inside"], receipts["before"], receipts["unreadable"]))
    assert placed == [(1, 31, 1)] * 2


def test_a_time_past_2262_kept_as_text_is_placed_as_record_times_reads_it(tmp_path):
    from explicit_audit._core.times import iso_utc
    from explicit_audit.report._time_range import table_times
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    values = [
        {"timestamp": stamp, **make_receipt(kind="miss")}
        for stamp in ("9999-12-31T00:00:00Z", "2025-03-04T10:00:00Z")
    ]
    path = tmp_path / "far.jsonl"
    path.write_text("".join(json.dumps(value) + "\n" for value in values), "utf-8")
    for engine in ("pandas", "dask"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
            audit = ea.load(path, progress=False, engine=engine)
        verification = ea.verify_all(audit)
        assert "future_time" in set(verification.findings["rule"].astype(str))
        window = Window(since=parse_time("9999-01-01"), undated="skip")
        placed = apply_window(verification, audit, window)
        counts = next(t for t in placed.to_dict()["tables"] if t["table"] == "receipts")
        assert (counts["inside"], counts["before"], counts["unreadable"]) == (1, 1, 0)
        kept = placed.verification.findings
        assert sorted(set(kept["source_line"])) == [1], engine
        table = ea.trend(audit, "YS", verification=verification)
        assert table.loc[pd.Timestamp("9999-01-01", tz="UTC"), "records.receipts"] == 1
        period = table_times(audit)["receipts"]
        assert (period.dated, iso_utc(period.last)) == (2, "9999-12-31T00:00:00Z")


def test_record_times_judges_the_text_of_a_column_that_mixes_text_and_numbers(tmp_path):
    """The text of a mixed column is judged as a typed column's is, on both engines; numbers not."""
    import dask

    now = "2026-01-01"
    stamps = ["yesterday", "2099-01-01T00:00:00Z", "9999-12-31T00:00:00Z", "1999-01-01T00:00:00Z"]
    fine = ["2025-03-04T12:00:00Z"] * 20
    (tmp_path / "typed").mkdir()
    (tmp_path / "mixed").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        typed = ea.verify_all(
            ea.load(_log(tmp_path / "typed", [*stamps, *fine]), progress=False), now=now
        )
    typed = typed.findings.loc[typed.findings["check"] == "record_times"]
    assert list(zip(typed["source_line"], typed["rule"].astype(str), strict=True)) == [
        (1, "unparsed_time"),
        (2, "future_time"),
        (3, "future_time"),
        (4, "past_time"),
    ]
    # Numbers beside the text, before and after it: one partition of numbers, one of text.
    numbers = [1741046400 + n for n in range(40)]
    mixed = _log(tmp_path / "mixed", [*numbers, *stamps, *fine, *numbers, True])
    audit = ea.load(mixed, progress=False)
    assert audit.receipts["timestamp"].dtype == object
    found = ea.verify_all(audit, now=now).findings
    found = found.loc[found["check"] == "record_times"]
    assert found["detail"].tolist() == typed["detail"].tolist()
    assert found["source_line"].tolist() == [41, 42, 43, 44]
    with dask.config.set(scheduler="synchronous"):
        lazy = ea.load(mixed, progress=False, engine="dask", blocksize=4096)
        assert lazy.tables["receipts"].npartitions > 2
        lazy_found = ea.verify_all(lazy, now=now).findings
    lazy_found = lazy_found.loc[lazy_found["check"] == "record_times"]
    pd.testing.assert_frame_equal(
        lazy_found.reset_index(drop=True), found.reset_index(drop=True), check_dtype=False
    )
