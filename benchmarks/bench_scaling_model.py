"""Benchmark: the cost per GB of logs, measured at three sizes, and the model it gives.

Writes mixed audit logs (engram CLI receipts wrapped by a logger, routing
decisions; ``bench_dask``'s records, every id unique; deterministic) at each of
``--sizes`` GB, in files of ``--file-mb`` MB, under a folder in /tmp. At each
size, each in a fresh process, so that its peak memory is its own:

- **hash**: the SHA-256 of every file (what provenance and the cache pay);
- **pandas**: ``ea.load`` (parse) and ``ea.verify_all`` (check), CPU seconds
  per GB each, and the peak memory above the process's start (the in-memory
  engine holds every table);
- **dask**: ``ea.load(engine="dask", blocksize=...)`` (planning: seconds and
  tasks per partition, the graph's pickled bytes) and ``ea.verify_all`` on the
  synchronous scheduler (read, parse and check, one partition after another:
  CPU seconds per GB, and the peak memory above the start).

CPU seconds, not wall seconds: they hold on a machine shared with others.

Two goals, each a ratio within ``--tolerance`` of 1:

- the figures linear in the bytes (CPU per GB, tasks per partition): the
  largest size's figure against the smallest's;
- the figures with a fixed part (planning, the graph, both peaks): fitted as
  fixed plus per partition (or per GB) on the smallest and largest sizes, the
  middle size's measured total against the fit's.

Then the model for 100 GB and 1 TB a day on N workers (``docs/scaling.md``).

Usage::

    python benchmarks/bench_scaling_model.py [--sizes 0.1,0.2,0.4] [--file-mb 96]
                                             [--blocksize-mb 32] [--tolerance 0.25] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dask import _decision_lines, _receipt_lines

from explicit_audit.reading.limits import DEFAULT_LIMITS

ROOT = Path(__file__).resolve().parent.parent

#: Share of the bytes that are receipts (the rest decisions), as bench_dask writes them.
RECEIPT_SHARE = 0.6

CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
from pathlib import Path
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
def peak():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmHWM:")[1].split()[0]) * 1024
def cpu():
    return time.process_time()
which, folder, blocksize = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
import pandas as pd
import explicit_audit as ea
from explicit_audit.reading.digests import file_digest
files = sorted(path for path in folder.rglob("*.jsonl"))
# Warmed up on a small slice first: imports and first-call costs are not per GB, and a
# slice leaves little freed memory behind to hide the peak in.
import itertools, tempfile
slice_path = Path(tempfile.mkdtemp()) / "slice.jsonl"
with open(files[0], "rb") as head, open(slice_path, "wb") as out:
    out.writelines(itertools.islice(head, 2000))
import dask
engine = "dask" if which == "dask" else "pandas"
with dask.config.set(scheduler="synchronous"):
    ea.verify_all(ea.load(slice_path, engine=engine, progress=False))
out = {"bytes": sum(path.stat().st_size for path in files), "base_rss": rss()}
before = rss()
if which == "hash":
    start = cpu()
    for path in files:
        file_digest(path)
    out["hash_cpu"] = cpu() - start
elif which == "pandas":
    start = cpu()
    audit = ea.load(folder, progress=False)
    out["parse_cpu"] = cpu() - start
    start = cpu()
    result = ea.verify_all(audit)
    out["check_cpu"] = cpu() - start
    out["findings"] = len(result.findings)
    out["rows"] = int(sum(len(table) for table in audit.tables.values()))
else:
    import cloudpickle
    start = cpu()
    lazy = ea.load(folder, engine="dask", blocksize=blocksize, progress=False)
    out["plan_cpu"] = cpu() - start
    graph = {}  # every table's tasks, each once
    for table in [*lazy.tables.values(), lazy.rejected, lazy.sources]:
        graph.update(table.__dask_graph__())
    out["partitions"] = lazy.tables["receipts"].npartitions
    out["tasks"] = len(graph)
    out["graph_bytes"] = len(cloudpickle.dumps(graph))
    del graph
    before = rss()
    start = cpu()
    with dask.config.set(scheduler="synchronous"):
        result = ea.verify_all(lazy)
    out["verify_cpu"] = cpu() - start
    out["findings"] = len(result.findings)
out["peak_delta"] = peak() - before
print(json.dumps(out))
"""


