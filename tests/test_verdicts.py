"""verify over time and for CI: --baseline, --new-only, --since/--until, --format junit|sarif."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import jsonschema
import pytest
import xmlschema
from conftest import make_receipt

from explicit_audit.cli import main
from explicit_audit.verdicts import compare_findings, finding_identity, fingerprint

ROOT = Path(__file__).parent.parent
SCHEMAS = ROOT / "tests" / "data" / "schemas"


def _logged(receipt: dict, request_id: str | None, stamp: str | None) -> str:
    """A bare receipt with a logger's keys beside its own."""
    record = dict(receipt)
    if request_id is not None:
        record["request_id"] = request_id
    if stamp is not None:
        record["timestamp"] = stamp
    return json.dumps(record)


def _receipt_line(stamp: str | None = None, request_id: str | None = None) -> str:
    return _logged(make_receipt(), request_id, stamp)


def _space_query(request_id: str | None, stamp: str | None = None) -> str:
    """A receipt that breaks space_query: scope 'space' with a query."""
    receipt = make_receipt(scope="space", query="weekly plan", relevanceThreshold=None)
    receipt["exposedResults"][0].pop("score")
    return _logged(receipt, request_id, stamp)


def _verify_json(capsys, *argv) -> tuple[int, dict]:
    status = main(["verify", *map(str, argv), "--json"])
    return status, json.loads(capsys.readouterr().out)


@pytest.fixture
def logs(tmp_path) -> Path:
    """Two files: one bad receipt with an id in each, an invalid line, clean receipts."""
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_text(
        "\n".join([_receipt_line(), _space_query("req-a"), "{not json", _receipt_line()]) + "\n",
        encoding="utf-8",
    )
    (folder / "b.jsonl").write_text(
        "\n".join([_space_query("req-b"), _receipt_line()]) + "\n", encoding="utf-8"
    )
    return folder


@pytest.fixture
def baseline(logs, tmp_path, capsys) -> Path:
    status, document = _verify_json(capsys, logs)
    assert status == 1 and len(document["findings"]) == 3
    path = tmp_path / "yesterday.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# --- identity across runs ---------------------------------------------------------------


def test_a_finding_keeps_its_identity_when_its_line_moves():
    finding = {"check": "c", "kind": "k", "rule": "r", "field": "f", "record": "x"}
    moved = finding | {"source_file": "other.jsonl", "source_line": 99, "row": 7, "detail": "?"}
    assert finding_identity(finding) == finding_identity(moved)
    assert fingerprint(finding) == fingerprint(moved)
    assert fingerprint(finding) != fingerprint(finding | {"record": "y"})
    assert fingerprint(finding) != fingerprint(finding | {"rule": "s"})


def test_a_finding_without_a_record_is_known_by_its_detail():
    finding = {"check": "c", "kind": "k", "rule": "r", "field": None, "record": None}
    assert fingerprint(finding | {"detail": "a"}) != fingerprint(finding | {"detail": "b"})
    assert fingerprint(finding | {"detail": "a", "source_line": 1}) == fingerprint(
        finding | {"detail": "a", "source_line": 5}
    )


def test_findings_of_one_identity_are_matched_by_count_earliest_first():
    one = {"check": "c", "kind": "k", "rule": "r", "record": None, "detail": "same"}
    then = [one | {"source_file": "a", "source_line": n} for n in (3, 9)]
    now = [one | {"source_file": "a", "source_line": n} for n in (4, 10, 20)]
    compared = compare_findings(then, now)
    assert compared.counts() == {"new": 1, "resolved": 0, "persisting": 2, "not_checked": 0}
    assert compared.new[0]["source_line"] == 20
    fewer = compare_findings(now, then[:1])
    assert fewer.counts() == {"new": 0, "resolved": 2, "persisting": 1, "not_checked": 0}
    assert [f["source_line"] for f in fewer.resolved] == [10, 20]


