"""widgets and views: drive each panel's controls, check its view follows."""

from __future__ import annotations

import base64
import html
import json
import re
import warnings
from pathlib import Path

import ipywidgets
import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit import widgets
from explicit_audit.views import (
    ALL,
    NO_AUDIENCE,
    OPEN_END,
    OPEN_START,
    escalation_curve_view,
    flips_view,
    plan_edit_view,
    plan_view,
    sweep_view,
    time_range,
    window_is_empty,
    window_readout,
    withheld_view,
)
from explicit_audit.widgets.keyboard import control_class
from explicit_audit.widgets.tables import compact_withheld
from explicit_audit.widgets.twin import twin_html

SAMPLE = Path(__file__).parent.parent / "data"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(SAMPLE, progress=False)


def _shown(panel, index: int = 0) -> dict:
    """What the panel's output widget holds for the view at ``index``; for a table, the
    markup of the HTML widget it holds."""
    (output,) = panel.outputs[index].outputs
    live = panel.live[index]
    if isinstance(live, ipywidgets.HTML):
        assert output["data"][WIDGET_VIEW]["model_id"] == live.model_id
        return {"text/html": live.value}
    return output["data"]


# Plan editor


def test_plan_view_rebuilds_the_recorded_hash_of_every_matching_plan(audit):
    checked = ea.plan_verdicts(audit.plans)
    matching = audit.plans[checked["match"].to_numpy(dtype=bool)].head(25)
    for plan, recorded in zip(matching["plan"], matching["retrieval_plan_hash"], strict=True):
        preview = plan_view(plan)
        assert preview.plan_hash == recorded
        assert preview.plan_hash == ea.plan_hash(plan)


def test_plan_panel_follows_each_control():
    panel = widgets.plan_panel({"retrieval_keywords": "budget", "top_k": 8, "shard_ids": ["s1"]})
    start = panel.result
    assert json.loads(start.canonical_json)["top_k"] == 8

    panel.controls["top_k"].value = "5"
    assert json.loads(panel.result.canonical_json)["top_k"] == 5
    assert panel.result.plan_hash != start.plan_hash
    assert panel.result.plan_hash in _shown(panel)["text/plain"]

    panel.controls["shard_ids"].value = "s2, s3,"
    assert json.loads(panel.result.canonical_json)["shard_ids"] == ["s2", "s3"]

    panel.controls["retrieval_keywords"].value = "서울"
    assert '"retrieval_keywords":"\\uc11c\\uc6b8"' in panel.result.canonical_json


def test_an_mt_field_adds_the_block_and_emptying_it_restores_the_pre_mt_hash():
    panel = widgets.plan_panel({"retrieval_keywords": "budget", "top_k": 8})
    before = panel.result
    assert not before.mt_block and before.hash_unchanged_by_mt

    panel.controls["mt_engine"].value = "nllb-200"
    with_mt = panel.result
    assert with_mt.mt_block and '"mt":{"engine":"nllb-200"' in with_mt.canonical_json
    assert with_mt.plan_hash != before.plan_hash
    assert with_mt.pre_mt_hash == before.plan_hash
    assert "present" in _shown(panel)["text/plain"]

    panel.controls["mt_engine"].value = ""
    assert panel.result.plan_hash == before.plan_hash
    assert not panel.result.mt_block


def test_plan_panel_starts_from_a_flat_or_canonical_plan():
    flat = {"retrieval_keywords": "k", "top_k": 3, "mt_engine": "e", "source_lang": "ko"}
    canonical = {"retrieval_keywords": "k", "top_k": 3, "mt": {"engine": "e", "source_lang": "ko"}}
    assert widgets.plan_panel(flat).result.plan_hash == ea.plan_hash(flat)
    assert widgets.plan_panel(canonical).result.plan_hash == ea.plan_hash(flat)
    assert widgets.plan_panel(flat).controls["source_lang"].value == "ko"


def test_plan_view_shows_why_a_plan_cannot_be_hashed():
    preview = plan_view({"top_k": "8.0"})
    assert preview.error and "top_k" in preview.error
    assert "error" in repr(preview) and preview.plan_hash == ""
    unknown = plan_view({"ranker": "bm25"})
    assert unknown.error and "ranker" in unknown.error


def test_plan_preview_renders_as_escaped_html():
    preview = plan_view(retrieval_keywords="<b>x</b>")
    assert "<b>x</b>" not in preview._repr_html_()
    assert "&lt;b&gt;" in preview._repr_html_()


