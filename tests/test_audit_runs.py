"""Each audit from a state is recorded, and the next says what is new since it.

Real logs on disk (the first lines of bundled files), ``explicit-audit verify
--state DIR`` run as a user runs it, the logs appended between runs as a
logger appends them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit._cache_seal import SECRET_ENV, TamperedCacheWarning
from explicit_audit.cli import main
from explicit_audit.verdicts.audit_runs import RUN_COLUMNS, RUNS_FILE, last_audit, record_audit
from explicit_audit.verdicts.verdict import Verdict

ROOT = Path(__file__).resolve().parents[1]
#: A line no kind can load: a rejected row, an error, the same text on every run.
BROKEN = b'{"decision_id": "broken", "tier":\n'


@pytest.fixture(autouse=True)
def secret(tmp_path_factory, monkeypatch) -> None:
    """The state's secret, kept outside the state folder (never the user's own)."""
    monkeypatch.setenv(SECRET_ENV, str(tmp_path_factory.mktemp("config") / "secret"))


@pytest.fixture
def logs(tmp_path) -> Path:
    """A folder of logs: 40 decisions and their policies."""
    folder = tmp_path / "logs"
    (folder / "policies").mkdir(parents=True)
    for policy in (ROOT / "data" / "policies").iterdir():
        (folder / "policies" / policy.name).write_bytes(policy.read_bytes())
    lines = (ROOT / "data/decisions/2026-01_baseline.jsonl").read_bytes().splitlines(True)
    (folder / "decisions.jsonl").write_bytes(b"".join(lines[:40]))
    return folder


def _verify(logs: Path, state: Path, *options: str, capsys) -> tuple[int, dict]:
    status = main(["verify", str(logs), "--state", str(state), "--json", *options])
    return status, json.loads(capsys.readouterr().out)


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as out:  # appended, as a logger does
        out.write(data)


def test_each_run_says_what_is_new_since_the_last_audit(logs, tmp_path, capsys):
    state = tmp_path / "state"
    status, first = _verify(logs, state, capsys=capsys)
    assert "baseline" not in first or first["baseline"] is None
    before = len(first["findings"])
    # The same bytes again: nothing new, everything persisting.
    status, second = _verify(logs, state, capsys=capsys)
    assert second["baseline"]["file"].startswith("the last audit (")
    assert (second["baseline"]["new"], second["baseline"]["resolved"]) == (0, 0)
    assert second["baseline"]["persisting"] == before
    # A broken line appended: one new error, on the line it was written on.
    _append(logs / "decisions.jsonl", BROKEN)
    status, third = _verify(logs, state, capsys=capsys)
    assert status == 1
    assert third["baseline"]["new"] == 1 and third["baseline"]["resolved"] == 0
    (new,) = third["baseline"]["new_findings"]
    assert (new["rule"], new["source_line"]) == ("rejected_row", 41)
    # In the text: the count, since which run.
    assert main(["verify", str(logs), "--state", str(state)]) == 1
    text = capsys.readouterr().out
    assert "since the last audit (" in text and ": 0 new, 0 resolved" in text
    runs = ea.audit_runs(state)
    assert runs["findings"].tolist() == [before, before, before + 1, before + 1]
    assert runs["new"].tolist() == [pd.NA, 0, 1, 0]
    assert runs["resolved"].tolist() == [pd.NA, 0, 0, 0]
    assert runs["at"].is_monotonic_increasing and str(runs["at"].dt.tz) == "UTC"
    # Per check, the findings of each run sum to its findings.
    checks = runs.columns[len(RUN_COLUMNS) :]
    assert "rejected_rows" in checks
    assert (runs[list(checks)].sum(axis=1) == runs["findings"]).all()


def test_new_only_with_a_state_fails_only_on_errors_new_since_the_last_audit(
    logs, tmp_path, capsys
):
    state = tmp_path / "state"
    # No run recorded yet: new since which run?
    assert main(["verify", str(logs), "--state", str(state), "--new-only"]) == 2
    assert "--new-only needs --baseline" in capsys.readouterr().err
    _append(logs / "decisions.jsonl", BROKEN)
    assert _verify(logs, state, capsys=capsys)[0] == 1
    # The error is still there, but not new: exit 0.
    assert _verify(logs, state, "--new-only", capsys=capsys)[0] == 0
    _append(logs / "decisions.jsonl", BROKEN.replace(b"broken", b"broken again"))
    status, found = _verify(logs, state, "--new-only", capsys=capsys)
    assert status == 1 and found["baseline"]["new"] == 1


def test_a_baseline_given_wins_over_the_last_audit(logs, tmp_path, capsys):
    state = tmp_path / "state"
    _verify(logs, state, capsys=capsys)
    baseline = tmp_path / "empty.json"
    baseline.write_text(json.dumps({"findings": []}), encoding="utf-8")
    _, found = _verify(logs, state, "--baseline", str(baseline), capsys=capsys)
    assert found["baseline"]["file"] == str(baseline)
    assert found["baseline"]["new"] == len(found["findings"])


def test_a_tampered_record_of_runs_is_dropped_with_a_warning(logs, tmp_path, capsys):
    state = tmp_path / "state"
    _verify(logs, state, capsys=capsys)
    path = state / RUNS_FILE
    document = json.loads(path.read_text(encoding="utf-8"))
    document["value"]["last"]["findings"] = []  # every finding would then look new
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.warns(TamperedCacheWarning, match="signature does not hold"):
        assert last_audit(state) is None
    with pytest.warns(TamperedCacheWarning):
        _, found = _verify(logs, state, capsys=capsys)
    assert found.get("baseline") is None
    # That run started the record anew.
    assert len(ea.audit_runs(state)) == 1


def test_a_run_whose_findings_pass_the_bound_keeps_its_row_not_its_findings(logs, tmp_path):
    state = tmp_path / "state"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(logs, state=state, progress=False)
    verdict = Verdict.of(str(logs), ea.verify_all(audit))
    at = datetime(2026, 12, 5, 10, tzinfo=UTC)
    row = record_audit(state, verdict, at=at, max_bytes=1000)
    assert row["findings"] == len(verdict.findings) > 0
    assert last_audit(state) is None  # nothing to compare with, rather than a wrong count
    runs = ea.audit_runs(state)
    assert runs["at"].tolist() == [pd.Timestamp(at)]
    record_audit(state, verdict, at=at)
    assert len(last_audit(state).findings) == len(verdict.findings)
    assert len(ea.audit_runs(state)) == 2


def test_no_run_recorded_is_an_empty_table(tmp_path):
    runs = ea.audit_runs(tmp_path)
    assert len(runs) == 0
    assert list(runs.columns) == list(RUN_COLUMNS)


def _edited(logs: Path) -> None:
    """Line 3 of the audited log rewritten: a decision flipped where it was written."""
    path = logs / "decisions.jsonl"
    lines = path.read_bytes().splitlines(True)
    record = json.loads(lines[2])
    record["final_tier"] = "26b" if record.get("final_tier") != "26b" else "4b"
    lines[2] = json.dumps(record).encode() + b"\n"
    path.write_bytes(b"".join(lines))


def _edits(document: dict) -> list[tuple[str, int, str]]:
    return [
        (f["rule"], f["source_line"], f["detail"])
        for f in document["findings"]
        if f["check"] == "audited_bytes"
    ]


def test_an_edit_found_by_a_run_that_stopped_before_its_verdict_is_reported_next(
    logs, tmp_path, capsys
):
    """A run stopped after its load (here: its verdict could not be written) has already
    replaced the state with the edited bytes; the edit it found is reported by the next
    run, saying when it was found, and by no run after the one that reported it."""
    state = tmp_path / "state"
    assert _verify(logs, state, capsys=capsys)[0] in (0, 1)
    _edited(logs)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:  # every write fails: no space left on the device
        stopped = subprocess.run(
            [sys.executable, "-m", "explicit_audit", "verify", str(logs), "--state", str(state)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
        )
    assert stopped.returncode != 0 and len(ea.audit_runs(state)) == 1, stopped.stderr
    _, after = _verify(logs, state, capsys=capsys)
    ((rule, line, detail),) = _edits(after)
    assert (rule, line) == ("audited_bytes_changed", 3)
    assert detail.endswith("by a run stopped before it reported it)"), detail
    assert " (found at 20" in detail
    # Reported: the run after it finds no edit.
    _, again = _verify(logs, state, capsys=capsys)
    assert _edits(again) == []


def test_a_load_from_python_reports_its_edits_once(logs, tmp_path, capsys):
    """ea.load(state=) hands its edits to the caller: the next load does not repeat them."""
    state = tmp_path / "state"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        ea.load(logs, state=state, progress=False)
        _edited(logs)
        first = ea.load(logs, state=state, progress=False)
        second = ea.load(logs, state=state, progress=False)
    assert first.changes[["rule", "source_line"]].values.tolist() == [["audited_bytes_changed", 3]]
    assert len(second.changes) == 0
