"""Trends per period: every record and finding counted once, in the period of its record."""

from __future__ import annotations

import itertools
import json
import warnings

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from conftest import make_decision, make_receipt

import explicit_audit as ea
from explicit_audit.plots import plot_trend
from explicit_audit.plots.trend import trend_columns


@pytest.fixture(scope="module")
def bundled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load("data/", progress=False)
    return audit, ea.verify_all(audit)


def _write(path, values) -> None:
    path.write_text("".join(json.dumps(value) + "\n" for value in values), encoding="utf-8")


@pytest.fixture
def dated(tmp_path):
    """Receipts on the 3rd and 5th of March (none on the 4th), one undated; decisions."""
    logs = tmp_path / "logs"
    logs.mkdir()
    day3 = {"timestamp": "2025-03-03T10:00:00Z", **make_receipt()}
    late = {
        "timestamp": "2025-03-03T23:59:59+00:00",
        **make_receipt(withheld={"audienceId": "peer", "count": 4}),
    }
    day5 = {"timestamp": "2025-03-05T01:00:00+09:00", **make_receipt(kind="miss")}  # 4th in UTC
    day5b = {
        "timestamp": "2025-03-05T08:00:00Z",
        **make_receipt(withheld={"audienceId": "peer", "count": 0}),
    }
    undated = make_receipt(kind="miss")
    _write(logs / "receipts.jsonl", [day3, late, day5, day5b, undated])
    decisions = [
        {"ts": "2025-03-03T12:00:00Z", **make_decision("d1")},
        {"ts": "2025-03-05T12:00:00Z", **make_decision("d2")},
        make_decision("d3"),
    ]
    _write(logs / "decisions.jsonl", decisions)
    return logs


def test_each_record_and_finding_falls_in_its_records_period(dated):
    audit = ea.load(dated, progress=False)
    verification = ea.verify_all(audit)
    table = ea.trend(audit, "D", verification=verification)
    days = [pd.Timestamp(day, tz="UTC") for day in ("2025-03-03", "2025-03-04", "2025-03-05")]
    assert table.index[:3].tolist() == days
    assert pd.isna(table.index[3]) and len(table) == 4
    assert table.index.name == "period"
    # 2025-03-05T01:00+09:00 is the 4th in UTC: the gap-free grid holds it.
    assert table["records.receipts"].tolist() == [2, 1, 1, 1]
    assert table["withheld.count"].tolist() == [1 + 4, 1, 0, 1]
    assert table["withheld.receipts"].tolist() == [2, 1, 0, 1]
    assert table["records.decisions"].tolist() == [1, 0, 1, 1]
    # The 4th's kind_record_ids finding is dated; the undated receipt's is not.
    found = verification.findings
    receipt_rules = found[found["check"] == "receipt_rules"]
    assert len(receipt_rules) == table["findings.receipt_rules"].sum() >= 2
    rows = audit.receipts["timestamp"].reindex(receipt_rules["row"].astype(int))
    expected = rows.dt.floor("D").value_counts(dropna=False)
    for day, count in expected.items():
        key = table.index.isna() if pd.isna(day) else table.index == day
        assert table.loc[key, "findings.receipt_rules"].item() == count
    # Every check that looked at records has a column, found something or not; one that
    # looked at none has none (a column of zeros would read as clean).
    ran = {check for check, examined in verification.checked.items() if examined}
    not_run = set(verification.checked) - ran
    assert {f"findings.{check}" for check in ran} <= set(table.columns)
    assert not_run and not {f"findings.{check}" for check in not_run} & set(table.columns)


def test_escalation_rate_is_per_period_and_nan_where_nothing_was_decided(dated):
    table = ea.trend(ea.load(dated, progress=False))
    assert table["escalation.decisions"].tolist() == [1, 0, 1, 1]
    assert table["escalation.escalated"].tolist() == [1, 0, 1, 1]
    rate = table["escalation.rate"]
    assert rate.iloc[0] == 1.0 and pd.isna(rate.iloc[1])
    assert table["escalation.reason.low_confidence"].tolist() == [1, 0, 1, 1]
    columns = list(table.columns)
    assert columns.index("escalation.rate") == columns.index("escalation.escalated") + 1


def test_bundled_data_every_count_sums_to_what_it_counts(bundled):
    audit, verification = bundled
    table = ea.trend(audit, verification=verification)
    for name, frame in audit.tables.items():
        assert table[f"records.{name}"].sum() == len(frame), name
    found = verification.findings
    for severity, prefix in (("error", "findings"), ("notice", "notices")):
        counts = found[found["severity"] == severity]["check"].astype(str).value_counts()
        for check, count in counts.items():
            assert table[f"{prefix}.{check}"].sum() == count, (prefix, check)
        total = sum(table[c].sum() for c in table.columns if c.startswith(f"{prefix}."))
        assert total == counts.sum()
    assert table["withheld.count"].sum() == audit.receipts["withheld_count"].sum()
    recorded = audit.decisions["recorded_escalate_to_26b"]
    assert table["escalation.escalated"].sum() == recorded.sum()
    dated = table.index.notna()
    steps = table.index[dated].to_series().diff().dropna()
    assert (steps == pd.Timedelta("1D")).all(), "a day is missing from the grid"


