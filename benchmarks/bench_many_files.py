"""Benchmark: many small files, on both engines.

Writes ``--files`` one-line JSON Lines files (routing decisions taken from the
bundled data, each with its own ``decision_id``; ``--folders`` subfolders of
a temporary folder, removed after the run), then, for each engine, in a
fresh process so that its time and peak memory (VmHWM) are its own:

1. ``ea.load(folder, engine=...)``;
2. ``ea.verify_all(audit)``, which on the Dask engine reads every partition
   and computes the accounting;

and checks that every file is accounted for (``loaded + rejected ==
values_read``, one row per file). A run over ``--kill-mb`` of memory or
``--timeout`` seconds is stopped and reported as such.

Goal (issue 23): 100,000 files in under 60 s and under 1 GB peak memory, on
both engines.

Usage::

    python benchmarks/bench_many_files.py [--files 100000] [--engines pandas,dask]
        [--repeat 1] [--scheduler threads] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 60.0
GOAL_BYTES = 1 << 30


def write_files(folder: Path, count: int, folders: int) -> None:
    """``count`` one-line decision files spread over ``folders`` subfolders."""
    bundled = []
    for path in sorted((ROOT / "data/decisions").glob("*.jsonl")):
        bundled.extend(line for line in path.read_text("utf-8").splitlines() if line.strip())
    for index in range(folders):
        (folder / f"f{index:04d}").mkdir()
    for index in range(count):
        line = bundled[index % len(bundled)].replace('"d-', f'"d{index}-', 1)
        path = folder / f"f{index % folders:04d}" / f"decision-{index:07d}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(line + "\n")


CHILD = r"""
import json, sys, time, warnings
import explicit_audit as ea
folder, engine, scheduler = sys.argv[1], sys.argv[2], sys.argv[3]
warnings.simplefilter("ignore")
def peak():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmHWM:")[1].split()[0]) * 1024
before = peak()
start = time.perf_counter()
with ea.use_scheduler(scheduler):
    audit = ea.load(folder, engine=engine, progress=False)
    loaded = time.perf_counter()
    result = ea.verify_all(audit)
done = time.perf_counter()
sources = result.accounting.sources
print(json.dumps({
    "load": loaded - start,
    "verify": done - loaded,
    "total": done - start,
    "peak": peak(),
    "import_peak": before,
    "files": int(sources["skipped"].isna().sum()),
    "values": int(sources["values_read"].sum()),
    "accounted": bool((sources.loaded + sources.rejected == sources.values_read).all()),
    "rejected": int(len(result.accounting.rejected)),
}))
"""


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(f.read().split("VmRSS:")[1].split()[0]) * 1024
    except (OSError, IndexError):
        return 0


def run_engine(folder: Path, engine: str, scheduler: str, kill_bytes: int, timeout: float) -> dict:
    """One load and verify in a fresh process; stopped past ``kill_bytes`` or ``timeout``."""
    command = [sys.executable, "-c", CHILD, str(folder), engine, scheduler]
    start = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
        highest = 0
        while child.poll() is None:
            highest = max(highest, _rss(child.pid))
            elapsed = time.perf_counter() - start
            if highest > kill_bytes or elapsed > timeout:
                child.kill()
                child.wait()
                why = "memory" if highest > kill_bytes else "time"
                return {"killed": why, "total": elapsed, "peak": highest}
            time.sleep(0.2)
        out, err = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"{engine} run failed:\n{err.decode(errors='replace')}")
    return json.loads(out.decode().strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=100_000, help="one-line files to write")
    parser.add_argument("--folders", type=int, default=100, help="subfolders they go in")
    parser.add_argument("--engines", default="pandas,dask", help="comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine; best kept")
    parser.add_argument("--scheduler", default="threads", help="the Dask engine's scheduler")
    parser.add_argument("--kill-mb", type=int, default=4096, help="stop a run past this RSS")
    parser.add_argument("--timeout", type=float, default=900, help="stop a run past this time")
    parser.add_argument("--data", type=Path, help="keep the files here (reused when present)")
    args = parser.parse_args()
    made = None
    if args.data is not None:
        folder = args.data
        if not folder.exists():
            folder.mkdir(parents=True)
            write_files(folder, args.files, args.folders)
    else:
        folder = made = Path(tempfile.mkdtemp(prefix="bench-many-files-"))
    missed = []
    try:
        if made is not None:
            started = time.perf_counter()
            write_files(folder, args.files, args.folders)
            print(f"wrote {args.files:,} files in {time.perf_counter() - started:.1f} s")
        print(f"{'engine':<8}{'load s':>8}{'verify s':>10}{'total s':>9}{'peak MB':>9}  goal")
        for engine in args.engines.split(","):
            runs = [
                run_engine(folder, engine, args.scheduler, args.kill_mb << 20, args.timeout)
                for _ in range(args.repeat)
            ]
            best = min(runs, key=lambda run: (bool(run.get("killed")), run["total"]))
            if best.get("killed"):
                print(
                    f"{engine:<8}{'':>8}{'':>10}{best['total']:>9.1f}{best['peak'] / 1e6:>9.0f}"
                    f"  stopped ({best['killed']})"
                )
                missed.append(engine)
                continue
            assert best["accounted"] and best["files"] == best["values"], best
            ok = best["total"] < GOAL_SECONDS and best["peak"] < GOAL_BYTES
            missed += [] if ok else [engine]
            print(
                f"{engine:<8}{best['load']:>8.1f}{best['verify']:>10.1f}{best['total']:>9.1f}"
                f"{best['peak'] / 1e6:>9.0f}  {'ok' if ok else 'MISSED'}"
                + (
                    f"  (of {len(runs)} runs: {[round(r['total'], 1) for r in runs]})"
                    if len(runs) > 1
                    else ""
                )
            )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    print(
        f"goal: under {GOAL_SECONDS:.0f} s and {GOAL_BYTES >> 20} MB: "
        + ("met" if not missed else "missed by " + ", ".join(missed))
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("EXPLICIT_AUDIT_PROGRESS_DELAY", "3600")
    raise SystemExit(main())
