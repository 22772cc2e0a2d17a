"""Benchmark: a scheduler and two worker processes reading ~2 GB of logs by URL, vs in memory.

As ``tests/test_cluster.py`` does on the bundled data, on ``--gb`` GB of generated
logs (``bench_scaling_model``'s): ``dask scheduler`` and two ``dask worker``
processes (:mod:`scripts.process_cluster`: one thread each, ``--memory-limit``
each, each in a fresh folder of its own) read the logs from an HTTP server on
127.0.0.1 (``python -m http.server`` over a folder in /tmp that no worker is
told about). ``ea.verify_all`` on the
cluster and on the in-memory engine (the same URLs) are timed, and compared: the
same findings, the same records checked, the same ``rejected`` and ``sources``, and
every table the same (a hash of each table's rows, summed over its partitions on
the workers, against the same hash of the in-memory table).

Usage::

    python benchmarks/bench_cluster.py [--gb 2] [--memory-limit 2GiB] [--data DIR]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_scaling_model import write_logs

from scripts.process_cluster import process_cluster, started, stopped


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _table_hash(frame) -> int:
    """A hash of a table's rows and labels: summed over partitions, the whole table's."""
    import pandas as pd

    # Lists and objects hashed by their text, every other value as it is.
    texts = {
        c: frame[c].astype(str)
        for c in frame
        if frame[c].dtype == object or "list" in str(frame[c].dtype)
    }
    frame = frame.assign(**texts)
    return int(pd.util.hash_pandas_object(frame, index=True).sum()) % 2**64


def _lazy_hashes(tables: dict) -> dict:
    """Each lazy table's :func:`_table_hash`, its partitions hashed on the workers."""
    import dask

    parts = {
        name: [dask.delayed(_table_hash)(p) for p in t.to_delayed()] for name, t in tables.items()
    }
    (computed,) = dask.compute(parts)
    return {name: sum(hashes) % 2**64 for name, hashes in computed.items()}


def _timed(call, *args, **kwargs):
    start = time.perf_counter()
    result = call(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=2.0, help="GB of logs to write")
    parser.add_argument("--memory-limit", default="2GiB", help="memory limit per worker")
    parser.add_argument("--data", type=Path, help="folder to keep the logs in and reuse")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import explicit_audit as ea

    home = Path(tempfile.mkdtemp(prefix="bench_cluster_"))
    logs = args.data or home / "logs"
    processes: list[subprocess.Popen] = []
    try:
        if not logs.exists():
            written, seconds = _timed(write_logs, logs, args.gb, 64_000_000)
            print(f"wrote {written / 1e9:.2f} GB in {seconds:.0f} s")
        port = _free_port()
        serving = home / "server"
        serving.mkdir()
        processes.append(
            started(
                [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                 "--directory", str(logs)],
                serving,
            )
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        files = sorted(logs.rglob("*.jsonl"))
        urls = [f"{base}/{path.relative_to(logs).as_posix()}" for path in files]
        size = sum(path.stat().st_size for path in files)
        print(f"{len(files)} files, {size / 1e9:.2f} GB, served at {base}")
        started_at = time.perf_counter()
        (home / "cluster").mkdir()
        with (
            process_cluster(home / "cluster", memory_limit=args.memory_limit) as running,
            ea.use_scheduler(running.address, timeout="60s"),
        ):
            print(f"cluster up in {time.perf_counter() - started_at:.1f} s")
            lazy, plan = _timed(ea.load, urls, engine="dask", progress=False)
            on_cluster, cluster_seconds = _timed(ea.verify_all, lazy)
            hashes, hash_seconds = _timed(_lazy_hashes, lazy.tables)
        rate = size / 1e6 / cluster_seconds
        print(
            f"planned in {plan:.1f} s; verify_all on 2 workers: {cluster_seconds:.1f} s "
            f"({rate:.0f} MB/s); table hashes: {hash_seconds:.1f} s"
        )
        memory, load_seconds = _timed(ea.load, urls, progress=False)
        in_memory, check_seconds = _timed(ea.verify_all, memory)
        print(
            f"in memory (one process): load {load_seconds:.1f} s, verify_all {check_seconds:.1f} s"
        )
        same = {
            "findings": on_cluster.findings.equals(in_memory.findings),
            "checked": on_cluster.checked == in_memory.checked,
            "rejected": on_cluster.accounting.rejected.equals(memory.rejected),
            "sources": on_cluster.accounting.sources.equals(memory.sources),
            "tables": all(
                hashes[name] == _table_hash(table) for name, table in memory.tables.items()
            ),
        }
        rows = sum(len(table) for table in memory.tables.values())
        print(f"{rows:,} rows, {len(in_memory.findings):,} findings")
        print("same as in memory: " + ", ".join(f"{k} {v}" for k, v in same.items()))
        print("met" if all(same.values()) else "MISSED")
    finally:
        for process in processes:
            stopped(process)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
