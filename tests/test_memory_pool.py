"""pyarrow's default pool is the system allocator while the kit loads and checks, and is
given back as it was after: when a load raises, and when loads in threads overlap."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import explicit_audit as ea
from explicit_audit.reading.memory import system_pool

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def pool_before():
    """pyarrow's default pool before the test, and put back after it whatever happens."""
    before = pa.default_memory_pool()
    yield before
    pa.set_memory_pool(before)


def test_a_block_switches_to_the_system_pool_and_back(pool_before):
    with system_pool():
        assert pa.default_memory_pool().backend_name == "system"
        table = pa.table({"n": list(range(10_000))})
    assert pa.default_memory_pool().backend_name == pool_before.backend_name
    # A buffer made in the block is freed by its own pool, whichever is the default now.
    assert table.column("n").to_pylist()[-1] == 9_999
    del table


def test_the_pool_comes_back_after_a_block_that_raises(pool_before):
    with pytest.raises(RuntimeError), system_pool():
        raise RuntimeError("inside")
    assert pa.default_memory_pool().backend_name == pool_before.backend_name


def test_overlapping_blocks_in_threads_switch_back_when_the_last_ends(pool_before):
    entered, release = threading.Event(), threading.Event()
    seen = []

    def long_block():
        with system_pool():
            entered.set()
            release.wait(10)
            seen.append(pa.default_memory_pool().backend_name)

    thread = threading.Thread(target=long_block)
    thread.start()
    assert entered.wait(10)
    with system_pool():
        pass  # a short block ends while the long one runs: the switch holds
    assert pa.default_memory_pool().backend_name == "system"
    release.set()
    thread.join(10)
    assert seen == ["system"]
    assert pa.default_memory_pool().backend_name == pool_before.backend_name


def test_a_load_from_a_state_and_its_checks_leave_the_default_pool_as_it_was(tmp_path, pool_before):
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = (ROOT / "data/receipts/recall_cli.jsonl").read_bytes().splitlines(keepends=True)
    (logs / "receipts.jsonl").write_bytes(b"".join(lines[:20]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ea.verify_all(ea.load(logs, progress=False, state=tmp_path / "state"))
        with open(logs / "receipts.jsonl", "ab") as out:
            out.write(b"".join(lines[20:40]))
        audit = ea.load(logs, progress=False, state=tmp_path / "state")
        ea.verify_all(audit)
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"retrieval_plan": {"top_k": "8.0"}, "retrieval_plan_hash": "x"}\n')
        with pytest.raises(ea.InputError):
            ea.load(bad, progress=False, strict=True)
    assert pa.default_memory_pool().backend_name == pool_before.backend_name
    assert len(audit.receipts) > 0
