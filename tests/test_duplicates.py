"""Records written twice: ``record_duplicates`` on both engines, from real files.

The same id again with the same content is a ``repeated_record`` notice; the
same id with other content a ``conflicting_record`` error naming both places
and the columns that differ. Each kind's id is what its shapes declare.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import dask
import pandas as pd
import pytest
from conftest import make_decision
from conftest import sorted_categories as _sorted_categories

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit._core.duplicates import identity
from explicit_audit.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"


def _verify(source, **options) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(source, progress=False, **options)
    found = ea.verify_all(audit).findings
    found = found.loc[found["check"] == "record_duplicates"].reset_index(drop=True)
    return found.astype({"check": "str", "kind": "str", "rule": "str", "severity": "str"})


def _lines(path: Path, values) -> Path:
    path.write_text("".join(json.dumps(value) + "\n" for value in values), "utf-8")
    return path


def test_each_kind_with_an_id_declares_it_once_in_its_shapes():
    declared = {
        table.name: identity(kind, table) for kind in registry.kinds() for table in kind.tables
    }
    assert declared == {
        "receipts": (),
        "exposed": (),
        "presentations": ("presentation_id",),
        "plans": ("run_id",),
        "requests": ("base_id", "model"),
        "decisions": ("decision_id",),
    }
    assert {kind.name: identity(kind) for kind in registry.kinds()}["receipts"] == ()
    rules = registry.rules()
    assert rules["repeated_record"].severity == "notice"
    assert rules["conflicting_record"].severity == "error"
    assert "record_duplicates" in registry.checks()


def test_the_bundled_replays_are_the_same_runs_again_and_nothing_conflicts():
    found = _verify(DATA)
    assert set(found["rule"]) == {"repeated_record"}
    assert found["record"].tolist() == ["r-000012", "r-000045", "r-000150", "r-000201"]
    assert set(found["source_file"]) == {str(DATA / "plans" / "replay_log.json")}
    assert found["detail"].iloc[0] == (
        f"r-000012 again: the same record as at {DATA / 'plans' / 'arborist_runs.jsonl'}:12"
    )


@pytest.fixture(scope="module")
def decisions(tmp_path_factory) -> Path:
    """The same decisions in two files; one id in the second holds another confidence."""
    folder = tmp_path_factory.mktemp("twice")
    first = [make_decision(f"d-{i:03d}", confidence=0.3) for i in range(300)]
    # A logger's own keys are not the record's: the copy is logged later, by another host.
    second = [{**value, "ts": "2026-01-02T00:00:00Z", "host": "b"} for value in first[:50]]
    second[7] = make_decision("d-007", confidence=0.9)
    _lines(folder / "a.jsonl", [{**value, "ts": "2026-01-01T00:00:00Z"} for value in first])
    _lines(folder / "b.jsonl", second)
    return folder


def test_the_same_decisions_in_two_files_are_notices_and_a_changed_one_an_error(decisions):
    found = _verify(decisions)
    assert len(found) == 50
    conflicting = found.loc[found["rule"] == "conflicting_record"]
    assert conflicting["source_line"].tolist() == [8]
    row = conflicting.iloc[0]
    assert (row["severity"], row["record"], row["field"]) == ("error", "d-007", "confidence")
    assert row["source_file"].endswith("b.jsonl")
    assert f"{decisions / 'a.jsonl'}:8" in row["detail"]
    repeated = found.loc[found["rule"] == "repeated_record"]
    assert len(repeated) == 49 and set(repeated["severity"]) == {"notice"}
    assert repeated["detail"].str.contains("a.jsonl:", regex=False).all()


def test_the_dask_engine_finds_the_same_across_partitions(decisions, cluster):
    memory = _verify(decisions)
    for scheduler in ("synchronous", cluster.get):
        with dask.config.set(scheduler=scheduler):
            lazy = _verify(decisions, engine="dask", blocksize=48 << 10)
        pd.testing.assert_frame_equal(_sorted_categories(memory), _sorted_categories(lazy))


def test_an_engram_presentation_written_twice_is_named_by_its_presentation_id(tmp_path, cluster):
    fixture = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "engram"
    lines = (fixture / "presentations.jsonl").read_text("utf-8").splitlines()
    (tmp_path / "a.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    # Another host's copy of the presented line, and a copy with its text edited.
    presented = json.loads(lines[0])
    changed = {**presented, "content": presented["content"] + "Edited afterwards.\n"}
    _lines(tmp_path / "b.jsonl", [presented, changed])
    found = _verify(tmp_path)
    pid = presented["receipt"]["presentationId"]
    # The line as read (``record``) is compared too: it differs with the text.
    assert found[["kind", "source_line", "record", "rule"]].values.tolist() == [
        ["presentations", 1, pid, "repeated_record"],
        ["presentations", 2, pid, "conflicting_record"],
    ]
    assert found["field"].iloc[1] == "content, record"
    assert found["source_file"].str.endswith("b.jsonl").all()
    assert found["detail"].str.contains(f"{tmp_path / 'a.jsonl'}:1", regex=False).all()
    with dask.config.set(scheduler=cluster.get):
        lazy = _verify(tmp_path, engine="dask", blocksize=4 << 10)
    pd.testing.assert_frame_equal(_sorted_categories(found), _sorted_categories(lazy))
    # Alone, engram's own lines hold no presentation twice.
    assert _verify(fixture).empty


def test_a_request_is_one_per_candidate_and_model(tmp_path):
    lines = (DATA / "requests" / "compile_requests.jsonl").read_text("utf-8").splitlines()
    values = [json.loads(line) for line in lines[:6]]
    other_model = {**values[0], "model": "another-model"}
    changed = json.loads(lines[0])
    changed["payload"]["question"] = "EVIL"
    reordered = json.loads(lines[1])
    reordered["payload"] = dict(reversed(list(reordered["payload"].items())))
    found = _verify(_lines(tmp_path / "r.jsonl", [*values, other_model, changed, reordered]))
    assert found["source_line"].tolist() == [8, 9]
    assert found["rule"].tolist() == ["conflicting_record", "repeated_record"]
    assert found["field"].iloc[0] == "question, payload"
    assert found["record"].iloc[0] == f"{values[0]['base_id']} / {values[0]['model']}"


def test_a_record_without_its_id_is_not_compared(tmp_path):
    plan = {"retrieval_plan": {"top_k": 8}, "retrieval_plan_hash": "0" * 64}
    assert _verify(_lines(tmp_path / "p.jsonl", [plan, plan])).empty


def test_cli_verify_names_both_places_and_a_copy_changes_no_verdict(decisions, tmp_path, capsys):
    once, twice = tmp_path / "once", tmp_path / "twice"
    for folder in (once, twice):
        folder.mkdir()
        shutil.copy(DATA / "policies" / "baseline.yaml", folder)
        shutil.copy(DATA / "decisions" / "2026-01_baseline.jsonl", folder / "a.jsonl")
    shutil.copy(DATA / "decisions" / "2026-01_baseline.jsonl", twice / "a_again.jsonl")
    statuses, documents = [], []
    for folder in (once, twice):
        statuses.append(main(["verify", str(folder), "--json"]))
        documents.append(json.loads(capsys.readouterr().out))
    assert statuses[0] == statuses[1] and documents[0]["state"] == documents[1]["state"]
    repeated = [f for f in documents[1]["findings"] if f["rule"] == "repeated_record"]
    assert len(repeated) == 1200 and all(f["severity"] == "notice" for f in repeated)
    assert main(["verify", str(decisions)]) == 1
    out = capsys.readouterr().out
    assert "b.jsonl:8: conflicting_record [d-007]: d-007 is also the id of the record at " in out
