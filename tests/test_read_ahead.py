"""Reading the next piece in a second thread: what one thread loads, line for line."""

from __future__ import annotations

import gzip
import json
import os
import threading
from pathlib import Path

import pandas as pd
import pytest
from conftest import accounted as _accounted
from conftest import quiet_load as _load

import explicit_audit as ea
from explicit_audit.reading import content, digests
from explicit_audit.reading.ahead import read_ahead
from explicit_audit.reading.limits import Limits

FIXTURES = Path(__file__).parent / "data" / "engram"


# -- read_ahead itself ---------------------------------------------------------------


def test_items_come_in_order_each_with_its_result_worked_in_the_second_thread():
    caller = threading.get_ident()
    workers = set()

    def work(item):
        workers.add(threading.get_ident())
        return item * 10

    assert list(read_ahead(iter(range(50)), work)) == [(i, i * 10) for i in range(50)]
    assert workers and caller not in workers


def test_one_thread_is_a_plain_loop_in_the_calling_thread():
    workers = set()

    def work(item):
        workers.add(threading.get_ident())
        return -item

    assert list(read_ahead(range(3), work, threads=1)) == [(0, 0), (1, -1), (2, -2)]
    assert workers == {threading.get_ident()}


@pytest.mark.parametrize("where", ["items", "work"])
def test_an_error_is_raised_where_the_plain_loop_raises_it(where):
    def items():
        for index in range(10):
            if where == "items" and index == 4:
                raise ValueError("item 4")
            yield index

    def work(item):
        if where == "work" and item == 4:
            raise ValueError("item 4")
        return item

    seen = []
    with pytest.raises(ValueError, match="item 4"):
        for item, _ in read_ahead(items(), work):
            seen.append(item)
    assert seen == [0, 1, 2, 3]  # every item before it, none after


def test_stopping_early_stops_the_thread_and_closes_the_iteration():
    closed = threading.Event()
    produced = []

    def items():
        try:
            for index in range(10_000):
                produced.append(index)
                yield index
        finally:
            closed.set()

    before = threading.active_count()
    ahead = read_ahead(items(), lambda item: item, depth=2)
    for item, _ in ahead:
        if item == 3:
            break
    ahead.close()
    assert closed.is_set()
    assert threading.active_count() == before
    # It read a few items past the last one used, not the whole iteration.
    assert len(produced) < 10


def test_the_default_is_one_thread_where_omp_num_threads_says_so(monkeypatch):
    from explicit_audit._core import overlap

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert overlap._default_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert overlap._default_threads() == (2 if (os.cpu_count() or 1) > 1 else 1)
    with pytest.raises(ea.AuditError, match="max_threads must be a positive integer"):
        Limits(max_threads=0)


# -- a load in pieces, with one thread and with two ------------------------------------


def _engram_lines() -> list[str]:
    lines = []
    for name in ("outcomes.jsonl", "presentations.jsonl"):
        lines += [line for line in (FIXTURES / name).read_text("utf-8").splitlines() if line]
    return lines


