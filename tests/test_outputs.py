"""verify's output formats and exit statuses: each one registered entry, each defined once.

A toy format is added here as a format kept outside the kit would be, with no
edit to the kit: registered in the test's process, and named by the
environment for the command run as its own process.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import xmlschema
from conftest import make_receipt

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.cli import main
from explicit_audit.verdicts import (
    ExitStatus,
    OutputFormat,
    Verdict,
    output_formats,
    register_format,
    unregister_format,
)
from explicit_audit.verdicts.exits import exit_status_table
from explicit_audit.verdicts.outputs import json_document
from explicit_audit.verify import Verification

ROOT = Path(__file__).resolve().parent.parent


# -- the toy format, as a module kept outside the kit declares it -----------------------------

#: The module a format kept outside the kit ships: the format, and the one call.
PLUGIN = """from explicit_audit.verdicts import OutputFormat, register_format


def toy_document(verdict, rendering):
    summary = verdict.verification.summary()
    lines = [f"{row.check} {row.status}" for row in summary.itertuples()]
    return "\\n".join([f"toy {verdict.state} exit {verdict.status}", *lines]) + "\\n"


def toy_failed(failure):
    return f"toy failed: {failure.type}: {failure.message}\\n"


TOY = register_format(
    OutputFormat("toy", "one line per check (a toy format)", write=toy_document, failed=toy_failed)
)
"""


def _plugin_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "toy_format.py").write_text(PLUGIN, encoding="utf-8")
    return folder


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_plugin_folder(tmp_path)))
    module = importlib.import_module("toy_format")  # registers it
    yield module.TOY
    unregister_format("toy")
    sys.modules.pop("toy_format")  # imported afresh, so registered again, by the next test


@pytest.fixture(scope="module")
def receipts(tmp_path_factory) -> Path:
    """A folder of one clean receipt, with no time: three checks of twelve look at it."""
    folder = tmp_path_factory.mktemp("receipts")
    (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    return folder


def test_a_toy_format_is_offered_and_written_by_verify(toy, receipts, capsys):
    assert main(["verify", "--help"]) == 0
    assert "toy: one line per check (a toy format)" in " ".join(capsys.readouterr().out.split())
    assert main(["verify", str(receipts), "--format", "toy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "toy clean on what was checked exit 0"
    assert lines[1:] == [f"{check} {status}" for check, status in _statuses(receipts).items()]
    # A run that checks nothing gets the toy's own document, and stderr says why.
    assert main(["verify", str(receipts / "gone"), "--format", "toy"]) == 2
    captured = capsys.readouterr()
    assert captured.out == f"toy failed: InputError: {receipts / 'gone'}: no such file or folder\n"
    assert "no such file or folder" in captured.err


def test_without_the_toy_format_verify_refuses_it(receipts, capsys):
    assert "toy" not in output_formats()
    assert main(["verify", str(receipts), "--format", "toy"]) == 2
    assert "invalid choice: 'toy'" in capsys.readouterr().err


def test_a_format_named_by_the_environment_is_written_by_the_command(receipts, tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("EXPLICIT_AUDIT")}
    env["PYTHONPATH"] = str(_plugin_folder(tmp_path))
    env["EXPLICIT_AUDIT_FORMATS"] = "toy_format"
    command = [sys.executable, "-m", "explicit_audit.cli", "verify", str(receipts)]
    done = subprocess.run(
        [*command, "--format", "toy"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "toy clean on what was checked exit 0"
    env["EXPLICIT_AUDIT_FORMATS"] = "no_such_format_module"
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert "no_such_format_module" in done.stderr and "EXPLICIT_AUDIT_FORMATS" in done.stderr


def test_a_format_name_is_taken_once(toy):
    with pytest.raises(ea.AuditError, match="'toy' is already registered"):
        register_format(OutputFormat("toy", "another", write=toy.write))
    assert register_format(toy) is toy  # the same entry again is no change
    with pytest.raises(ea.AuditError, match="must be a word"):
        register_format(OutputFormat("--toy", "an option", write=toy.write))


def test_the_kit_s_own_formats_are_registry_entries():
    assert list(output_formats())[:4] == ["text", "json", "junit", "sarif"]
    assert output_formats()["text"].failed is None  # stderr alone says why


# -- exit statuses: one definition, the docs' table and the help read off it -------------------


def test_the_docs_exit_status_table_is_the_one_definition():
    text = (ROOT / "docs" / "howto" / "verify.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit status\n", 1)[1].split("\n## ", 1)[0]
    tables = re.findall(r"^\|.*\|$(?:\n^\|.*\|$)*", section, flags=re.MULTILINE)
    assert tables == [exit_status_table()]
    # No other exit-status table anywhere in README or the docs.
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    assert sum(p.read_text(encoding="utf-8").count("| status | meaning |") for p in pages) == 1


def test_help_lists_every_exit_status_with_its_meaning(capsys):
    assert main(["verify", "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    for status in ExitStatus:
        meaning = " ".join(status.meaning.replace("`", "").split())
        assert f"{int(status)} {meaning}" in said


# -- coverage told truthfully ----------------------------------------------------------------


def _statuses(folder: Path) -> dict[str, str]:
    return ea.verify_all(ea.load(folder, progress=False)).statuses


def test_junit_skips_each_check_not_run_with_its_reason(receipts, capsys):
    assert main(["verify", str(receipts), "--format", "junit"]) == 0
    text = capsys.readouterr().out
    schema = xmlschema.XMLSchema(ROOT / "tests" / "data" / "schemas" / "junit-10.xsd")
    schema.validate(text)
    suites = schema.to_dict(text)["testsuite"]
    not_run = [check for check, status in _statuses(receipts).items() if status == "not run"]
    # Receipts declare no identity, and this one has no time: neither check looked at it.
    assert len(not_run) == 9 and {"record_duplicates", "record_times"} <= set(not_run)
    skipped = {
        case["@name"]: case["skipped"][0]["@message"]
        for suite in suites
        for case in suite["testcase"]
        if "skipped" in case
    }
    assert list(skipped) == not_run
    checks = registry.checks()
    for check, message in skipped.items():
        assert message.startswith("not run (no records): DATA holds no record of the table")
        assert checks[check].covers in message
        if checks[check].examines is not None:
            assert f"of the table {checks[check].examines}," in message
    assert skipped["record_duplicates"].startswith(
        "not run (no records): DATA holds no record of the tables presentations, plans, requests, "
        "decisions "
    )
    assert {s["@name"]: s["@skipped"] for s in suites if s["@skipped"] != "0"} == dict.fromkeys(
        not_run, "1"
    )


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_check_of_every_kind_counts_only_the_records_it_reads(tmp_path, engine):
    from explicit_audit.report._header import verdict_html

    receipt = {**make_receipt(), "timestamp": "2025-03-04T10:00:00Z"}
    (tmp_path / "r.jsonl").write_text(json.dumps(receipt) + "\n", encoding="utf-8")
    result = ea.verify_all(ea.load(tmp_path, progress=False, engine=engine))
    # Receipts declare no identity, so no record could be told written twice;
    # the receipt's time was read (its exposed records have none).
    assert result.checked["record_duplicates"] == 0
    assert result.checked["record_times"] == 1
    assert result.statuses["record_duplicates"] == "not run"
    banner = verdict_html(result, str(tmp_path))
    assert (
        '<p class="ea-verdict-keys" id="check-record_duplicates"><code>record_duplicates</code>'
        ": not run (no records it reads).</p>"
    ) in banner
    assert "<code>record_times</code>: nothing found." in banner


def test_json_is_clean_only_when_every_check_ran(receipts, capsys):
    assert main(["verify", str(receipts), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["clean"], document["state"]) == (False, "clean on what was checked")
    assert main(["verify", str(receipts), "--json", "--expect", "receipts,plans"]) == 3
    document = json.loads(capsys.readouterr().out)
    assert (document["clean"], document["state"], document["missing"]) == (
        False,
        "missing",
        ["plans"],
    )
    # Every check looked at records and found nothing: the one clean state.
    findings = ea.verify_all(ea.load(receipts, progress=False)).findings
    everything = Verification(findings, dict.fromkeys(registry.checks(), 1))
    verdict = Verdict.of("data", everything)
    assert (verdict.state, verdict.clean, verdict.status) == ("clean", True, 0)
    assert json_document(verdict, {})["clean"] is True


def test_state_and_clean_never_disagree(receipts, capsys):
    for argv in ([], ["--expect", "plans"], ["--expect", "receipts"]):
        main(["verify", str(receipts), "--json", *argv])
        document = json.loads(capsys.readouterr().out)
        assert document["clean"] == (document["state"] == "clean"), argv


def test_sarif_says_the_state_and_the_checks_not_run(receipts, capsys):
    assert main(["verify", str(receipts), "--format", "sarif"]) == 0
    invocation = json.loads(capsys.readouterr().out)["runs"][0]["invocations"][0]
    not_run = [check for check, status in _statuses(receipts).items() if status == "not run"]
    assert invocation["properties"]["state"] == "clean on what was checked"
    assert invocation["properties"]["not_run"] == not_run


def test_an_empty_verification_is_nothing_to_check():
    empty = Verification(pd.DataFrame(columns=ea.verify.FINDING_COLUMNS), {"rejected_rows": 0})
    assert (Verdict.of("d", empty).state, Verdict.of("d", empty).status) == ("nothing to check", 3)


@pytest.mark.parametrize("data", ["missing", "logs"])
def test_the_last_format_given_is_the_one_written_whether_the_run_fails_or_not(
    tmp_path, capsys, data
):
    folder = tmp_path / data
    if data == "logs":
        folder.mkdir()
        (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", "utf-8")
    status = main(["verify", str(folder), "--format", "sarif", "--format", "junit"])
    assert status == (2 if data == "missing" else 0)
    assert capsys.readouterr().out.startswith("<?xml")


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "missing", "--fo", "sarif"],
        ["verify", "missing", "--form=junit"],
        ["verify", "missing", "--js"],
        ["summary", "missing", "--format", "sarif"],
    ],
)
def test_an_abbreviated_or_foreign_option_is_a_usage_error_without_a_document(capsys, argv):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "unrecognized arguments" in captured.err


def test_a_negative_max_findings_is_a_usage_error(capsys):
    assert main(["verify", "missing", "--max-findings", "-1"]) == 2
    assert "--max-findings: -1 findings: give at least 0" in capsys.readouterr().err
