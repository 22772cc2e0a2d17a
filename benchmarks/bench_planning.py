"""Benchmark: planning a Dask load is linear in the number of partitions.

Writes one JSON Lines file of receipts, then plans ``ea.load(...,
engine="dask")`` over it at block sizes giving from about 500 to 16,000
partitions, and builds each table's task graph, as a computation would;
nothing is read but each file's head. As the baseline, measured in the same
run at each partition count: ``dask.dataframe.from_map`` planning a table of
as many partitions (one task per partition, the least a lazy table can cost).

Prints, per partition count: the planning time, the time per partition, its
ratio to the time per partition at the smallest count, and the ratio to the
baseline.

Goal: the time per partition stays flat (ratio at most 1.5 at 16,000
partitions): a year of logs is tens of thousands of partitions.

Usage::

    python benchmarks/bench_planning.py [--n 100000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_receipts import write_receipts


def _plan(path: Path, blocksize: int) -> tuple[int, float]:
    import explicit_audit as ea

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audit = ea.load(path, engine="dask", blocksize=blocksize, progress=False)
    for table in [*audit.tables.values(), audit.rejected, audit.sources]:
        table.__dask_graph__()
    return audit.tables["receipts"].npartitions, time.perf_counter() - start


def _baseline(partitions: int) -> float:
    import dask.dataframe as dd
    import pandas as pd

    meta = pd.DataFrame({"x": pd.Series([], dtype="int64")})
    start = time.perf_counter()
    table = dd.from_map(lambda i: meta, range(partitions), meta=meta, enforce_metadata=False)
    table.__dask_graph__()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="receipts in the file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl"
        write_receipts(path, args.n)
        size = path.stat().st_size
        print(f"{args.n:,} receipts, {size / 1e6:.0f} MB")
        header = ("partitions", "plan s", "us/part", "vs first", "vs from_map")
        print("{:>10} {:>8} {:>8} {:>8} {:>11}".format(*header))
        _plan(path, size // 100)  # imports and first calls, not timed
        _baseline(100)
        first = None
        for count in (500, 1000, 2000, 4000, 8000, 16000):
            partitions, seconds = _plan(path, max(size // count, 64))
            per = seconds / partitions * 1e6
            first = first or per
            baseline = _baseline(partitions)
            print(
                f"{partitions:>10,} {seconds:>8.2f} {per:>8.0f} {per / first:>8.2f}"
                f" {seconds / baseline:>10.1f}x"
            )


if __name__ == "__main__":
    main()
