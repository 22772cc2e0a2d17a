"""One dtype per column name across the tables of an audit."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
from conftest import make_receipt

import explicit_audit as ea

DATA = Path(__file__).resolve().parents[1] / "data"


def _dtypes_by_name(audit: ea.Audit) -> dict[str, dict[str, list[str]]]:
    seen: dict[str, dict[str, list[str]]] = {}
    tables = {**audit.tables, "rejected": audit.rejected, "sources": audit.sources}
    for table, frame in tables.items():
        for column, dtype in frame.dtypes.items():
            seen.setdefault(column, {}).setdefault(str(dtype), []).append(table)
    return seen


def test_the_bundled_data_has_one_dtype_per_column_name():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(DATA, progress=False)
    seen = _dtypes_by_name(audit)
    assert {name: found for name, found in seen.items() if len(found) > 1} == {}
    having = [name for name, frame in audit.tables.items() if "source_file" in frame]
    assert seen["source_file"] == {"str": [*having, "rejected", "sources"]}


def test_a_loggers_keys_are_typed_alike_in_every_kind(tmp_path):
    # Decisions from a file with a logger's keys and a file without, beside receipts with them.
    lines = (DATA / "decisions" / "2026-01_baseline.jsonl").read_text(encoding="utf-8")
    decision = json.loads(lines.splitlines()[0])
    logged = {**decision, "request_id": "req-1", "timestamp": "2025-03-04T00:00:00Z"}
    (tmp_path / "a.jsonl").write_text(json.dumps(decision) + "\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps(logged) + "\n", encoding="utf-8")
    receipt = {"request_id": "req-2", "timestamp": "2025-03-04T00:00:01Z", **make_receipt()}
    (tmp_path / "c.jsonl").write_text(json.dumps(receipt) + "\n", encoding="utf-8")
    audit = ea.load(tmp_path, progress=False)
    assert len(audit.decisions) == 2 and len(audit.receipts) == 1
    assert audit.decisions["request_id"].dtype == audit.receipts["request_id"].dtype == "str"
    assert audit.decisions["request_id"].tolist()[1] == "req-1"
    assert pd.isna(audit.decisions["request_id"].tolist()[0])