# Withheld explorer


def test_withheld_view_defaults_equal_the_summary_by_scope(audit):
    expected = ea.withheld_summary(audit.receipts, by="scope", overall=True).round(3)
    pd.testing.assert_frame_equal(widgets.withheld_view(audit), expected)


def test_withheld_panel_follows_audience_space_and_grouping(audit):
    receipts = audit.receipts
    panel = widgets.withheld_panel(audit)
    assert panel.result.loc["(all)", "receipts"] == len(receipts)

    panel.controls["audience"].value = "peer"
    peer = receipts[receipts["withheld_audience"] == "peer"]
    assert panel.result.loc["(all)", "receipts"] == len(peer)
    assert panel.result.loc["(all)", "records_withheld"] == peer["withheld_count"].sum()

    panel.controls["space"].value = "harbor-ops"
    both = peer[peer["active_space"] == "harbor-ops"]
    assert panel.result.loc["(all)", "receipts"] == len(both)

    panel.controls["by"].value = "outcome"
    assert panel.result.index.name == "outcome"
    assert "receipts_withheld" in _shown(panel)["text/html"]

    panel.controls["audience"].value = NO_AUDIENCE
    panel.controls["space"].value = ALL
    unguarded = receipts["withheld_audience"].isna()
    assert panel.result.loc["(all)", "receipts"] == int(unguarded.sum())


def test_withheld_panel_window_starts_open_at_both_ends(audit):
    receipts = audit.receipts
    panel = widgets.withheld_panel(audit)
    window = panel.controls["window"]
    days = time_range(receipts)
    labels = [label for label, _ in window.options]
    assert labels == ["open (start)", *(f"{day:%Y-%m-%d}" for day in days), "open (end)"]
    # Both handles at the open ends: the first and last options, distinct values.
    assert window.index == (0, len(labels) - 1)
    assert window.value == (OPEN_START, OPEN_END)
    assert not window.readout  # the panel writes the window out in full instead
    assert panel.labels["window"].value.startswith("open → open")
    assert panel.result.loc["(all)", "receipts"] == len(receipts)  # undated receipts count too


def test_withheld_panel_window_moves_each_handle_to_every_option(audit):
    receipts = audit.receipts
    panel = widgets.withheld_panel(audit)
    window = panel.controls["window"]
    days = time_range(receipts)
    last = len(window.options) - 1
    window.index = (1, 3)  # options: open, days[0], days[1], ...
    assert window.value == (days[0], days[2])
    inside = ea.within_time_window(receipts, days[0], days[2])
    assert 0 < len(inside) < receipts["timestamp"].notna().sum()
    assert panel.result.loc["(all)", "receipts"] == len(inside)
    assert panel.labels["window"].value.startswith(f"{days[0]:%Y-%m-%d} → {days[2]:%Y-%m-%d}")

    # The end handle back to the open end: the window reopens, it does not collapse.
    window.index = (1, last)
    assert window.index == (1, last) and window.value == (days[0], OPEN_END)
    assert panel.labels["window"].value.startswith(f"{days[0]:%Y-%m-%d} → open")
    from_first = ea.within_time_window(receipts, days[0], None)
    assert panel.result.loc["(all)", "receipts"] == len(from_first)

    window.index = (0, last)
    assert window.value == (OPEN_START, OPEN_END)
    assert panel.result.loc["(all)", "receipts"] == len(receipts)

    window.index = (last - 1, last)  # the last day alone, up to the open end
    late = ea.within_time_window(receipts, days[-1], None)
    assert panel.result.loc["(all)", "receipts"] == len(late) == 0  # days[-1] is the day after
    window.index = (last - 2, last - 1)
    assert panel.result.loc["(all)", "receipts"] == len(
        ea.within_time_window(receipts, days[-2], days[-1])
    )


