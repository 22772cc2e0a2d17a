"""Sample retrieval receipts (engram) under ``data/receipts/``.

A small simulation of engram's knowledge retrieval over four spaces: each
space holds Markdown records of a few source classes; callers of four
audiences run guarded searches and space enumerations, and a few unguarded
searches run inside the harness. Every retrieval follows engram's guard
sequence (locator containment, source class, presentation exclusion,
relevance threshold, eligibility, authorization), so withheld counts follow
from who asked what: queries that touch restricted records give non-zero
counts to audiences not cleared for them.

Files written (deterministic: fixed seed, no wall clock):

- ``recall_cli.jsonl``: CLI outputs ``{schema_version, status, ...}`` wrapped
  by a logger (``timestamp``, ``request_id``, ``host``), plus a few lines that
  cannot be loaded;
- ``harness_outcomes.jsonl.gz``: internal outcomes ``{kind, ...}``, guarded
  and unguarded, wrapped by the same logger;
- ``operator_receipts.jsonl``: bare receipts, as an operator audit log keeps
  them (with ``timestamp`` and ``request_id``);
- ``recall_log.json``: CLI outputs appended one after another, pretty-printed
  with a 2-space indent, as ``engram recall ... >> recall_log.json`` leaves them;
- ``presentations.jsonl.gz``: engram's presentation outcomes, rendered views
  over the same spaces (:mod:`scripts.sample_data.presentations`).

A few receipts are altered so that the receipt checks have something to find.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = ["write"]

SEED = 20250303
START = datetime(2025, 3, 3, 8, 0, 0, tzinfo=UTC)

SPACES = {
    "atlas-program": ["status", "risk", "recommendation", "decision", "restricted"],
    "harbor-ops": ["status", "risk", "decision", "restricted", "presentation"],
    "lumen-research": ["status", "recommendation", "decision", "restricted"],
    "quarry-legal": ["status", "risk", "decision", "restricted"],
}
TOPICS = ["budget", "timeline", "vendor", "staffing", "incident", "audit", "legal-hold", "launch"]
SENSITIVE = {"incident", "legal-hold", "staffing"}
AUDIENCES = {  # audience -> classes it is cleared to read
    "peer": {"status", "risk", "recommendation", "decision"},
    "supervisor": {"status", "risk", "recommendation", "decision", "restricted"},
    "status-only": {"status"},
    "external-auditor": {"status", "decision", "risk"},
}
VIEWS = {  # view -> requested classes (None: all the pack allows)
    "none": None,
    "risk-review": ["risk", "decision", "restricted"],
    "status": ["status"],
}
THRESHOLD = 0.5


def _records(rng: random.Random) -> dict[str, list[dict]]:
    spaces = {}
    for space, classes in SPACES.items():
        records = []
        for number in range(16):
            topic = TOPICS[number % len(TOPICS)]
            klass = "restricted" if topic in SENSITIVE and number < 8 else rng.choice(classes)
            record_id = f"{topic}-{klass}-{number:02d}"
            folder = "archive/" if number % 11 == 10 else ""
            records.append(
                {
                    "id": record_id,
                    "path": f"{folder}{record_id}.md",
                    "class": klass,
                    "topics": {topic, rng.choice(TOPICS)},
                    "active": number % 13 != 12,
                    "internal": rng.random() < 0.15,
                }
            )
        spaces[space] = records
    return spaces


def _score(query: str, record_id: str) -> float:
    digest = hashlib.sha256(f"{query}|{record_id}".encode()).digest()
    return round(0.3 + 0.69 * int.from_bytes(digest[:4], "big") / 2**32, 2)


def _full_record(space: str, record: dict) -> dict:
    return {
        "schemaVersion": 0,
        "id": record["id"],
        "kind": "claim",
        "status": "active" if record["active"] else "superseded",
        "statement": f"Synthetic {record['class']} note on {sorted(record['topics'])[0]}.",
        "scope": {"space": space},
        "sources": [{"type": record["class"], "ref": f"source:{record['id']}"}],
    }


def _receipt(space, query, scope, guard) -> dict:
    """emptyReceipt, with a guard's classes, threshold and audience when guarded."""
    allowed = list(SPACES[space])
    receipt = {
        "schemaVersion": 0,
        "scope": scope,
        "query": query,
        "activeSpace": space,
        "collection": f"{space}-notes",
        "requestedSourceClasses": [],
        "allowedSourceClasses": [],
        "kind": "miss",
        "locatorUris": [],
        "recordIds": [],
        "exposedResults": [],
        "relevanceThreshold": None,
        "withheld": {"audienceId": None, "count": 0},
    }
    if guard is not None:
        audience, requested = guard
        receipt["requestedSourceClasses"] = list(requested or allowed)
        receipt["allowedSourceClasses"] = allowed
        receipt["relevanceThreshold"] = THRESHOLD if scope == "search" else None
        receipt["withheld"] = {"audienceId": audience, "count": 0}
    return receipt


