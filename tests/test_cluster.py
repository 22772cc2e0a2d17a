"""A cluster of separate processes, as a team runs one: the same answers as in memory.

``dask scheduler`` and two ``dask worker`` processes (the venv's command line, on
127.0.0.1, random ports, one thread each, a small memory limit), each worker in a
working folder of its own. The logs are read by URL from an HTTP server that this
process runs over a folder no worker is ever told about: every table, rejection,
finding and sweep computed on the cluster equals the in-memory engine's on the same
URLs, and the in-memory engine's on the local files. A worker killed while a load is
computing leaves either the same answer (the other worker takes its tasks over) or
one clear error, never a wrong answer.

One cluster serves the whole module; its processes are process groups of their own,
killed at its end. The worker killed is killed by the module's last test.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import time
import warnings
from pathlib import Path

import cloudpickle
import pandas as pd
import pytest
from conftest import serve_folder, sorted_categories

from scripts.process_cluster import DASK, process_cluster

pytest.importorskip("aiohttp")
pytest.importorskip("distributed")

from distributed import KilledWorker

import explicit_audit as ea
from explicit_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
GRID = {"context_char_cap_4b": [2000, 6000], "confidence_threshold": [0.5, 0.8]}


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rejected rows on purpose; distributed's own notes
        return call(*args, **kwargs)


def _load(source, **options) -> ea.Audit:
    return _quiet(ea.load, source, progress=False, **options)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A copy of the bundled data and a larger generated set, served over HTTP: base URL, folder.

    Only this process knows the folder; the workers are given URLs.
    """
    folder = tmp_path_factory.mktemp("served")
    shutil.copytree(DATA, folder / "data")
    lines = b"".join(
        (DATA / "receipts" / name).read_bytes()
        for name in ("recall_cli.jsonl", "operator_receipts.jsonl")
    )
    (folder / "large").mkdir()
    for day in range(6):  # 6 files of 1.6 MB: a load that computes for a while
        (folder / "large" / f"day-{day}.jsonl").write_bytes(lines)
    with serve_folder(folder) as base:
        yield base, folder


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """``dask scheduler`` and two ``dask worker`` processes, each in its own fresh folder."""
    with process_cluster(tmp_path_factory.mktemp("cluster"), workers=2) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def by_url(served, dask_cluster):
    """The bundled logs by URL, the policies local (read here): in memory, and on the cluster.

    The local load of the bundled data, the load by URL in memory, the lazy load as
    planned, computed on the cluster and verified there, and each URL's local file.
    """
    base, _ = served
    local = _load(DATA)
    logs = [name for name in local.files if not name.endswith(".yaml")]
    urls = [f"{base}/data/{Path(name).relative_to(DATA)}" for name in logs]
    source = [*urls, DATA / "policies"]
    memory = _load(source)
    with ea.use_scheduler(dask_cluster.address):
        planned = _load(source, engine="dask")
        held = _quiet(planned.persist)  # read once, held by the workers
        computed = _quiet(held.compute)
        verified = _quiet(ea.verify_all, held)
    return local, memory, planned, computed, verified, dict(zip(urls, logs, strict=True))


