"""Benchmark: ``ea.load_receipts`` against ``pandas.read_json(lines=True)``.

Writes a JSON Lines file of receipts (engram CLI outputs wrapped by a logger
with a timestamp and a request id; deterministic), then times both readers on
it in the same run, each
in a fresh process so that peak memory is its own. Prints the speed ratio and
each reader's peak memory above its process's starting point, as a multiple
of the file size.

Goals (issue: foundation): at least 8x faster than ``pandas.read_json``;
peak memory at most 2.5x the file size.

Usage::

    python benchmarks/bench_receipts.py [--n 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

AUDIENCES = ["peer", "supervisor", "status-only", "external-auditor", None]
CLASSES = ["status", "risk", "recommendation", "restricted", "presentation"]
WORDS = ["beacon", "export", "rehearsal", "timing", "risk", "checkpoint", "delivery", "레이더", "é"]


def _receipt(rng: random.Random, index: int) -> dict:
    scope = "space" if rng.random() < 0.2 else "search"
    space = f"space-{rng.randrange(12)}"
    collection = f"{space}-records"
    n = rng.randrange(0, 5)
    ids = [f"record-{rng.randrange(5000)}" for _ in range(n)]
    uris = [f"qmd://{collection}/{record}.md" for record in ids]
    audience = rng.choice(AUDIENCES)
    exposed = []
    if audience is not None:
        for record, uri in zip(ids, uris, strict=True):
            item = {
                "recordId": record,
                "sourceUri": uri,
                "relativePath": uri.rsplit("/", 1)[1],
                "sourceClasses": [rng.choice(CLASSES[:4])],
            }
            if scope == "search":
                item["score"] = round(rng.uniform(0.5, 0.99), 2)
            exposed.append(item)
    return {
        "schemaVersion": 0,
        "scope": scope,
        "query": None if scope == "space" else " ".join(rng.sample(WORDS, 3)),
        "activeSpace": space,
        "collection": collection,
        "requestedSourceClasses": CLASSES[:4],
        "allowedSourceClasses": CLASSES[:3],
        "kind": "hit" if ids else "miss",
        "locatorUris": uris,
        "recordIds": ids,
        "exposedResults": exposed,
        "relevanceThreshold": 0.5 if scope == "search" and audience else None,
        "withheld": {"audienceId": audience, "count": rng.choice([0, 0, 0, 1, 2])},
    }


def logged(receipt: dict, index: int) -> dict:
    """The engram CLI's output for ``receipt``, wrapped by a logger (time, request id)."""
    return {
        "timestamp": f"2026-10-{1 + index % 28:02d}T{index % 24:02d}:00:00Z",
        "request_id": f"req-{index:07d}",
        "schema_version": 0,
        "status": receipt["kind"],
        "records": [
            {"relativePath": uri.rsplit("/", 1)[1], "sourceUri": uri}
            for uri in receipt["locatorUris"]
        ],
        "receipt": receipt,
    }


def write_receipts(path: Path, n: int, seed: int = 7) -> None:
    """Write ``n`` receipts as CLI output lines wrapped by a logger."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        for index in range(n):
            out.write(json.dumps(logged(_receipt(rng, index), index), ensure_ascii=False))
            out.write("\n")


CHILD = r"""
import json, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
which, path = sys.argv[1], sys.argv[2]
import pandas as pd
import explicit_audit as ea
before = rss()
start = time.perf_counter()
if which == "pandas":
    frame = pd.read_json(path, lines=True)
else:
    frame = ea.load_receipts(path, progress=False)
elapsed = time.perf_counter() - start
# This process's own peak (VmHWM): ru_maxrss would include the size of the
# benchmark process that started it, which Linux carries over through exec.
with open("/proc/self/status") as f:
    peak = int(f.read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"seconds": elapsed, "peak_delta": peak - before, "rows": len(frame)}))
"""


def _run(which: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, which, str(path)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _seconds(run: dict) -> float:
    return run["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="receipts to write")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reader")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "receipts.jsonl"
        write_receipts(path, args.n)
        size = path.stat().st_size
        print(f"file: {args.n} receipts, {size / 1e6:.1f} MB")
        # Best of --repeat for both, each run in a fresh process: the same
        # treatment, so that a noisy moment does not decide the ratio.
        baseline = min((_run("pandas", path) for _ in range(args.repeat)), key=_seconds)
        ours = min((_run("kit", path) for _ in range(args.repeat)), key=_seconds)
    assert ours["rows"] == baseline["rows"] == args.n, (ours, baseline)
    ratio = baseline["seconds"] / ours["seconds"]
    print(
        f"pandas.read_json(lines=True) (best of {args.repeat}): {baseline['seconds']:.2f} s, "
        f"peak +{baseline['peak_delta'] / size:.2f}x file size"
    )
    print(
        f"ea.load_receipts (best of {args.repeat}): {ours['seconds']:.2f} s, "
        f"peak +{ours['peak_delta'] / size:.2f}x file size"
    )
    print(f"speed ratio: {ratio:.1f}x (goal >= 8x)")
    print(f"peak memory: {ours['peak_delta'] / size:.2f}x file size (goal <= 2.5x)")


if __name__ == "__main__":
    main()
