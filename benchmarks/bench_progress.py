"""Benchmark: what the progress bar costs a load of 200k receipts.

Writes the receipts of ``bench_receipts`` (deterministic) to a JSON Lines
file, then loads it in fresh processes with the bar on and off, alternately
(``EXPLICIT_AUDIT_PROGRESS=1`` / ``0``; the bar is drawn on standard error,
a pipe read by this process), and compares the best of ``--repeat`` of each.
On a busy machine that difference is noise of several percent either way, so
it also prints the time spent inside the bar's own calls (counting, drawing),
timed in the loading process, as a share of the load.

Goal (issue 21): the bar costs less than 3% of the load.

Usage::

    python benchmarks/bench_progress.py [--n 200000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_receipts import write_receipts

CHILD = r"""
import json, sys, time
import explicit_audit as ea
from explicit_audit._core import progress
# The bar's own time, summed over its calls: a figure the machine's noise does not blur.
spent = [0.0]
def timed(method):
    def call(*args):
        begin = time.perf_counter()
        try:
            return method(*args)
        finally:
            spent[0] += time.perf_counter() - begin
    return call
progress._Bytes.advance = timed(progress._Bytes.advance)
progress._Bytes.close = timed(progress._Bytes.close)
start = time.perf_counter()
audit = ea.load(sys.argv[1])
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "bar": spent[0], "rows": len(audit.receipts)}))
"""


def _load(path: Path, progress: str) -> dict:
    env = {**os.environ, "EXPLICIT_AUDIT_PROGRESS": progress}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["drawn"] = "reading" in out.stderr
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="receipts to write")
    parser.add_argument("--repeat", type=int, default=5, help="loads of each")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl"
        write_receipts(path, args.n)
        path.read_bytes()  # into the page cache, for both alike
        print(f"file: {args.n} receipts, {path.stat().st_size / 1e6:.1f} MB")
        on, off = [], []
        for _ in range(args.repeat):
            on.append(_load(path, "1"))
            off.append(_load(path, "0"))
    assert all(r["rows"] == args.n for r in on + off)
    assert all(r["drawn"] for r in on) and not any(r["drawn"] for r in off)
    best_on = min(r["seconds"] for r in on)
    best_off = min(r["seconds"] for r in off)
    print(f"without the bar (best of {args.repeat}): {best_off:.3f} s")
    print(f"with the bar (best of {args.repeat}): {best_on:.3f} s")
    print(f"difference of the bests: {100 * (best_on - best_off) / best_off:+.1f}%")
    own = max(r["bar"] / r["seconds"] for r in on)
    print(f"time inside the bar's calls: at most {100 * own:.2f}% of a load (goal < 3%)")


if __name__ == "__main__":
    main()
