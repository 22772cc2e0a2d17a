"""Benchmark: time per record as a log grows, from 200k receipts to 8 times as many.

Writes engram CLI outputs wrapped by a logger (``bench_receipts``' records,
deterministic) at each size, then times ``ea.load_receipts`` on each in a
fresh process, sizes interleaved, best of ``--repeat``. Prints seconds,
microseconds per record, peak memory above the process's start as a multiple
of the file, and how much the time per record grew from the smallest size.

Goal (issue 24): time per record grows by at most 10% from 200k to 1.6M records.

Usage::

    python benchmarks/bench_scaling.py [--sizes 200000,1600000] [--repeat 2] [--data DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_receipts import _run, write_receipts

GOAL = 0.10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="200000,1600000", help="comma-separated record counts")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each size")
    parser.add_argument("--data", type=Path, help="folder to keep the inputs in and reuse")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.data or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        paths = {}
        for n in sizes:
            paths[n] = folder / f"receipts_{n}.jsonl"
            if not paths[n].exists():
                write_receipts(paths[n], n)
        runs: dict[int, list[dict]] = {n: [] for n in sizes}
        for _ in range(args.repeat):  # sizes interleaved: a noisy moment hits each alike
            for n in sizes:
                runs[n].append(_run("kit", paths[n]))
        print(
            f"{'records':>10}{'MB':>8}{'seconds':>9}{'us/record':>11}{'peak/file':>11}{'growth':>9}"
        )
        first = None
        for n in sizes:
            best = min(runs[n], key=lambda run: run["seconds"])
            assert best["rows"] == n, best
            size = paths[n].stat().st_size
            per = best["seconds"] / n * 1e6
            first = per if first is None else first
            print(
                f"{n:>10,}{size / 1e6:>8.0f}{best['seconds']:>9.2f}{per:>11.2f}"
                f"{best['peak_delta'] / size:>11.2f}{per / first - 1:>+9.1%}"
            )
    growth = per / first - 1
    print(f"time per record, {sizes[0]:,} -> {sizes[-1]:,}: {growth:+.1%} (goal <= +{GOAL:.0%})")
    print("met" if growth <= GOAL else "MISSED")


if __name__ == "__main__":
    main()
