"""Sample retrieval plans (arborist) and C2 compile requests (explicit_learning).

Plans, under ``data/plans/``: QA runs over a multilingual corpus (Korean,
Japanese, French, German, English questions). Korean and Japanese questions
run with query MT once MT is switched on at run 120; earlier runs and
same-language runs carry no MT block, as arborist's ``canonical()`` writes
them. Each hash is computed as arborist computes it.

- ``arborist_runs.jsonl``: canonical-shape plans, one run per line;
- ``arborist_runs_flat.jsonl``: flat (``dataclasses.asdict``) plans from an
  older exporter, some with counts logged as strings or floats, which the
  seed's ``int()`` accepts;
- ``replay_log.json``: pretty-printed records appended one after another,
  with one record whose ``top_k`` (``"8.0"``) the seed cannot hash.

Planted, by ``run_id`` (each hash written by a straying writer or altered):
r-000031 non-ASCII written raw; r-000058 MT block present though empty;
r-000077 ``max_context_chars`` left out; r-000304 flat shape hashed as-is;
r-000122 keywords hashed in NFD; r-000140 JSON.stringify-style writer;
r-000163 keywords edited after hashing; r-000190 ``top_k`` edited after
hashing; r-000215 hash in upper-case hex; r-000240 MT block left out.

Requests, under ``data/requests/``: two models asked about each C2 candidate,
as ``CompileRequest.to_dict()`` plus ``model``. Planted, by ``base_id``:
``chartqa-h/000104`` model-b hashed ASCII-escaped; ``chartqa-h/000112``
model-a hashed as RFC 8785; ``mmk12/000121`` question edited after hashing
(both models); ``mmk12/000133`` carries ``intended_intervention`` (both);
``chartqa-h/000140`` a table column named ``original_answer`` (both, nested);
``chartqa-h/000152`` model-b sent the choices in another order (independence).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import unicodedata
from pathlib import Path

__all__ = ["write"]

SEED = 20250601
N_RUNS = 260
N_FLAT = 60
N_CANDIDATES = 70
MT_FROM_RUN = 120
MODELS = ("qwen2.5-vl-72b-instruct", "internvl3-78b")
MT_ENGINES = {"nllb-200-distilled-600M": "2f1c", "m2m100_418M": "9ab0"}

KEYWORDS = {
    "ko": [
        "서울 지하철 노선도",
        "부산 항만 물동량",
        "한국어 형태소 분석",
        "전세 사기 판례",
        "반도체 수출 통계",
    ],
    "ja": [
        "東京 天気 予報",
        "日本語 形態素解析",
        "新幹線 運賃 改定",
        "半導体 輸出 統計",
        "介護保険 制度",
    ],
    "fr": [
        "café crème prix",
        "réforme des retraites",
        "élection présidentielle",
        "crème brûlée recette",
    ],
    "de": [
        "Müller Straße Bebauungsplan",
        "Bürgergeld Höhe",
        "Glühwein Rezept",
        "Öffentlicher Nahverkehr",
    ],
    "en": ["retrieval audit trail", "quarterly revenue by region", "merkle proof verification"],
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _arborist_canonical(plan: dict) -> dict:
    """``RetrievalPlan.canonical()`` over a flat plan (the producer's rule)."""
    out = {
        "retrieval_keywords": plan["retrieval_keywords"] or "",
        "top_k": int(plan["top_k"]),
        "over_fetch": int(plan["over_fetch"]),
        "max_context_chars": int(plan["max_context_chars"]),
        "shard_ids": list(plan["shard_ids"]),
    }
    if plan["mt_engine"] or plan["mt_manifest_hash"] or plan["source_lang"]:
        out["mt"] = {
            "engine": plan["mt_engine"] or "",
            "manifest_hash": plan["mt_manifest_hash"] or "",
            "source_lang": plan["source_lang"] or "",
        }
    return out


def _arborist_hash(canonical: dict, **writer: object) -> str:
    options = {"sort_keys": True, "separators": (",", ":"), **writer}
    return _sha(json.dumps(canonical, **options))


def _flat_plan(rng: random.Random, index: int) -> dict:
    lang = rng.choice(["ko", "ko", "ja", "ja", "fr", "de", "en"])
    keywords = rng.choice(KEYWORDS[lang])
    mt = lang in ("ko", "ja") and index >= MT_FROM_RUN
    engine = rng.choice(sorted(MT_ENGINES)) if mt else ""
    return {
        "retrieval_keywords": keywords,
        "top_k": rng.choice([5, 8, 8, 10, 20]),
        "over_fetch": rng.choice([1, 2, 2, 3]),
        "max_context_chars": rng.choice([8000, 12000, 12000, 24000]),
        "shard_ids": sorted(rng.sample(["wiki-ko", "wiki-ja", "news-eu", "law-kr", "gov-jp"], 2)),
        "mt_engine": engine,
        "mt_manifest_hash": _sha(f"manifest:{engine}:{MT_ENGINES[engine]}") if mt else "",
        "source_lang": lang if mt else "",
    }


def _record(index: int, plan: dict, written: dict, digest: str) -> dict:
    return {
        "run_id": f"r-{index:06d}",
        "question_hash": _sha(f"question {index}"),
        "retrieval_plan": written,
        "retrieval_plan_hash": digest,
        "sources_summary": {"n_sources": 3 + index % 5, "shards": plan["shard_ids"]},
        "started_at": f"2025-06-{1 + index // 100:02d}T{(index * 7) % 24:02d}:{index % 60:02d}:00Z",
    }


def _plan_records(rng: random.Random) -> tuple[list[dict], list[dict], list[dict]]:
    canonical_rows, flat_rows = [], []
    for index in range(1, N_RUNS + N_FLAT + 1):
        plan = _flat_plan(rng, index)
        canonical = _arborist_canonical(plan)
        digest = _arborist_hash(canonical)
        if index > N_RUNS:
            flat_rows.append(_record(index, plan, dict(plan), digest))
        else:
            canonical_rows.append(_record(index, plan, canonical, digest))
    runs = {row["run_id"]: row for row in canonical_rows + flat_rows}

    def plant(run_id: str, keywords: str | None = None, mt: bool | None = None) -> dict:
        row = runs[run_id]
        plan = row["retrieval_plan"]
        if keywords is not None:
            plan["retrieval_keywords"] = keywords
        if mt is False:
            plan.pop("mt", None)
        if mt is True:
            engine = "nllb-200-distilled-600M"
            manifest = _sha(f"manifest:{engine}:{MT_ENGINES[engine]}")
            plan["mt"] = {"engine": engine, "manifest_hash": manifest, "source_lang": "ja"}
        return row

    row = plant("r-000031", keywords="서울 지하철 노선도", mt=False)
    row["retrieval_plan_hash"] = _arborist_hash(row["retrieval_plan"], ensure_ascii=False)
    row = plant("r-000058", keywords="부산 항만 물동량", mt=False)
    empty_mt = {"engine": "", "manifest_hash": "", "source_lang": ""}
    row["retrieval_plan_hash"] = _arborist_hash(dict(row["retrieval_plan"], mt=empty_mt))
    row = plant("r-000077")
    del row["retrieval_plan"]["max_context_chars"]
    row["retrieval_plan_hash"] = _arborist_hash(row["retrieval_plan"])
    row["retrieval_plan"]["max_context_chars"] = 12000
    row = plant("r-000122", keywords="한국어 형태소 분석")
    nfd = unicodedata.normalize("NFD", row["retrieval_plan"]["retrieval_keywords"])
    row["retrieval_plan_hash"] = _arborist_hash(dict(row["retrieval_plan"], retrieval_keywords=nfd))
    row = plant("r-000140", keywords="新幹線 運賃 改定")
    row["retrieval_plan_hash"] = _sha(
        json.dumps(row["retrieval_plan"], ensure_ascii=False, separators=(",", ":"))
    )
    row = plant("r-000163", keywords="전세 사기 판례")
    row["retrieval_plan_hash"] = _arborist_hash(row["retrieval_plan"])
    row["retrieval_plan"]["retrieval_keywords"] = "전세 사기 판례 2024"
    row = plant("r-000190")
    row["retrieval_plan_hash"] = _arborist_hash(row["retrieval_plan"])
    row["retrieval_plan"]["top_k"] += 12
    row = plant("r-000215")
    row["retrieval_plan_hash"] = row["retrieval_plan_hash"].upper()
    row = plant("r-000240", keywords="東京 天気 予報", mt=True)
    row["retrieval_plan_hash"] = _arborist_hash(
        {k: v for k, v in row["retrieval_plan"].items() if k != "mt"}
    )
    # Flat records: an older exporter hashed its own flat dict once, and logged
    # some counts as strings or floats (the seed's int() accepts both).
    row = runs["r-000304"]
    row["retrieval_plan_hash"] = _arborist_hash(row["retrieval_plan"])
    runs["r-000270"]["retrieval_plan"]["top_k"] = str(runs["r-000270"]["retrieval_plan"]["top_k"])
    runs["r-000281"]["retrieval_plan"]["max_context_chars"] = 12000.0
    no_mt = next(row for row in flat_rows[30:] if not row["retrieval_plan"]["mt_engine"])
    no_mt["retrieval_plan"].update(mt_engine=None, mt_manifest_hash=None, source_lang=None)
    replay = [runs[f"r-{i:06d}"] for i in (12, 45, 150, 201)]
    replay = [json.loads(json.dumps(r)) for r in replay]
    for row in replay:
        row["replayed"] = True
    bad = json.loads(json.dumps(runs["r-000099"]))
    bad["retrieval_plan"]["top_k"] = "8.0"
    bad["replayed"] = True
    replay.insert(2, bad)
    return canonical_rows, flat_rows, replay


DATASETS = ("chartqa-h", "mmk12", "mmr1-rl", "mmmu")
DSL_OF = {"chartqa-h": "chart", "mmk12": "arith", "mmr1-rl": "geometry", "mmmu": "table"}
OPERATORS = {
    "chart": [
        ("argmax", ["series"], "label", False),
        ("sum", ["number", "number"], "number", True),
        ("value_at", ["series", "label"], "number", False),
    ],
    "arith": [
        ("add", ["number", "number"], "number", True),
        ("div", ["number", "number"], "number", False),
    ],
    "geometry": [
        ("angle", ["point", "point", "point"], "number", False),
        ("length", ["segment"], "number", False),
    ],
    "table": [
        ("lookup", ["table", "string", "string"], "string", False),
        ("count_if", ["table", "string"], "number", False),
    ],
}
QUESTIONS = [
    ("2020년 매출이 가장 높은 지역은 어디입니까?", ["서울", "부산", "대구", "인천"]),
    ("最も降水量が多い月はどれですか？", ["六月", "七月", "九月", "十月"]),
    ("Quelle région a la croissance la plus élevée ?", ["Île-de-France", "Bretagne", "Occitanie"]),
    ("Welcher Wert ist größer als der Durchschnitt?", ["Köln", "München", "Düsseldorf"]),
    ("Which year had the highest revenue?", ["2019", "2020", "2021", "2022"]),
    ("삼각형 ABC에서 각 B의 크기는?", ["30°", "45°", "60°", "90°"]),
]


def _grammar(dsl: str) -> list[dict]:
    return [
        {
            "op": op,
            "arg_types": args,
            "return_type": ret,
            "commutative": comm,
            "selector_kind": None,
            "variadic": False,
        }
        for op, args, ret, comm in sorted(OPERATORS[dsl])
    ]


def _world(rng: random.Random, dsl: str) -> dict | None:
    if dsl == "chart":
        points = [[str(2018 + i), float(rng.randint(10, 40))] for i in range(4)]
        points[1][1] += 0.5
        return {"series": [{"name": "매출", "points": points}]}
    if dsl == "table":
        return {"rows": [{"지역": "서울", "値": rng.randint(1, 9)}, {"지역": "東京", "値": 2.5}]}
    if dsl == "geometry":
        return {
            "entities": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
            "constraints": [{"kind": "right_angle", "at": "C"}],
        }
    return None


def _payload(rng: random.Random, base_id: str, dsl: str) -> dict:
    question, answers = rng.choice(QUESTIONS)
    payload = {
        "dsl": dsl,
        "grammar": _grammar(dsl),
        "ast_node_schema": {
            "$ref": "schemas/compiled_program.schema.json#/$defs/astNode",
            "shape": {
                "op": "string",
                "args": "array of astNode | string | number | boolean",
                "return_type": "string (optional)",
            },
        },
        "question": question,
        "choices": [{"key": "ABCD"[i], "text": t} for i, t in enumerate(answers)],
        "image_sha256": _sha(f"image {base_id}"),
        "base_id": base_id,
    }
    world = _world(rng, dsl)
    if world is not None:
        payload["world_candidates"] = world
    return payload


def _request_sha256(payload: dict) -> str:
    return _sha(json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def _request(model: str, payload: dict, digest: str, minute: int) -> dict:
    return {
        "model": model,
        "base_id": payload["base_id"],
        "dsl": payload["dsl"],
        "request_sha256": digest,
        "image_sha256": payload["image_sha256"],
        "payload": payload,
        "sent_at": f"2025-06-03T{9 + minute // 60:02d}:{minute % 60:02d}:00Z",
    }


def _request_records(rng: random.Random) -> list[dict]:
    import rfc8785

    rows = []
    for number in range(100, 100 + N_CANDIDATES):
        dataset = DATASETS[number % 4]
        base_id = f"{dataset}/{number:06d}"
        payload = _payload(rng, base_id, DSL_OF[dataset])
        if base_id == "chartqa-h/000104":
            payload["question"] = QUESTIONS[0][0]
        if base_id == "mmk12/000133":
            payload["intended_intervention"] = "swap_choice_order"
        if base_id == "chartqa-h/000140":
            payload["world_candidates"]["rows"] = [{"label": "2019", "original_answer": "B"}]
        pair = {}
        for model in MODELS:
            sent = json.loads(json.dumps(payload))
            if base_id == "chartqa-h/000152" and model == MODELS[1]:
                sent["choices"] = sent["choices"][::-1]
            digest = _request_sha256(sent)
            if base_id == "chartqa-h/000104" and model == MODELS[1]:
                digest = _sha(json.dumps(sent, sort_keys=True, separators=(",", ":")))
            if base_id == "chartqa-h/000112" and model == MODELS[0]:
                digest = hashlib.sha256(rfc8785.dumps(sent)).hexdigest()
            if base_id == "mmk12/000121":
                sent["question"] = sent["question"].rstrip("?？") + " (수정됨)?"
            pair[model] = _request(model, sent, digest, len(rows))
        rows.extend(pair[model] for model in MODELS)
    return rows


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def write(data_dir: Path) -> None:
    """Write the sample plans and compile requests.

    Parameters
    ----------
    data_dir : pathlib.Path
        The data folder; only its ``plans/`` and ``requests/`` subfolders are
        written.
    """
    rng = random.Random(SEED)
    canonical_rows, flat_rows, replay = _plan_records(rng)
    plans_dir = Path(data_dir) / "plans"
    plans_dir.mkdir(parents=True, exist_ok=True)
    (plans_dir / "arborist_runs.jsonl").write_bytes(_jsonl(canonical_rows))
    (plans_dir / "arborist_runs_flat.jsonl").write_bytes(_jsonl(flat_rows))
    pretty = "".join(json.dumps(row, ensure_ascii=False, indent=2) + "\n" for row in replay)
    (plans_dir / "replay_log.json").write_text(pretty, encoding="utf-8")
    requests = _request_records(rng)
    requests_dir = Path(data_dir) / "requests"
    requests_dir.mkdir(parents=True, exist_ok=True)
    (requests_dir / "compile_requests.jsonl").write_bytes(_jsonl(requests[:100]))
    late = gzip.compress(_jsonl(requests[100:]), mtime=0)
    (requests_dir / "compile_requests_late.jsonl.gz").write_bytes(late)