def test_weeks_and_months_hold_the_same_totals(bundled):
    audit, verification = bundled
    daily = ea.trend(audit, verification=verification).drop(columns="escalation.rate")
    for freq in ("W", "MS", "ME", "2W", "6h"):
        coarse = ea.trend(audit, freq, verification=verification).drop(columns="escalation.rate")
        pd.testing.assert_series_equal(coarse.sum(), daily.sum(), check_names=False)
        assert len(coarse) < len(daily) or freq == "6h"


def test_the_dask_engine_gives_the_same_trend(dated):
    pandas_audit = ea.load(dated, progress=False)
    lazy = ea.load(dated, progress=False, engine="dask")
    pd.testing.assert_frame_equal(ea.trend(lazy), ea.trend(pandas_audit))


def test_plot_trend_draws_the_dated_periods_and_counts_the_undated_in_the_legend(dated):
    table = ea.trend(ea.load(dated, progress=False))
    fig, ax = plt.subplots()
    try:
        assert plot_trend(table, ["records.receipts", "withheld.count"], ax=ax) is ax
        lines = ax.get_lines()
        assert [len(line.get_xdata()) for line in lines] == [3, 3]
        labels = [text.get_text() for text in ax.get_legend().get_texts()]
        assert labels == ["records.receipts (+1 undated)", "withheld.count (+1 undated)"]
        assert ax.yaxis.get_major_formatter()(1828, 0) == "1,828"
        ax.clear()
        plot_trend(table, ["escalation.rate"], ax=ax)
        assert ax.get_ylabel() == "decisions escalated to 26B (%)"
        ax.clear()
        plot_trend(table, ax=ax)  # by default the checks that found anything
        drawn = [line.get_label().split(" ")[0] for line in ax.get_lines()]
        assert drawn == trend_columns(table) and drawn
        with pytest.raises(ValueError, match="nope"):
            plot_trend(table, ["nope"], ax=ax)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("freq", ["D", "W", "2W", "MS", "ME", "QE"])
def test_the_row_labelled_t_holds_what_a_window_from_t_to_the_next_label_holds(tmp_path, freq):
    """Each period is labelled by its start, whatever end pandas anchors it on."""
    from explicit_audit.verdicts.window import Window, apply_window

    stamps = [
        "2025-01-31T23:59:59Z",  # a month's and a quarter's last second
        "2025-02-01T00:00:00Z",
        "2025-03-02T23:59:59Z",  # a Sunday's last second
        "2025-03-03T00:00:00Z",  # the Monday after
        "2025-03-09T12:00:00Z",
        "2025-03-31T23:59:59Z",
        "2025-04-01T00:00:00Z",
    ]
    receipts = [
        {"timestamp": stamp, **make_receipt(withheld={"audienceId": "peer", "count": day})}
        for day, stamp in enumerate(stamps, start=1)
    ]
    receipts[4]["kind"] = "miss"  # a miss that exposed a record: a finding, in the week of 3 March
    _write(tmp_path / "receipts.jsonl", receipts)
    audit = ea.load(tmp_path, progress=False)
    verification = ea.verify_all(audit)
    table = ea.trend(audit, freq, verification=verification)
    labels = table.index[table.index.notna()]
    if freq.startswith("W") or freq == "2W":
        assert (labels.day_of_week == 0).all(), "a week starts on Monday"
    times = pd.to_datetime(stamps, utc=True)
    assert times.min() >= labels[0]
    assert table.filter(like="findings.").to_numpy().sum() > 0
    bounds = [*labels, pd.Timestamp.max.tz_localize("UTC")]
    for start, end in itertools.pairwise(bounds):
        inside = ((times >= start) & (times < end)).sum()
        assert table.loc[start, "records.receipts"] == inside, (freq, start)
        placed = apply_window(verification, audit, Window(since=start, until=end))
        found = placed.verification.findings
        errors = found[found["severity"] == "error"]["check"].astype(str).value_counts()
        for check, count in errors.items():
            assert table.loc[start, f"findings.{check}"] == count, (freq, start, check)
        assert table.loc[start].filter(like="findings.").sum() == errors.sum(), (freq, start)


def test_a_time_key_past_the_heads_gets_the_pandas_trend_and_window_on_dask(tmp_path):
    """The Dask load is planned again where its heads did not show the time key, as for checks."""
    from explicit_audit.verdicts.window import Window, apply_window, parse_time

    receipts = [make_receipt() for _ in range(40)]
    receipts += [
        {"timestamp": f"2025-03-0{day}T10:00:00Z", **make_receipt(kind="miss")} for day in (5, 6)
    ]
    _write(tmp_path / "receipts.jsonl", receipts)
    eager = ea.load(tmp_path, progress=False)
    lazy = ea.load(tmp_path, progress=False, engine="dask", blocksize=2000, sample_bytes=2000)
    pd.testing.assert_frame_equal(ea.trend(lazy), ea.trend(eager))
    assert ea.verify_all(lazy).checked == ea.verify_all(eager).checked  # record_times: 42
    window = Window(since=parse_time("2025-03-06"))
    placed = [apply_window(ea.verify_all(a), a, window).to_dict() for a in (eager, lazy)]
    assert placed[0] == placed[1]
    counts = next(t for t in placed[0]["tables"] if t["table"] == "receipts")
    assert (counts["inside"], counts["before"], counts["undated"]) == (1, 1, 40)