def test_a_finding_that_moved_to_another_file_persists():
    one = {"check": "c", "kind": "k", "rule": "r", "record": "x", "detail": "d"}
    then = [one | {"source_file": "old.jsonl", "source_line": 1}]
    now = [one | {"source_file": "rotated/old.jsonl.1", "source_line": 1}]
    assert compare_findings(then, now).counts() == {
        "new": 0,
        "resolved": 0,
        "persisting": 1,
        "not_checked": 0,
    }


# --- verify --baseline ---------------------------------------------------------------------


def test_shifted_lines_and_reordered_files_change_nothing(logs, baseline, capsys):
    a = (logs / "a.jsonl").read_text(encoding="utf-8").splitlines()
    b = (logs / "b.jsonl").read_text(encoding="utf-8").splitlines()
    (logs / "a.jsonl").write_text("\n".join([*b[::-1], _receipt_line()]) + "\n", encoding="utf-8")
    (logs / "b.jsonl").write_text("\n".join([_receipt_line(), *a[::-1]]) + "\n", encoding="utf-8")
    status, document = _verify_json(capsys, logs, "--baseline", baseline)
    assert status == 1
    compared = document["baseline"]
    assert (compared["new"], compared["resolved"], compared["persisting"]) == (0, 0, 3)
    assert compared["file"] == str(baseline)


