"""Engram-shaped inputs for the reading benchmark, grown from the real engram outputs.

The record bodies, errors and presentations are those of the real engram
outputs beside the checkout (``shared/fixtures/engram/``, or the folder
``$EXPLICIT_AUDIT_ENGRAM`` names); each generated outcome draws 1 to 10 of
them as its records, with fresh ids and locators, and a receipt that exposes
each one (search scope, scored, in rank order), as engram's guarded retrieval
writes it. Misses and failures carry an empty receipt, as engram's do.

Shapes written from the same outcomes (deterministic for a seed):

- ``outcomes.jsonl``: the guarded CLI shape ``{schema_version, status,
  records|errors, receipt}``, one per line;
- ``mixed.jsonl``: the guarded shape, the internal shape ``{kind,
  records|errors, receipt}``, bare receipts and presentations, interleaved;
- ``recall.json``: the guarded shape pretty-printed (2-space indent) and
  appended one after another, as ``engram recall >> log`` leaves it;
- ``damaged.jsonl``: ``outcomes.jsonl`` with one line cut in half;
- ``misfits.jsonl``: ``outcomes.jsonl`` with one receipt in every 10,000 whose
  withheld count is written as text (``"count": "0"``), as a tampered log
  holds it: valid JSON of another type, which the bulk parse refuses and the
  exact path rejects.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path

__all__ = ["engram_folder", "write_engram_shapes"]

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "engram"
_VARIABLE = "EXPLICIT_AUDIT_ENGRAM"
WORDS = ["beacon", "export", "rehearsal", "timing", "risk", "checkpoint", "delivery", "레이더"]


def engram_folder() -> Path:
    """The folder of real engram outputs the shapes are grown from."""
    folder = Path(os.environ.get(_VARIABLE) or _DEFAULT)
    if not (folder / "outcomes.jsonl").is_file():
        raise SystemExit(
            f"real engram outputs not found in {folder}: set {_VARIABLE}=DIR to the folder "
            "holding outcomes.jsonl and presentations.jsonl (shared/fixtures/engram)"
        )
    return folder


def _templates(folder: Path) -> tuple[list[dict], list[list], list[dict]]:
    """Record entries (body, classes), failure errors and presentations, as written."""
    entries: dict[str, dict] = {}
    errors: list[list] = []
    for line in (folder / "outcomes.jsonl").read_text("utf-8").splitlines():
        outcome = json.loads(line)
        for entry in outcome.get("records", []):
            if "sourceClasses" in entry:
                entries.setdefault(entry["record"]["id"], entry)
        if outcome.get("errors"):
            errors.append(outcome["errors"])
    presentations = [
        json.loads(line)
        for line in (folder / "presentations.jsonl").read_text("utf-8").splitlines()
        if line.strip()
    ]
    return list(entries.values()), errors, presentations


def _outcome(rng: random.Random, index: int, entries, errors) -> dict:
    space = f"retrieval-space-{index % 97}"
    query = " ".join(rng.sample(WORDS, 3))
    draw = rng.random()
    records, ids, uris, exposed = [], [], [], []
    if draw < 0.65:
        score = 0.99
        for position in range(rng.randint(1, 10)):
            template = rng.choice(entries)
            record_id = f"{template['record']['id']}-{index}-{position}"
            uri = f"qmd://{space}/{record_id}.md"
            body = copy.deepcopy(template["record"])
            body["id"] = record_id
            score = round(score - rng.uniform(0.0, 0.04), 2)
            entry = {
                "record": body,
                "relativePath": f"{record_id}.md",
                "sourceUri": uri,
                "sourceClasses": list(template["sourceClasses"]),
                "score": score,
            }
            records.append(entry)
            ids.append(record_id)
            uris.append(uri)
            exposed.append(
                {
                    "recordId": record_id,
                    "sourceUri": uri,
                    "relativePath": entry["relativePath"],
                    "sourceClasses": entry["sourceClasses"],
                    "score": score,
                }
            )
    status = "hit" if records else ("miss" if draw < 0.9 else "failed")
    receipt = {
        "schemaVersion": 0,
        "scope": "search",
        "query": query,
        "activeSpace": "fictional-space-retrieval",
        "collection": space,
        "requestedSourceClasses": ["status", "risk", "recommendation", "restricted"],
        "allowedSourceClasses": ["status", "risk", "recommendation"],
        "kind": "hit" if records else "miss",
        "locatorUris": uris,
        "recordIds": ids,
        "exposedResults": exposed,
        "relevanceThreshold": 0.5,
        "withheld": {"audienceId": "peer", "count": rng.choice([0, 0, 0, 1, 2])},
    }
    guarded = {"schema_version": 0, "status": status}
    if status == "failed":
        guarded["errors"] = rng.choice(errors)
    else:
        guarded["records"] = records
    guarded["receipt"] = receipt
    return guarded


def _internal(guarded: dict) -> dict:
    kind = {"hit": "hit", "miss": "miss", "failed": "failure"}[guarded["status"]]
    rest = {k: v for k, v in guarded.items() if k not in ("schema_version", "status")}
    return {"kind": kind, **rest}


def write_engram_shapes(folder: Path, n: int, seed: int = 7) -> dict[str, Path]:
    """Write every shape of the same ``n`` outcomes into ``folder``; return them by name.

    ``mixed.jsonl`` holds ``n`` values too: each outcome in one of four shapes.
    """
    rng = random.Random(seed)
    entries, errors, presentations = _templates(engram_folder())
    paths = {name: folder / name for name in ("outcomes.jsonl", "mixed.jsonl", "recall.json")}
    dumps = json.dumps
    with (
        paths["outcomes.jsonl"].open("w", encoding="utf-8") as compact,
        paths["mixed.jsonl"].open("w", encoding="utf-8") as mixed,
        paths["recall.json"].open("w", encoding="utf-8") as pretty,
    ):
        for index in range(n):
            guarded = _outcome(rng, index, entries, errors)
            compact.write(dumps(guarded, ensure_ascii=False, separators=(",", ":")) + "\n")
            pretty.write(dumps(guarded, ensure_ascii=False, indent=2) + "\n")
            draw = rng.random()
            if draw < 0.4:
                shaped = guarded
            elif draw < 0.7:
                shaped = _internal(guarded)
            elif draw < 0.9:
                shaped = guarded["receipt"]
            else:
                shaped = rng.choice(presentations)
            mixed.write(dumps(shaped, ensure_ascii=False, separators=(",", ":")) + "\n")
    clean = paths["outcomes.jsonl"].read_bytes().split(b"\n")
    lines = list(clean)
    lines[n // 2] = lines[n // 2][: len(lines[n // 2]) // 2]  # one line cut in half
    paths["damaged.jsonl"] = folder / "damaged.jsonl"
    paths["damaged.jsonl"].write_bytes(b"\n".join(lines))
    lines = list(clean)
    for index in range(5_000, n, 10_000):
        outcome = json.loads(lines[index])
        withheld = outcome["receipt"]["withheld"]
        withheld["count"] = str(withheld["count"])  # a count written as text
        lines[index] = json.dumps(outcome, ensure_ascii=False, separators=(",", ":")).encode()
    paths["misfits.jsonl"] = folder / "misfits.jsonl"
    paths["misfits.jsonl"].write_bytes(b"\n".join(lines))
    return paths
