"""Sample presentation outcomes (engram's ``renderPresentation``) under ``data/receipts/``.

The same spaces and records as :mod:`scripts.sample_data.receipts`: a pack of
three views (one enumerating its space, two searching it), four audiences and
three deliveries renders views for callers, each through a guarded retrieval
as engram runs it. ``presentations.jsonl.gz`` holds one line per rendering, as
``JSON.stringify`` writes it (compact, keys in engram's order), gzip-compressed:

- ``presented``, the presentation receipt embedding the retrieval receipt
  (``retention`` and ``retained`` when the delivery retains);
- ``failed`` with ``retrieval``: the retrieval failed (a qmd exit), missed
  (``retrieval_miss``), or a step after the hit failed (the word limit);
- ``failed`` without a receipt: refused before retrieval (a model the space
  does not allow).

``harbor-ops`` renders nothing: its retrieval policy allows the class
``presentation``, which engram's ``validatePolicy`` refuses.

Two lines are edited after rendering so that the presentation checks have
something to find: one names another audience than the one its withheld count
belongs to, one cites a source its retrieval never returned.
"""

from __future__ import annotations

import gzip
import json
import random
from datetime import timedelta
from pathlib import Path

from explicit_audit.receipts._js_json import presentation_id

from .receipts import AUDIENCES, SEED, SPACES, START, TOPICS, _Simulator

__all__ = ["write"]

PRESENTATION_SEED = SEED + 11
VIEWS = {
    "program-status": ("space", 1),
    "risk-review": ("search", 3),
    "weekly-brief": ("search", 2),
}
AUDIENCE_VERSIONS = {"peer": 1, "supervisor": 2, "status-only": 1, "external-auditor": 3}
DELIVERIES = {  # id -> (format, version, maxWords, retain)
    "chat-brief": ("plain", 1, 32, False),
    "handoff": ("markdown", 2, 400, False),
    "archive-export": ("json", 1, 400, True),
}
PACK = {"id": "program-integrity", "version": "1.2.0"}
MODELS = ("example-provider/model-small", "example-provider/model-large")


def _error(kind, code, message, field=None) -> dict:
    return (
        {"kind": kind, "code": code, "message": message}
        if field is None
        else {"kind": kind, "code": code, "field": field, "message": message}
    )


def _draft(view: str, records: list[dict]) -> dict:
    facts = [r["record"]["statement"] for r in records[:3]]
    return {
        "title": f"{view.replace('-', ' ').capitalize()}",
        "summary": f"What {len(records)} current record(s) say.",
        "facts": list(dict.fromkeys(facts)),
        "uncertainty": ["Records withheld from this audience are not reflected."],
        "actions": [],
    }


def _content(draft: dict, fmt: str) -> str:
    """``renderContent`` of presentation.ts, for the three delivery formats."""
    if fmt == "json":
        keys = ("title", "summary", "facts", "uncertainty", "actions")
        return json.dumps({k: draft[k] for k in keys}, indent=2, ensure_ascii=False) + "\n"
    actions = draft["actions"]
    if fmt == "plain":
        return "\n".join(
            [
                draft["title"],
                draft["summary"],
                f"Facts: {'; '.join(draft['facts'])}",
                f"Uncertainty: {'; '.join(draft['uncertainty'])}",
                f"Actions: {'; '.join(actions) if actions else 'None recorded.'}",
                "",
            ]
        )
    return "\n".join(
        [
            f"# {draft['title']}",
            "",
            draft["summary"],
            "",
            "## Facts",
            *[f"- {fact}" for fact in draft["facts"]],
            "",
            "## Uncertainty",
            *[f"- {item}" for item in draft["uncertainty"]],
            "",
            "## Actions",
            *([f"- {a}" for a in actions] if actions else ["- None recorded."]),
            "",
        ]
    )


