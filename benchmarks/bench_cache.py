"""Benchmark: ``ea.load(..., cache=DIR)``, the first load of 200k receipts against the second.

Writes the receipts of ``bench_receipts`` (engram CLI outputs wrapped by a
logger; deterministic) to a JSON Lines file, reads it once so that both
loads find it in the page cache, then times in fresh processes a load into
an empty cache folder (parsing every value and writing the entry) and loads
of the same unchanged file from that folder (hashing the file, reading the
entry back). Prints both, and their ratio.

Goal (issue 21): the second load at least 20x faster than the first.

Usage::

    python benchmarks/bench_cache.py [--n 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_receipts import write_receipts

CHILD = r"""
import json, sys, time
import explicit_audit as ea
path, cache = sys.argv[1], sys.argv[2]
start = time.perf_counter()
audit = ea.load(path, progress=False, cache=cache)
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "rows": len(audit.receipts)}))
"""


def _load(path: Path, cache: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(cache)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="receipts to write")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each load")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl"
        write_receipts(path, args.n)
        size = path.stat().st_size
        path.read_bytes()  # into the page cache, for both loads alike
        print(f"file: {args.n} receipts, {size / 1e6:.1f} MB")
        firsts, seconds = [], []
        for run in range(args.repeat):
            cache = Path(folder) / f"cache-{run}"
            firsts.append(_load(path, cache))
            seconds.append(_load(path, cache))
    for result in firsts + seconds:
        assert result["rows"] == args.n, result
    first = min(r["seconds"] for r in firsts)
    second = min(r["seconds"] for r in seconds)
    print(f"first load, into an empty cache (best of {args.repeat}): {first:.2f} s")
    print(f"second load, unchanged file (best of {args.repeat}): {second:.3f} s")
    print(f"speed ratio: {first / second:.1f}x (goal >= 20x)")


if __name__ == "__main__":
    main()
