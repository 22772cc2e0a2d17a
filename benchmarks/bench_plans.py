"""Benchmark: ``ea.plan_verdicts`` against a loop of arborist's scalar hash.

Builds N plan records (default 200,000; at least half with non-ASCII
keywords: Korean, Japanese, accented; a third with an MT block; a quarter in
the flat dataclass shape), loads them into the ``plans`` table in memory, then
times, in the same run:

- baseline: for each written plan, ``RetrievalPlan(...)`` and
  ``retrieval_plan_hash(plan)``: arborist's own code, read from
  ``shared/seeds/`` at run time (see ``_seeds.py``), compared with the
  recorded hash;
- kit: ``ea.plan_verdicts(plans)`` over the whole table.

It prints both throughputs and their ratio, and fails unless every rebuilt
digest equals the baseline's.

    python benchmarks/bench_plans.py            # 200,000 plans
    python benchmarks/bench_plans.py --n 20000  # a quick run
    python benchmarks/bench_plans.py --seeds ~/shared/seeds  # reference code elsewhere
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _seeds import add_seeds_option, load_seed

import explicit_audit as ea
from explicit_audit._core.records import RawValue
from explicit_audit.plans import KIND

# --- baseline: arborist's own RetrievalPlan / retrieval_plan_hash ---------------------------
# Read from shared/seeds/ at run time (see _seeds.py); never restated here.
_SEED = load_seed("000", "seed_retrieval_plan")
RetrievalPlan = _SEED.RetrievalPlan
retrieval_plan_hash = _SEED.retrieval_plan_hash


def baseline_digest(written: dict) -> str:
    """The written plan back into the dataclass (either shape), then the seed's hash."""
    if "mt" in written:
        fields = {k: v for k, v in written.items() if k != "mt"}
        mt = written["mt"]
        fields.update(
            mt_engine=mt["engine"],
            mt_manifest_hash=mt["manifest_hash"],
            source_lang=mt["source_lang"],
        )
        return retrieval_plan_hash(RetrievalPlan(**fields))
    return retrieval_plan_hash(RetrievalPlan(**written))


# --- data -----------------------------------------------------------------------------------
KEYWORDS = [
    "서울 지하철 노선도",
    "부산 항만 물동량 통계",
    "東京 天気 予報",
    "日本語 形態素解析 辞書",
    "café crème brûlée",
    "Müller Straße Bebauungsplan",
    "retrieval audit trail",
    "quarterly revenue by region",
    "merkle proof verification",
    "emoji 😀 and astral 𠀀",
]


def make_records(n: int, seed: int = 7) -> list[RawValue]:
    rng = random.Random(seed)
    values = []
    for index in range(n):
        mt = index % 3 == 0
        plan = {
            "retrieval_keywords": f"{KEYWORDS[index % len(KEYWORDS)]} {index}",
            "top_k": rng.choice([5, 8, 10, 20]),
            "over_fetch": rng.choice([1, 2, 3]),
            "max_context_chars": rng.choice([8000, 12000, 24000]),
            "shard_ids": rng.sample(["wiki-ko", "wiki-ja", "news-eu", "law-kr", "gov-jp"], 2),
        }
        engine = rng.choice(["nllb-200-distilled-600M", "m2m100_418M"]) if mt else ""
        manifest = hashlib.sha256(engine.encode()).hexdigest() if mt else ""
        lang = rng.choice(["ko", "ja"]) if mt else ""
        if index % 4 == 3:
            plan.update(mt_engine=engine, mt_manifest_hash=manifest, source_lang=lang)
        elif mt:
            plan["mt"] = {"engine": engine, "manifest_hash": manifest, "source_lang": lang}
        record = {"run_id": f"r-{index:07d}", "retrieval_plan": plan, "retrieval_plan_hash": ""}
        record["retrieval_plan_hash"] = baseline_digest(plan)
        values.append(RawValue("bench.jsonl", index + 1, record, orjson.dumps(record)))
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="number of plans")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds; best is kept")
    add_seeds_option(parser)
    args = parser.parse_args(argv)

    values = make_records(args.n)
    plans = KIND.build([("values", values)]).tables["plans"]
    non_ascii = int(plans["keywords_non_ascii"].sum())
    print(
        f"{len(plans):,} plans: {non_ascii:,} with non-ASCII keywords, "
        f"{int(plans['has_mt'].sum()):,} with an MT block, "
        f"{int((plans['plan_shape'] == 'flat').sum()):,} in the flat shape"
    )
    written = plans["plan"].tolist()
    recorded = plans["retrieval_plan_hash"].tolist()

    baseline_time = kit_time = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        baseline = [baseline_digest(plan) for plan in written]
        baseline_ok = sum(b == r for b, r in zip(baseline, recorded, strict=True))
        baseline_time = min(baseline_time, time.perf_counter() - start)

        start = time.perf_counter()
        checked = ea.plan_verdicts(plans)
        kit_time = min(kit_time, time.perf_counter() - start)

    rebuilt = checked["rebuilt_hash"].tolist()
    identical = rebuilt == baseline
    print(
        f"baseline (seed's retrieval_plan_hash, loop): {len(written) / baseline_time:,.0f} plans/s"
    )
    print(f"ea.plan_verdicts:                             {len(written) / kit_time:,.0f} plans/s")
    print(f"ratio: {baseline_time / kit_time:.2f}x")
    print(
        f"digests identical: {identical} ({len(rebuilt):,} compared; "
        f"matches: baseline {baseline_ok:,}, kit {int(checked['match'].sum()):,})"
    )
    if not identical or baseline_ok != int(checked["match"].sum()):
        print("FAIL: the kit's digests differ from the seed's", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
