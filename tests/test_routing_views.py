"""The routing explorer's views as the panel computes them: one sweep per move, same answers."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit import widgets
from explicit_audit.decisions import _input_cache
from explicit_audit.decisions.sweep import GRID_AXES
from explicit_audit.views import escalation_curve, flips_view, routing, sweep_view
from explicit_audit.views._shared import ALL, rounded
from explicit_audit.views.escalation_curve import CurveSweep, curve_sweep
from explicit_audit.views.routing import _flips, as_written
from explicit_audit.widgets.panel import LastCall


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load("data", progress=False)


POINTS = [
    {},
    {"confidence_threshold": 0.7},
    {"context_char_cap_4b": 6000, "escalate_on_multi_doc_count": 3, "confidence_threshold": 0.6},
    {"context_char_cap_4b": 0, "escalate_on_multi_doc_count": 1, "confidence_threshold": 1.0},
    {"context_char_cap_4b": 123457, "escalate_on_multi_doc_count": 40, "confidence_threshold": 0.0},
]


@pytest.mark.parametrize(
    ("point", "axis", "own", "only_named"),
    list(itertools.product(POINTS, GRID_AXES, (False, True), (False, True))),
)
def test_the_table_read_from_the_curve_equals_the_table_swept_at_its_point(
    audit, point, axis, own, only_named
):
    def along(data, **values):
        return curve_sweep(data, axis=axis, **values)

    for variant in (ALL, "strict"):
        values = dict(point, variant=variant, own_thresholds=own, only_named=only_named)
        expected = sweep_view(audit, **values)
        got = sweep_view(audit, **values, swept=along, written=as_written)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_rows_at_is_none_when_a_variant_does_not_stand_on_the_curve(audit):
    swept = curve_sweep(audit, confidence_threshold=0.7)
    assert len(swept.rows_at()) == len(audit.policies)
    moved = CurveSweep(swept.axis, swept.swept, {**swept.at, "strict": 0.7000001})
    assert moved.rows_at() is None


def test_the_table_falls_back_to_its_own_sweep_when_the_curve_lacks_its_point(audit):
    def elsewhere(data, **values):
        swept = curve_sweep(data, **values)
        return CurveSweep(swept.axis, swept.swept, dict.fromkeys(swept.at, -1.0))

    expected = sweep_view(audit, confidence_threshold=0.7)
    got = sweep_view(audit, confidence_threshold=0.7, swept=elsewhere)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def _counting(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_slider_move_sweeps_once_and_encodes_nothing_again(audit, monkeypatch):
    panel = widgets.sweep_panel(audit)
    controls = panel.controls
    controls["confidence_threshold"].value = 0.55  # the first move: the sliders apply
    sweeps = _counting(monkeypatch, escalation_curve, "sweep")
    point_sweeps = _counting(monkeypatch, routing, "sweep")
    encodes = _counting(monkeypatch, _input_cache, "encode_inputs")
    for value in (0.56, 0.57, 0.58):
        controls["confidence_threshold"].value = value
    controls["context_char_cap_4b"].value = 7000
    controls["escalate_on_multi_doc_count"].value = 4
    assert len(sweeps) == 5 and point_sweeps == [] and encodes == []
    kept = dict(panel.values)
    values = {name: kept[name] for name in ("variant", *GRID_AXES, "only_named", "own_thresholds")}
    pd.testing.assert_frame_equal(panel.results[0], sweep_view(audit, **values))
    expected = ea.sweep(
        audit.decisions,
        audit.policies,
        {name: [kept[name]] for name in GRID_AXES},
    )
    assert panel.results[0]["escalations"].tolist() == expected["escalations"].tolist()


def test_picking_a_variant_sweeps_it_as_written_once(audit, monkeypatch):
    panel = widgets.sweep_panel(audit)
    panel.controls["confidence_threshold"].value = 0.55
    written = _counting(monkeypatch, routing, "sweep")
    panel.controls["confidence_threshold"].value = 0.65
    assert written == []  # the variants as written were swept on the move before
    panel.controls["variant"].value = "strict"
    panel.controls["confidence_threshold"].value = 0.75
    assert written == ["sweep"]


def test_last_call_counts_a_default_and_the_same_value_given_as_one_call():
    calls = []

    def view(data, *, k=1, points=41):
        calls.append((k, points))
        return data + k + points

    once = LastCall(view)
    assert once(1, k=2) == once(1, k=2, points=41) == 44
    assert calls == [(2, 41)]
    assert once(1, k=2, points=40) == 43 and len(calls) == 2


@pytest.mark.parametrize("only_named", [False, True])
@pytest.mark.parametrize("limit", [None, 0, 1, 10])
@pytest.mark.parametrize(
    "point",
    [
        {},
        {"confidence_threshold": 0.7},
        {"context_char_cap_4b": 10**9, "confidence_threshold": 0.0},
    ],
)
def test_flips_of_every_variant_at_once_equal_one_variant_at_a_time(
    audit, only_named, limit, point
):
    got = flips_view(audit, only_named=only_named, limit=limit, **point)
    frames = []
    for policy in audit.policies.values():
        applied = policy.with_escalation(**point)
        one = _flips(audit.decisions, [(policy.policy_id, applied)], only_named, limit)[0]
        frames.append(one if limit is None else one.head(limit))
    expected = pd.concat(frames, ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert list(got.dtypes) == list(expected.dtypes)


def test_rounded_rounds_float_columns_only_and_keeps_the_table():
    frame = pd.DataFrame(
        {
            "rate": [0.123456, np.nan],
            "nullable": pd.array([0.98765, None], dtype="Float64"),
            "count": [1, 2],
            "flag": [True, False],
            "name": ["a", "b"],
        }
    )
    shown = rounded(frame, 2)
    assert shown["rate"].iloc[0] == 0.12 and np.isnan(shown["rate"].iloc[1])
    assert shown["nullable"].iloc[0] == 0.99 and shown["nullable"].isna().iloc[1]
    assert list(shown.dtypes) == list(frame.dtypes)
    assert frame["rate"].iloc[0] == 0.123456  # the table itself is not changed
    twice = pd.DataFrame([[0.123456, 0.654321]], columns=["x", "x"])
    pd.testing.assert_frame_equal(rounded(twice, 2), twice)  # as DataFrame.round(mapping)
