"""The conventions users bring: ``python -m``, papermill's parameters, logging, ``--json``.

Every case runs the command (``main``, or a real process where the
interpreter's own behaviour is the point) on real files.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_receipt, parameters_notebook

import explicit_audit as ea
from explicit_audit.cli import main
from explicit_audit.cli._parameters import papermill_pairs, parameters_given, resolve_type
from explicit_audit.cli._parser import UsageError, parser

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data"
SCRIPT = Path(sys.executable).parent / "explicit-audit"


def _env(**changes: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXPLICIT_AUDIT_")}
    return {**env, "CI": "1", **changes}


def _run(*command: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, capture_output=True, text=True, cwd=ROOT, env=_env(**env), timeout=300
    )


# -- python -m explicit_audit ------------------------------------------------------------


def test_python_dash_m_is_the_command():
    by_module = _run(sys.executable, "-m", "explicit_audit", "verify", "data")
    by_script = _run(str(SCRIPT), "verify", "data")
    assert by_module.returncode == by_script.returncode == 1  # the sample holds findings
    assert by_module.stdout == by_script.stdout and by_module.stdout
    assert by_module.stderr == by_script.stderr


# -- report's parameters, as papermill takes them ----------------------------------------

#: papermill's typing of ``-p NAME VALUE`` (its ``_resolve_type``), as known answers.
PAPERMILL_TYPES = [
    ("True", True),
    ("False", False),
    ("None", None),
    ("12", 12),
    ("-3", -3),
    ("007", 7),
    ("0.7", 0.7),
    ("1e3", 1000.0),
    ("'quoted'", "'quoted'"),
    ("[1, 2]", "[1, 2]"),
    ("legal", "legal"),
    ("true", "true"),
]


@pytest.mark.parametrize(("text", "value"), PAPERMILL_TYPES, ids=[t for t, _ in PAPERMILL_TYPES])
def test_a_pair_value_is_typed_as_papermill_types_it(text, value):
    found = resolve_type(text)
    assert found == value and type(found) is type(value)


def _given(*arguments: str, out: str = "r") -> dict:
    argv = ["report", "data", "--out", out, *arguments]
    return parameters_given(parser().parse_args(papermill_pairs(argv)))


def test_both_forms_of_p_and_r_and_f_in_papermill_s_precedence(tmp_path):
    values = tmp_path / "params.yaml"
    values.write_text(
        "TOP_N: 5\nCUT: 0.5\nLABEL: from the file\nWHEN: 2025-03-04\nKEPT: [1, 2]\n",
        encoding="utf-8",
    )
    given = _given(
        "-r", "LABEL", "007",  # raw beats everything, wherever it stands
        "-p", "TOP_N", "12",
        "-f", str(values),
        "-p", "CUT=0.25",
        "-p", "NAME", "a b",
        "-p", "LABEL", "not this",
    )  # fmt: skip
    assert given == {
        "TOP_N": 12,
        "CUT": 0.25,
        "LABEL": "007",
        "WHEN": "2025-03-04",  # a date stays text, as papermill reads the file
        "KEPT": [1, 2],
        "NAME": "a b",
    }
    # The last -p of a name wins, whichever form it is written in.
    assert _given("-p", "TOP_N", "1", "-p", "TOP_N=2") == {"TOP_N": 2}
    assert _given("-p", "TOP_N=2", "-p", "TOP_N", "1") == {"TOP_N": 1}
    # NAME=VALUE keeps its Python literals; a pair keeps papermill's text.
    assert _given("-p", "LABEL='a b'") == {"LABEL": "a b"}
    assert _given("-p", "LABEL", "'a b'") == {"LABEL": "'a b'"}


def test_p_before_data_takes_two_values_and_leaves_data_its_place():
    args = parser().parse_args(
        papermill_pairs(["report", "-p", "TOP_N", "3", "data", "--out", "r"])
    )
    assert args.data == "data" and parameters_given(args) == {"TOP_N": 3}
    args = parser().parse_args(papermill_pairs(["report", "-p", "TOP_N=3", "data", "--out", "r"]))
    assert args.data == "data" and parameters_given(args) == {"TOP_N": 3}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("TOP_N: [1\n", "params.yaml, line 2: not valid YAML"),
        ("- 1\n- 2\n", "params.yaml: a parameters file is a mapping of NAME: VALUE, not a list"),
        ("top n: 1\n", "params.yaml: 'top n' is not a Python name"),
        ("A: &x [1]\nB: *x\n", "params.yaml: aliases (*name) are not read"),
        ("CUT: .nan\n", "CUT = nan: not a value a notebook can be given"),
    ],
)
def test_a_parameters_file_that_does_not_fit_exits_2_naming_it(tmp_path, capsys, text, says):
    values = tmp_path / "params.yaml"
    values.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["report", str(SAMPLE), "--out", str(out), "-f", str(values)]) == 2
    assert says in capsys.readouterr().err
    assert not out.exists()


def test_a_parameters_file_that_is_not_there_or_not_a_file_exits_2(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", str(SAMPLE), "--out", str(out), "-f", str(tmp_path / "no.yaml")]) == 2
    assert f"-f {tmp_path / 'no.yaml'}: cannot read the file" in capsys.readouterr().err
    assert main(["report", str(SAMPLE), "--out", str(out), "-f", str(tmp_path)]) == 2
    assert f"{tmp_path}: a folder, not a regular file" in capsys.readouterr().err


def test_a_pair_whose_name_is_not_a_python_name_is_a_usage_error():
    with pytest.raises(UsageError, match="NAME must be a Python name"):
        parser().parse_args(papermill_pairs(["report", "data", "--out", "r", "-p", "1x", "2"]))


def test_papermill_s_command_line_reaches_the_notebook(tmp_path, capsys):
    notebooks = parameters_notebook(tmp_path / "nb").parent
    values = tmp_path / "params.yaml"
    values.write_text("CUT: 0.25\nTOP_N: 9\n", encoding="utf-8")
    out = tmp_path / "out"
    argv = ["report", str(SAMPLE / "plans"), "--out", str(out), "--notebooks", str(notebooks)]
    # papermill input.ipynb output.ipynb -f params.yaml -p TOP_N 2 -r LABEL 007, as a report:
    status = main([*argv, "-f", str(values), "-p", "TOP_N", "2", "-r", "LABEL", "007", "-q"])
    assert status == main(["verify", str(SAMPLE / "plans")]) == 1
    page = (out / "top.html").read_text(encoding="utf-8")
    assert "top 2 at 0.25 for 007" in page  # LABEL the text 007, not the number 7


# -- logging, -q and -v ---------------------------------------------------------------------


def test_the_library_logs_and_configures_no_handler(clean, caplog):
    logger = logging.getLogger("explicit_audit")
    assert [type(h) for h in logger.handlers] == [logging.NullHandler]
    with caplog.at_level(logging.INFO, logger="explicit_audit"):
        ea.load(clean, progress=False)
    records = [(r.name, r.getMessage()) for r in caplog.records]
    size = (clean / "r.jsonl").stat().st_size
    assert records[0][0] == "explicit_audit.loading"
    assert records[0][1].startswith(f"read 1 file(s), {size:,} bytes, in ")
    assert records[1][0] == "explicit_audit.loading" and "receipts=1" in records[1][1]


def test_verbose_shows_the_kit_s_records_quiet_and_default_do_not(clean, capsys):
    assert main(["verify", str(clean), "-v"]) == 0
    err = capsys.readouterr().err
    assert "INFO explicit_audit.loading: read 1 file(s)" in err
    assert "built the tables" in err and "receipts=1" in err
    assert "DEBUG" not in err
    assert main(["verify", str(clean), "-vv"]) == 0
    assert "DEBUG explicit_audit.loading: building the receipts tables" in capsys.readouterr().err
    for quieter in ([], ["-q"]):
        assert main(["verify", str(clean), *quieter]) == 0
        assert capsys.readouterr().err == ""
    # The command's handler is gone once it returns: nothing accumulates, nothing leaks.
    assert [type(h) for h in logging.getLogger("explicit_audit").handlers] == [logging.NullHandler]


def test_quiet_hides_a_warning_but_never_why_a_command_failed(tmp_path, capsys):
    target = tmp_path / "copies"
    missing = str(tmp_path / "logs")
    assert main(["notebooks", str(target), "--data", missing]) == 0
    assert f"note: {missing} does not exist (yet)" in capsys.readouterr().err
    assert main(["notebooks", str(tmp_path / "more"), "--data", missing, "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["verify", str(tmp_path / "nothing"), "-q"]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_quiet_and_verbose_are_one_choice(capsys):
    assert main(["verify", "data", "-q", "-v"]) == 2
    lines = capsys.readouterr().err.splitlines()  # argparse's lines, as it wrote them
    assert lines[0].startswith("usage: explicit-audit verify [-h] [-q | -v]")
    assert lines[-1].endswith("argument -v/--verbose: not allowed with argument -q/--quiet")


# -- summary --json, --strict-keys -------------------------------------------------------


def _decision_with_a_typo(folder: Path) -> Path:
    lines = (SAMPLE / "decisions" / "2026-01_baseline.jsonl").read_text(encoding="utf-8")
    first, second = (json.loads(line) for line in lines.splitlines()[:2])
    second["inputs"]["confidance"] = second["inputs"].pop("confidence")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "dec.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    return path


def test_summary_json_holds_what_the_text_shows(tmp_path, capsys):
    folder = tmp_path / "logs"
    _decision_with_a_typo(folder)
    (folder / "notes.txt").write_text("not a log\n", encoding="utf-8")  # skipped, by its name
    assert main(["summary", str(folder), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    audit = ea.load(folder, progress=False).accounting()
    assert document["tables"] == dict(audit.summary().values.tolist())
    assert document["files"] == 1 and document["exit_status"] == 0
    by_file = {row["source_file"]: row for row in document["sources"]}
    assert by_file[str(folder / "dec.jsonl")]["skipped"] is None
    assert by_file[str(folder / "dec.jsonl")]["loaded"] == 2
    assert by_file[str(folder / "notes.txt")]["bytes"] is None
    assert by_file[str(folder / "notes.txt")]["skipped"]
    assert document["keys_not_as_declared"] == len(audit.keys) > 0
    # The text shows the same, with nothing printed as NaN.
    assert main(["summary", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "NaN" not in text and "<NA>" not in text and ": 1 file\n" in text
    assert by_file[str(folder / "notes.txt")]["skipped"] in text


def test_summary_strict_keys_exits_1_as_its_help_says(tmp_path, capsys):
    folder = tmp_path / "logs"
    path = _decision_with_a_typo(folder)
    assert "so exit 1" in " ".join(_help("summary", capsys).split())
    assert main(["summary", str(folder), "--strict-keys"]) == 1
    err = capsys.readouterr().err
    assert "1 record(s) rejected for a key their kind does not declare" in err
    assert main(["summary", str(folder), "--strict-keys", "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["exit_status"] == 1 and document["rejected_for_keys"] == 1
    assert main(["verify", str(folder), "--strict-keys"]) == 1  # as verify exits
    capsys.readouterr()
    # Without --strict-keys the record loads (an unknown_key notice): exit 0.
    assert main(["summary", str(folder)]) == 0
    path.write_text(path.read_text(encoding="utf-8").replace("confidance", "confidence"))
    assert main(["summary", str(folder), "--strict-keys"]) == 0


def test_summary_json_of_data_that_cannot_be_read_is_a_json_document(tmp_path, capsys):
    assert main(["summary", str(tmp_path / "missing"), "--json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["exit_status"] == 2
    assert "no such file or folder" in captured.err


def _help(command: str, capsys) -> str:
    assert main([command, "--help"]) == 0
    return capsys.readouterr().out


# -- the small things -----------------------------------------------------------------------


def test_report_help_tells_where_the_provenance_is_and_the_timeout_s_default(capsys):
    shown = " ".join(_help("report", capsys).split())
    assert "a provenance appendix at the end of each page" in shown
    assert "first" not in shown.split("provenance")[1][:40]
    assert "time a cell may run (default 300)" in shown


def test_print_of_an_audit_counts_its_files_in_words(clean, tmp_path):
    assert repr(ea.load(clean, progress=False)).startswith("Audit(1 file: receipts=1,")
    (clean / "s.jsonl").write_text(json.dumps(make_receipt()) + "\n", encoding="utf-8")
    assert repr(ea.load(clean, progress=False)).startswith("Audit(2 files: receipts=2,")


BLOCK_DASK = """
import importlib.abc, sys
class _NoDask(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, _NoDask())
"""


def test_a_missing_dask_extra_says_what_to_install(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(BLOCK_DASK, encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path)}
    done = _run(sys.executable, "-m", "explicit_audit", "verify", "data", "--engine", "dask", **env)
    assert done.returncode == 2, done.stderr
    assert "--engine dask needs the kit's 'dask' extra" in done.stderr
    assert "pip install 'explicit_audit[dask]'" in done.stderr
    assert "use_scheduler" not in done.stderr
    script = "import explicit_audit as ea\nwith ea.use_scheduler('threads'): pass\n"
    done = _run(sys.executable, "-c", script, **env)
    assert "pip install 'explicit_audit[dask]'" in done.stderr
    assert "use_scheduler needs" not in done.stderr
