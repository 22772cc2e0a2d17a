"""plots: each picture draws exactly what the computing function returned."""

from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit import plots

SAMPLE = Path(__file__).parent.parent / "data"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(SAMPLE, progress=False)


def _bar_widths(ax) -> list[float]:
    return [patch.get_width() for patch in ax.patches]


def _tick_labels(ax) -> list[str]:
    return [label.get_text() for label in ax.get_yticklabels()]


def test_hash_verification_draws_one_bar_per_status_with_its_count(audit):
    checked = ea.plan_verdicts(audit.plans)
    _fig, ax = plt.subplots()
    returned = plots.plot_hash_verification(checked, ax=ax)
    assert returned is ax
    counts = checked["status"].value_counts(sort=False)
    assert _tick_labels(ax) == [str(s) for s in counts.index]
    assert _bar_widths(ax) == counts.tolist()
    assert ax.get_title() and ax.get_xlabel().startswith("recorded hashes")


def test_hash_verification_uses_the_current_axes_and_a_linear_scale_for_close_counts():
    checked = pd.DataFrame({"status": pd.Categorical(["match", "match", "known_variant"])})
    _fig, ax = plt.subplots()
    assert plots.plot_hash_verification(checked) is ax
    assert ax.get_xscale() == "linear"
    assert _bar_widths(ax) == [1, 2]  # categories in their own (sorted) order


def test_finding_counts_leaves_out_empty_rules_unless_asked(audit):
    findings = ea.check_receipts(audit)
    counts = findings["rule"].value_counts(sort=False)
    _fig, (left, right) = plt.subplots(1, 2)
    plots.plot_finding_counts(findings, ax=left)
    plots.plot_finding_counts(findings, show_empty=True, ax=right)
    assert _bar_widths(left) == counts[counts > 0].tolist()
    assert len(right.patches) == len(ea.RECEIPT_RULES)
    assert "findings" in left.get_xlabel()


def test_finding_counts_says_so_when_there_are_none():
    _fig, ax = plt.subplots()
    plots.plot_finding_counts(pd.DataFrame({"rule": pd.Series([], dtype=str)}), ax=ax)
    assert not ax.patches
    assert [t.get_text() for t in ax.texts] == ["no findings"]


def test_finding_counts_names_a_missing_column():
    _fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="'finding'"):
        plots.plot_finding_counts(pd.DataFrame({"rule": []}), by="finding", ax=ax)


def test_withheld_by_leaves_out_the_overall_row_and_labels_missing_groups(audit):
    summary = ea.withheld_summary(audit.receipts, by="withheld_audience", overall=True)
    _fig, ax = plt.subplots()
    plots.plot_withheld_by(summary, ax=ax)
    groups = summary.iloc[:-1]
    assert _bar_widths(ax) == groups["records_withheld"].fillna(0).astype(float).tolist()
    labels = _tick_labels(ax)
    assert "(all)" not in labels
    assert labels[-1] == "(none)"  # unguarded retrieval: no audience
    assert ax.get_ylabel() == "withheld_audience"
    assert ax.get_xlabel() == "records withheld (count)"


def test_withheld_by_draws_rates_as_percentages(audit):
    summary = ea.withheld_summary(audit.receipts, by="scope")
    _fig, ax = plt.subplots()
    plots.plot_withheld_by(summary, column="withheld_rate", ax=ax)
    expected = (summary["withheld_rate"].astype(float) * 100).tolist()
    assert np.allclose(_bar_widths(ax), expected)
    assert "%" in ax.get_xlabel()


def test_withheld_oracle_splits_each_audience_into_revealed_and_not(audit):
    oracle = ea.withheld_oracle(audit.receipts)
    _fig, ax = plt.subplots()
    plots.plot_withheld_oracle(oracle, ax=ax)
    n = len(oracle)
    widths = _bar_widths(ax)
    assert widths[:n] == oracle["queries_withheld"].astype(float).tolist()
    totals = np.add(widths[:n], widths[n:])
    assert totals.tolist() == oracle["queries"].astype(float).tolist()
    assert ax.get_legend() is not None


@pytest.fixture(scope="module")
def confidence_sweep(audit):
    grid = {"confidence_threshold": np.round(np.linspace(0, 1, 11), 2)}
    return ea.sweep(audit.decisions, audit.policies, grid)


def test_escalation_curve_draws_one_line_per_policy(audit, confidence_sweep):
    _fig, ax = plt.subplots()
    plots.plot_escalation_curve(confidence_sweep, threshold="confidence_threshold", ax=ax)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == list(audit.policies)
    baseline = confidence_sweep[confidence_sweep["policy_id"] == "baseline"]
    assert np.allclose(lines[0].get_ydata(), baseline["escalation_rate"] * 100)
    assert np.allclose(lines[0].get_xdata(), baseline["confidence_threshold"])
    assert ax.get_xlabel().startswith("confidence threshold")


def test_escalation_curve_marks_each_policy_own_value(audit, confidence_sweep):
    _fig, ax = plt.subplots()
    current = {p: audit.policies[p].escalation.confidence_threshold for p in audit.policies}
    plots.plot_escalation_curve(confidence_sweep, metric="flips", current=current, ax=ax)
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert [m.get_xdata()[0] for m in markers] == list(current.values())
    assert "own value" in ax.get_title()


def test_escalation_curve_refuses_rows_that_vary_another_threshold(audit):
    grid = {"confidence_threshold": [0.2, 0.6], "escalate_on_multi_doc_count": [2, 3]}
    swept = ea.sweep(audit.decisions, audit.policies, grid)
    _fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="escalate_on_multi_doc_count"):
        plots.plot_escalation_curve(swept, threshold="confidence_threshold", ax=ax)


def test_reason_mix_draws_every_reason_for_every_row(audit):
    as_written = ea.sweep(audit.decisions, audit.policies, {})
    reasons = [c for c in as_written.columns if c.startswith("reason_")]
    _fig, ax = plt.subplots()
    plots.plot_reason_mix(as_written, ax=ax)
    assert len(ax.patches) == len(reasons) * len(as_written)
    first_policy = _bar_widths(ax)[: len(reasons)]
    assert first_policy == as_written.iloc[0][reasons].astype(float).tolist()
    assert _tick_labels(ax) == [r.removeprefix("reason_") for r in reasons]


def test_dollar_signs_in_the_data_are_drawn_literally():
    import pandas as pd

    summary = pd.DataFrame(
        {"records_withheld": [3, 1]}, index=pd.Index(["$\\frac{a}{$", "a $5 fee"], name="x")
    )
    fig, ax = plt.subplots()
    plots.plot_withheld_by(summary, column="records_withheld", ax=ax)
    fig.canvas.draw()  # mathematics between two "$" would fail here on the first label
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    # "\$" is matplotlib's literal dollar sign.
    assert labels == ["\\$\\frac{a}{\\$", "a \\$5 fee"]
    plt.close(fig)