def _write_inputs(folder: Path) -> None:
    """Files of many pieces (at 4 KiB a piece): every engram shape, damage, pretty, gzip."""
    lines = _engram_lines()
    body = [lines[(index * 5) % len(lines)] for index in range(300)]
    body[17] = body[17][:50]  # a damaged line
    body[160] = "{not json"
    body.insert(90, "")  # a blank line shifts every later line
    text = "\n".join(body) + "\n"
    (folder / "mixed.jsonl").write_text(text, "utf-8")
    (folder / "mixed.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    pretty = "".join(json.dumps(json.loads(line), indent=2) + "\n" for line in lines * 8)
    (folder / "recall.json").write_text(pretty + '{"cut": [1, 2', "utf-8")
    cut = gzip.compress(pretty.encode())
    (folder / "cut.json.gz").write_bytes(cut[: len(cut) * 2 // 3])


@pytest.mark.parametrize("piece", [4096, 1 << 24])
def test_two_threads_load_what_one_thread_loads(tmp_path, monkeypatch, piece):
    _write_inputs(tmp_path)
    monkeypatch.setattr(content, "PIECE_BYTES", piece)
    monkeypatch.setattr(digests, "READ_BYTES", min(piece, 1 << 20))
    one = _load(tmp_path, threads=1)
    two = _load(tmp_path, threads=2)
    assert len(one.receipts) > 300 and len(one.presentations) > 10
    rejected = one.rejected.assign(name=one.rejected.source_file.map(lambda f: Path(f).name))
    assert set(rejected.name) == {"mixed.jsonl", "mixed.jsonl.gz", "recall.json", "cut.json.gz"}
    for name in one.tables:
        pd.testing.assert_frame_equal(one.tables[name], two.tables[name], obj=name)
    pd.testing.assert_frame_equal(one.rejected, two.rejected, obj="rejected")
    pd.testing.assert_frame_equal(one.sources, two.sources, obj="sources")
    _accounted(two)
    # The damaged lines are rejected on their own lines, in both copies of the file.
    for name in ("mixed.jsonl", "mixed.jsonl.gz"):
        assert sorted(rejected.loc[rejected.name == name, "source_line"]) == [18, 162], name
    assert "truncated" in " ".join(rejected.loc[rejected.name == "cut.json.gz", "reason"])


def test_a_strict_load_stops_at_the_same_line_with_two_threads(tmp_path, monkeypatch):
    lines = _engram_lines()
    body = [lines[index % len(lines)] for index in range(400)]
    body[333] = "{not json"
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(body) + "\n", "utf-8")
    monkeypatch.setattr(content, "PIECE_BYTES", 4096)
    monkeypatch.setattr(digests, "READ_BYTES", 4096)
    errors = []
    for threads in (1, 2):
        with pytest.raises(ea.InputError) as raised:
            ea.load(path, progress=False, strict=True, threads=threads)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "log.jsonl:334" in errors[0]


def test_a_load_that_raises_midway_leaves_no_thread_reading(tmp_path, monkeypatch):
    """A kind that raises on the 50th value (a plugin's bug, say): the error leaves the
    load from inside its loop over pieces, its traceback kept, and no thread reads on."""
    import dataclasses

    from explicit_audit._core import registry

    lines = _engram_lines()
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines[index % len(lines)] for index in range(400)) + "\n")
    monkeypatch.setattr(content, "PIECE_BYTES", 4096)
    monkeypatch.setattr(digests, "READ_BYTES", 4096)
    seen = []

    def matches(value):
        seen.append(1)
        if len(seen) == 50:
            raise RuntimeError("a bug in a kind")
        return receipts.matches(value)

    kinds = registry.kinds()
    receipts = next(kind for kind in kinds if kind.name == "receipts")
    broken = dataclasses.replace(receipts, matches=matches, fast=None)
    kept = None
    with registry.replaced(tuple(broken if kind is receipts else kind for kind in kinds)):
        try:
            ea.load(path, progress=False, threads=2)
        except RuntimeError as exc:
            kept = exc  # its traceback holds the load's frames, as a notebook keeps it
    assert kept is not None and "a bug in a kind" in str(kept)
    assert not [thread for thread in threading.enumerate() if "read-ahead" in thread.name]


def test_no_thread_is_left_behind_after_a_load(tmp_path, monkeypatch):
    _write_inputs(tmp_path)
    monkeypatch.setattr(content, "PIECE_BYTES", 4096)
    before = {thread.name for thread in threading.enumerate()}
    _load(tmp_path, threads=2)
    after = {thread.name for thread in threading.enumerate()}
    assert not {name for name in after - before if "read-ahead" in name}


@pytest.mark.parametrize("name", ["mixed.jsonl", "mixed.jsonl.gz", "recall.json"])
def test_the_progress_bar_moves_from_the_loading_thread_by_every_byte(tmp_path, monkeypatch, name):
    """The bytes read in the second thread are counted to the bar from the caller's thread
    (in Jupyter the bar is a widget of the caller's cell), all of them, as they come."""
    from explicit_audit._core import registry
    from explicit_audit.reading import collect

    _write_inputs(tmp_path)
    monkeypatch.setattr(content, "PIECE_BYTES", 4096)
    monkeypatch.setattr(digests, "READ_BYTES", 4096)
    path = tmp_path / name
    counted = []

    def advance(count):
        counted.append((threading.get_ident(), count))

    reading = collect.Reading([name], [], Limits(max_threads=2))
    collect.read_files(reading, [path], registry.kinds(), None, names=[name], on_bytes=advance)
    assert {ident for ident, _ in counted} == {threading.get_ident()}
    assert sum(count for _, count in counted) == path.stat().st_size  # gzip: its stored bytes
    # As the pieces come, not once at the end (the gzip file's 17 KB come in two reads).
    assert len(counted) > (1 if name.endswith(".gz") else 10)
    assert reading.values_read[name] > 100
