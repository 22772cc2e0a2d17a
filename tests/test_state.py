"""Incremental audits with ``ea.load(source, state=DIR)``, on real files on disk.

A run from a state reads only the bytes appended since the last and gives
the tables and findings a whole load of the same bytes gives; an edit of the
bytes audited before (a changed line, a file cut short, replaced or gone) is
a finding naming the file and the first line changed, and a rotation a notice.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explicit_audit as ea
from explicit_audit._cache_seal import SECRET_ENV, TamperedCacheWarning
from explicit_audit.state import load as state_load

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {
    "decisions.jsonl": ("data/decisions/2026-01_baseline.jsonl", 40),
    "receipts.jsonl": ("data/receipts/recall_cli.jsonl", 40),  # holds rejected lines
    "operator.jsonl": ("data/receipts/operator_receipts.jsonl", 30),
}


@pytest.fixture(autouse=True)
def secret(tmp_path_factory, monkeypatch) -> None:
    """The state's secret, kept outside the state folder (never the user's own)."""
    monkeypatch.setenv(SECRET_ENV, str(tmp_path_factory.mktemp("config") / "secret"))


@pytest.fixture(scope="module")
def full_lines() -> dict[str, list[bytes]]:
    """Each log's lines: the first lines of a bundled file."""
    found = {}
    for name, (source, count) in SOURCES.items():
        found[name] = (ROOT / source).read_bytes().splitlines(keepends=True)[:count]
    return found


def _write(
    folder: Path, lines: dict[str, list[bytes]], counts: dict[str, int], *, in_bytes: bool = False
) -> None:
    """Each log's first ``counts[name]`` lines (or bytes, which may end inside a line),
    appended to what it holds."""
    (folder / "policies").mkdir(parents=True, exist_ok=True)
    for policy in (ROOT / "data/policies").iterdir():
        target = folder / "policies" / policy.name
        if not target.exists():
            target.write_bytes(policy.read_bytes())
    for name, all_lines in lines.items():
        path = folder / name
        have = path.read_bytes() if path.exists() else b""
        whole = b"".join(all_lines)
        wanted = whole[: counts[name]] if in_bytes else b"".join(all_lines[: counts[name]])
        assert wanted.startswith(have)
        with open(path, "ab") as out:  # appended, as a logger does
            out.write(wanted[len(have) :])


def _load(folder: Path, state: Path | None = None, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(
            folder, progress=False, **options, **({} if state is None else {"state": state})
        )


def _findings(audit: ea.Audit) -> pd.DataFrame:
    found = ea.verify_all(audit).findings
    found = found[found["check"] != "audited_bytes"].reset_index(drop=True)
    return found.astype({"check": "str", "rule": "str", "kind": "str"})


def _assert_same(audit: ea.Audit, whole: ea.Audit) -> None:
    assert list(audit.tables) == list(whole.tables)
    for name, table in whole.tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], table, obj=name)
    for part in ("rejected", "sources", "keys"):
        pd.testing.assert_frame_equal(getattr(audit, part), getattr(whole, part), obj=part)
    assert audit.files == whole.files
    pd.testing.assert_frame_equal(_findings(audit), _findings(whole))


def _changes(audit: ea.Audit) -> list[tuple[str, str, int]]:
    changes = audit.changes
    return [
        (str(r.rule), Path(str(r.source_file)).name, int(r.source_line))
        for r in changes.itertuples(index=False)
    ]


def test_a_run_from_a_state_reads_the_appended_bytes_and_equals_a_whole_load(tmp_path, full_lines):
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: len(lines) // 2 for name, lines in full_lines.items()})
    first = _load(logs, state)
    assert _changes(first) == []
    # Nothing was audited before the first run: the check has nothing to compare, not clean.
    summary = ea.verify_all(first).summary().set_index("check")
    assert summary.loc["audited_bytes", ["checked", "status"]].tolist() == [0, "not run"]
    audited_lines = sum(path.read_bytes().count(b"\n") for path in logs.rglob("*.*"))
    _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
    again = _load(logs, state)
    assert _changes(again) == []
    _assert_same(again, _load(logs))
    # The appended records carry their own lines in the file.
    decisions = again.decisions
    assert decisions["source_line"].tolist() == list(
        range(1, len(full_lines["decisions.jsonl"]) + 1)
    )
    summary = ea.verify_all(again).summary().set_index("check")
    assert summary.loc["audited_bytes", ["checked", "status"]].tolist() == [audited_lines, "clean"]


