"""widgets and views: drive each panel's controls, check its view follows."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit import widgets
from explicit_audit.views import ALL, NO_AUDIENCE, flips_view, plan_view, sweep_view, time_range

SAMPLE = Path(__file__).parent.parent / "data"


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(SAMPLE, progress=False)


def _shown(panel, index: int = 0) -> dict:
    """What the panel's output widget holds for the view at ``index``."""
    (output,) = panel.outputs[index].outputs
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

    panel.controls["top_k"].value = 5
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


def test_withheld_panel_time_window(audit):
    receipts = audit.receipts
    panel = widgets.withheld_panel(audit)
    window = panel.controls["window"]
    assert window.value == (None, None)  # open ends: undated receipts count too
    days = time_range(receipts)
    window.index = (1, 3)  # options: open, days[0], days[1], ...
    assert window.value == (days[0], days[2])
    inside = ea.within_time_window(receipts, days[0], days[2])
    assert 0 < len(inside) < receipts["timestamp"].notna().sum()
    assert panel.result.loc["(all)", "receipts"] == len(inside)


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
    panel.controls["confidence_threshold"].value = 0.8
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
    flips = panel.results[1]
    assert set(flips["policy_id"]) == {"strict"} and len(flips) <= 10
    assert "strict" in _shown(panel, 1)["text/plain"]


def test_flips_view_lists_exactly_the_decisions_that_flip(audit):
    table = sweep_view(audit, variant="cost_saver", confidence_threshold=0.7)
    flips = flips_view(audit, variant="cost_saver", confidence_threshold=0.7, limit=None)
    assert len(flips) == table.loc["cost_saver", "flips"]
    assert (flips["escalate_to_26b"] != flips["recorded_escalate_to_26b"]).all()
    assert (flips["escalate_to_26b"]).sum() == table.loc["cost_saver", "flips_to_26b"]


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
