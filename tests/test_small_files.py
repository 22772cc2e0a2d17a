"""Files read whole besides the logs (a baseline, policies, notebooks) go through one bounded
reader: a FIFO, a device, a deep nesting or an oversized file is exit 2 with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_notebook

from explicit_audit.errors import AuditError, PolicyError
from explicit_audit.small_files import (
    UnfitFileError,
    read_small_bytes,
    read_small_json,
    read_small_text,
)

DATA = Path(__file__).resolve().parents[1] / "data"

# The command line, run in a process of its own; a cap can be set small for a test.
CLI = """
import sys
from explicit_audit import small_files
for item in sys.argv[1].split(","):
    if item:
        name, _, size = item.partition("=")
        small_files.MAX_SMALL_FILE_BYTES[name] = int(size)
small_files.NOTEBOOK_BOUNDS["max_bytes"] = small_files.MAX_SMALL_FILE_BYTES["notebook"]
from explicit_audit.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _run(*argv: str, caps: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CLI, caps, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def logs(tmp_path) -> Path:
    """One clean receipt, and a policy beside it (a file read whole)."""
    folder = tmp_path / "logs"
    (folder / "policies").mkdir(parents=True)
    policy = (DATA / "policies" / "baseline.yaml").read_bytes()
    (folder / "policies" / "policy.yaml").write_bytes(policy)
    (folder / "r.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "previous.json"
    os.mkfifo(path)
    return path


@pytest.fixture
def deep(tmp_path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    return path


@pytest.fixture
def previous(logs, tmp_path) -> Path:
    done = _run("verify", str(logs), "--json")
    assert done.returncode == 0, done.stderr
    path = tmp_path / "previous-run.json"
    path.write_text(done.stdout, encoding="utf-8")
    return path


def test_a_fifo_baseline_is_exit_2_not_a_hang(logs, fifo):
    done = _run("verify", str(logs), "--baseline", str(fifo))
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert str(fifo) in line and "a FIFO, not a regular file" in line


def test_a_device_baseline_is_exit_2_without_reading_it(logs):
    done = _run("verify", str(logs), "--baseline", "/dev/zero")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "/dev/zero" in line and "a character device, not a regular file" in line


def test_a_deeply_nested_baseline_is_exit_2_not_a_recursion_error(logs, deep):
    done = _run("verify", str(logs), "--baseline", str(deep), "--json")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert str(deep) in line and "nested 100000 levels deep" in line
    assert json.loads(done.stdout)["error"]["file"] == str(deep)


def test_an_oversized_baseline_is_exit_2_from_its_size(logs, previous):
    size = previous.stat().st_size
    done = _run("verify", str(logs), "--baseline", str(previous), caps=f"baseline={size - 1}")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert str(previous) in line and f"{size} bytes, more than the {size - 1}" in line
    # The same file under a cap it fits: read, and compared.
    done = _run("verify", str(logs), "--baseline", str(previous), caps=f"baseline={size}")
    assert done.returncode == 0, done.stderr


def test_an_oversized_policy_in_a_folder_is_a_rejected_row_naming_it(logs):
    done = _run("verify", str(logs), "--json", caps="policy=100")
    assert done.returncode == 1, done.stderr
    rows = [f for f in json.loads(done.stdout)["findings"] if f["check"] == "rejected_rows"]
    assert any("policy.yaml" in str(row) and "more than the 100 bytes" in str(row) for row in rows)


def test_a_policy_path_that_is_a_fifo_is_a_policy_error(tmp_path):
    from explicit_audit.decisions._policy_yaml import read_policy_yaml

    path = tmp_path / "policy.yaml"
    os.mkfifo(path)
    with pytest.raises(PolicyError, match="a FIFO, not a regular file"):
        read_policy_yaml(path)


def _notebooks(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    return folder


def test_a_deeply_nested_notebook_is_exit_2_naming_it(logs, tmp_path):
    pytest.importorskip("nbconvert")
    folder = _notebooks(tmp_path)
    (folder / "deep.ipynb").write_text('{"cells": ' + "[" * 100_000, encoding="utf-8")
    done = _run("report", str(logs), "--out", str(tmp_path / "out"), "--notebooks", str(folder))
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "deep.ipynb" in line and "nested 100001 levels deep" in line


def test_an_oversized_or_fifo_notebook_is_exit_2_naming_it(logs, tmp_path):
    pytest.importorskip("nbconvert")
    folder = _notebooks(tmp_path)
    notebook = new_notebook(cells=[new_code_cell("x = 1")])
    path = folder / "one.ipynb"
    nbformat.write(notebook, path)
    out = str(tmp_path / "out")
    done = _run("report", str(logs), "--out", out, "--notebooks", str(folder), caps="notebook=64")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "one.ipynb" in line and "more than the 64 bytes" in line
    path.unlink()
    os.mkfifo(path)
    done = _run("report", str(logs), "--out", out, "--notebooks", str(folder))
    assert done.returncode == 2
    assert "a FIFO, not a regular file" in _one_line(done.stderr)


def test_the_reader_refuses_what_is_not_a_small_regular_file(tmp_path, fifo):
    for path in (fifo, Path("/dev/null"), tmp_path):
        with pytest.raises(UnfitFileError, match="not a regular file") as raised:
            read_small_bytes(path, max_bytes=10)
        assert isinstance(raised.value, AuditError) and isinstance(raised.value, OSError)
    path = tmp_path / "ten.txt"
    path.write_bytes(b"0123456789")
    assert read_small_bytes(path, max_bytes=10) == b"0123456789"
    with pytest.raises(UnfitFileError, match="10 bytes, more than the 9 bytes"):
        read_small_bytes(path, max_bytes=9)
    path.write_bytes(b"\xff")
    with pytest.raises(UnfitFileError, match="not UTF-8 text"):
        read_small_text(path, max_bytes=10)
    with pytest.raises(FileNotFoundError):
        read_small_bytes(tmp_path / "missing", max_bytes=10)


def test_json_nesting_is_checked_before_parsing(tmp_path):
    path = tmp_path / "value.json"
    path.write_text('{"a": [[["[[[[[["]]]}', encoding="utf-8")  # brackets in a string: not depth
    assert read_small_json(path, max_bytes=100, max_depth=4) == {"a": [[["[[[[[["]]]}
    with pytest.raises(UnfitFileError, match="nested 4 levels deep, deeper than the 3"):
        read_small_json(path, max_bytes=100, max_depth=3)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        read_small_json(path, max_bytes=100)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ('{"findings": [],\n "findings": [{"check": "c"}]}', 2, "the key `findings` is repeated"),
        ('{"findings": [{"check": "c",\n  "check": "d"}]}', 2, "`findings[0].check` is repeated"),
        ('{"findings": [], "a": 1,\n "\\u0061": 2}', 2, "the key `a` is repeated"),  # one name
        ('{"findings": [],\n "data": NaN}', 2, "`data` is NaN, which is not JSON"),
        ('{"findings": [\n-Infinity]}', 2, "`findings[0]` is -Infinity, which is not JSON"),
    ],
)
def test_json_that_readers_read_apart_is_refused_naming_its_line_and_key(
    tmp_path, text, line, says
):
    # Python's json reads each of these (the last repeated value, NaN); another reader keeps
    # the first value, or refuses the text.
    path = tmp_path / "previous.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(json.JSONDecodeError) as raised:
        read_small_json(path, max_bytes=4096)
    assert raised.value.lineno == line and says in raised.value.msg, raised.value
    assert "I-JSON, RFC 7493" in raised.value.msg


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # a pair of surrogates: one character
        ('{"a": "\\\\ud800"}', {"a": "\\ud800"}),  # an escaped backslash, then text
        ('{"a": "x\\udc00"}', {"a": "x\udc00"}),  # a lone surrogate: the logs keep it too
        ('{"NaN": "Infinity", "b": [{}, [], {"a": 1}], "a": {"a": 2}}',
         {"NaN": "Infinity", "b": [{}, [], {"a": 1}], "a": {"a": 2}}),  # one key per object
        ("[1e400, -0, 12345678901234567890123]", [float("inf"), 0, 12345678901234567890123]),
    ],
)  # fmt: skip
def test_json_every_reader_reads_alike_loads(tmp_path, text, value):
    path = tmp_path / "value.json"
    path.write_text(text, encoding="utf-8")
    assert read_small_json(path, max_bytes=4096) == value


def test_a_baseline_that_repeats_a_key_is_exit_2_naming_its_line(logs, tmp_path):
    baseline = tmp_path / "previous.json"
    baseline.write_text('{"findings": [],\n "findings": [{"check": "c"}]}', encoding="utf-8")
    done = _run("verify", str(logs), "--baseline", str(baseline))
    assert done.returncode == 2
    said = _one_line(done.stderr)
    assert str(baseline) in said and "the key `findings` is repeated" in said, said
    assert "line 2" in said or f"{baseline}:2" in said, said


def test_a_fifo_in_place_of_a_report_folders_manifest_is_not_read(tmp_path):
    from explicit_audit.report._files import MANIFEST

    out = tmp_path / "reports"
    out.mkdir()
    os.mkfifo(out / MANIFEST)
    code = (
        "import sys; from pathlib import Path\n"
        "from explicit_audit.report._files import remove_stale_reports\n"
        "print(remove_stale_reports(Path(sys.argv[1]), []))"
    )
    # In a process of its own: opening the FIFO to read it would wait for a writer forever.
    done = subprocess.run(
        [sys.executable, "-c", code, str(out)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
    assert (out / MANIFEST).is_file()  # the run's manifest is written in its place