def _presented(space, view, audience, delivery, model, records, receipt, generated_at) -> dict:
    fmt, delivery_version, _, retain = DELIVERIES[delivery]
    references = sorted(
        (
            {
                "recordId": r["record"]["id"],
                "sourceUri": r["sourceUri"],
                "relativePath": r["relativePath"],
            }
            for r in records
        ),
        key=lambda reference: reference["recordId"],
    )
    content = _content(_draft(view, records), fmt)
    presentation = {
        "schemaVersion": 0,
        "presentationId": "",
        "activeSpace": space,
        "viewId": view,
        "viewVersion": VIEWS[view][1],
        "audienceId": audience,
        "audienceVersion": AUDIENCE_VERSIONS[audience],
        "deliveryId": delivery,
        "deliveryVersion": delivery_version,
        "sourceRecordIds": sorted(r["record"]["id"] for r in records),
        "sourceReferences": references,
        "retrievalReceipt": receipt,
        "pack": dict(PACK),
        "model": model,
        "recommendationIds": [
            r["record"]["id"] for r in records if "recommendation" in r["record"]["id"]
        ][:1],
        "generatedAt": generated_at,
    }
    line = {"schema_version": 0, "status": "presented", "content": content}
    line["receipt"] = presentation
    presentation["presentationId"] = pid = presentation_id(line)
    if retain:
        base = f".engram-presentations/{pid}/"
        presentation["retention"] = {
            "artifactReference": base + "presentation.md",
            "receiptReference": base + "receipt.json",
        }
        root = f"/srv/engram/spaces/{space}/{base}"
        line["retained"] = {
            "artifactPath": root + "presentation.md",
            "receiptPath": root + "receipt.json",
        }
    return line


def _renderings(rng: random.Random, sim: _Simulator, n: int):
    clock = START + timedelta(days=2)
    spaces = [space for space in sorted(SPACES) if "presentation" not in SPACES[space]]
    for _ in range(n):
        clock += timedelta(seconds=rng.randint(60, 3600))
        generated_at = clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        space = rng.choice(spaces)
        audience = rng.choices(sorted(AUDIENCES), weights=[3, 4, 2, 2])[0]
        view = rng.choice(sorted(VIEWS))
        delivery = rng.choice(sorted(DELIVERIES))
        model = MODELS[0] if rng.random() < 0.97 else "example-provider/model-unlisted"
        if model not in MODELS:
            message = f"model {model} is not allowed by the active space"
            yield {
                "schema_version": 0,
                "status": "failed",
                "errors": [_error("authorization", "model_not_allowed", message, "model")],
            }
            continue
        scope = VIEWS[view][0]
        query = None if scope == "space" else f"{rng.choice(TOPICS)} {view.split('-')[0]}"
        failure = "qmd_exit" if scope == "search" and rng.random() < 0.04 else None
        kind, records, errors, receipt = sim.retrieve(
            space, query, scope, (audience, None), failure
        )
        if kind == "failure":
            yield {"schema_version": 0, "status": "failed", "errors": errors, "retrieval": receipt}
            continue
        if kind == "miss":
            message = "the view has no eligible current records; a miss is not evidence of absence"
            error = _error("retrieval", "retrieval_miss", message, "query")
            yield {"schema_version": 0, "status": "failed", "errors": [error], "retrieval": receipt}
            continue
        line = _presented(space, view, audience, delivery, model, records, receipt, generated_at)
        words = len(line["content"].split())
        if words > DELIVERIES[delivery][2]:
            message = (
                f"rendered presentation exceeds the {DELIVERIES[delivery][2]}-word delivery limit"
            )
            error = _error("presentation", "delivery_limit_exceeded", message, "deliveryId")
            yield {"schema_version": 0, "status": "failed", "errors": [error], "retrieval": receipt}
            continue
        yield line


def write(data_dir: Path) -> None:
    """Write ``presentations.jsonl`` under ``data_dir / "receipts"``.

    Parameters
    ----------
    data_dir : pathlib.Path
        The data folder; only its ``receipts/`` subfolder is written.
    """
    # The records are those of the receipts sample (the same seed builds them);
    # the renderings draw from their own generator.
    sim = _Simulator(random.Random(SEED))
    rng = sim.rng = random.Random(PRESENTATION_SEED)
    lines = list(_renderings(rng, sim, 160))
    presented = [line for line in lines if line["status"] == "presented"]
    # Planted: rendered for another audience than its withheld count's; a source
    # the retrieval never returned.
    withheld = next(
        p for p in presented[20:] if p["receipt"]["retrievalReceipt"]["withheld"]["count"]
    )
    withheld["receipt"]["audienceId"] = (
        "supervisor" if withheld["receipt"]["audienceId"] != "supervisor" else "peer"
    )
    extra = next(p for p in presented[60:] if p is not withheld)
    extra["receipt"]["sourceRecordIds"] = sorted(
        [*extra["receipt"]["sourceRecordIds"], "staffing-restricted-02"]
    )
    out = Path(data_dir) / "receipts"
    out.mkdir(parents=True, exist_ok=True)
    text = "".join(
        json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines
    )
    # Compressed as a log rotation leaves it (mtime 0: the same bytes every run).
    with gzip.GzipFile(out / "presentations.jsonl.gz", "wb", mtime=0) as handle:
        handle.write(text.encode("utf-8"))
