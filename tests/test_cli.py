"""The explicit-audit command: verify, summary, report; exit statuses."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import explicit_audit as ea
from explicit_audit.cli import main

ROOT = Path(__file__).parent.parent
SAMPLE = ROOT / "data"


@pytest.fixture
def dirty(clean) -> Path:
    receipt = make_receipt(scope="space", query="weekly plan", relevanceThreshold=None)
    receipt["exposedResults"][0].pop("score")  # enumeration never ranks
    lines = [json.dumps(make_receipt()), "{not json", json.dumps(receipt)]
    (clean / "more.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return clean


def test_entry_point_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["explicit-audit"] == "explicit_audit.cli:main"


def test_verify_clean_exits_0(clean, capsys):
    assert main(["verify", str(clean)]) == 0
    out = capsys.readouterr().out
    assert "clean" in out and "receipt_rules" in out


def test_verify_dirty_exits_1_and_names_file_and_line(dirty, capsys):
    assert main(["verify", str(dirty)]) == 1
    out = capsys.readouterr().out
    more = dirty / "more.jsonl"
    assert f"{more}:2: rejected_row: invalid JSON" in out
    assert f"{more}:3: space_query" in out
    assert "2 finding(s) in 2 of 12 checks" in out


def test_verify_text_lists_at_most_max_findings(dirty, capsys):
    (dirty / "worse.jsonl").write_text("[\n" * 1 + "{}\n{}\n{}\n", encoding="utf-8")
    assert main(["verify", str(dirty), "--max-findings", "1"]) == 1
    out = capsys.readouterr().out
    assert "more (--json lists all)" in out


def test_verify_json(dirty, capsys):
    assert main(["verify", str(dirty), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["clean"] is False
    assert document["data"] == str(dirty)
    checks = {row["check"]: row["findings"] for row in document["summary"]}
    assert checks["rejected_rows"] == 1 and checks["receipt_rules"] == 1
    assert sum(checks.values()) == len(document["findings"]) == 2
    found = {
        (Path(f["source_file"]).name, f["source_line"], f["check"]) for f in document["findings"]
    }
    assert found == {("more.jsonl", 2, "rejected_rows"), ("more.jsonl", 3, "receipt_rules")}
    files = {Path(f["source_file"]).name: f["sha256"] for f in document["provenance"]["files"]}
    for name, digest in files.items():
        assert digest == hashlib.sha256((dirty / name).read_bytes()).hexdigest()
    assert document["provenance"]["versions"]["explicit_audit"] == ea.__version__


def test_verify_json_clean(clean, capsys):
    # Receipts alone: no error, but seven checks had no record to look at, so not clean.
    assert main(["verify", str(clean), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["clean"] is False and document["findings"] == []
    assert document["state"] == "clean on what was checked"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["verify"],
        ["bogus", "data"],
        ["verify", "no/such/folder"],
        ["summary", "no/such/folder"],
        ["report", "data"],  # --out is required
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err


def test_unreadable_data_exits_2(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("nothing to load", encoding="utf-8")
    assert main(["verify", str(tmp_path)]) == 2
    assert "holds no file to load" in capsys.readouterr().err


def test_summary(dirty, capsys):
    assert main(["summary", str(dirty)]) == 0
    out = capsys.readouterr().out
    assert "receipts     3" in out
    assert "1 value(s) could not be loaded" in out


def test_sample_data_is_not_clean(capsys):
    assert main(["verify", str(SAMPLE), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    # Every check finds what the sample data plants; its records' keys are all as declared,
    # and the only values of a type their producer does not declare are the flat plans'.
    # Its records' times are all times of the past, and the runs it writes twice (replays)
    # are the same runs: notices.
    quiet = {"request_consistency", "record_keys", "record_duplicates", "record_times"}
    assert all(row["findings"] > 0 for row in document["summary"] if row["check"] not in quiet)
    notices = {row["check"]: row["notices"] for row in document["summary"] if row["check"] in quiet}
    assert notices == {
        "request_consistency": 0,
        "record_keys": 5,
        "record_duplicates": 4,
        "record_times": 0,
    }
    plan = "retrieval_plan."
    assert sorted((row["key"], row["note"], row["count"]) for row in document["keys"]) == [
        (plan + name, "undeclared_value", 1)
        for name in ("max_context_chars", "mt_engine", "mt_manifest_hash", "source_lang", "top_k")
    ]


def _notebook(*cells) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("# A question"),
        new_code_cell('DATA = "../data"', metadata={"tags": ["parameters"]}),
        new_code_cell("import explicit_audit as ea\naudit = ea.load(DATA, progress=False)"),
        *cells,
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def test_report_writes_one_page_per_notebook(clean, tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("audit.summary()")), notebooks / "b_rows.ipynb")
    nbformat.write(_notebook(new_code_cell("len(audit.files)")), notebooks / "a_files.ipynb")
    out = tmp_path / "reports"
    assert main(["report", str(clean), "--out", str(out), "--notebooks", str(notebooks)]) == 0
    pages = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert pages == [
        "a_files.html",
        "b_rows.html",
        "findings.csv",
        "findings.parquet",
        "index.html",
        "rejected.csv",
        "rejected.parquet",
    ]
    printed = capsys.readouterr().out
    assert f"wrote {out / 'index.html'}" in printed
    assert f"wrote {out / 'a_files.html'}" in printed and "2 report(s)" in printed
    assert "<td>receipts</td>" in (out / "b_rows.html").read_text(encoding="utf-8")


def test_report_failing_notebook_exits_1(clean, tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("raise RuntimeError('stop')")), notebooks / "x.ipynb")
    assert (
        main(["report", str(clean), "--out", str(tmp_path / "o"), "--notebooks", str(notebooks)])
        == 1
    )
    assert "x.ipynb" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["missing", "empty", "no_parameters", "not_json"])
def test_report_without_usable_notebooks_exits_2(clean, tmp_path, capsys, what):
    notebooks = tmp_path / "notebooks"
    if what != "missing":
        notebooks.mkdir()
    if what == "no_parameters":
        nbformat.write(new_notebook(cells=[new_code_cell("1")]), notebooks / "x.ipynb")
    if what == "not_json":
        (notebooks / "x.ipynb").write_text("not json\n", encoding="utf-8")
    assert (
        main(["report", str(clean), "--out", str(tmp_path / "o"), "--notebooks", str(notebooks)])
        == 2
    )
    err = capsys.readouterr().err
    assert err
    if what == "not_json":
        assert f"{notebooks / 'x.ipynb'}: not a notebook" in err


def test_command_line_exit_status(dirty):
    command = [sys.executable, "-m", "explicit_audit.cli", "verify", str(dirty)]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 1
    assert "receipt_rules" in finished.stdout


def test_report_into_a_file_exits_2(clean, tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("1")), notebooks / "x.ipynb")
    taken = tmp_path / "taken"
    taken.write_text("not a folder", encoding="utf-8")
    assert main(["report", str(clean), "--out", str(taken), "--notebooks", str(notebooks)]) == 2
    assert "taken" in capsys.readouterr().err


# Strict JSON and the exit status of input the kit cannot read --------------------------------


def _strict(text: str) -> dict:
    """Parse as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_verify_json_on_the_sample_data_is_strict_json(capsys):
    assert main(["verify", str(SAMPLE), "--json"]) == 1
    text = capsys.readouterr().out
    document = _strict(text)
    assert document["exit_status"] == 1
    # A finding without a record id has null there, never NaN.
    assert any(f["record"] is None for f in document["findings"])
    assert "NaN" not in text