def test_a_run_says_what_it_read_on_and_what_it_read_whole(tmp_path, full_lines, caplog):
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: 3 for name in full_lines})
    caplog.set_level("INFO", logger="explicit_audit.state")
    _load(logs, state)
    assert "no rows to read on from: every file read whole" in caplog.text
    _write(logs, full_lines, {name: 4 for name in full_lines})
    caplog.clear()
    _load(logs, state)
    on = f"{len(full_lines)} file(s) read on from where their audit ended"
    assert on in caplog.text and f"the rows of {3 * len(full_lines)} line(s) kept" in caplog.text


def test_times_are_judged_as_of_the_verification_not_of_an_earlier_run(tmp_path, full_lines):
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: len(lines) // 2 for name, lines in full_lines.items()})
    _load(logs, state)
    _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
    again, whole = _load(logs, state), _load(logs)
    for moment in ({"now": "2021-01-01"}, {"earliest": "2030-01-01"}, {}):
        found, expected = (
            ea.verify_all(audit, **moment).findings.astype({"check": "str", "rule": "str"})
            for audit in (again, whole)
        )
        times = found[found["check"] == "record_times"].reset_index(drop=True)
        pd.testing.assert_frame_equal(
            times, expected[expected["check"] == "record_times"].reset_index(drop=True)
        )
        # The records' times (2025, 2026) are after 2021 and before 2030: found only then.
        assert (len(times) > 0) == bool(moment)


def test_a_key_beside_the_records_that_new_records_lack_stays_a_column(tmp_path, full_lines):
    logs, state = tmp_path / "logs", tmp_path / "state"
    lines = list(full_lines["decisions.jsonl"])
    lines[:5] = [line.replace(b"{", b'{"shard": "eu-1", ', 1) for line in lines[:5]]
    _write(logs, {"decisions.jsonl": lines}, {"decisions.jsonl": 10})
    _load(logs, state)
    _write(logs, {"decisions.jsonl": lines}, {"decisions.jsonl": len(lines)})
    again = _load(logs, state)
    assert again.decisions["shard"].notna().sum() == 5
    _assert_same(again, _load(logs))


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.tuples(*[st.floats(0, 1)] * len(SOURCES)), min_size=1, max_size=2))
def test_any_sequence_of_runs_gives_the_tables_and_findings_of_a_whole_load(full_lines, steps):
    # Split points in bytes: a run may find a last line the logger has not finished.
    sizes = {name: len(b"".join(lines)) for name, lines in full_lines.items()}
    with tempfile.TemporaryDirectory() as folder:
        logs, state = Path(folder) / "logs", Path(folder) / "state"
        counts = dict.fromkeys(full_lines, 0)
        for step in steps:
            for name, share in zip(full_lines, step, strict=True):
                counts[name] = max(counts[name], round(share * sizes[name]))
            _write(logs, full_lines, counts, in_bytes=True)
            _load(logs, state)
        _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
        final = _load(logs, state)
        assert _changes(final) == []
        _assert_same(final, _load(logs))


def test_each_run_writes_the_rows_it_read_and_a_long_chain_is_compacted(
    tmp_path, full_lines, monkeypatch
):
    monkeypatch.setattr(state_load, "MAX_ENTRIES", 3)  # a short chain, for a short test
    logs, state = tmp_path / "logs", tmp_path / "state"
    lines = {"decisions.jsonl": full_lines["decisions.jsonl"]}
    counts = []
    for count in range(2, 12, 2):
        _write(logs, lines, {"decisions.jsonl": count})
        audit = _load(logs, state)
        counts.append(len([p for p in state.iterdir() if p.is_dir() and p.name[0] != "."]))
    assert counts == [1, 2, 3, 1, 2]
    assert _changes(audit) == []
    _assert_same(audit, _load(logs))