class _Simulator:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.records = _records(rng)

    def retrieve(self, space, query, scope, guard, failure=None):
        """One retrieval as engram runs it: (outcome kind, records, errors, receipt)."""
        receipt = _receipt(space, query, scope, guard)
        if failure in ("qmd_exit", "qmd_not_run", "qmd_output_malformed"):
            message = {
                "qmd_exit": f"qmd search exited with code {self.rng.choice([1, 2, 7])}",
                "qmd_not_run": "qmd search did not start",
                "qmd_output_malformed": "qmd search returned malformed JSON",
            }[failure]
            return (
                "failure",
                [],
                [{"kind": "retrieval", "code": failure, "message": message}],
                receipt,
            )
        records = self.records[space]
        if scope == "space":
            pool = sorted((r for r in records if "/" not in r["path"]), key=lambda r: r["path"])
            candidates = [(r, None) for r in pool]
        else:
            words = set(query.split(" [", 1)[0].split())
            pool = [r for r in records if r["topics"] & words]
            candidates = sorted(
                ((r, _score(query, r["id"])) for r in pool), key=lambda item: -item[1]
            )[:6]
            if not candidates:
                return "miss", [], [], receipt
        collection = receipt["collection"]
        kept, withheld = [], 0
        audience = guard[0] if guard else None
        for position, (record, score) in enumerate(candidates):
            if failure == "locator_escape" and position == len(candidates) // 2:
                error = {"kind": "retrieval", "code": "locator_escape", "field": "file"}
                error["message"] = "guarded retrieval rejected qmd output (locator_escape)"
                receipt["withheld"]["count"] = withheld
                return "failure", [], [error], receipt
            if guard is not None:
                klass = record["class"]
                requested = receipt["requestedSourceClasses"]
                if klass not in receipt["allowedSourceClasses"] or klass not in requested:
                    continue
                if klass == "presentation":
                    continue
                if scope == "search" and score < THRESHOLD:
                    continue
                if not record["active"]:
                    continue
                cleared = klass in AUDIENCES[audience]
                if audience == "external-auditor" and record["internal"]:
                    cleared = False
                if not cleared:
                    withheld += 1
                    continue
            kept.append((record, score))
        receipt["withheld"]["count"] = withheld
        uri = f"qmd://{collection}/"
        receipt["locatorUris"] = [uri + r["path"] for r, _ in kept]
        receipt["recordIds"] = [r["id"] for r, _ in kept]
        if guard is not None:
            receipt["exposedResults"] = [
                {
                    "recordId": r["id"],
                    "sourceUri": uri + r["path"],
                    "relativePath": r["path"],
                    "sourceClasses": [r["class"]],
                    **({} if score is None else {"score": score}),
                }
                for r, score in kept
            ]
        out = []
        for r, score in kept:
            item = {"record": _full_record(space, r), "relativePath": r["path"]}
            item["sourceUri"] = uri + r["path"]
            if guard is not None:
                # What the CLI prints beside each record; internal outcomes drop it.
                item["sourceClasses"] = [r["class"]]
                if score is not None:
                    item["score"] = score
            out.append(item)
        if kept:
            receipt["kind"] = "hit"
        return ("hit" if kept else "miss"), out, [], receipt