def test_new_resolved_and_persisting(logs, baseline, capsys):
    (logs / "b.jsonl").write_text(_receipt_line() + "\n", encoding="utf-8")  # req-b fixed
    with (logs / "a.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(_space_query("req-c") + "\n")
    status, document = _verify_json(capsys, logs, "--baseline", baseline)
    compared = document["baseline"]
    assert (compared["new"], compared["resolved"], compared["persisting"]) == (1, 1, 2)
    assert [f["record"] for f in compared["new_findings"]] == ["req-c"]
    assert [f["record"] for f in compared["resolved_findings"]] == ["req-b"]
    assert compared["resolved_findings"][0]["source_file"].endswith("b.jsonl")
    assert len(compared["new_findings"][0]["fingerprint"]) == 32
    assert status == 1

    assert main(["verify", str(logs), "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert f"since {baseline} (data {logs}): 1 new, 1 resolved, 2 persisting" in out
    assert "space_query [req-c]" in out and "(new)" in out and "(persisting)" in out


def test_new_only_fails_for_new_errors_alone(logs, baseline, capsys):
    assert main(["verify", str(logs), "--baseline", str(baseline), "--new-only"]) == 0
    assert "--new-only: only new errors fail this run" in capsys.readouterr().out
    assert main(["verify", str(logs), "--baseline", str(baseline)]) == 1
    capsys.readouterr()
    with (logs / "b.jsonl").open("a", encoding="utf-8") as handle:
        handle.write("{also not json\n")
    status, document = _verify_json(capsys, logs, "--baseline", baseline, "--new-only")
    assert status == 1 and document["exit_status"] == 1
    assert document["baseline"]["new"] == 1 and document["baseline"]["new_only"] is True


def test_new_only_still_says_an_expected_kind_is_missing(logs, baseline, capsys):
    # The old errors persisting, none new: the run passed (0) with no plans at all.
    argv = ["--baseline", baseline, "--new-only", "--expect", "plans"]
    status, document = _verify_json(capsys, logs, *argv)
    assert document["missing"] == ["plans"] and document["baseline"]["new"] == 0
    assert status == document["exit_status"] == 3


def test_a_check_that_looked_at_no_record_resolves_none_of_its_findings(baseline, tmp_path, capsys):
    # Its findings were counted resolved when the records it reads were not there at all.
    then = json.loads(baseline.read_text(encoding="utf-8"))["findings"]
    plans = tmp_path / "plans-only"
    plans.mkdir()
    line = (ROOT / "data" / "plans" / "arborist_runs.jsonl").read_text().splitlines()[0]
    (plans / "p.jsonl").write_text(line + "\n", encoding="utf-8")
    _, document = _verify_json(capsys, plans, "--baseline", baseline)
    compared = document["baseline"]
    looked_again = [f for f in then if f["check"] == "rejected_rows"]  # values read: yes
    assert 0 < len(looked_again) < len(then)
    assert compared["resolved"] == len(looked_again)
    assert compared["not_checked"] == len(then) - len(looked_again)
    assert {f["check"] for f in compared["not_checked_findings"]} == {"receipt_rules"}


def test_new_only_needs_a_baseline(logs, capsys):
    assert main(["verify", str(logs), "--new-only"]) == 2
    assert "--new-only needs --baseline" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "no such baseline file"),
        ("{not json", "the baseline is not JSON"),
        ("[]", "has no list of findings"),
        ('{"findings": [{"check": "c"}]}', "finding 0 lacks"),
        (
            '{"exit_status": 2, "clean": null, "error": {"message": "x: no such file"}}',
            "could not check anything",
        ),
        # An error that is not the object verify writes: no list of findings (it raised).
        ('{"error": "disk full"}', "no list of findings"),
        ('{"error": ["x"]}', "no list of findings"),
        # A window or data of another type were taken as none (a window "2025" raised).
        ('{"findings": [], "window": {"since": [1]}}', 'its window is {"since": [1]}'),
        ('{"findings": [], "window": "2025"}', 'its window is "2025"'),
        ('{"findings": [], "data": 5}', "its data is 5"),
    ],
)
def test_a_baseline_that_is_not_a_verify_document_exits_2(logs, tmp_path, capsys, content, says):
    path = tmp_path / "previous.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["verify", str(logs), "--baseline", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert str(path) in captured.err and says in captured.err
    assert json.loads(captured.out)["error"]["file"] == str(path)


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("source_line", True, "source_line is true, not a line number"),
        ("source_line", -1, "source_line is -1"),
        ("rule", 5, "rule is 5, not a rule's name"),
        ("severity", "warning", 'severity is "warning"'),
        ("record", ["x"], 'record is ["x"], not text or null'),
    ],
)
def test_a_baseline_finding_of_another_type_exits_2_naming_it(
    logs, baseline, tmp_path, capsys, key, value, says
):
    document = json.loads(baseline.read_text(encoding="utf-8"))
    document["findings"][1][key] = value
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["verify", str(logs), "--baseline", str(path), "--format", "sarif"]) == 2
    captured = capsys.readouterr()
    assert f"finding 1's {says}" in captured.err
    assert json.loads(captured.out)["runs"][0]["invocations"][0]["executionSuccessful"] is False


# --- --since / --until -----------------------------------------------------------------------


