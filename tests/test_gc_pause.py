"""No cyclic garbage collection during a load, and the collector's state restored after it."""

from __future__ import annotations

import gc
import json
import sys
import threading
import warnings

import pytest

import explicit_audit as ea
from explicit_audit.reading.gc_pause import cyclic_gc_paused


def _plans_file(path, n):
    lines = []
    for index in range(n):
        plan = {"retrieval_keywords": f"q {index}", "top_k": 8, "over_fetch": 2}
        plan |= {"max_context_chars": 12000, "shard_ids": ["s1", "s2"]}
        record = {"run_id": f"r-{index}", "retrieval_plan": plan}
        lines.append(json.dumps(record | {"retrieval_plan_hash": ea.plan_hash(plan)}))
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


#: The load's reading and building: a collector pass under one of them ran during a load.
_LOAD_STEPS = {"read_all", "read_bytes", "audit_of_reading"}


def _in_load() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name in _LOAD_STEPS and "explicit_audit" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


@pytest.fixture
def collections():
    """The collector's passes (gc.callbacks) during a load's reading and building, and all."""
    counted = {"load": [], "all": []}

    def count(phase, info):
        if phase == "start":
            counted["all"].append(info["generation"])
            if _in_load():
                counted["load"].append(info["generation"])

    was_enabled = gc.isenabled()
    gc.enable()
    gc.callbacks.append(count)
    yield counted
    gc.callbacks.remove(count)
    (gc.enable if was_enabled else gc.disable)()


def test_a_load_runs_no_collection_and_restores_the_collector(tmp_path, collections):
    path = _plans_file(tmp_path / "plans.jsonl", 3000)
    kept = [{"row": index} for index in range(50_000)]
    # The collector does run when containers are made (so the test can fail).
    assert collections["all"]
    del kept
    plans = ea.load_plans(path, progress=False)
    with warnings.catch_warnings(action="ignore"):
        audit = ea.load_bytes(path.read_bytes(), source_file="plans.jsonl")
    assert len(plans) == len(audit.plans) == 3000 and plans["retrieval_plan_hash"].notna().all()
    assert collections["load"] == []
    assert gc.isenabled()


def test_the_collector_comes_back_after_a_load_that_raises(tmp_path, collections):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"retrieval_plan": {"top_k": "8.0"}, "retrieval_plan_hash": "x"}\n', "utf-8")
    with pytest.raises(ea.InputError):
        ea.load(path, progress=False, strict=True)
    assert gc.isenabled()
    with warnings.catch_warnings(action="ignore"), pytest.raises(ea.InputError):
        ea.load_bytes(path.read_bytes(), source_file="bad.jsonl", strict=True)
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled(tmp_path, collections):
    path = _plans_file(tmp_path / "plans.jsonl", 10)
    gc.disable()
    ea.load(path, progress=False)
    assert not gc.isenabled()


def test_loads_in_threads_restore_the_collector_when_the_last_ends(tmp_path, collections):
    path = _plans_file(tmp_path / "plans.jsonl", 2000)
    inside = threading.Barrier(2)
    states = []

    def hold():
        with cyclic_gc_paused():
            inside.wait()  # both paused at once
            inside.wait()  # the other thread's load has ended
            states.append(gc.isenabled())

    holder = threading.Thread(target=hold)
    holder.start()
    inside.wait()
    ea.load_plans(path, progress=False)
    states.append(gc.isenabled())  # the other pause still holds
    inside.wait()
    holder.join()
    assert states[0] is False and states[1] is False
    assert gc.isenabled()


def test_what_a_pause_made_is_not_left_for_the_next_young_pass():
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        gc.collect()
        with cyclic_gc_paused():
            made = [[index] for index in range(50_000)]
        # Without the ageing, the first young pass after the pause walks all 50,000 lists.
        young = len(gc.get_objects(generation=0))
        assert young < 5_000, young
        assert any(item is made[-1] for item in gc.get_objects(generation=2))
    finally:
        (gc.enable if was_enabled else gc.disable)()