def _queries(rng: random.Random) -> list[str]:
    words = [*TOPICS, "review", "plan", "risk", "owner", "weekly", "q2"]
    queries = sorted({" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(60)})
    return queries


def _cli(kind, records, errors, receipt):
    status = {"hit": "hit", "miss": "miss", "failure": "failed"}[kind]
    body = {"schema_version": 0, "status": status}
    body["errors" if kind == "failure" else "records"] = errors if kind == "failure" else records
    body["receipt"] = receipt
    return body


def _outcome(kind, records, errors, receipt):
    records = [{k: r[k] for k in ("record", "relativePath", "sourceUri")} for r in records]
    body = {"kind": kind}
    body["errors" if kind == "failure" else "records"] = errors if kind == "failure" else records
    body["receipt"] = receipt
    return body


class _Log:
    def __init__(self, rng: random.Random, host: str) -> None:
        self.rng, self.host, self.clock = rng, host, START

    def wrap(self, body: dict) -> dict:
        self.clock += timedelta(seconds=self.rng.randint(20, 900))
        stamp = self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        request = f"req-{self.rng.getrandbits(48):012x}"
        return {"timestamp": stamp, "request_id": request, "host": self.host, **body}


def _retrievals(sim: _Simulator, queries: list[str], n: int, unguarded_share: float = 0.0):
    rng = sim.rng
    for _ in range(n):
        space = rng.choice(sorted(SPACES))
        audience = rng.choices(sorted(AUDIENCES), weights=[3, 4, 2, 2])[0]
        view = rng.choices(sorted(VIEWS), weights=[5, 2, 1])[0]
        requested = VIEWS[view]
        if requested is not None:
            requested = [c for c in requested if c in SPACES[space]]
        roll = rng.random()
        failure = None
        if roll < 0.02:
            failure = "qmd_exit"
        elif roll < 0.025:
            failure = "qmd_not_run"
        elif roll < 0.03:
            failure = "qmd_output_malformed"
        elif roll < 0.036:
            failure = "locator_escape"
        if rng.random() < unguarded_share:
            query = rng.choice(queries)
            yield sim.retrieve(space, query, "search", None, failure)
        elif rng.random() < 0.15:
            yield sim.retrieve(space, None, "space", (audience, requested), failure)
        else:
            sources = ",".join(requested or SPACES[space])
            query = f"{rng.choice(queries)} [view:{view}] [sources:{sources}]"
            yield sim.retrieve(space, query, "search", (audience, requested), failure)


def _policy_failure(rng: random.Random, code: str) -> dict:
    space = rng.choice(sorted(SPACES))
    receipt = _receipt(space, "weekly plan", "search", None)
    if code == "space_unresolved":
        receipt.update(activeSpace=None, collection="")
        message = "no active space is bound to this workspace"
    else:
        receipt["requestedSourceClasses"] = ["not-configured"]
        receipt["allowedSourceClasses"] = list(SPACES[space])
        message = "requested source class not-configured is not allowed by the retrieval policy"
    errors = [{"kind": "retrieval", "code": code, "message": message}]
    return _cli("failure", [], errors, receipt)


def _dump(value: dict) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write(data_dir: Path) -> None:
    """Write the sample receipts under ``data_dir / "receipts"``.

    Parameters
    ----------
    data_dir : pathlib.Path
        The data folder; only its ``receipts/`` subfolder is written.
    """
    rng = random.Random(SEED)
    sim = _Simulator(rng)
    queries = _queries(rng)
    out = Path(data_dir) / "receipts"
    out.mkdir(parents=True, exist_ok=True)

    log = _Log(rng, "engram-gw-1")
    lines = [_dump(log.wrap(_cli(*r))) for r in _retrievals(sim, queries, 600)]
    for index in (120, 480):
        lines[index] = _dump(log.wrap(_policy_failure(rng, "space_unresolved")))
    lines[300] = _dump(log.wrap(_policy_failure(rng, "source_class_not_allowed")))
    script = sim.retrieve("atlas-program", "<script>alert(1)</script>", "search", ("peer", None))
    lines[42] = _dump(log.wrap(_cli(*script)))
    # Planted: a space receipt that names a query; a 'hit' status on a miss.
    space_hit = next(
        r for r in _retrievals(sim, queries, 200) if r[3]["scope"] == "space" and r[0] == "hit"
    )
    space_hit[3]["query"] = "weekly plan"
    lines[211] = _dump(log.wrap(_cli(*space_hit)))
    miss = sim.retrieve("lumen-research", "nothing matches this", "search", ("peer", None))
    body = _cli(*miss)
    body["status"] = "hit"
    lines[555] = _dump(log.wrap(body))
    # Lines that cannot be loaded.
    good = json.loads(lines[10])
    as_string = copy.deepcopy(good)
    as_string["receipt"]["withheld"]["count"] = str(good["receipt"]["withheld"]["count"])
    no_withheld = copy.deepcopy(json.loads(lines[11]))
    del no_withheld["receipt"]["withheld"]
    future = copy.deepcopy(json.loads(lines[12]))
    future["receipt"]["schemaVersion"] = 1
    lines[150] = lines[150][: len(lines[150]) // 2]
    lines[333] = _dump(as_string)
    lines[521] = _dump(no_withheld)
    lines[577] = _dump(future)
    (out / "recall_cli.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    log = _Log(rng, "engram-harness")
    bodies = [log.wrap(_outcome(*r)) for r in _retrievals(sim, queries, 1500, 0.2)]
    # Planted: a score below the applied threshold; withheld with no audience.
    below = next(
        b
        for b in bodies[400:]
        if b["receipt"]["scope"] == "search" and len(b["receipt"]["exposedResults"]) >= 2
    )
    below["receipt"]["exposedResults"][-1]["score"] = 0.41
    unguarded = next(b for b in bodies[900:] if b["receipt"]["withheld"]["audienceId"] is None)
    unguarded["receipt"]["withheld"]["count"] = 3
    text = ("\n".join(_dump(b) for b in bodies) + "\n").encode("utf-8")
    with gzip.GzipFile(out / "harness_outcomes.jsonl.gz", "wb", mtime=0) as handle:
        handle.write(text)

    log = _Log(rng, "engram-gw-2")
    receipts = [log.wrap(r[3]) for r in _retrievals(sim, queries, 500)]
    # Planted: a locator that climbs out of its folder; a class never requested.
    escape = next(r for r in receipts[250:] if len(r["locatorUris"]) >= 2)
    escape["locatorUris"][1] = escape["locatorUris"][1].replace("-notes/", "-notes/archive/../")
    exposed = escape["exposedResults"][1]
    exposed["sourceUri"] = escape["locatorUris"][1]
    exposed["relativePath"] = "archive/../" + exposed["relativePath"]
    unrequested = next(
        r
        for r in receipts[380:]
        if r["exposedResults"] and "restricted" not in r["requestedSourceClasses"]
    )
    unrequested["exposedResults"][0]["sourceClasses"] = ["restricted"]
    (out / "operator_receipts.jsonl").write_text(
        "\n".join(_dump(r) for r in receipts) + "\n", encoding="utf-8"
    )

    outputs = [_cli(*r) for r in _retrievals(sim, queries, 40)]
    # Planted: a negative withheld count.
    outputs[17]["receipt"]["withheld"]["count"] = -1
    pretty = "".join(json.dumps(o, ensure_ascii=False, indent=2) + "\n" for o in outputs)
    (out / "recall_log.json").write_text(pretty, encoding="utf-8")

    # Views rendered over the same spaces (imported here: that module builds on this one).
    from .presentations import write as write_presentations

    write_presentations(data_dir)