@pytest.fixture
def dated(tmp_path) -> Path:
    folder = tmp_path / "dated"
    folder.mkdir()
    lines = [
        _space_query("req-early", "2025-03-03T23:59:59Z"),
        _space_query("req-start", "2025-03-04T00:00:00Z"),  # since is inside
        _space_query("req-late", "2025-03-04T23:00:00-02:00"),  # 2025-03-05T01:00Z: after
        _space_query("req-end", "2025-03-05T00:00:00Z"),  # until is outside
        _space_query("req-naive", "2025-03-04T12:00:00"),  # read as UTC: inside
        _space_query("req-undated"),
        _space_query("req-bad-time", "yesterday"),
        _receipt_line("2025-03-04T08:00:00Z"),
        "{not json",
    ]
    (folder / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _records(document) -> set:
    return {f["record"] for f in document["findings"]}


def test_window_keeps_findings_of_records_inside_and_counts_the_rest(dated, capsys):
    status, document = _verify_json(capsys, dated, "--since", "2025-03-04", "--until", "2025-03-05")
    assert status == 1
    assert _records(document) == {"req-start", "req-naive", "req-undated", "req-bad-time", None}
    window = document["window"]
    assert window["since"] == "2025-03-04T00:00:00Z" and window["until"] == "2025-03-05T00:00:00Z"
    (receipts,) = [t for t in window["tables"] if t["table"] == "receipts"]
    assert receipts == {
        "table": "receipts",
        "column": "timestamp",
        "rows": 8,
        "inside": 3,
        "before": 1,
        "after": 2,
        "undated": 1,
        "unreadable": 1,
    }
    assert window["findings_outside"] == 3
    # no time, not a time (its space_query and its unparsed_time notice), the rejected line
    assert window["findings_undated"] == 4
    summary = {row["check"]: row["findings"] for row in document["summary"]}
    assert summary["receipt_rules"] == 4 and summary["rejected_rows"] == 1


def test_undated_skip_leaves_them_out_and_says_how_many(dated, capsys):
    assert main(["verify", str(dated), "--since", "2025-03-04", "--undated", "skip"]) == 1
    out = capsys.readouterr().out
    assert "4 finding(s) about records without a time" in out and "left out (--undated skip)" in out
    assert "1 finding(s) about records outside the window: left out" in out
    assert "req-undated" not in out and "req-late" in out and "req-early" not in out


def test_time_key_names_the_column(tmp_path, capsys):
    folder = tmp_path / "logged"
    folder.mkdir()
    late = json.loads(_space_query("req-1"))
    late["logged"] = "2025-03-09T00:00:00Z"
    late["timestamp"] = "2025-03-01T00:00:00Z"
    (folder / "r.jsonl").write_text(json.dumps(late) + "\n", encoding="utf-8")
    status, by_default = _verify_json(capsys, folder, "--since", "2025-03-05")
    # By its timestamp the record lies before the window, which holds none: nothing to check.
    assert status == 3 and by_default["findings"] == []
    status, chosen = _verify_json(
        capsys, folder, "--since", "2025-03-05", "--time-key", "receipts=logged"
    )
    assert status == 1 and _records(chosen) == {"req-1"}
    columns = {table["table"]: table["column"] for table in chosen["window"]["tables"]}
    assert columns["receipts"] == "logged" and columns["plans"] is None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--since", "last tuesday"], "is not a time"),
        (["--since", "2025-03-05", "--until", "2025-03-04"], "the window is empty"),
        (["--time-key", "=x"], "--time-key"),
        # A time key no table holds left every record undated: with --undated skip, exit 0.
        (["--since", "2025-03-04", "--time-key", "receipts=logd"], "has no such column"),
        (["--since", "2025-03-04", "--time-key", "logd"], "no table with records has such"),
    ],
)
def test_a_bad_window_exits_2(dated, capsys, argv, says):
    assert main(["verify", str(dated), *argv]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(("since", "kept"), [("2026-02-01", 1), ("2026-03-01", 0)])
def test_a_finding_of_a_check_over_every_kind_is_placed_by_its_record(
    tmp_path, capsys, since, kept
):
    # record_duplicates examines no one table: its findings were "undated" whatever their
    # record's time, left out of the window that holds it (exit 0) and kept in one after it.
    folder = tmp_path / "w"
    (folder / "policies").mkdir(parents=True)
    (folder / "policies" / "strict.yaml").write_bytes(
        (ROOT / "data" / "policies" / "strict.yaml").read_bytes()
    )
    line = (ROOT / "data" / "decisions" / "2026-02_strict.jsonl").read_text().splitlines()[0]
    other = line.replace('"confidence":0.948', '"confidence":0.949')
    assert other != line
    (folder / "a.jsonl").write_text(line + "\n" + other + "\n", encoding="utf-8")
    window = ["--since", since, "--until", "2026-04-01", "--undated", "skip"]
    status, document = _verify_json(capsys, folder, *window)
    found = [f["rule"] for f in document["findings"] if f["check"] == "record_duplicates"]
    # A window holding no record has nothing to check (3), never clean (0).
    assert found == ["conflicting_record"] * kept and status == (1 if kept else 3)
    assert document["window"]["findings_undated"] == 0


def test_window_on_the_dask_engine_gives_the_same_findings(dated, capsys):
    window = ["--since", "2025-03-04", "--until", "2025-03-05"]
    _, in_memory = _verify_json(capsys, dated, *window)
    _, lazy = _verify_json(capsys, dated, *window, "--engine", "dask", "--scheduler", "synchronous")
    assert lazy["findings"] == in_memory["findings"]
    assert lazy["window"] == in_memory["window"]


# --- --format junit | sarif ---------------------------------------------------------------


@pytest.fixture(scope="module")
def junit_schema():
    return xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd")


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads((SCHEMAS / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    return validator_class(schema)


def _output(capsys, *argv) -> tuple[int, str]:
    status = main(["verify", *map(str, argv)])
    return status, capsys.readouterr().out


def test_junit_of_the_bundled_data_validates_and_lists_every_rule(junit_schema, capsys):
    import explicit_audit as ea

    status, text = _output(capsys, ROOT / "data", "--format", "junit")
    assert status == 1
    junit_schema.validate(text)
    document = junit_schema.to_dict(text)
    suites = document["testsuite"]
    assert [s["@name"] for s in suites] == list(ea.verify.CHECKS)
    cases = [case for suite in suites for case in suite["testcase"]]
    assert {(c["@classname"], c["@name"]) for c in cases} == {
        (rule.check, name) for name, rule in ea.verify.RULES.items()
    }
    _, plain = _verify_json(capsys, ROOT / "data")
    errors = [f for f in plain["findings"] if f["severity"] == "error"]
    failing_lines = [
        line
        for case in cases
        for failure in case.get("failure", [])
        for line in failure["$"].splitlines()
    ]
    assert len(failing_lines) == len(errors)
    assert int(document["@failures"]) == len({(f["check"], f["rule"]) for f in errors})


def test_sarif_of_the_bundled_data_validates(sarif_validator, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    status, text = _output(capsys, "data", "--format", "sarif")
    assert status == 1
    log = json.loads(text)
    sarif_validator.validate(log)
    (run,) = log["runs"]
    assert run["originalUriBaseIds"]["CWD"]["uri"] == ROOT.as_uri() + "/"
    _, plain = _verify_json(capsys, "data")
    assert len(run["results"]) == len(plain["findings"])
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result, finding in zip(run["results"], plain["findings"], strict=True):
        assert result["ruleId"] == finding["rule"] == rules[result["ruleIndex"]]
        assert result["level"] == {"error": "error", "notice": "note"}[finding["severity"]]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == finding["source_file"]
        assert location.get("region", {}).get("startLine") == (finding["source_line"] or None)
        assert result["partialFingerprints"]["explicitAuditFinding/v1"] == fingerprint(finding)
    assert run["invocations"][0]["exitCode"] == 1


def test_sarif_with_a_baseline_marks_results_new_unchanged_and_absent(
    logs, baseline, sarif_validator, capsys
):
    (logs / "b.jsonl").write_text(_receipt_line() + "\n", encoding="utf-8")
    with (logs / "a.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(_space_query("req-c") + "\n")
    _, text = _output(capsys, logs, "--format", "sarif", "--baseline", baseline)
    log = json.loads(text)
    sarif_validator.validate(log)
    states = {
        r["locations"][0].get("logicalLocations", [{}])[0].get("name"): r["baselineState"]
        for r in log["runs"][0]["results"]
    }
    assert states == {"req-a": "unchanged", None: "unchanged", "req-c": "new", "req-b": "absent"}


def test_junit_and_sarif_hold_control_characters_and_absolute_paths(
    tmp_path, junit_schema, sarif_validator, capsys
):
    folder = tmp_path / "odd name"
    folder.mkdir()
    (folder / "r\u00e9.jsonl").write_text('{"x": "\\u0007bell\\u0000"}\n"\x01"\n', encoding="utf-8")
    status, text = _output(capsys, folder, "--format", "junit")
    assert status == 1
    junit_schema.validate(text)
    status, text = _output(capsys, folder, "--format", "sarif")
    log = json.loads(text)
    sarif_validator.validate(log)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert uri["uri"].startswith("file:///") and "odd%20name" in uri["uri"]


def test_junit_writes_each_finding_on_one_line_whatever_its_record_holds(
    tmp_path, junit_schema, capsys
):
    import xml.etree.ElementTree as ET

    values = [make_receipt(kind="miss", request_id=f"a\rb\nc{n}\ufffe") for n in range(2)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(v) + "\n" for v in values), "utf-8")
    status, text = _output(capsys, tmp_path, "--format", "junit", "--no-progress")
    assert status == 1
    junit_schema.validate(text)
    failures = [f.text for f in ET.fromstring(text).iter("failure") if f.text]
    lines = "\n".join(failures).splitlines()
    _, document = _output(capsys, tmp_path, "--json", "--no-progress")
    errors = [f for f in json.loads(document)["findings"] if f["severity"] == "error"]
    assert len(lines) == len(errors) >= 2
    assert all(line.startswith(str(tmp_path / "r.jsonl") + ":") for line in lines)
    assert sum("[a\\rb\\nc0\\ufffe]" in line for line in lines) >= 1


def test_sarif_names_each_file_by_its_own_bytes(tmp_path, sarif_validator, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    names = [b"a\\b.jsonl", b"n\x1b.jsonl", b"bad\xff.jsonl", "c\u0085.jsonl".encode()]
    folder = Path("logs")
    folder.mkdir()
    for name in names:
        (folder / os.fsdecode(name)).write_bytes(b'{"x": 1}\n')
    status, text = _output(capsys, folder, "--format", "sarif", "--no-progress")
    assert status == 1
    log = json.loads(text)
    sarif_validator.validate(log)
    uris = {
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
    }
    assert uris == {"logs/" + quote(name) for name in names}
    command = [sys.executable, "-m", "explicit_audit", "verify", "-", "--format", "sarif"]
    piped = subprocess.run(command, input=b'{"x": 1}\n', capture_output=True, check=False)
    log = json.loads(piped.stdout)
    sarif_validator.validate(log)
    where = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert "uri" not in where["artifactLocation"] and where["region"] == {"startLine": 1}


def test_junit_and_sarif_say_which_expected_kind_is_missing(
    tmp_path, junit_schema, sarif_validator, capsys
):
    import xml.etree.ElementTree as ET

    (tmp_path / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", "utf-8")
    argv = [tmp_path, "--expect", "receipts,plans", "--no-progress"]
    status, text = _output(capsys, *argv, "--format", "junit")
    assert status == 3
    junit_schema.validate(text)
    suite = next(s for s in ET.fromstring(text).iter("testsuite") if s.get("name") == "expect")
    failed = {case.get("name"): case.find("failure") is not None for case in suite}
    assert failed == {"receipts": False, "plans": True}
    assert suite.get("failures") == "1"
    status, text = _output(capsys, *argv, "--format", "sarif")
    log = json.loads(text)
    sarif_validator.validate(log)
    properties = log["runs"][0]["invocations"][0]["properties"]
    assert status == 3 == log["runs"][0]["invocations"][0]["exitCode"]
    assert properties["missing"] == ["plans"]
    assert properties["expected"] == {"receipts": 1, "plans": 0}


@pytest.mark.parametrize("output", ["junit", "sarif"])
def test_an_unreadable_input_is_one_valid_document_too(
    tmp_path, junit_schema, sarif_validator, capsys, output
):
    assert main(["verify", str(tmp_path / "missing"), "--format", output]) == 2
    captured = capsys.readouterr()
    assert "no such file or folder" in captured.err
    if output == "junit":
        junit_schema.validate(captured.out)
        assert "no such file or folder" in captured.out
    else:
        log = json.loads(captured.out)
        sarif_validator.validate(log)
        assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_json_and_format_json_are_one_output(logs, capsys):
    assert main(["verify", str(logs), "--json"]) == 1
    first = capsys.readouterr().out
    assert main(["verify", str(logs), "--format", "json"]) == 1
    assert capsys.readouterr().out == first


def test_findings_of_a_check_not_run_now_are_not_checked_rather_than_resolved(
    logs, baseline, tmp_path, capsys
):
    document = json.loads(baseline.read_text(encoding="utf-8"))
    plugin = {**document["findings"][0], "check": "badge_levels", "rule": "level_out_of_range"}
    document["findings"].append(plugin)
    document["summary"].append({"check": "badge_levels", "findings": 1})
    previous = tmp_path / "with-plugin.json"
    previous.write_text(json.dumps(document), encoding="utf-8")
    _, now = _verify_json(capsys, logs, "--baseline", previous)
    compared = now["baseline"]
    assert (compared["resolved"], compared["not_checked"], compared["persisting"]) == (0, 1, 3)
    assert compared["not_checked_findings"][0]["check"] == "badge_levels"
    assert main(["verify", str(logs), "--baseline", str(previous)]) == 1
    assert "1 finding(s) of checks this run did not run: not checked" in capsys.readouterr().out


def test_a_baseline_of_another_window_is_said_to_be_one(dated, tmp_path, capsys):
    _, whole = _verify_json(capsys, dated)
    previous = tmp_path / "whole.json"
    previous.write_text(json.dumps(whole), encoding="utf-8")
    window = ["--since", "2025-03-04", "--until", "2025-03-05"]
    _, narrowed = _verify_json(capsys, dated, *window, "--baseline", previous)
    compared = narrowed["baseline"]
    assert compared["window_then"] == {"since": None, "until": None}
    assert compared["window_now"] == {
        "since": "2025-03-04T00:00:00Z",
        "until": "2025-03-05T00:00:00Z",
    }
    assert compared["resolved"] == 3  # the records outside the window
    main(["verify", str(dated), *window, "--baseline", str(previous)])
    assert "note: the baseline's window [open, open) is not this run's" in capsys.readouterr().out
    same = tmp_path / "same.json"
    same.write_text(json.dumps(narrowed), encoding="utf-8")
    _, again = _verify_json(capsys, dated, *window, "--baseline", same)
    assert "window_then" not in again["baseline"] and again["baseline"]["resolved"] == 0


def test_a_window_that_holds_no_record_has_nothing_to_check(dated, capsys):
    # Every check ran over all of DATA: a window holding none of its records was "clean on
    # what was checked" (exit 0), and a daily CI gate passed on a day with no record at all.
    window = ["--since", "2040-01-01", "--until", "2040-01-02"]
    status, document = _verify_json(capsys, dated, *window, "--undated", "skip")
    assert status == 3 and document["state"] == "nothing to check"
    assert all(row["status"] == "not run" for row in document["summary"])
    assert sum(table["inside"] for table in document["window"]["tables"]) == 0
    # Its undated records kept (the default), the window checks them: the line that is not
    # JSON is an error there.
    status, document = _verify_json(capsys, dated, *window)
    assert status == 1 and document["summary"][0]["status"] == "findings"
    # ... and every value read is checked there, as without a window (a rejected input has
    # no time), so the checks over every value keep their count.
    _, whole = _verify_json(capsys, dated)
    for row, unwindowed in zip(document["summary"][:2], whole["summary"][:2], strict=True):
        assert row["check"] in ("rejected_rows", "record_keys")
        assert row["checked"] == unwindowed["checked"] > 0
    _, inside = _verify_json(capsys, dated, "--since", "2025-03-04", "--until", "2025-03-05")
    assert inside["state"] != "nothing to check"