def write_logs(folder: Path, gigabytes: float, file_bytes: int) -> int:
    """Files of receipts and of decisions, about ``gigabytes`` GB in all; bytes written.

    Blocks of generated lines are repeated, each copy's ids made its own, so that
    no record is a duplicate of another (duplicates are findings, and findings cost).
    """
    folder.mkdir(parents=True, exist_ok=True)
    receipts = "".join(_receipt_lines(2_000, seed=11))  # about 2 MB a block, each
    decisions = "".join(_decision_lines(4_000))
    target, written, copy = gigabytes * 1e9, 0, 0
    kinds = {"receipts": (receipts, RECEIPT_SHARE), "decisions": (decisions, 1 - RECEIPT_SHARE)}
    for kind, (block, share) in kinds.items():
        (folder / kind).mkdir(exist_ok=True)
        wanted, day = target * share, 0
        while wanted > 0:
            day += 1
            with open(folder / kind / f"day-{day:04d}.jsonl", "w", encoding="utf-8") as out:
                size = 0
                while size < min(file_bytes, wanted):
                    copy += 1
                    text = (
                        block.replace('"request_id": "req-', f'"request_id": "c{copy}-')
                        if kind == "receipts"
                        else block.replace('"decision_id":"d', f'"decision_id":"c{copy}d')
                    )
                    out.write(text)
                    size += len(text.encode("utf-8"))
            wanted -= size
            written += size
    return written


def _measure(which: str, folder: Path, blocksize: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, which, str(folder), str(blocksize)],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"the {which} run failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def figures(folder: Path, blocksize: int) -> dict[str, float]:
    """The per-GB (and per-partition) figures of the logs under ``folder``."""
    hashed = _measure("hash", folder, blocksize)
    memory = _measure("pandas", folder, blocksize)
    lazy = _measure("dask", folder, blocksize)
    gb = memory["bytes"] / 1e9
    parts = lazy["partitions"]
    return {
        "hash CPU s/GB": hashed["hash_cpu"] / gb,
        "pandas parse CPU s/GB": memory["parse_cpu"] / gb,
        "pandas check CPU s/GB": memory["check_cpu"] / gb,
        "dask verify CPU s/GB": lazy["verify_cpu"] / gb,
        "tasks/partition": lazy["tasks"] / parts,
        # Not per GB: the totals the fixed-plus figures are fitted from.
        "_gb": gb,
        "_partitions": parts,
        "_base_rss_gb": lazy["base_rss"] / 1e9,
        "_findings_equal": float(memory["findings"] == lazy["findings"]),
        "_plan_cpu": lazy["plan_cpu"],
        "_graph_bytes": lazy["graph_bytes"],
        "_pandas_peak": memory["peak_delta"],
        "_dask_peak": lazy["peak_delta"],
    }


#: Figures with a fixed part: (total, what it grows with, unit). Fitted as fixed plus per
#: partition (or per GB of logs) on the smallest and largest sizes, and checked against
#: the middle size. Planning and the graph share the load's set-up and the tables' metas;
#: the in-memory peak has the allocator's own; the Dask peak is one partition's working
#: set (fixed, at one blocksize) plus the results gathered, which grow with the day.
FIXED_PLUS = {
    "plan CPU ms/partition": ("_plan_cpu", "_partitions", 1e3),
    "graph KB/partition": ("_graph_bytes", "_partitions", 1e-3),
    "pandas peak GB/GB": ("_pandas_peak", "_gb", 1e-9),
    "dask peak GB/GB": ("_dask_peak", "_gb", 1e-9),
}


def fitted(small: dict, large: dict) -> dict[str, tuple[float, float]]:
    """Each :data:`FIXED_PLUS` figure as (fixed, per partition or GB), in its unit."""
    if large["_partitions"] == small["_partitions"]:
        raise SystemExit(
            "the smallest and largest sizes plan as many partitions: no part per partition can "
            "be fitted; choose sizes further apart or a smaller --blocksize-mb"
        )
    fits = {}
    for name, (total, grows, unit) in FIXED_PLUS.items():
        per = (large[total] - small[total]) / (large[grows] - small[grows]) * unit
        fits[name] = (small[total] * unit - per * small[grows], per)
    return fits


def predicted(fits: dict, middle: dict) -> dict[str, tuple[float, float]]:
    """Each fitted figure's total at the middle size: (measured, predicted), in its unit."""
    return {
        name: (middle[total] * unit, fits[name][0] + fits[name][1] * middle[grows])
        for name, (total, grows, unit) in FIXED_PLUS.items()
    }


