"""Benchmark: routing decisions, scalar loop vs ``ea.replay`` vs ``ea.sweep``.

Generates ``--n`` decisions in memory (default 1,000,000), then measures, in
one run and on the same machine:

1. the scalar loop: the seed's own ``decide_routing`` (read from
   ``shared/seeds/`` at run time, see ``_seeds.py``, with minimal policy
   classes standing in for the schema it imports) called once per decision on
   a sample, in decisions per second;
2. ``ea.replay`` over all decisions;
3. ``ea.sweep`` over a 50 x 50 x 10 grid of thresholds (``--n`` times 25,000
   decision-evaluations).

Each is printed as decision-evaluations per second and as a ratio to the
scalar loop. Each timed replay and sweep gets a table of its own (a deep
copy made before the clock starts): a table replayed again may find its
inputs encoded already, as a panel's moves do, and the figure is a first
replay's. Goals (issue 24): replay at least 100x, sweep at least 100,000x.

Run: ``python benchmarks/bench_routing.py [--n 1000000] [--sample 20000]``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
from _seeds import add_seeds_option, load_seed

import explicit_audit as ea

# --- the reference algorithm: the seed's own decide_routing ------------------------------------


@dataclass(frozen=True)
class _RiskFlag:
    requires_26b: bool
    synthesis_directive: str | None = None


@dataclass(frozen=True)
class _Domain:
    high_impact: bool
    default_risk_flags: tuple = ()
    name: str = ""


@dataclass(frozen=True)
class _Escalation:
    context_char_cap_4b: int
    escalate_on_multi_doc_count: int
    confidence_threshold: float


@dataclass(frozen=True)
class _DomainPolicy:
    escalation: _Escalation
    subject_domains: dict = field(default_factory=dict)
    fallback_domain: _Domain = _Domain(False)
    risk_flags: dict = field(default_factory=dict)


def _unused_loader():
    raise RuntimeError("the benchmark passes its policy explicitly")


# The seed imports its policy schema and loader, which it does not show; these
# minimal classes stand in for them. The routing logic itself is the seed's.
_SEED = load_seed(
    "004",
    "seed_routing",
    stubs={
        "policy.loader": {"load_policy": _unused_loader},
        "policy.schema": {
            "DomainPolicy": _DomainPolicy,
            "SubjectDomain": _Domain,
            "FallbackDomain": _Domain,
        },
    },
)
decide_routing = _SEED.decide_routing


# --- data -----------------------------------------------------------------------------------

POLICY = {
    "policy_id": "baseline",
    "escalation": {
        "context_char_cap_4b": 6000,
        "escalate_on_multi_doc_count": 3,
        "confidence_threshold": 0.6,
    },
    "subject_domains": {
        "legal": {"high_impact": True, "default_risk_flags": ["legal_advice"]},
        "medical": {"high_impact": True, "default_risk_flags": ["medical_advice"]},
        "finance": {"high_impact": False, "default_risk_flags": ["numeric_claims"]},
        "hr": {"high_impact": False, "default_risk_flags": ["personal_data"]},
        "engineering": {"high_impact": False, "default_risk_flags": []},
    },
    "fallback_domain": {"name": "general", "high_impact": False, "default_risk_flags": []},
    "risk_flags": {
        "legal_advice": {"requires_26b": True, "synthesis_directive": "Cite the clause."},
        "medical_advice": {"requires_26b": True, "synthesis_directive": "Cite the source."},
        "numeric_claims": {"requires_26b": False, "synthesis_directive": "Show sources."},
        "personal_data": {"requires_26b": False, "synthesis_directive": "Redact."},
        "multi_doc_dependency": {"requires_26b": False, "synthesis_directive": "Reconcile."},
        "low_confidence_reasoning": {"requires_26b": True},
    },
}


def _scalar_policy(spec: dict) -> _DomainPolicy:
    return _DomainPolicy(
        escalation=_Escalation(**spec["escalation"]),
        subject_domains={
            name: _Domain(d["high_impact"], tuple(d["default_risk_flags"]))
            for name, d in spec["subject_domains"].items()
        },
        fallback_domain=_Domain(False, (), spec["fallback_domain"]["name"]),
        risk_flags={
            name: _RiskFlag(f["requires_26b"], f.get("synthesis_directive"))
            for name, f in spec["risk_flags"].items()
        },
    )


def _list_column(rng: np.random.Generator, n: int, pool: list[str], sizes: list[int]):
    lengths = rng.choice(sizes, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    values = pa.array(rng.choice(pool, int(offsets[-1])))
    return pd.arrays.ArrowExtensionArray(pa.ListArray.from_arrays(pa.array(offsets), values))


def make_decisions(n: int, seed: int) -> pd.DataFrame:
    """``n`` decision inputs with realistic spreads, built column by column."""
    rng = np.random.default_rng(seed)
    domains = ["engineering"] * 5 + ["finance"] * 3 + ["legal"] * 2 + ["hr"] * 2
    domains += ["medical", "sales"]
    flags = ["numeric_claims", "personal_data", "speculative", "needs_citation", "legal_advice"]
    return pd.DataFrame(
        {
            "subject_domain": pd.Categorical(rng.choice(domains, n)),
            "content_chars": rng.lognormal(8.2, 0.6, n).astype(np.int64),
            "deterministic_keyword_hits": _list_column(
                rng, n, ["contract", "salary"], [0] * 11 + [1]
            ),
            "self_declared_high_impact": rng.random(n) < 0.04,
            "self_declared_risk_flags": _list_column(rng, n, flags, [0, 0, 0, 0, 0, 0, 1, 1, 2]),
            "confidence": np.round(rng.beta(5, 2, n), 3),
            "evidence_doc_count": np.minimum(rng.exponential(1 / 0.7, n).astype(np.int64), 9),
            "recorded_escalate_to_26b": rng.random(n) < 0.5,
        }
    )


def _best(function, repeat: int, fresh=None) -> float:
    """The best time of ``repeat`` calls; with ``fresh``, each call on ``fresh()``, made untimed.

    A table replayed again may find its inputs encoded already (a panel's
    moves do); ``fresh`` gives each timed call a table of its own, so that
    the figure includes taking the inputs apart, as a first replay does.
    """
    times = []
    for _ in range(repeat):
        arguments = () if fresh is None else (fresh(),)
        start = time.perf_counter()
        function(*arguments)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="decisions (default 1,000,000)")
    parser.add_argument("--sample", type=int, default=20_000, help="rows for the scalar loop")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    parser.add_argument("--seed", type=int, default=4)
    add_seeds_option(parser)
    args = parser.parse_args()

    decisions = make_decisions(args.n, args.seed)
    policy = ea.Policy.from_dict(POLICY)
    scalar_policy = _scalar_policy(POLICY)
    sample = decisions.iloc[: min(args.sample, args.n)]
    rows = [
        {k: (list(v) if isinstance(v, list | np.ndarray) else v) for k, v in row.items()}
        for row in sample.drop(columns="recorded_escalate_to_26b").to_dict("records")
    ]

    def scalar_loop():
        return [decide_routing(policy=scalar_policy, **row) for row in rows]

    scalar_time = _best(scalar_loop, args.repeat)
    scalar_rate = len(rows) / scalar_time
    replayed = ea.replay(sample, policy)
    for decision, (_, replayed_row) in zip(scalar_loop(), replayed.iterrows(), strict=True):
        assert decision.escalation_reasons == replayed_row["escalation_reasons"]
        assert decision.risk_flags == replayed_row["risk_flags"]
        assert decision.escalate_to_26b == replayed_row["escalate_to_26b"]

    def fresh():
        return decisions.copy(deep=True)

    replay_time = _best(lambda table: ea.replay(table, policy), args.repeat, fresh)
    replay_rate = args.n / replay_time
    grid = {
        "context_char_cap_4b": np.linspace(1000, 20600, 50).astype(np.int64),
        "escalate_on_multi_doc_count": np.arange(1, 51),
        "confidence_threshold": np.round(np.linspace(0.1, 1.0, 10), 2),
    }
    points = 50 * 50 * 10
    sweep_time = _best(lambda table: ea.sweep(table, [policy], grid), args.repeat, fresh)
    sweep_rate = args.n * points / sweep_time

    print(f"decisions: {args.n:,} (scalar sample {len(rows):,}); best of {args.repeat} runs")
    print(f"scalar decide_routing loop: {scalar_time:8.3f} s  {scalar_rate:16,.0f} decisions/s")
    print(
        f"ea.replay (all rows):       {replay_time:8.3f} s  {replay_rate:16,.0f} decisions/s"
        f"  {replay_rate / scalar_rate:12,.1f}x  (goal 100x)"
    )
    print(
        f"ea.sweep 50x50x10 grid:     {sweep_time:8.3f} s  {sweep_rate:16,.0f} evaluations/s"
        f"  {sweep_rate / scalar_rate:12,.1f}x  (goal 100,000x)"
    )


if __name__ == "__main__":
    main()