def test_a_file_past_max_file_bytes_is_bounded_at_every_run(tmp_path, full_lines):
    # The bound's rejection (a row of line 0) was left out of the rows kept for the next
    # run, and lines appended were read on past the bound.
    logs, state = tmp_path / "logs", tmp_path / "state"
    counts = {name: 3 for name in full_lines}
    _write(logs, full_lines, counts)
    path = logs / "decisions.jsonl"
    bound = {"limits": {"max_file_bytes": path.stat().st_size + 100}}
    _load(logs, state, **bound)  # under the bound
    for lines in (4, 5):  # past it
        _write(logs, full_lines, {**counts, "decisions.jsonl": lines})
        for _ in range(2):  # appended, then unchanged
            audit = _load(logs, state, **bound)
            _assert_same(audit, _load(logs, **bound))
            at_file = audit.rejected[audit.rejected["source_file"] == str(path)]
            assert 0 in at_file["source_line"].tolist()
            assert len(audit.decisions) == 3


@pytest.fixture
def audited(tmp_path, full_lines):
    """Logs audited once into a state."""
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
    _load(logs, state)
    return logs, state


def test_a_changed_line_is_a_finding_naming_the_line_and_its_records(audited, full_lines):
    logs, state = audited
    path = logs / "decisions.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[6] = lines[6].replace(b'"d-', b'"d-EDITED-', 1)
    path.write_bytes(b"".join(lines))  # the same inode, rewritten in place
    audit = _load(logs, state)
    assert _changes(audit) == [("audited_bytes_changed", "decisions.jsonl", 7)]
    detail = str(audit.changes["detail"].iloc[0])
    assert "held decisions row" in detail and "now holds decisions row" in detail
    assert "d-EDITED-" in detail
    _assert_same(audit, _load(logs))  # the tables are those of the bytes as they are
    result = ea.verify_all(audit)
    assert not result.clean
    assert result.summary().set_index("check").loc["audited_bytes", "findings"] == 1


def test_a_file_cut_short_is_a_finding(audited):
    logs, state = audited
    path = logs / "operator.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    with open(path, "r+b") as handle:
        handle.truncate(len(b"".join(lines[:10])))
    audit = _load(logs, state)
    assert _changes(audit) == [("audited_file_shrank", "operator.jsonl", 11)]
    _assert_same(audit, _load(logs))


def test_a_replaced_file_and_a_gone_file_are_findings(audited):
    logs, state = audited
    replaced = logs / "receipts.jsonl"
    other = logs / "new-receipts.tmp"
    other.write_bytes(b"\n" + replaced.read_bytes())  # the bytes moved down by a line
    os.replace(other, replaced)  # another inode under the name, as an editor saves
    (logs / "operator.jsonl").unlink()
    audit = _load(logs, state)
    assert sorted(_changes(audit)) == [
        ("audited_file_missing", "operator.jsonl", 0),
        ("audited_file_replaced", "receipts.jsonl", 1),
    ]
    _assert_same(audit, _load(logs))


def test_a_rotated_log_is_recognised_by_its_content(audited, full_lines):
    logs, state = audited
    os.rename(logs / "decisions.jsonl", logs / "decisions.jsonl.1")
    (logs / "decisions.jsonl").write_bytes(b"".join(full_lines["decisions.jsonl"][:3]))
    with open(logs / "decisions.jsonl.1", "ab") as out:  # written on before the rotation
        out.write(full_lines["operator.jsonl"][0])
    audit = _load(logs, state)
    assert _changes(audit) == [("log_rotated", "decisions.jsonl.1", 0)]
    _assert_same(audit, _load(logs))
    result = ea.verify_all(audit)
    state_findings = result.findings[result.findings["check"] == "audited_bytes"]
    assert state_findings["severity"].tolist() == ["notice"]
    assert _changes(_load(logs, state)) == []  # and the next run starts from there


