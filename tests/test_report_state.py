"""``explicit-audit report --state DIR``: the verdict from an audit state, what is new since.

Real logs on disk (the first lines of bundled decisions), ``verify --state``
and ``report --state`` run as a user runs them, from the logs' own folder
with a state path relative to it (the report reads a private copy of the
logs: the state must still know each copy by the file it was copied from).
The report's one notebook is about a table the logs lack, so no kernel
starts: what is checked is the verdict, the findings beside the pages and
what each page says under its title.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import explicit_audit as ea
from explicit_audit._cache_seal import SECRET_ENV
from explicit_audit.cli import main
from explicit_audit.report.writer import ReportError, write_reports

ROOT = Path(__file__).resolve().parents[1]
BROKEN = b'{"decision_id": "broken", "tier":\n'


@pytest.fixture(autouse=True)
def secret(tmp_path_factory, monkeypatch) -> None:
    """The state's secret, kept outside the state folder (never the user's own)."""
    monkeypatch.setenv(SECRET_ENV, str(tmp_path_factory.mktemp("config") / "secret"))


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """A working folder holding ``logs/`` (two files of decisions and the policies) and
    a notebook folder; the current folder while the test runs."""
    logs = tmp_path / "logs"
    (logs / "policies").mkdir(parents=True)
    for policy in (ROOT / "data" / "policies").iterdir():
        (logs / "policies" / policy.name).write_bytes(policy.read_bytes())
    lines = (ROOT / "data/decisions/2026-01_baseline.jsonl").read_bytes().splitlines(True)
    (logs / "a.jsonl").write_bytes(b"".join(lines[:30]))
    (logs / "b.jsonl").write_bytes(b"".join(lines[30:60]))
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    notebook = new_notebook(
        cells=[
            new_markdown_cell("# Plans"),
            new_code_cell('DATA = "x"', metadata={"tags": ["parameters"]}),
        ]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.metadata["explicit_audit"] = {"tables": [["plans"]]}  # none here: no kernel
    nbformat.write(notebook, notebooks / "plans.ipynb")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _findings(out: Path) -> list[dict]:
    with open(out / "findings.csv", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _since(page: Path) -> str:
    return re.search(r'<dd id="since">([^<]*)</dd>', page.read_text(encoding="utf-8")).group(1)


def test_a_report_from_a_state_finds_the_edits_and_says_what_is_new(here, capsys):
    assert main(["verify", "logs", "--state", "state", "--json"]) == 1
    before = len(json.loads(capsys.readouterr().out)["findings"])
    # Appended to one file; the other rewritten by an editor (a new file, line 3 changed).
    with open("logs/a.jsonl", "ab") as out:
        out.write(BROKEN)
    edited = Path("logs/b.jsonl").read_bytes().replace(b'"', b'"X', 1)
    Path("logs/b.jsonl.new").write_bytes(edited)
    os.replace("logs/b.jsonl.new", "logs/b.jsonl")
    write_reports("logs", "out", "notebooks", state="state")
    found = [(f["rule"], f["source_file"], f["source_line"]) for f in _findings(Path("out"))]
    assert ("rejected_row", "logs/a.jsonl", "31") in found
    replaced = [f for f in found if f[0].startswith("audited_")]
    assert replaced == [("audited_file_replaced", "logs/b.jsonl", "1")]
    # Every page, the index too, says what is new since the verify before.
    for page in ("index.html", "plans.html"):
        since = _since(Path("out") / page)
        assert re.fullmatch(
            r"\d+ new findings since the last audit \(\S+Z\), \d+ resolved, \d+ persisting", since
        ), since
    runs = ea.audit_runs("state")
    assert runs["findings"].iloc[0] == before
    assert runs["new"].iloc[1] == int(_since(Path("out/index.html")).split()[0]) >= 3
    # The state the report wrote knows the logs themselves, never the report's copy: a
    # verify after it finds no edit, and the replaced file's finding is resolved.
    assert main(["verify", "logs", "--state", "state", "--json"]) == 1
    after = json.loads(capsys.readouterr().out)
    assert [f for f in after["findings"] if f["check"] == "audited_bytes"] == []
    assert after["baseline"]["new"] == 0 and after["baseline"]["resolved"] == 1
    state = json.loads(Path("state/state.json").read_text(encoding="utf-8"))["value"]
    assert {Path(f["real"]).parent for f in state["files"]} <= {
        (here / "logs").resolve(),
        (here / "logs" / "policies").resolve(),
    }


def test_the_first_report_from_a_state_says_it_is_the_first(here):
    write_reports("logs", "out", "notebooks", state="state")
    assert _since(Path("out/index.html")) == "none recorded in state: this is the first"
    assert len(ea.audit_runs("state")) == 1


def test_a_data_path_the_state_cannot_know_by_its_names_is_refused(here):
    refused = r"--state: the pages name the files of \S+ relative to the current folder"
    with pytest.raises(ReportError, match=refused):
        write_reports(here / "logs", "out", "notebooks", state="state")
    assert not Path("out").exists() or not any(Path("out").iterdir())