@pytest.mark.parametrize(
    ("handles", "readout"),
    [
        ("end onto the open start", "open → before the first day: an empty window"),
        ("start onto the open end", "after the last day → open: an empty window"),
        ("both on one day", ": an empty window, no receipt in it"),
    ],
)
def test_withheld_panel_window_narrowed_to_nothing_keeps_nothing(audit, handles, readout):
    panel = widgets.withheld_panel(audit)
    window = panel.controls["window"]
    last = len(window.options) - 1
    index = {"end onto the open start": (0, 0), "start onto the open end": (last, last)}
    window.index = index.get(handles, (2, 2))
    assert window_is_empty(window.value)
    # Narrowing the window to nothing shows nothing, never every receipt.
    assert panel.result.loc["(all)", "receipts"] == 0
    assert panel.result.loc["(all)", "records_withheld"] == 0
    label = panel.labels["window"].value
    assert "an empty window, no receipt in it" in label
    assert readout in label
    # Widened again, every receipt is back.
    window.index = (0, last)
    assert panel.result.loc["(all)", "receipts"] == len(audit.receipts)


def test_an_empty_window_on_the_dask_engine_keeps_nothing_either(audit):
    days = time_range(audit.receipts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        lazy = ea.load(SAMPLE, engine="dask", progress=False)
    for window in [(OPEN_START, OPEN_START), (OPEN_END, OPEN_END), (days[1], days[1])]:
        shown = withheld_view(lazy, window=window)
        assert shown.loc["(all)", "receipts"] == 0, window
    assert withheld_view(lazy, window=(days[0], OPEN_END)).loc["(all)", "receipts"] == len(
        ea.within_time_window(audit.receipts, days[0], None)
    )


def test_window_readout_names_each_bound():
    first = pd.Timestamp("2025-03-04", tz="UTC")
    assert window_readout((first, OPEN_END)).startswith("2025-03-04 → open")
    assert window_readout((OPEN_START, first)).startswith("open → 2025-03-04")
    assert window_readout((None, None)) == window_readout((OPEN_START, OPEN_END))
    assert OPEN_START != OPEN_END and OPEN_START.label == "open (start)"


def test_withheld_panel_chart_follows_the_window(audit):
    panel = widgets.withheld_panel(audit)
    chart = panel.results[1]
    assert chart.png.startswith(b"\x89PNG")
    assert "open → open" in chart.caption
    total = int(panel.result.loc["(all)", "records_withheld"])
    assert f"(all): {total:,}." in chart.caption
    shown = panel.outputs[1].outputs
    panel.controls["window"].index = (2, 4)
    narrower = int(panel.result.loc["(all)", "records_withheld"])
    assert narrower < total
    assert f"(all): {narrower:,}." in panel.results[1].caption
    # The live chart: one widget, shown once, its data and caption replaced in place.
    live = panel.live[1]
    assert WIDGET_VIEW in _shown(panel, 1) and shown is panel.outputs[1].outputs
    assert live.caption == panel.results[1].caption
    bars = {bar["label"]: bar["value"] for bar in live.spec["bars"]}
    expected = panel.result.drop(index="(all)")["records_withheld"]
    assert bars == {str(k): float(v) for k, v in expected.items()}
    # Each bar's text as the table writes the count: thousands separated.
    texts = {bar["label"]: bar["text"] for bar in live.spec["bars"]}
    assert texts == {str(k): f"{int(v):,}" for k, v in expected.items()}
    assert "Bar chart: x axis records withheld (count), y axis scope" in live.alt


def test_withheld_panel_has_no_window_without_timestamps(audit):
    receipts = audit.receipts.drop(columns=["timestamp"])
    panel = widgets.withheld_panel(receipts)
    assert "window" not in panel.controls
    assert time_range(receipts) is None


def test_withheld_view_of_an_audience_that_never_appears_is_empty(audit):
    table = widgets.withheld_view(audit, audience="nobody")
    assert table.loc["(all)", "receipts"] == 0


# Routing sweep explorer


def test_sweep_view_defaults_are_each_policy_as_written(audit):
    table = sweep_view(audit)
    frame = audit.policies.to_frame().set_index("policy_id")
    for axis in ("context_char_cap_4b", "escalate_on_multi_doc_count", "confidence_threshold"):
        assert table[axis].tolist() == frame[axis].tolist()
    assert (table["escalation_change"] == 0).all()
    for policy_id, policy in audit.policies.items():
        replayed = ea.replay(audit.decisions, policy)
        assert table.loc[policy_id, "escalations"] == int(replayed["escalate_to_26b"].sum())


def test_sweep_panel_follows_sliders_and_variant(audit):
    panel = widgets.sweep_panel(audit)
    assert panel.values["own_thresholds"] is True
    panel.controls["confidence_threshold"].value = 0.8
    assert panel.values["own_thresholds"] is False  # a moved slider applies to every variant
    table = panel.result
    assert (table["confidence_threshold"] == 0.8).all()
    for policy_id, policy in audit.policies.items():
        moved = policy.with_escalation(
            confidence_threshold=0.8,
            context_char_cap_4b=panel.values["context_char_cap_4b"],
            escalate_on_multi_doc_count=panel.values["escalate_on_multi_doc_count"],
        )
        replayed = ea.replay(audit.decisions, moved)
        assert table.loc[policy_id, "escalations"] == int(replayed["escalate_to_26b"].sum())

    before = panel.result.loc["strict", "escalations"]
    panel.controls["context_char_cap_4b"].value = 1000
    assert panel.result.loc["strict", "escalations"] > before

    panel.controls["variant"].value = "strict"
    assert panel.result.index.tolist() == ["strict"]
    flips = panel.results[2]
    assert set(flips["policy_id"]) == {"strict"} and len(flips) <= 10
    # Compact: each flipped decision labelled by its variant, yes or no for the escalations.
    shown = _shown(panel, 2)["text/html"]
    assert "<tr><th>strict</th>" in shown and "<td>yes</td>" in shown
    assert "<th title='decision_id: decision id'>decision</th>" in shown


def test_flips_view_lists_exactly_the_decisions_that_flip(audit):
    table = sweep_view(audit, variant="cost_saver", confidence_threshold=0.7)
    flips = flips_view(audit, variant="cost_saver", confidence_threshold=0.7, limit=None)
    assert len(flips) == table.loc["cost_saver", "flips"]
    assert (flips["escalate_to_26b"] != flips["recorded_escalate_to_26b"]).all()
    assert (flips["escalate_to_26b"]).sum() == table.loc["cost_saver", "flips_to_26b"]


def test_flips_view_lists_the_rows_replay_decides_otherwise_in_table_order(audit):
    from explicit_audit.decisions.routing import escalates

    policy = audit.policies["baseline"].with_escalation(confidence_threshold=0.7)
    replayed = ea.replay(audit.decisions, policy)["escalate_to_26b"].to_numpy(dtype=bool)
    assert (escalates(audit.decisions, policy) == replayed).all()
    recorded = audit.decisions["recorded_escalate_to_26b"].to_numpy(dtype=bool)
    expected = audit.decisions.index[replayed != recorded]
    every = flips_view(audit, variant="baseline", confidence_threshold=0.7, limit=None)
    assert list(every["decision_row"]) == list(expected)
    first = flips_view(audit, variant="baseline", confidence_threshold=0.7, limit=4)
    pd.testing.assert_frame_equal(first, every.head(4))


def test_only_named_counts_each_policy_on_its_own_decisions(audit):
    table = sweep_view(audit, only_named=True)
    named = audit.decisions["policy_id"].astype(str).value_counts()
    for policy_id in audit.policies:
        assert table.loc[policy_id, "decisions"] == named[policy_id]
    flips = flips_view(audit, only_named=True, limit=None)
    assert (flips["policy_id"] == flips["recorded_policy_id"]).all()


def test_an_unknown_variant_is_named(audit):
    with pytest.raises(ValueError, match="no policy variant 'lenient'"):
        sweep_view(audit, variant="lenient")


# Plan editor: what the seed would reject or coerce


def test_plan_panel_shows_an_emptied_count_as_an_error_not_its_old_value():
    panel = widgets.plan_panel({"retrieval_keywords": "budget", "top_k": 8})
    assert panel.controls["top_k"].value == "8" and not panel.result.messages
    panel.controls["top_k"].value = ""
    (error,) = panel.result.of_level("error")
    assert error.field == "top_k" and "int('')" in error.text
    assert panel.result.plan_hash == ""  # no hash: the seed would raise
    assert "error" in _shown(panel)["text/plain"]
    panel.controls["top_k"].value = "8"
    assert panel.result.plan_hash == ea.plan_hash({"retrieval_keywords": "budget", "top_k": 8})


def test_plan_panel_warns_on_a_negative_count_and_still_hashes_it_as_the_seed_does():
    panel = widgets.plan_panel({"retrieval_keywords": "budget", "top_k": 8})
    panel.controls["top_k"].value = "-3"
    (warning,) = panel.result.of_level("warning")
    assert warning.field == "top_k" and "negative" in warning.text
    assert panel.result.plan_hash == ea.plan_hash({"retrieval_keywords": "budget", "top_k": -3})


def test_plan_editor_shows_the_hash_first_and_whitespace_as_typed():
    edit = plan_edit_view({"retrieval_keywords": "budget", "top_k": 8}, mt_engine="   ")
    shown = edit._repr_html_()
    assert edit.of_level("warning") and edit.plan_hash
    # The hash leads, above every message, so a message never pushes it down.
    assert shown.index(edit.plan_hash) < shown.index("<ul class='plan-checks'>")
    # Each message keeps its spaces: three typed spaces are three on the page.
    (item,) = [li for li in re.findall(r"<li style='[^']*'>.*?</li>", shown) if "warning" in li]
    assert "white-space:pre-wrap" in item and "&#x27;   &#x27;" in item


@pytest.mark.parametrize("typed", ["8.0", "8.5", "eight", " "])
def test_plan_panel_refuses_what_int_refuses(typed):
    edit = plan_edit_view({"top_k": 8}, top_k=typed)
    assert [m.field for m in edit.of_level("error")] == ["top_k"]
    assert edit.plan_hash == "" and edit.error


@pytest.mark.parametrize(("typed", "number"), [(" 8 ", 8), ("+8", 8), ("08", 8), ("1_0", 10)])
def test_plan_panel_notes_what_int_coerces(typed, number):
    edit = plan_edit_view({"top_k": 1}, top_k=typed)
    (note,) = edit.of_level("note")
    assert note.field == "top_k" and f"reads it as {number}" in note.text
    assert edit.plan_hash == ea.plan_hash({"top_k": number})


def test_a_whitespace_only_mt_field_is_named_and_moves_the_hash():
    plain = plan_edit_view({"retrieval_keywords": "budget", "top_k": 8})
    spaced = plan_edit_view({"retrieval_keywords": "budget", "top_k": 8}, mt_manifest_hash=" ")
    (warning,) = spaced.of_level("warning")
    assert warning.field == "mt_manifest_hash" and "1 space" in warning.text
    assert spaced.mt_block and spaced.plan_hash != plain.plan_hash
    assert spaced.pre_mt_hash == plain.plan_hash
    assert spaced.plan_hash == ea.plan_hash(
        {"retrieval_keywords": "budget", "top_k": 8, "mt": {"manifest_hash": " "}}
    )
    shown = spaced._repr_html_()
    assert "white-space:pre" in shown and "&#x27; &#x27; (whitespace only: 1 space)" in shown


def test_an_emptied_text_field_is_noted_and_padded_keywords_warned():
    edit = plan_edit_view({"retrieval_keywords": "budget", "mt_engine": "nllb"}, mt_engine="")
    assert [(m.field, m.level) for m in edit.messages] == [("mt_engine", "note")]
    assert not edit.mt_block
    padded = plan_edit_view({"retrieval_keywords": "budget"}, retrieval_keywords="budget ")
    (warning,) = padded.of_level("warning")
    assert "trailing whitespace: 1 space" in warning.text
    assert padded.plan_hash == ea.plan_hash({"retrieval_keywords": "budget "})


def test_repeated_and_padded_shards_are_named():
    edit = plan_edit_view({}, shard_ids="s1,  s2,, s1")
    assert json.loads(edit.canonical_json)["shard_ids"] == ["s1", "s2", "s1"]
    assert {(m.field, m.level) for m in edit.messages} == {
        ("shard_ids", "note"),
        ("shard_ids", "warning"),
    }


# Routing explorer: each variant at its own thresholds, and the live chart


def test_sweep_panel_goes_back_to_each_variant_at_its_own_thresholds(audit):
    panel = widgets.sweep_panel(audit)
    own = sweep_view(audit)
    pd.testing.assert_frame_equal(panel.result, own)
    panel.controls["confidence_threshold"].value = 0.9
    assert (panel.result["confidence_threshold"] == 0.9).all()
    assert not panel.result.equals(own)
    panel.controls["own_thresholds"].value = True
    pd.testing.assert_frame_equal(panel.result, own)
    assert panel.values["confidence_threshold"] == 0.9  # the sliders keep their place
    assert (panel.results[2]["policy_id"].unique() == flips_view(audit)["policy_id"].unique()).all()


def test_sweep_panel_picks_a_variant_and_shows_its_own_thresholds(audit):
    panel = widgets.sweep_panel(audit)
    panel.controls["variant"].value = "strict"
    strict = audit.policies["strict"].escalation
    assert panel.values["own_thresholds"] is True
    assert panel.values["context_char_cap_4b"] == strict.context_char_cap_4b
    assert panel.values["confidence_threshold"] == strict.confidence_threshold
    assert panel.result.index.tolist() == ["strict"]


def test_escalation_curve_marks_the_slider_value_with_the_sweep_count(audit):
    curve = escalation_curve_view(audit, confidence_threshold=0.7, context_char_cap_4b=6000)
    for policy_id, policy in audit.policies.items():
        moved = policy.with_escalation(confidence_threshold=0.7, context_char_cap_4b=6000)
        replayed = ea.replay(audit.decisions, moved)
        assert curve.markers.loc[policy_id, "confidence_threshold"] == 0.7
        assert curve.markers.loc[policy_id, "escalations"] == int(replayed["escalate_to_26b"].sum())
    assert (curve.curve["context_char_cap_4b"] == 6000).all()
    assert curve.curve.groupby("policy_id")["confidence_threshold"].nunique().min() >= 41
    own = escalation_curve_view(audit, confidence_threshold=0.7, own_thresholds=True)
    assert own.at == {pid: p.escalation.confidence_threshold for pid, p in audit.policies.items()}


def test_sweep_panel_chart_follows_the_moved_threshold(audit):
    panel = widgets.sweep_panel(audit)
    assert "each variant at its own thresholds" in panel.results[1].caption
    panel.controls["escalate_on_multi_doc_count"].value = 2
    assert panel.values["axis"] == "escalate_on_multi_doc_count"
    chart = panel.results[1]
    assert "across escalate_on_multi_doc_count (the sliders)" in chart.caption
    rate = panel.result.loc["baseline", "escalation_rate"]
    assert f"baseline at 2: {rate:.1%}" in chart.caption
    before = chart.png
    panel.controls["escalate_on_multi_doc_count"].value = 5
    assert panel.results[1].png != before
    assert "baseline at 5:" in panel.results[1].caption
    # The live chart: the marker where the slider stands, the rate of the table's row.
    spec = panel.live[1].spec
    (marker,) = [m for m in spec["markers"] if m["name"] == "baseline"]
    rate = panel.result.loc["baseline", "escalation_rate"]
    assert marker["x"] == 5 and marker["text"] == f"{rate:.1%}" and spec["vlines"] == [5.0]
    assert spec["xlabel"] == "multi-document escalation count (documents)"
    assert [s["name"] for s in spec["series"]] == list(panel.result.index)


def test_a_panel_reads_as_text_where_widgets_are_not_rendered(audit):
    panel = widgets.sweep_panel(audit)
    assert repr(panel).startswith("routing explorer: interactive panel with controls variant")
    assert len(repr(widgets.plan_panel())) < 200


# The static twin: what a notebook shows of a panel before it runs


def _twin_values(twin: str) -> dict:
    """The twin's written-out controls, {description: value}."""
    (values,) = re.findall(r'<ul class="ea-panel-values">(.*?)</ul>', twin, re.S)
    pairs = re.findall(
        r'<li><strong>(.*?)</strong>: <span class="ea-panel-value">(.*?)</span></li>', values, re.S
    )
    return {html.unescape(name): html.unescape(value) for name, value in pairs}


def test_a_displayed_panel_carries_its_static_twin(audit):
    panel = widgets.withheld_panel(audit)
    bundle = panel._repr_mimebundle_()
    # The live view for a kernel, the twin for everything else, the text form last.
    assert set(bundle) == {WIDGET_VIEW, "text/html", "text/plain"}
    twin = bundle["text/html"]
    assert twin.startswith('<div class="ea-panel-twin">') and "<script" not in twin
    assert "withheld-count explorer" in twin
    assert _twin_values(twin) == {
        "audience": ALL,
        "space": ALL,
        "group by": "scope",
        "days (UTC, end exclusive)": window_readout(None),
    }
    # The table and the chart the panel shows, the chart as an embedded PNG.
    assert compact_withheld(panel.result)._repr_html_() in twin
    png = base64.b64encode(panel.results[1].png).decode("ascii")
    assert f"src='data:image/png;base64,{png}'" in twin
    assert html.escape(panel.results[1].caption) in twin


def test_the_twin_follows_the_controls_and_equals_the_public_api(audit):
    receipts = audit.receipts
    days = time_range(receipts)
    panel = widgets.withheld_panel(audit)
    with panel.hold():
        panel.controls["audience"].value = "peer"
        panel.controls["by"].value = "outcome"
        panel.controls["window"].index = (1, 3)
    twin = panel.twin_html()
    values = _twin_values(twin)
    assert values["audience"] == "peer" and values["group by"] == "outcome"
    assert values["days (UTC, end exclusive)"] == window_readout((days[0], days[2]))
    inside = ea.within_time_window(receipts[receipts["withheld_audience"] == "peer"], *days[:3:2])
    rows = re.findall(r"<th>\(all\)</th>\s*<td>(\d+)</td>", twin)
    assert rows and int(rows[0]) == len(inside)
    assert base64.b64encode(panel.results[1].png).decode("ascii") in twin


def test_the_plan_editors_twin_shows_the_hash_and_the_fields_as_typed(audit):
    plan = audit.plans["plan"].iloc[0]
    panel = widgets.plan_panel(plan)
    panel.controls["mt_manifest_hash"].value = "   "
    twin = panel.twin_html()
    assert _twin_values(twin)["MT manifest hash"] == "'   '"
    spaced = {key: value for key, value in json.loads(plan).items() if key != "mt"}
    spaced["mt"] = {"engine": "", "manifest_hash": "   ", "source_lang": ""}
    assert panel.result.plan_hash == ea.plan_hash(spaced)
    assert panel.result.plan_hash in twin


def test_the_twin_escapes_what_it_writes_out():
    twin = twin_html("<b>t</b>", {"<i>k</i>": "<script>x</script>"}, ["<p>kept</p>"])
    assert "<b>t</b>" not in twin and "&lt;b&gt;t&lt;/b&gt;" in twin
    assert "<script>" not in twin and "&lt;script&gt;" in twin
    assert '<div class="ea-panel-view"><p>kept</p></div>' in twin


def test_sweep_panel_twin_writes_every_control_out(audit):
    panel = widgets.sweep_panel(audit)
    panel.controls["confidence_threshold"].value = 0.7
    values = _twin_values(panel.twin_html())
    assert values == {
        "policy variant": ALL,
        "thresholds": "the sliders' thresholds for every variant",
        "context cap (characters)": str(panel.values["context_char_cap_4b"]),
        "multi-document count": str(panel.values["escalate_on_multi_doc_count"]),
        "confidence threshold": "0.7",
        "chart across": "confidence threshold",
        "only the decisions that name each policy": "no",
    }


# The controls' keys and names (explicit_audit/widgets/keyboard.py)


def test_every_control_is_marked_and_every_handle_named(audit):
    for panel in (widgets.withheld_panel(audit), widgets.sweep_panel(audit)):
        specs = panel.attributes.controls
        # The chart above the controls, the other views below them.
        chart, box, *rest = panel.children
        assert chart is panel.outputs[1] and rest == [panel.outputs[0], *panel.outputs[2:]]
        assert panel.attributes in box.children and panel.status in box.children
        assert "ea-panel-controls" in box._dom_classes
        for name, control in panel.controls.items():
            assert control_class(name) in control._dom_classes
            spec = specs[control_class(name)]
            assert spec["name"] == control.description and all(spec["handles"])
    window = widgets.withheld_panel(audit).attributes.controls[control_class("window")]
    days = time_range(audit.receipts)
    assert window["handles"] == [
        "days (UTC, end exclusive): start",
        "days (UTC, end exclusive): end",
    ]
    assert window["valuetexts"] == ["open (start)", *(f"{d:%Y-%m-%d}" for d in days), "open (end)"]


def test_the_keyboard_script_suppresses_shortcuts_on_the_focused_element_itself():
    # Lumino checks the attribute on each element before matching it against a
    # binding's selector, so it must sit on the focusable elements, not on a box.
    from explicit_audit.widgets.keyboard import _ESM

    assert '"select, button, input[type=checkbox], .noUi-handle"' in _ESM
    assert 'set(node, "data-lm-suppress-shortcuts", "true")' in _ESM
    assert "aria-pressed" in _ESM and "aria-valuetext" in _ESM


# Notebooks: saved with each panel's twin, without widgets


@pytest.mark.parametrize("path", sorted((SAMPLE.parent / "notebooks").glob("*.ipynb")))
def test_notebooks_save_each_panel_as_its_static_twin(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in notebook["metadata"]
    outputs = [o for cell in notebook["cells"] for o in cell.get("outputs", [])]
    assert not any(WIDGET_VIEW in o.get("data", {}) for o in outputs)
    twins = [
        "".join(o["data"]["text/html"])
        for o in outputs
        if "ea-panel-twin" in "".join(o.get("data", {}).get("text/html", ""))
    ]
    # One twin per panel the notebook displays (a notebook of plain cells has none).
    shown = [
        cell
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
        and any("_panel(" in line.split("#")[0] for line in cell["source"])
    ]
    assert len(twins) == len(shown)
    if not shown:
        return
    (twin,) = twins
    assert "<table" in twin and _twin_values(twin)
    if path.stem != "plan_hashes":
        assert "<img src='data:image/png;base64," in twin


def test_static_panels_drops_widget_views_and_state():
    import nbformat

    from scripts.build_notebooks import static_panels

    cell = nbformat.v4.new_code_cell("panel", id="panel")
    data = {WIDGET_VIEW: {"model_id": "aa11"}, "text/html": "<div>twin</div>", "text/plain": "p"}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    made = nbformat.v4.new_notebook(cells=[cell])
    made.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    assert static_panels(made) == 1
    assert "widgets" not in made.metadata
    assert set(made.cells[0].outputs[0]["data"]) == {"text/html", "text/plain"}


def test_a_view_whose_values_did_not_change_is_not_redrawn(audit):
    panel = widgets.sweep_panel(audit)
    table, chart, flips = panel.results
    shown = [output.outputs for output in panel.outputs]
    panel.controls["axis"].value = "context_char_cap_4b"  # only the chart reads the axis
    assert panel.results[0] is table and panel.results[2] is flips
    assert panel.outputs[0].outputs is shown[0] and panel.outputs[2].outputs is shown[2]
    assert panel.results[1] is not chart
    assert "across context_char_cap_4b" in panel.results[1].caption
    assert panel.status.value == ""
    panel.controls["confidence_threshold"].value = 0.7
    assert panel.results[0] is not table
    pd.testing.assert_frame_equal(panel.result, sweep_view(audit, **_sliders(panel)))


def _sliders(panel) -> dict:
    return {
        name: panel.values[name]
        for name in ("context_char_cap_4b", "escalate_on_multi_doc_count", "confidence_threshold")
    }


def test_the_routing_table_is_shown_compact_and_its_result_stays_the_view(audit):
    panel = widgets.sweep_panel(audit)
    pd.testing.assert_frame_equal(panel.result, sweep_view(audit, own_thresholds=True))
    shown = _shown(panel, 0)["text/html"]
    head = re.findall(r"<th title='([^']*)'>([^<]*)</th>", shown)
    assert [short for _, short in head][:4] == ["policy", "cap", "docs", "conf."]
    assert all(title.split(":")[0] in ("policy_id", *panel.result.columns) for title, _ in head)
    rate = panel.result.loc["baseline", "escalation_rate"]
    assert f"<td>{rate:.1%}</td>" in shown
    count = panel.result.loc["baseline", "decisions"]
    assert f"<td>{count:,}</td>" in shown and "overflow-x:auto" in shown
    table = shown[shown.index("<div class='ea-table'") : shown.rindex("</div>")]
    assert table.endswith("</table></div>") and table in panel.twin_html()
    # Moved, the same HTML widget takes the new table: the output is not displayed again.
    live, outputs = panel.live[0], panel.outputs[0].outputs
    panel.controls["confidence_threshold"].value = 0.7
    assert panel.live[0] is live and panel.outputs[0].outputs is outputs
    assert "<td>0.7</td>" in live.value and live.value != shown


def test_a_table_after_a_failed_view_is_shown_anew_and_the_old_widget_closed():
    from explicit_audit.widgets import Panel

    def view(data, *, k=1):
        if k < 0:
            raise ValueError("k must not be negative")
        return pd.DataFrame({"k": [k]})

    panel = Panel([view], None, {"k": ipywidgets.IntText(value=1)})
    first = panel.live[0]
    assert isinstance(first, ipywidgets.HTML) and "<td>1</td>" in first.value
    panel.controls["k"].value = -1
    assert panel.live[0] is None and first.comm is None  # closed
    assert "k must not be negative" in _shown(panel)["text/plain"]
    panel.controls["k"].value = 2
    assert isinstance(panel.live[0], ipywidgets.HTML) and "<td>2</td>" in _shown(panel)["text/html"]
