"""Benchmark: a re-audit with ``state=DIR`` after 1% was appended, against the first audit.

Writes 200k receipts (``bench_receipts``) and 200k decisions (the bundled
ones, renumbered) to two JSON Lines files, then, each in a fresh process:
the first audit (``ea.load(..., state=DIR)`` into an empty state, and
``verify_all``); 1% more records appended to each file; the re-audit from
the state; and a full audit of the same final bytes without a state. Prints
each round's times and ratio, then the best of each run over the rounds,
their ratio, and whether the findings of the re-audit equal the full audit's.

Goal (issue 39): the re-audit at most 15% of the first audit's time, with
the same findings as the full audit.

Usage::

    python benchmarks/bench_incremental.py [--n 200000] [--appended 0.01] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _decision_logs import decision_lines
from bench_receipts import write_receipts

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
import explicit_audit as ea
folder, state, out = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
audit = ea.load(folder, progress=False, state=state or None)
found = ea.verify_all(audit).findings
elapsed = time.perf_counter() - start
found = found[found["check"] != "audited_bytes"].astype(
    {"check": "str", "rule": "str", "kind": "str"}
).reset_index(drop=True)
found.to_pickle(out)
print(json.dumps({"seconds": elapsed, "findings": len(found)}))
"""


def _receipt_lines(n: int, where: Path) -> list[str]:
    write_receipts(where, n)
    return where.read_text("utf-8").splitlines(keepends=True)


def _run(folder: Path, state: str, out: Path) -> dict:
    # The files written so far are flushed to the disk first (every file system's, where
    # the system has sync): the kernel's writing of them later would be timed with
    # whichever run it fell in.
    if hasattr(os, "sync"):
        os.sync()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder), state, str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _round(tmp: Path, n: int, receipts: list[str], decisions: list[str]) -> dict:
    """One first audit, the append, the re-audit and the full audit, in a new folder."""
    for old in ("logs", "state"):
        shutil.rmtree(tmp / old, ignore_errors=True)
    folder, state = tmp / "logs", tmp / "state"
    folder.mkdir()
    shutil.copytree(ROOT / "data/policies", folder / "policies")
    (folder / "receipts.jsonl").write_text("".join(receipts[:n]), "utf-8")
    (folder / "decisions.jsonl").write_text("".join(decisions[:n]), "utf-8")
    first = _run(folder, str(state), tmp / "first.pkl")
    with open(folder / "receipts.jsonl", "a", encoding="utf-8") as out:
        out.write("".join(receipts[n:]))
    with open(folder / "decisions.jsonl", "a", encoding="utf-8") as out:
        out.write("".join(decisions[n:]))
    again = _run(folder, str(state), tmp / "again.pkl")
    full = _run(folder, "", tmp / "full.pkl")
    same = pd.read_pickle(tmp / "again.pkl").equals(pd.read_pickle(tmp / "full.pkl"))
    return {"first": first, "again": again, "full": full, "same": same}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200_000, help="receipts, and decisions")
    parser.add_argument("--appended", type=float, default=0.01, help="share appended")
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds; each is shown, then the best of each run"
    )
    args = parser.parse_args()
    extra = int(args.n * args.appended)
    decisions = decision_lines(args.n + extra)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        receipts = _receipt_lines(args.n + extra, tmp / "all.jsonl")
        rounds = [_round(tmp, args.n, receipts, decisions) for _ in range(args.repeat)]
    first, again, full = (
        min(r[name]["seconds"] for r in rounds) for name in ("first", "again", "full")
    )
    print(f"{args.n:,} receipts + {args.n:,} decisions, then {extra:,} of each appended")
    for number, done in enumerate(rounds, 1):
        seconds = [done[name]["seconds"] for name in ("first", "again", "full")]
        ratio = seconds[1] / seconds[0]
        print(
            f"round {number}: first {seconds[0]:.2f} s, re-audit {seconds[1]:.2f} s ({ratio:.1%}), "
            f"full {seconds[2]:.2f} s"
        )
    print(f"best of {args.repeat} rounds, each in a fresh process:")
    print(f"first audit (load into an empty state + verify_all): {first:.2f} s")
    print(f"re-audit from the state:                              {again:.2f} s")
    print(f"full audit of the same bytes, no state:               {full:.2f} s")
    print(f"re-audit / first audit: {again / first:.1%} (goal: at most 15%)")
    print(f"re-audit / full audit without a state: {again / full:.1%}")
    same = all(r["same"] for r in rounds)
    count = rounds[0]["again"]["findings"]
    print(f"findings equal to the full audit's, every round: {same} ({count:,} findings)")


if __name__ == "__main__":
    main()