@pytest.mark.parametrize("first", [b"", b'{"decision_id": "no line end yet"'])
def test_a_file_with_no_byte_audited_is_no_edit_when_rotated_or_gone(tmp_path, full_lines, first):
    # Nothing of it was audited (empty, or its one line not ended): nothing can have changed.
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: 3 for name in full_lines})
    (logs / "app.jsonl").write_bytes(first)
    _load(logs, state)
    os.rename(logs / "app.jsonl", logs / "app.jsonl.1")  # rotated: a new file under the name
    (logs / "app.jsonl").write_bytes(b"")
    audit = _load(logs, state)
    assert _changes(audit) == []
    _assert_same(audit, _load(logs))
    (logs / "app.jsonl.1").unlink()
    (logs / "app.jsonl").unlink()
    assert _changes(_load(logs, state)) == []


def test_the_same_files_named_otherwise_are_no_rotation(audited, tmp_path):
    # DATA given another way (a link, an absolute path): the very files, not rotated ones.
    logs, state = audited
    other = tmp_path / "same-logs"
    other.symlink_to(logs)
    audit = _load(other, state)
    assert _changes(audit) == []
    _assert_same(audit, _load(other))


def test_the_dask_engine_finds_the_same_edits_at_the_client(audited):
    logs, state = audited
    path = logs / "decisions.jsonl"
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(path.read_bytes().replace(b'"d-01-0001"', b'"d-01-9991"', 1))
    os.rename(logs / "operator.jsonl", logs / "operator.jsonl.1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(logs, engine="dask", state=state)
    assert audit.lazy
    assert sorted(_changes(audit)) == [
        ("audited_bytes_changed", "decisions.jsonl", 1),
        ("log_rotated", "operator.jsonl.1", 0),
    ]
    found = ea.verify_all(audit).findings
    edits = found[found["check"] == "audited_bytes"]
    assert edits["rule"].astype("str").tolist() == ["audited_bytes_changed", "log_rotated"]
    # The state it wrote holds no rows: a pandas run from it reads whole, finds no edit.
    again = _load(logs, state)
    assert _changes(again) == []
    _assert_same(again, _load(logs))


def test_a_tampered_state_is_dropped_with_a_warning_and_never_used(audited):
    logs, state = audited
    document = json.loads((state / "state.json").read_text())
    document["value"]["files"][0]["sha256"] = "0" * 64
    (state / "state.json").write_text(json.dumps(document))
    with pytest.warns(TamperedCacheWarning, match="state.json"):
        audit = _load(logs, state)
    assert _changes(audit) == []
    _assert_same(audit, _load(logs))
    entry = next(p for p in state.iterdir() if p.is_dir() and not p.name.startswith("."))
    table = next(entry.glob("decisions.arrow"))
    table.write_bytes(table.read_bytes()[:-8] + b"\0" * 8)
    with pytest.warns(TamperedCacheWarning, match="does not match its seal"):
        _assert_same(_load(logs, state), _load(logs))
    # An entry gone from the folder: the rows read on from the state's end are not used.
    _load(logs, state)
    path = logs / "decisions.jsonl"
    data = path.read_bytes()
    path.write_bytes(data + data.splitlines(keepends=True)[0])
    for entry in (p for p in state.iterdir() if p.is_dir() and not p.name.startswith(".")):
        shutil.rmtree(entry)
    with pytest.warns(TamperedCacheWarning, match="which is missing"):
        audit = _load(logs, state)
    assert _changes(audit) == []
    _assert_same(audit, _load(logs))


def test_a_state_file_removed_is_said_not_taken_for_a_first_run(audited):
    # Removing state.json was the quiet way to hide an edit: read as a first run, unsaid.
    logs, state = audited
    path = logs / "operator.jsonl"
    path.write_bytes(path.read_bytes().replace(b"{", b"{ ", 1))
    (state / "state.json").unlink()
    with pytest.warns(
        TamperedCacheWarning, match=r"state.json is missing, though the folder holds"
    ):
        audit = _load(logs, state)
    _assert_same(audit, _load(logs))


def test_the_command_line_reports_an_edit_in_json_and_sarif(audited):
    logs, state = audited
    path = logs / "operator.jsonl"
    path.write_bytes(path.read_bytes().replace(b"{", b"{ ", 1))
    command = [
        sys.executable,
        "-m",
        "explicit_audit.cli",
        "verify",
        str(logs),
        "--state",
        str(state),
    ]
    done = subprocess.run([*command, "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    found = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "audited_bytes"]
    assert [(f["rule"], f["source_line"]) for f in found] == [("audited_bytes_changed", 1)]
    done = subprocess.run([*command, "--format", "sarif"], capture_output=True, text=True)
    sarif = json.loads(done.stdout)
    rules = {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "audited_bytes_changed" in rules


@pytest.mark.parametrize("undated", ["skip", "check"])
def test_a_window_keeps_an_edit_it_would_lose(audited, capsys, undated):
    # The edit is about a file, not a record: "--undated skip" left it out, and the run
    # still counted it reported, so that no later run said it either.
    from explicit_audit.cli import main

    logs, state = audited
    path = logs / "operator.jsonl"
    path.write_bytes(path.read_bytes().replace(b"{", b"{ ", 1))
    window = ["--since", "2000-01-01", "--undated", undated]
    assert main(["verify", str(logs), "--state", str(state), "--json", *window]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    edits = [(f["rule"], f["source_line"]) for f in found if f["check"] == "audited_bytes"]
    assert edits == [("audited_bytes_changed", 1)]


def test_junit_skips_the_state_check_of_a_first_run_saying_why(tmp_path, full_lines):
    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: 5 for name in full_lines})
    command = [sys.executable, "-m", "explicit_audit.cli", "verify", str(logs)]
    command += ["--state", str(state), "--format", "junit"]
    first = subprocess.run(command, capture_output=True, text=True)
    again = subprocess.run(command, capture_output=True, text=True)
    for done in (first, again):
        assert done.returncode in (0, 1), done.stderr

    def suite(xml: str) -> str:
        return xml.split('<testsuite name="audited_bytes"', 1)[1].split("</testsuite>", 1)[0]

    assert 'skipped="1"' in suite(first.stdout)
    assert "the audit state holds no earlier audit of DATA's files" in suite(first.stdout)
    assert 'skipped="0"' in suite(again.stdout)
    assert "<skipped" not in suite(again.stdout)


def test_rows_made_by_other_code_of_the_kit_are_read_again_not_reused(
    tmp_path, full_lines, monkeypatch
):
    from explicit_audit import _version
    from explicit_audit._core import registry
    from explicit_audit.reading.limits import Limits
    from explicit_audit.state import store

    logs, state = tmp_path / "logs", tmp_path / "state"
    _write(logs, full_lines, {name: len(lines) // 2 for name, lines in full_lines.items()})
    settings = type("Settings", (), {"limits": Limits(), "strict_keys": False})()
    asked = state_load._asked(settings)
    assert asked["kinds"] == [kind.name for kind in registry.kinds()]
    # A kit whose modules differed, of the same version, wrote this state.
    with monkeypatch.context() as earlier:
        earlier.setattr(_version, "_kit_digest", lambda: "0" * 64)
        _load(logs, state)
        assert store.read_state(state, state_load._asked(settings)).entries is not None
    kept = store.read_state(state, asked)
    assert kept.entries is None and kept.kept  # its rows unused, its files still compared
    _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
    again = _load(logs, state)
    assert _changes(again) == []
    _assert_same(again, _load(logs))
    assert store.read_state(state, asked).entries is not None


def test_a_log_without_a_line_end_is_compared_not_skipped(tmp_path):
    logs, state = tmp_path / "logs", tmp_path / "state"
    logs.mkdir()
    lines = (ROOT / "data/plans/arborist_runs.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines[:3]]
    path = logs / "plans.json"
    path.write_text(json.dumps(records))  # as json.dump writes it: no line end
    _load(logs, state)
    summary = ea.verify_all(_load(logs, state)).summary().set_index("check")
    assert summary.loc["audited_bytes", ["checked", "status"]].tolist() == [1, "clean"]
    path.write_text(json.dumps([*records[:2], records[1]]))
    summary = ea.verify_all(_load(logs, state)).summary().set_index("check")
    assert summary.loc["audited_bytes", "status"] == "findings"


def test_a_state_json_that_is_a_folder_is_dropped_and_read_again(audited, full_lines):
    logs, state = audited
    (state / "state.json").unlink()
    (state / "state.json").mkdir()
    with pytest.warns(TamperedCacheWarning, match="state.json"):
        again = _load(logs, state)
    _assert_same(again, _load(logs))
    assert (state / "state.json").is_file()  # written anew


@pytest.mark.parametrize("option", ["state", "cache"])
def test_a_state_or_cache_that_names_a_file_is_refused_naming_it(tmp_path, full_lines, option):
    logs = tmp_path / "logs"
    _write(logs, full_lines, {name: 3 for name in full_lines})
    notes = tmp_path / "notes.txt"
    notes.write_text("not a folder\n", encoding="utf-8")
    for folder in (notes, notes / "sub"):
        with pytest.raises(ea.AuditError, match=rf"{option}=.*notes\.txt is not a folder"):
            ea.load(logs, progress=False, **{option: folder})


def test_an_older_copy_of_the_state_put_back_is_told_not_trusted(tmp_path, full_lines):
    logs, state, saved = tmp_path / "logs", tmp_path / "state", tmp_path / "saved"
    half = {name: len(lines) // 2 for name, lines in full_lines.items()}
    _write(logs, full_lines, half)
    _load(logs, state)
    shutil.copytree(state, saved)  # run 1, copied aside
    _write(logs, full_lines, {name: len(lines) for name, lines in full_lines.items()})
    _load(logs, state)  # run 2 audits every line
    shutil.rmtree(state)
    shutil.copytree(saved, state)  # run 1 put back: its signature holds
    with pytest.warns(TamperedCacheWarning, match="run 1 .* run 2 was seen here since"):
        again = _load(logs, state)
    assert again.audited_before == 0  # read as a first run, and said so
    _assert_same(again, _load(logs))


def test_runs_written_by_another_host_are_no_older_copy(tmp_path, full_lines, monkeypatch):
    # Two hosts share the state folder and its secret; each records the runs it sees beside
    # its own copy of the secret. Neither takes the other's later runs for a copy put back.
    from explicit_audit._cache_seal import secret_path

    logs, state, saved = tmp_path / "logs", tmp_path / "state", tmp_path / "saved"
    _write(logs, full_lines, {name: 5 for name in full_lines})
    _load(logs, state)  # host A writes run 1
    shutil.copytree(state, saved)
    host_b = tmp_path / "host-b" / "secret"
    host_b.parent.mkdir()
    shutil.copy2(secret_path(), host_b)
    host_a = os.environ[SECRET_ENV]
    for count in (10, 15):
        monkeypatch.setenv(SECRET_ENV, str(host_b))
        _write(logs, full_lines, {name: count for name in full_lines})
        _load(logs, state)  # host B writes runs 2 and 3
    monkeypatch.setenv(SECRET_ENV, host_a)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TamperedCacheWarning)
        kept = _load(logs, state)  # host A reads run 3: no warning
    assert kept.audited_before > 0
    shutil.rmtree(state)
    shutil.copytree(saved, state)  # run 1 put back: host A has seen run 4 since
    with pytest.warns(TamperedCacheWarning, match="run 1 .* run 4 was seen here since"):
        _load(logs, state)