def test_verify_json_strict_from_the_command_line():
    command = [sys.executable, "-m", "explicit_audit.cli", "verify", "data", "--json"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 1
    check = "import json,sys; json.load(sys.stdin, parse_constant=lambda c: 1/0)"
    parsed = subprocess.run(
        [sys.executable, "-c", check], input=finished.stdout, text=True, timeout=60
    )
    assert parsed.returncode == 0


def _dangling(folder: Path) -> Path:
    """A log file that cannot be opened: a link to a file that is gone."""
    link = folder / "gone.jsonl"
    link.symlink_to(folder / "rotated-away.jsonl")
    return link


@pytest.mark.parametrize("as_json", [False, True])
def test_a_file_that_cannot_be_opened_exits_2_in_both_modes(clean, capsys, as_json):
    link = _dangling(clean)
    argv = ["verify", str(clean), *(["--json"] if as_json else [])]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert f"{link}: the file cannot be read" in captured.err
    if as_json:
        document = _strict(captured.out)
        assert document["exit_status"] == 2 and document["clean"] is None
        assert document["error"]["file"] == str(link)
        assert document["error"]["type"] == "UnreadableFileError"
    else:
        assert captured.out == ""


@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize("as_json", [False, True])
def test_an_io_error_names_the_file(clean, capsys, as_json, engine):
    # Reading /proc/self/mem at offset 0 fails with EIO: a real I/O error, on the first read.
    victim = clean / "x.jsonl"
    victim.symlink_to("/proc/self/mem")
    argv = ["verify", str(clean), "--engine", engine, *(["--json"] if as_json else [])]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert f"{victim}: the file cannot be read (Input/output error)" in captured.err
    if as_json:
        assert _strict(captured.out)["error"]["file"] == str(victim)


@pytest.mark.parametrize(
    "argv",
    [
        ["verify", "no/such/folder", "--json"],
        ["verify", "--json"],
        ["verify", "data", "--json", "-x"],
    ],
)
def test_json_errors_are_one_json_document(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    document = _strict(captured.out)
    assert document["exit_status"] == 2 and document["error"]["message"]
    assert captured.err


def test_a_folder_with_nothing_to_load_is_a_json_error(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("nothing to load", encoding="utf-8")
    assert main(["verify", str(tmp_path), "--json"]) == 2
    document = _strict(capsys.readouterr().out)
    assert "holds no file to load" in document["error"]["message"]


@pytest.mark.parametrize("as_json", [False, True])
def test_content_that_was_read_but_does_not_parse_is_a_finding(clean, capsys, as_json):
    # A gzip stream cut short: the file was read; what it held is rejected, with its line.
    import gzip

    whole = gzip.compress(((json.dumps(make_receipt()) + "\n") * 50).encode())
    (clean / "cut.jsonl.gz").write_bytes(whole[: len(whole) // 2])
    assert main(["verify", str(clean), *(["--json"] if as_json else [])]) == 1
    out = capsys.readouterr().out
    if as_json:
        document = _strict(out)
        rejected = [f for f in document["findings"] if f["check"] == "rejected_rows"]
        assert rejected and all(f["source_file"].endswith("cut.jsonl.gz") for f in rejected)
    else:
        assert "cut.jsonl.gz" in out


def test_help_documents_the_exit_statuses(capsys):
    assert main(["verify", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 the input could not be read at all" in out
    assert "one strict JSON document" in out


def test_report_on_a_file_that_cannot_be_opened_exits_2(clean, tmp_path, capsys):
    link = _dangling(clean)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("1")), notebooks / "x.ipynb")
    out = tmp_path / "out"
    argv = ["report", str(clean), "--out", str(out), "--notebooks", str(notebooks)]
    assert main(argv) == 2
    assert f"{link}: the file cannot be read" in capsys.readouterr().err
    assert not any(out.glob("*.html"))


def test_summary_on_a_file_that_cannot_be_opened_exits_2(clean, capsys):
    link = _dangling(clean)
    assert main(["summary", str(clean)]) == 2
    assert f"{link}: the file cannot be read" in capsys.readouterr().err


def _verify(*args: str) -> tuple[int, str, dict | None]:
    command = [sys.executable, "-m", "explicit_audit.cli", "verify", *args]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    document = json.loads(finished.stdout) if "--json" in args else None
    return finished.returncode, finished.stdout, document


def test_verify_says_which_checks_were_not_run(clean):
    status, text, _ = _verify(str(clean))
    assert status == 0
    assert "clean on what was checked (3 of 12 checks run, no error; 9 not run" in text
    assert "plan_hashes        0 not run (no records)" in text
    status, _, document = _verify(str(clean), "--json")
    assert (status, document["exit_status"], document["state"]) == (
        0,
        0,
        "clean on what was checked",
    )
    statuses = {row["check"]: row["status"] for row in document["summary"]}
    assert statuses["receipt_rules"] == "clean" and statuses["plan_hashes"] == "not run"


def test_verify_on_data_with_no_record_is_nothing_to_check(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    status, text, _ = _verify(str(tmp_path))
    assert status == 3
    assert "nothing to check" in text.splitlines()[0]
    status, _, document = _verify(str(tmp_path), "--json")
    assert (status, document["exit_status"]) == (3, 3)
    assert (document["state"], document["clean"]) == ("nothing to check", False)


def test_verify_expect_fails_when_an_expected_kind_is_absent(clean):
    status, text, _ = _verify(str(clean), "--expect", "receipts,plans")
    assert status == 3
    assert "expected plans: none found" in text
    status, _, document = _verify(str(clean), "--expect", "receipts,plans", "--json")
    assert (status, document["missing"], document["expected"]) == (
        3,
        ["plans"],
        {"receipts": 1, "plans": 0},
    )
    assert _verify(str(clean), "--expect", "receipts")[0] == 0
    status, _, document = _verify(str(clean), "--expect", "reciepts", "--json")
    assert status == 2 and "reciepts" in document["error"]["message"]
    # A list that names nothing ("$KINDS" unset) asked for no gate, and exited 0.
    for empty in ("", ",", " , "):
        status, _, document = _verify(str(clean), "--expect", empty, "--json")
        assert status == 2 and "named" in document["error"]["message"], empty


def test_verify_expect_exits_1_when_there_are_findings_too(dirty):
    assert _verify(str(dirty), "--expect", "plans")[0] == 1


def test_report_exits_as_verify_does_on_the_same_data(dirty, tmp_path, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("len(audit.files)")), notebooks / "files.ipynb")
    argv = ["report", str(dirty), "--out", str(tmp_path / "out"), "--notebooks", str(notebooks)]
    assert main(argv) == 1 == _verify(str(dirty))[0]
    assert (tmp_path / "out" / "files.html").exists()  # the pages are written all the same
    # stderr says why, in verify's words.
    err = capsys.readouterr().err
    assert "explicit-audit report: exit 1, as verify exits on the same data: " in err
    assert "2 finding(s) in 2 of 12 checks" in err


def test_report_says_why_it_exits_3(tmp_path, capsys):
    data = _matrix_data(tmp_path, "empty")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("len(audit.files)")), notebooks / "files.ipynb")
    argv = ["report", str(data), "--out", str(tmp_path / "out"), "--notebooks", str(notebooks)]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "explicit-audit report: exit 3, as verify exits on the same data: nothing to check" in (
        err
    )


# Every command on clean, findings, empty and unreadable data: the docs' exit table ---------

_EXPECTED_STATUS = {
    # data:       verify, summary, report
    "clean": (0, 0, 0),
    "findings": (1, 0, 1),
    "empty": (3, 0, 3),
    "unreadable": (2, 2, 2),
}


def _matrix_data(tmp_path: Path, case: str) -> Path:
    folder = tmp_path / case
    folder.mkdir()
    if case == "clean":
        (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    elif case == "findings":
        body = json.dumps(make_receipt(scope="space", query="weekly plan")) + "\n{cut\n"
        (folder / "r.jsonl").write_text(body, encoding="utf-8")
    elif case == "empty":
        (folder / "r.jsonl").write_text("\n", encoding="utf-8")
    else:
        (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
        (folder / "x.jsonl").symlink_to("/proc/self/mem")  # EIO on the first read
    return folder


@pytest.mark.parametrize("case", list(_EXPECTED_STATUS))
def test_every_command_exits_as_the_readme_says(tmp_path, case):
    data = _matrix_data(tmp_path, case)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook(new_code_cell("len(audit.files)")), notebooks / "files.ipynb")
    commands = {
        "verify": ["verify", str(data)],
        "summary": ["summary", str(data)],
        "report": [
            "report",
            str(data),
            "--out",
            str(tmp_path / "out"),
            "--notebooks",
            str(notebooks),
        ],
    }
    statuses = []
    for name, argv in commands.items():
        done = subprocess.run(
            [sys.executable, "-m", "explicit_audit.cli", *argv],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert "Traceback" not in done.stderr, (name, done.stderr)
        statuses.append(done.returncode)
        if case == "unreadable":
            assert f"{data / 'x.jsonl'}: the file cannot be read (Input/output error)" in (
                done.stderr
            ), name
    assert tuple(statuses) == _EXPECTED_STATUS[case]
    if case in ("clean", "findings", "empty"):
        assert (tmp_path / "out" / "files.html").exists()
    else:
        assert not (tmp_path / "out" / "files.html").exists()
