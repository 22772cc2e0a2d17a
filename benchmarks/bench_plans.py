"""Benchmark: 200k retrieval plans loaded and every hash rebuilt, against the seed's own loop.

Writes N plan records as JSON Lines (default 200,000; both written shapes, a
third with an MT block, keywords in Korean, Japanese, accented Latin and
astral characters; see ``bench_reading._write_plans``), then runs each
contender in a fresh process on the same file (its own peak memory: VmHWM
above the process's starting point), best of ``--repeat`` runs, the order of
the runs shuffled in each round:

- ``seed``: arborist's own loop over the file (``json.loads`` per line,
  ``RetrievalPlan(**fields)``, ``retrieval_plan_hash``; the code read from
  ``shared/seeds/`` at run time, see ``_seeds.py``), counting the recorded
  hashes it reproduces;
- ``pandas``: ``pandas.read_json(lines=True)`` of the same file (no hash);
- ``kit``: ``ea.load_plans`` then ``ea.plan_verdicts`` (every hash rebuilt);
- ``base`` (with ``--base DIR``): the same, with another version of the kit;
- ``read``: a plain ``read()`` of the file.

It prints wall and CPU seconds, peak memory over the file's size, and the
kit's speed over the seed loop and over pandas; the seed and the kit must each
reproduce every recorded hash. Goals (issue 24): at most 1.0 s, at least 2x
the seed loop measured in the same run, peak at most 2x the file.

    python benchmarks/bench_plans.py                   # 200,000 plans, best of 3
    python benchmarks/bench_plans.py --n 20000 --repeat 1
    python benchmarks/bench_plans.py --base /tmp/old   # beside `git archive REV explicit_audit`
    python benchmarks/bench_plans.py --seeds ~/shared/seeds
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _seeds import add_seeds_option
from bench_reading import _load, _run, _write_plans

CONTENDERS = ("seed", "pandas", "kit", "base", "read")


def _measure(paths: dict, contenders: list[str], repeat: int) -> dict[str, dict]:
    best: dict[str, dict] = {}
    shuffle = random.Random(2026)
    for round_ in range(repeat):
        order = list(contenders)
        shuffle.shuffle(order)
        print(f"round {round_ + 1}/{repeat}: {', '.join(order)}; load average {_load()}")
        for which in order:
            run = _run(which, "plans.jsonl", paths)
            if which not in best or run["seconds"] < best[which]["seconds"]:
                best[which] = run
    return best


def _report(best: dict[str, dict], size: int, n: int) -> list[str]:
    print(f"{'contender':<10}{'wall s':>8}{'cpu s':>8}{'peak MB':>9}{'peak/file':>10}"
          f"{'x seed':>8}{'x pandas':>9}{'cpu x seed':>11}{'matched':>9}")  # fmt: skip
    seed, pandas = best.get("seed"), best.get("pandas")

    def over(run, other, measure="seconds"):
        if run is None or other is None or run.get("error") or other.get("error"):
            return "-"
        return f"{other[measure] / run[measure]:.2f}x"

    for which in CONTENDERS:
        run = best.get(which)
        if run is None:
            continue
        if run.get("error"):
            print(f"{which:<10} failed: {run['error']}")
            continue
        matched = "-" if run.get("matched") is None else f"{run['matched']:,}"
        print(
            f"{which:<10}{run['seconds']:>8.2f}{run.get('cpu', float('nan')):>8.2f}"
            f"{run['peak'] / 1e6:>9.0f}{run['peak'] / size:>10.2f}{over(run, seed):>8}"
            f"{over(run, pandas):>9}{over(run, seed, 'cpu'):>11}{matched:>9}"
        )
    kit = best.get("kit")
    missed = []
    if kit is None or kit.get("error"):
        return ["the kit did not run"]
    for which in ("kit", "seed", "base"):
        run = best.get(which)
        if run is not None and not run.get("error") and run["matched"] != n:
            missed.append(f"{which} reproduced {run['matched']:,} of {n:,} hashes")
    if kit["seconds"] > 1.0:
        missed.append(f"<= 1.0 s (kit {kit['seconds']:.2f} s)")
    if seed is not None and seed["seconds"] / kit["seconds"] < 2:
        missed.append(f">= 2x the seed loop ({seed['seconds'] / kit['seconds']:.2f}x)")
    if kit["peak"] / size > 2:
        missed.append(f"peak <= 2x the file ({kit['peak'] / size:.2f}x)")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="number of plans")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each contender; best kept")
    parser.add_argument(
        "--contenders", default="seed,pandas,kit,read", help="comma-separated contenders"
    )
    parser.add_argument("--data", help="folder to keep the file in and reuse (same --n)")
    parser.add_argument(
        "--base",
        metavar="DIR",
        help="a folder holding another version of the explicit_audit package, measured as "
        "'base' (e.g. `git archive REV explicit_audit | tar -x -C DIR`)",
    )
    add_seeds_option(parser)
    args = parser.parse_args(argv)
    contenders = [c for c in args.contenders.split(",") if c in CONTENDERS]
    if args.base:
        os.environ["EXPLICIT_AUDIT_BENCH_BASE"] = str(Path(args.base).resolve())
        contenders.append("base")
    if args.seeds:
        os.environ["EXPLICIT_AUDIT_SEEDS"] = args.seeds  # for the seed's own process
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.data or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "plans.jsonl"
        marker = folder / "plans.n"
        if not (path.is_file() and marker.is_file() and marker.read_text() == str(args.n)):
            _write_plans(path, args.n)
            marker.write_text(str(args.n))
        size = path.stat().st_size
        print(f"{args.n:,} plans, {size / 1e6:.0f} MB; load average {_load()}")
        best = _measure({"plans.jsonl": path}, contenders, args.repeat)
        missed = _report(best, size, args.n)
    print(f"load average after: {_load()}")
    print("all goals met" if not missed else "missed: " + "; ".join(missed))
    return 0 if not any("reproduced" in m for m in missed) else 1


if __name__ == "__main__":
    raise SystemExit(main())