def model(
    measured: dict[str, float], fits: dict, blocksize: int, overhead: float = 1.4
) -> list[str]:
    """The model's lines: a day of logs on N workers (one thread each), from ``measured``.

    ``overhead``: CPU a distributed worker spends on a partition over what one
    process spends (bench_dask: a worker core gives 60-75% of an in-memory core's
    records per second, so about 1.4). A worker holds one partition at a time (the
    Dask peak's fixed part); the results are gathered in one place, the client
    (the Dask peak's part per GB).
    """
    per_gb = measured["dask verify CPU s/GB"] * overhead
    worker_gb = measured["_base_rss_gb"] + fits["dask peak GB/GB"][0]
    gathered = fits["dask peak GB/GB"][1]
    pandas_fixed, pandas_per = fits["pandas peak GB/GB"]
    lines = [
        f"{'per day':>8}{'workers':>8}{'partitions':>11}{'tasks':>10}{'graph MB':>9}"
        f"{'plan s':>8}{'CPU h':>7}{'hours':>7}{'RAM/worker GB':>14}{'gathered GB':>12}"
        f"{'pandas RAM GB':>14}"
    ]
    over = False
    for day_gb in (100, 1000):
        partitions = day_gb * 1e9 / blocksize
        over = over or partitions > DEFAULT_LIMITS.max_partitions
        cpu_hours = day_gb * per_gb / 3600
        for workers in (4, 16, 64):
            lines.append(
                f"{day_gb:>6} GB{workers:>8}{partitions:>11,.0f}"
                f"{partitions * measured['tasks/partition']:>10,.0f}"
                f"{partitions * fits['graph KB/partition'][1] / 1e3:>9,.0f}"
                f"{partitions * fits['plan CPU ms/partition'][1] / 1e3:>8,.0f}"
                f"{cpu_hours:>7.1f}{cpu_hours / workers:>7.2f}{worker_gb:>14.2f}"
                f"{day_gb * gathered:>12,.0f}{pandas_fixed + day_gb * pandas_per:>14,.0f}"
            )
    if over:
        lines.append(
            f"(past max_partitions, {DEFAULT_LIMITS.max_partitions:,} by default: such a load "
            "is refused unless blocksize= or the limit is raised)"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="0.1,0.2,0.4", help="three sizes in GB, comma-separated, ascending"
    )
    parser.add_argument("--file-mb", type=float, default=96, help="MB per log file")
    parser.add_argument("--blocksize-mb", type=float, default=32, help="MB per Dask partition")
    parser.add_argument("--tolerance", type=float, default=0.25, help="largest ratio - 1 allowed")
    parser.add_argument("--data", type=Path, help="folder to keep the logs in and reuse")
    parser.add_argument(
        "--worker-overhead", type=float, default=1.4, help="a worker's CPU over one process's"
    )
    args = parser.parse_args()
    sizes = [float(size) for size in args.sizes.split(",")]
    if len(sizes) != 3 or sorted(sizes) != sizes or len(set(sizes)) != 3:
        parser.error("--sizes takes three different sizes, smallest first")
    blocksize = int(args.blocksize_mb * 1e6)
    base = args.data or Path(tempfile.mkdtemp(prefix="bench_scaling_model_"))
    try:
        measured = []
        for size in sizes:
            folder = base / f"logs_{size:g}gb"
            if not folder.exists():
                write_logs(folder, size, int(args.file_mb * 1e6))
            measured.append(figures(folder, blocksize))
    finally:
        if args.data is None:
            shutil.rmtree(base, ignore_errors=True)
    small, middle, large = measured
    print(
        "logs: "
        + ", ".join(f"{each['_gb']:.2f} GB ({each['_partitions']} partitions)" for each in measured)
        + f" of {args.blocksize_mb:g} MB"
    )
    print(f"{'figure':<30}{'small':>10}{'middle':>10}{'large':>10}{'ratio':>8}")
    worst = 0.0
    for name in small:
        if name.startswith("_"):
            continue
        ratio = large[name] / small[name] if small[name] else float("nan")
        worst = max(worst, abs(ratio - 1))
        print(
            f"{name:<30}{small[name]:>10.3f}{middle[name]:>10.3f}{large[name]:>10.3f}{ratio:>8.2f}"
        )
    fits = fitted(small, large)
    print()
    print("fixed + per partition or GB, fitted on the smallest and largest, checked on the middle:")
    print(f"{'figure':<24}{'fixed':>10}{'per':>10}{'middle':>10}{'predicted':>10}{'ratio':>8}")
    for name, (measured_total, predicted_total) in predicted(fits, middle).items():
        ratio = measured_total / predicted_total
        worst = max(worst, abs(ratio - 1))
        fixed, per = fits[name]
        print(
            f"{name:<24}{fixed:>10.3f}{per:>10.3f}{measured_total:>10.3f}"
            f"{predicted_total:>10.3f}{ratio:>8.2f}"
        )
    same = all(each["_findings_equal"] for each in measured)
    print(f"same number of findings on both engines at every size: {same}")
    print()
    print(
        f"model (from the {large['_gb']:.2f} GB figures, one thread per worker, "
        f"worker overhead x{args.worker_overhead:g}):"
    )
    print("\n".join(model(large, fits, blocksize, args.worker_overhead)))
    print()
    print(f"largest ratio - 1: {worst:.0%} (goal <= {args.tolerance:.0%})")
    print("met" if worst <= args.tolerance and same else "MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