def _renamed(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    frame = frame.copy()
    if "source_file" not in frame:
        return frame
    frame["source_file"] = frame["source_file"].map(lambda n: names.get(n, n)).astype("str")
    if "detail" in frame:  # a record written twice names the other place it stands

        def local(detail):
            for url, name in names.items():
                detail = detail.replace(f"{url}:", f"{name}:")
            return detail

        frame["detail"] = frame["detail"].map(local, na_action="ignore").astype("str")
    return frame


def _assert_same_table(got: pd.DataFrame, expected: pd.DataFrame, name: str) -> None:
    """Equal, categories in any order (Dask joins them in the order it meets them)."""
    pd.testing.assert_frame_equal(sorted_categories(got), sorted_categories(expected), obj=name)


def test_every_table_computed_on_the_cluster_equals_the_in_memory_one(by_url):
    local, memory, _, computed, _, names = by_url
    assert computed.files == memory.files
    assert list(computed.tables) == list(memory.tables)
    for name, table in memory.tables.items():
        _assert_same_table(computed.tables[name], table, name)
        _assert_same_table(_renamed(computed.tables[name], names), local.tables[name], name)
    pd.testing.assert_frame_equal(computed.rejected, memory.rejected)
    pd.testing.assert_frame_equal(computed.sources, memory.sources)
    assert computed.sources["sha256"].notna().all()


def test_every_finding_on_the_cluster_equals_the_in_memory_one(by_url):
    local, memory, _, _, verified, names = by_url
    expected = _quiet(ea.verify_all, memory)
    assert len(expected.findings) > 0
    pd.testing.assert_frame_equal(verified.findings, expected.findings)
    assert verified.checked == expected.checked
    from_files = _quiet(ea.verify_all, local)
    pd.testing.assert_frame_equal(_renamed(verified.findings, names), from_files.findings)
    assert verified.checked == from_files.checked


def test_a_sweep_by_url_on_the_cluster_equals_the_in_memory_one(served, dask_cluster):
    base, folder = served
    urls = [
        f"{base}/data/decisions/{path.name}" for path in sorted(folder.glob("data/decisions/*"))
    ]
    policies = ea.load_policies(DATA / "policies")
    expected = ea.sweep(_quiet(ea.load_decisions, urls, progress=False), policies, GRID)
    with ea.use_scheduler(dask_cluster.address):
        lazy = _quiet(ea.load_decisions, urls, engine="dask", progress=False)
        swept = _quiet(ea.sweep, lazy, policies, GRID)
    assert expected["decisions"].sum() > 0
    pd.testing.assert_frame_equal(swept, expected)


def test_the_command_line_on_the_cluster_prints_what_it_prints_in_memory(
    served, dask_cluster, capsys
):
    base, _ = served
    url = f"{base}/data/decisions/2026-02_strict.jsonl"
    status = main(["verify", url, "--json"])
    expected = capsys.readouterr().out
    finished = subprocess.run(
        [str(DASK.with_name("explicit-audit")), "verify", url, "--json",
         "--engine", "dask", "--scheduler", dask_cluster.address],
        capture_output=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert (finished.returncode, finished.stdout.decode()) == (status, expected)
    assert json.loads(expected)["provenance"]["files"][0]["source_file"] == url


def test_what_the_workers_are_sent_names_urls_and_not_the_logs_folder(by_url, served):
    _, _, lazy, _, _, _ = by_url
    _, folder = served
    for table in [*lazy.tables.values(), lazy.rejected, lazy.sources]:
        sent = cloudpickle.dumps(dict(table.__dask_graph__()))  # as distributed sends it
        assert b"http://127.0.0.1" in sent
        assert str(folder).encode() not in sent


def test_a_worker_killed_mid_run_leaves_the_answer_or_one_clear_error(served, dask_cluster):
    """The module's last test: one of its workers is gone after it."""
    base, folder = served
    urls = [f"{base}/large/{path.name}" for path in sorted(folder.glob("large/*.jsonl"))]
    expected = _load(urls)
    with ea.use_scheduler(dask_cluster.address) as client:
        lazy = _load(urls, engine="dask")
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            running = pool.submit(_quiet, lazy.compute)
            victim = _busy_worker(client, running)
            killed = dask_cluster.workers[victim]
            os.killpg(killed.pid, signal.SIGKILL)
            try:
                computed = running.result(timeout=300)
            except (ea.AuditError, KilledWorker) as error:  # one clear error: an outcome
                computed = error
    assert killed.wait(timeout=30) == -signal.SIGKILL
    if isinstance(computed, Exception):
        assert "worker" in str(computed).lower(), computed
        return
    for name, table in expected.tables.items():
        _assert_same_table(computed.tables[name], table, name)
    pd.testing.assert_frame_equal(computed.rejected, expected.rejected)
    pd.testing.assert_frame_equal(computed.sources, expected.sources)


def _busy_worker(client, running: concurrent.futures.Future) -> str:
    """The address of a worker reading a partition, as soon as one is."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not running.done():
        for worker, keys in client.processing().items():
            if any("build" in str(key) for key in keys):
                return worker
        time.sleep(0.01)
    raise AssertionError("no worker was seen reading a partition before the load finished")
