"""Benchmark: the reading pipeline on every input shape, against ``pandas.read_json``.

Writes the same receipts (deterministic) in every shape the kit reads, then
times ``ea.load`` on each, and ``pandas.read_json(lines=True)`` on the compact
JSON Lines of the same records (the baseline), each in a fresh process so that
peak memory is its own:

- ``clean``: one record shape (engram CLI outputs wrapped by a logger);
- ``mixed``: bare receipts and internal outcomes, interleaved in one file;
- ``pretty``: engram CLI outputs pretty-printed and appended (``>>``), ``.json``;
- ``damaged``: ``clean`` with one line broken in the middle;
- the gzip of each of the first three; and 200k retrieval plans, clean JSONL.

Goals (issue: reading core, one pipeline): every shape at least 8x the
baseline; the pretty log at least half the speed of clean JSONL; one damaged
line adds at most 15% to the load time; peak memory at most 2x the file size
(the decompressed size for gzip); 200k plans load in under 1.5 s.

Usage::

    python benchmarks/bench_reading.py [--n 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_receipts import _receipt


def _cli(receipt: dict, index: int) -> dict:
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


def _outcome(receipt: dict) -> dict:
    records = [{"relativePath": uri.rsplit("/", 1)[1]} for uri in receipt["locatorUris"]]
    return {"kind": receipt["kind"], "records": records, "receipt": receipt}


def _plan(rng: random.Random, index: int) -> dict:
    plan = {
        "retrieval_keywords": f"서울 지하철 {index}",
        "top_k": rng.choice([5, 8, 10, 20]),
        "over_fetch": rng.choice([1, 2, 3]),
        "max_context_chars": rng.choice([8000, 12000, 24000]),
        "shard_ids": rng.sample(["wiki-ko", "wiki-ja", "news-eu", "law-kr"], 2),
    }
    if index % 3 == 0:
        plan["mt"] = {"engine": "m2m100_418M", "manifest_hash": "ab" * 32, "source_lang": "ko"}
    digest = hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()
    return {"run_id": f"r-{index:07d}", "retrieval_plan": plan, "retrieval_plan_hash": digest}


def write_inputs(folder: Path, n: int, seed: int = 7) -> dict[str, Path]:
    """Write every shape of the same ``n`` receipts; return them by name."""
    rng = random.Random(seed)
    receipts = [_receipt(rng, index) for index in range(n)]
    paths = {name: folder / name for name in ("clean.jsonl", "mixed.jsonl", "pretty.json")}
    with (
        paths["clean.jsonl"].open("w", encoding="utf-8") as clean,
        paths["mixed.jsonl"].open("w", encoding="utf-8") as mixed,
        paths["pretty.json"].open("w", encoding="utf-8") as pretty,
    ):
        for index, receipt in enumerate(receipts):
            line = _cli(receipt, index)
            clean.write(json.dumps(line, ensure_ascii=False) + "\n")
            pretty.write(json.dumps(line, ensure_ascii=False, indent=2) + "\n")
            shaped = receipt if rng.random() < 0.5 else _outcome(receipt)
            mixed.write(json.dumps(shaped, ensure_ascii=False) + "\n")
    lines = paths["clean.jsonl"].read_bytes().split(b"\n")
    lines[n // 2] = lines[n // 2][: len(lines[n // 2]) // 2]  # one line cut in half
    paths["damaged.jsonl"] = folder / "damaged.jsonl"
    paths["damaged.jsonl"].write_bytes(b"\n".join(lines))
    for name in ("clean.jsonl", "mixed.jsonl", "pretty.json"):
        packed = folder / f"{name}.gz"
        packed.write_bytes(gzip.compress(paths[name].read_bytes(), compresslevel=6))
        paths[f"{name}.gz"] = packed
    plans = folder / "plans.jsonl"
    with plans.open("w", encoding="utf-8") as out:
        for index in range(n):
            out.write(json.dumps(_plan(rng, index), ensure_ascii=False) + "\n")
    paths["plans.jsonl"] = plans
    return paths


CHILD = r"""
import json, resource, sys, time, warnings
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
which, path = sys.argv[1], sys.argv[2]
import pandas as pd
import explicit_audit as ea
warnings.simplefilter("ignore")
before = rss()
start = time.perf_counter()
if which == "pandas":
    rows = len(pd.read_json(path, lines=True))
else:
    audit = ea.load(path, progress=False)
    rows = len(audit.receipts) + len(audit.plans)
    rejected = len(audit.rejected)
elapsed = time.perf_counter() - start
# This process's own peak (VmHWM): ru_maxrss would include the size of the
# benchmark process that started it, which Linux carries over through exec.
with open("/proc/self/status") as f:
    peak = int(f.read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"seconds": elapsed, "peak_delta": peak - before, "rows": rows}))
"""


def _run(which: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, which, str(path)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _best(which: str, path: Path, repeat: int) -> dict:
    return min((_run(which, path) for _ in range(repeat)), key=lambda run: run["seconds"])


def _content_size(path: Path) -> int:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as stream:
            return sum(len(chunk) for chunk in iter(lambda: stream.read(1 << 24), b""))
    return path.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="receipts (and plans) to write")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each reader; best kept")
    args = parser.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as folder:
        paths = write_inputs(Path(folder), args.n)
        baseline = _best("pandas", paths["clean.jsonl"], args.repeat)
        print(
            f"baseline: pandas.read_json(lines=True) on clean.jsonl "
            f"({paths['clean.jsonl'].stat().st_size / 1e6:.0f} MB): {baseline['seconds']:.2f} s"
        )
        print(f"{'input':<16}{'MB':>8}{'seconds':>9}{'x pandas':>10}{'peak/size':>11}  goals")
        results = {}
        for name, path in paths.items():
            run = _best("kit", path, args.repeat)
            results[name] = run
            size = _content_size(path)
            ratio = baseline["seconds"] / run["seconds"]
            memory = run["peak_delta"] / size
            goals = []
            if name != "plans.jsonl":
                goals.append(("8x", ratio >= 8))
            goals.append(("2x memory", memory <= 2))
            if name == "plans.jsonl":
                goals.append(("< 1.5 s", run["seconds"] < 1.5))
            marks = ", ".join(f"{goal} {'ok' if ok else 'MISSED'}" for goal, ok in goals)
            failed += [f"{name}: {goal}" for goal, ok in goals if not ok]
            print(
                f"{name:<16}{path.stat().st_size / 1e6:>8.0f}{run['seconds']:>9.2f}"
                f"{ratio:>9.1f}x{memory:>10.2f}x  {marks}"
            )
        for plain in ("clean.jsonl", "mixed.jsonl", "pretty.json"):
            assert results[plain]["rows"] == args.n, (plain, results[plain])
        assert results["damaged.jsonl"]["rows"] == args.n - 1, results["damaged.jsonl"]
        pretty = results["clean.jsonl"]["seconds"] / results["pretty.json"]["seconds"]
        damage = results["damaged.jsonl"]["seconds"] / results["clean.jsonl"]["seconds"] - 1
        print(f"pretty log speed / clean JSONL speed: {pretty:.2f} (goal >= 0.5)")
        print(f"one damaged line adds: {100 * damage:+.1f}% (goal <= 15%)")
        failed += ["pretty speed"] * (pretty < 0.5) + ["damaged line"] * (damage > 0.15)
    print("all goals met" if not failed else "missed: " + "; ".join(failed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
