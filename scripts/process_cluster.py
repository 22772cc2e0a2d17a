"""A Dask cluster of separate processes on 127.0.0.1, as a team runs one.

``dask scheduler`` and ``dask worker`` processes started from the command line
beside the running Python (a venv's), on random ports, one thread per worker,
each worker in a working folder of its own; each process is a process group of
its own (a nanny's worker goes with it), so that it can be killed whole. Used by
``tests/test_cluster.py`` and ``benchmarks/bench_cluster.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DASK", "ProcessCluster", "process_cluster", "started", "stopped"]

#: The ``dask`` command beside the Python running this.
DASK = Path(sys.executable).with_name("dask")


@dataclass
class ProcessCluster:
    """The scheduler's address, and each worker's process (group leader) by its address."""

    address: str
    workers: dict[str, subprocess.Popen]


def started(argv: list[str], cwd: Path) -> subprocess.Popen:
    """``argv`` run in ``cwd``, a process group of its own, its output in ``cwd/process.log``."""
    with open(cwd / "process.log", "wb") as log:  # the process holds its own copy
        return subprocess.Popen(
            argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def stopped(process: subprocess.Popen) -> None:
    """The process and every process of its group gone: asked to stop, then killed."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sent)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)


def _address(folder: Path, scheduler: subprocess.Popen, seconds: float = 120) -> str:
    """The address the scheduler wrote, once it has."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and scheduler.poll() is None:
        with contextlib.suppress(OSError, ValueError, KeyError):
            return json.loads((folder / "address.json").read_text())["address"]
        time.sleep(0.05)
    log = (folder / "process.log").read_text(errors="replace")
    raise RuntimeError(f"the scheduler did not start:\n{log}")


@contextlib.contextmanager
def process_cluster(
    home: Path, *, workers: int = 2, memory_limit: str = "1GiB"
) -> Iterator[ProcessCluster]:
    """A scheduler and ``workers`` workers, folders under ``home``; every process killed at the end.

    Parameters
    ----------
    home : Path
        An empty folder: ``scheduler/`` and ``worker<N>/`` are made in it, each
        process's working folder (and a worker's local directory).
    workers : int
        How many ``dask worker`` processes, one thread each.
    memory_limit : str
        Each worker's memory limit (its nanny restarts it past it).
    """
    from distributed import Client

    processes: list[subprocess.Popen] = []
    try:
        folder = home / "scheduler"
        folder.mkdir()
        argv = [
            str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", str(folder / "address.json"),
        ]  # fmt: skip
        processes.append(started(argv, folder))
        address = _address(folder, processes[0])
        for n in range(workers):
            folder = home / f"worker{n}"
            folder.mkdir()
            argv = [
                str(DASK), "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                "--memory-limit", memory_limit, "--no-dashboard", "--local-directory", str(folder),
            ]  # fmt: skip
            processes.append(started(argv, folder))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # distributed's own notes on connecting
            with Client(address, timeout="60s") as client:
                client.wait_for_workers(workers, timeout=300)
                pids = client.run(os.getpid)
        by_group = {os.getpgid(pid): worker for worker, pid in pids.items()}
        yield ProcessCluster(address, {by_group[p.pid]: p for p in processes[1:]})
    finally:
        for process in reversed(processes):
            stopped(process)
