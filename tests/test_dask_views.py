"""What the notebooks take from Dask tables equals what they take from in-memory ones.

The explorer's views, the small results a cell brings into memory
(``ea.collect``), the receipts of rendered views and the patterns of
escalation across variants, each against the pandas engine on the bundled
data split into many partitions.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dask
import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit import views, widgets

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


def _load(source, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


@pytest.fixture(scope="module")
def both():
    """The bundled data in memory, and as Dask tables of 256 KiB partitions, read once."""
    lazy = _load(DATA, engine="dask", blocksize=256 << 10)
    with dask.config.set(scheduler="synchronous"):
        held = lazy.persist()
    return _load(DATA), held


@pytest.fixture(autouse=True)
def synchronous():
    with dask.config.set(scheduler="synchronous"):
        yield


def test_the_tables_have_many_partitions_some_empty(both):
    _, lazy = both
    assert lazy.plans.npartitions > 10
    lengths = lazy.plans.map_partitions(len).compute()
    assert (lengths == 0).any() and (lengths > 0).any()


def test_collect_is_the_identity_for_pandas(both):
    memory, _ = both
    assert ea.collect(memory.plans) is memory.plans
    assert ea.collect(3) == 3


def test_collect_head_passes_over_empty_partitions(both):
    memory, lazy = both
    assert lazy.plans.map_partitions(len).compute().iloc[0] == 0  # a receipts file first
    for n in (0, 1, 7, len(memory.plans), len(memory.plans) + 5):
        pd.testing.assert_frame_equal(
            ea.collect(lazy.plans, head=n), memory.plans.head(n), check_categorical=False
        )
    assert ea.collect(lazy.plans["plan"], head=1).iloc[0] == memory.plans["plan"].iloc[0]


def test_collect_rows_in_the_order_given(both):
    memory, lazy = both
    labels = [len(memory.decisions) - 1, 0, 17, 0]
    got = ea.collect(lazy.decisions["decision_id"], rows=labels)
    pd.testing.assert_series_equal(got, memory.decisions["decision_id"].loc[labels])
    with pytest.raises(KeyError):
        ea.collect(lazy.decisions, rows=[len(memory.decisions)])
    with pytest.raises(KeyError):
        ea.collect(memory.decisions, rows=[len(memory.decisions)])
    with pytest.raises(ValueError, match="head or rows"):
        ea.collect(memory.decisions, head=1, rows=[0])


def test_collect_counts(both):
    memory, lazy = both
    for table in ("plans", "receipts"):
        assert ea.collect(lazy.tables[table].shape[0]) == len(memory.tables[table])
    got = ea.collect(ea.plan_verdicts(lazy.plans)["status"].value_counts(sort=False))
    pd.testing.assert_series_equal(
        got, ea.plan_verdicts(memory.plans)["status"].value_counts(sort=False)
    )


def test_declared_categories_stay_known(both):
    """A fixed vocabulary (presented / failed) is known; counting it shows no placeholder."""
    memory, lazy = both
    assert lazy.presentations["status"].cat.known
    assert not lazy.presentations["model"].cat.known  # learned from each partition's rows
    got = ea.collect(lazy.presentations["status"].value_counts(sort=False))
    pd.testing.assert_series_equal(got, memory.presentations["status"].value_counts(sort=False))


def test_rows_and_persist(both):
    memory, lazy = both
    for name in [*memory.tables, "rejected"]:
        assert lazy.rows(name) == memory.rows(name)
    assert memory.rows("receipts") == len(memory.receipts)
    with pytest.raises(KeyError, match="no table"):
        memory.rows("receipt")
    assert memory.persist() is memory


def test_view_receipts(both):
    memory, lazy = both
    expected = ea.view_receipts(memory)
    presented = memory.presentations["status"] == "presented"
    assert len(expected) == int(presented.sum()) > 0
    assert list(expected["view_id"]) == list(memory.presentations.loc[presented, "view_id"])
    got = ea.view_receipts(lazy).compute()
    pd.testing.assert_frame_equal(got, expected, check_categorical=False)
    for by in ("view_id", ["view_id", "audience_id"]):
        pd.testing.assert_frame_equal(
            ea.withheld_summary(ea.view_receipts(lazy), by=by, overall=True),
            ea.withheld_summary(expected, by=by, overall=True),
        )


def test_escalation_patterns(both):
    memory, lazy = both
    expected = (
        pd.DataFrame(
            {
                policy_id: ea.replay(memory.decisions, policy)["escalate_to_26b"]
                for policy_id, policy in memory.policies.items()
            }
        )
        .value_counts()
        .rename("decisions")
        .sort_index()
        .to_frame()
    )
    assert len(expected) > 1
    pd.testing.assert_frame_equal(
        ea.escalation_patterns(memory.decisions, memory.policies), expected
    )
    pd.testing.assert_frame_equal(ea.escalation_patterns(lazy.decisions, lazy.policies), expected)
    with pytest.raises(ValueError, match="at least one policy"):
        ea.escalation_patterns(memory.decisions, [])


def test_time_range_and_windows(both):
    memory, lazy = both
    days = views.time_range(memory)
    assert days is not None and views.time_range(lazy) == days
    window = (days[1], days[3])
    for audience, space in [
        (views.ALL, views.ALL),
        ("peer", "harbor-ops"),
        (views.NO_AUDIENCE, views.ALL),
    ]:
        for by in ("scope", "outcome"):
            pd.testing.assert_frame_equal(
                views.withheld_view(lazy, audience=audience, space=space, by=by, window=window),
                views.withheld_view(memory, audience=audience, space=space, by=by, window=window),
            )


def test_time_range_of_text_that_is_not_times_is_none(tmp_path):
    pandas = pd.DataFrame({"timestamp": ["2025-03-03T08:00:00Z", "yesterday"]})
    assert views.time_range(pandas) is None
    lazy = dask.dataframe.from_pandas(pandas, npartitions=2)
    assert views.time_range(lazy) is None
    empty = dask.dataframe.from_pandas(pd.DataFrame({"timestamp": [None, None]}), npartitions=2)
    assert views.time_range(empty) is None


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"limit": None, "only_named": True},
        {"variant": "strict", "confidence_threshold": 0.7, "limit": 3},
        {"own_thresholds": True, "limit": None},
    ],
)
def test_routing_views(both, options):
    memory, lazy = both
    expected = views.flips_view(memory, **options)
    assert len(expected)
    pd.testing.assert_frame_equal(views.flips_view(lazy, **options), expected)
    point = {k: v for k, v in options.items() if k != "limit"}
    pd.testing.assert_frame_equal(
        views.sweep_view(lazy, **point), views.sweep_view(memory, **point)
    )
    assert views.threshold_spans(lazy) == views.threshold_spans(memory)
    curve, expected_curve = (
        views.escalation_curve_view(lazy, **point),
        views.escalation_curve_view(memory, **point),
    )
    pd.testing.assert_frame_equal(curve.curve, expected_curve.curve)
    pd.testing.assert_frame_equal(curve.markers, expected_curve.markers)


def test_panels_offer_the_same_choices(both):
    memory, lazy = both
    for make in (widgets.withheld_panel, widgets.sweep_panel):
        on_dask, in_memory = make(lazy), make(memory)
        assert list(on_dask.controls) == list(in_memory.controls)
        for name, control in in_memory.controls.items():
            assert getattr(on_dask.controls[name], "options", None) == getattr(
                control, "options", None
            )
            assert on_dask.controls[name].value == control.value


def test_files_are_found_from_any_working_folder(monkeypatch):
    """A relative path names the caller's file, wherever the partitions are computed."""
    monkeypatch.chdir(ROOT)
    lazy = _load("data/plans", engine="dask")
    memory = _load("data/plans")
    monkeypatch.chdir(ROOT / "tests")  # as a worker or kernel in another folder
    computed = lazy.compute()
    pd.testing.assert_frame_equal(computed.plans, memory.plans, check_categorical=False)
    assert list(computed.plans["source_file"].astype(str).unique()) == list(
        memory.plans["source_file"].astype(str).unique()
    )
    assert computed.rejected["source_file"].tolist() == memory.rejected["source_file"].tolist()


def test_use_scheduler():
    with ea.use_scheduler("synchronous"):
        assert dask.config.get("scheduler") == "synchronous"
        with ea.use_scheduler(None):
            assert dask.config.get("scheduler") == "threads"
        assert dask.config.get("scheduler") == "synchronous"
    with pytest.raises(ea.AuditError, match=r"tcp://127\.0\.0\.1:1: cannot reach"):
        ea.use_scheduler("tcp://127.0.0.1:1", timeout="1s")


def test_use_scheduler_connects_to_a_cluster(cluster, both):
    """On the cluster, as a notebook with ``SCHEDULER`` set runs: the view receipts' tasks too."""
    memory, _ = both
    address = cluster.scheduler.address
    with ea.use_scheduler(address) as client:
        assert client.scheduler.address == address
        lazy = _load(DATA, engine="dask", blocksize=256 << 10)
        got = ea.view_receipts(lazy).compute()
    prefixes = cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert "view_receipts" in prefixes, sorted(prefixes)
    pd.testing.assert_frame_equal(got, ea.view_receipts(memory), check_categorical=False)
