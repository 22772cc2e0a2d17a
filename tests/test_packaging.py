"""What the distribution holds and declares; the extras and their hints; notebooks and -p.

The wheel itself, installed into fresh environments, is tested in
tests/test_wheel.py; these are the quick checks of the same promises.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
from conftest import parameters_notebook

from explicit_audit._core.extras import EXTRAS
from explicit_audit.cli import main
from explicit_audit.report import bundled
from explicit_audit.report.writer import execute_notebook

ROOT = Path(__file__).parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PROJECT["tool"]["setuptools"]


# --- the distribution's declaration ----------------------------------------------------------


def test_every_package_of_the_tree_is_listed_and_the_bundled_folders_are_mapped():
    package = ROOT / "explicit_audit"
    found = {
        ".".join(("explicit_audit", *path.relative_to(package).parts))
        for path in [package, *package.rglob("*")]
        if path.is_dir() and path.name != "__pycache__" and any(path.iterdir())
    }
    found = {name.removesuffix(".") for name in found}
    mapped = set(SETUPTOOLS["package-dir"])
    assert set(SETUPTOOLS["packages"]) == found | mapped
    assert SETUPTOOLS["package-dir"] == {
        "explicit_audit.notebooks": "notebooks",
        "explicit_audit.docs": "docs",
    }


def test_every_data_file_of_the_package_is_declared():
    data = PROJECT["tool"]["setuptools"]["package-data"]
    package = ROOT / "explicit_audit"
    for path in package.rglob("*"):
        if path.is_dir() or path.suffix in (".py", ".pyc"):
            continue
        owner = ".".join(("explicit_audit", *path.parent.relative_to(package).parts))
        patterns = data.get(owner.removesuffix("."), [])
        assert any(path.match(pattern) for pattern in patterns), path


def test_licence_classifiers_and_python():
    project = PROJECT["project"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.11" in classifiers
    # A licence expression (PEP 639) replaces the licence classifiers.
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert project["requires-python"] == ">=3.11"


def _names(requirements: list[str]) -> set[str]:
    return {
        requirement.split(";")[0].split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip()
        for requirement in requirements
    }


def test_the_core_installs_without_jupyter_matplotlib_or_dask():
    core = {name.lower() for name in _names(PROJECT["project"]["dependencies"])}
    for heavy in ("matplotlib", "ipywidgets", "nbconvert", "ipykernel", "jupyterlab", "dask"):
        assert heavy not in core
    extras = PROJECT["project"]["optional-dependencies"]
    assert {"report", "notebooks", "dask"} <= set(extras)
    for extra, modules in EXTRAS.items():
        declared = {name.lower().replace("_", "-") for name in _names(extras[extra])}
        if extra == "notebooks":
            declared |= {n.lower() for n in _names(extras["report"])}
        for module in modules:
            assert module.split(".")[0].replace("_", "-") in declared, (extra, module)


def test_the_dask_engine_is_bounded_above():
    for requirement in PROJECT["project"]["optional-dependencies"]["dask"]:
        assert "<" in requirement, requirement


def test_the_bundled_files_are_the_repository_s_own():
    assert bundled.notebooks_folder() == ROOT / "notebooks"
    assert bundled.formats_document() == ROOT / "docs" / "formats.md"


# --- missing extras: one line naming the pip install ---------------------------------------


def _without(modules: list[str], code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a Python where ``modules`` cannot be imported, from a folder of its own."""
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in modules)
    return subprocess.run(
        [sys.executable, "-c", f"import sys\n{blocked}{code}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


@pytest.mark.parametrize(
    ("blocked", "code", "extra"),
    [
        (["matplotlib"], "import explicit_audit.plots", "report"),
        (["ipywidgets"], "from explicit_audit import widgets", "report"),
        (["nbconvert"], "from explicit_audit.report import write_reports", "report"),
        (["dask"], "import explicit_audit as ea; ea.load('data/plans', engine='dask')", "dask"),
        (["distributed"], "import explicit_audit as ea; ea.use_scheduler('threads')", "dask"),
    ],
)
def test_a_missing_extra_is_one_line_naming_the_install(blocked, code, extra):
    finished = _without(blocked, code)
    assert finished.returncode == 1
    last = finished.stderr.strip().splitlines()[-1]
    assert last.startswith("explicit_audit.errors.MissingExtraError: ")
    assert last.endswith(f"pip install 'explicit_audit[{extra}]'")


def test_the_command_says_which_extra_a_report_needs():
    code = "from explicit_audit.cli import main; sys.exit(main(['report', 'data', '--out', 'x']))"
    finished = _without(["nbclient", "nbconvert", "nbformat"], code)
    assert finished.returncode == 2
    assert finished.stderr.strip().endswith("pip install 'explicit_audit[report]'")
    assert len(finished.stderr.strip().splitlines()) == 1


def test_loading_and_verifying_import_nothing_of_jupyter_plots_or_dask():
    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "ea.verify_all(ea.load('data', progress=False))\n"
        "from explicit_audit.cli import main\n"
        "heavy = ('matplotlib', 'ipywidgets', 'nbformat', 'nbconvert', 'nbclient', 'ipykernel',"
        " 'jupyter_client', 'bleach', 'jinja2', 'dask', 'distributed')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    finished = _without([], code)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "[]"


# --- explicit-audit notebooks DIR ----------------------------------------------------------


def test_notebooks_are_copied_with_outputs_cleared_and_data_rewritten(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["notebooks", "work/notebooks", "--data", "logs"]) == 0
    copied = sorted((tmp_path / "work" / "notebooks").glob("*.ipynb"))
    assert [p.name for p in copied] == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    for path in copied:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
        assert "widgets" not in notebook.metadata
        (cell,) = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
        assert cell.source.startswith("DATA = '../../logs'\n# ")
        assert 'ENGINE = "pandas"' in cell.source  # the rest of the cell as it was


def test_notebooks_without_data_keep_their_default_and_never_overwrite(tmp_path, capsys):
    target = tmp_path / "mine"
    assert main(["notebooks", str(target)]) == 0
    first = (target / "plan_hashes.ipynb").read_text(encoding="utf-8")
    assert 'DATA = \\"../data\\"' in first
    (target / "plan_hashes.ipynb").write_text("my own work", encoding="utf-8")
    assert main(["notebooks", str(target), "--data", "/srv/logs"]) == 2
    assert "already there; pass --force" in capsys.readouterr().err
    assert (target / "plan_hashes.ipynb").read_text(encoding="utf-8") == "my own work"
    assert main(["notebooks", str(target), "--data", "s3://bucket/logs/", "--force"]) == 0
    assert "DATA = 's3://bucket/logs/'" in (target / "plan_hashes.ipynb").read_text("utf-8")


def test_a_copied_notebook_runs_on_the_data_it_was_given(tmp_path):
    data = tmp_path / "audit" / "logs"
    for kind in ("plans", "requests"):
        shutil.copytree(ROOT / "data" / kind, data / kind)
    assert main(["notebooks", str(tmp_path / "audit" / "notebooks"), "--data", str(data)]) == 0
    folder = tmp_path / "audit" / "notebooks"
    executed = execute_notebook(folder / "plan_hashes.ipynb", cwd=folder, timeout=300)
    shown = json.dumps([cell.get("outputs", []) for cell in executed.cells])
    assert "replay_log.json" in shown and "Traceback" not in shown


# --- report -p NAME=VALUE ----------------------------------------------------------------


def test_report_parameters_reach_the_notebook(tmp_path, capsys):
    notebooks = parameters_notebook(tmp_path / "nb").parent
    out = tmp_path / "out"
    data = str(ROOT / "data" / "plans")
    argv = ["report", data, "--out", str(out), "--notebooks", str(notebooks)]
    # The bundled plans hold a tampered hash: report exits 1, as verify does.
    assert main(["verify", data]) == 1
    assert main([*argv, "-p", "TOP_N=2", "-p", "CUT=1", "-p", "LABEL=legal"]) == 1
    page = (out / "top.html").read_text(encoding="utf-8")
    assert "top 2 at 1 for legal" in page


def test_report_exit_zero_renders_data_with_findings(tmp_path, capsys):
    notebooks = parameters_notebook(tmp_path / "nb").parent
    data = tmp_path / "plans.jsonl"
    data.write_bytes((ROOT / "data" / "plans" / "arborist_runs.jsonl").read_bytes())
    argv = ["report", str(data), "--out", str(tmp_path / "out"), "--notebooks", str(notebooks)]
    assert main(argv) == main(["verify", str(data)]) == 1
    capsys.readouterr()
    assert main([*argv, "--exit-zero"]) == 0
    assert "verify would exit 1" in capsys.readouterr().out
    # Unreadable input is still exit 2, and nothing to check still 3.
    assert main([*argv[:1], str(tmp_path / "missing.jsonl"), *argv[2:], "--exit-zero"]) == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert main([*argv[:1], str(empty), *argv[2:], "--exit-zero"]) == main(["verify", str(empty)])


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("WIDTH=3", "no notebook declares it in its parameters cell; the notebooks declare"),
        ("DATA=elsewhere", "the data path is the report's DATA argument"),
        ("ENGINE=dask", "use --engine"),
        ("TOP_N=many", "top.ipynb declares it as int (TOP_N = 5), not str"),
        ("CUT=True", "declares it as float"),
        ("TOP N=1", "write NAME=VALUE"),
    ],
)
def test_report_parameters_that_do_not_fit_exit_2_before_anything_runs(
    tmp_path, capsys, given, says
):
    notebooks = parameters_notebook(tmp_path / "nb").parent
    argv = ["report", str(ROOT / "data" / "plans"), "--out", str(tmp_path / "out")]
    assert main([*argv, "--notebooks", str(notebooks), "-p", given]) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_report_runs_the_kit_s_own_notebooks_from_any_folder(tmp_path, monkeypatch, capsys):
    """Without --notebooks the bundled notebooks are read, whatever the working folder holds."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notebooks").mkdir()  # a folder of the user's own, not to be run
    parameters_notebook(tmp_path / "notebooks")
    data = str(ROOT / "data" / "plans")
    assert main(["report", data, "--out", "out", "-p", "NOPE=1"]) == 2
    err = capsys.readouterr().err
    assert "the notebooks declare" in err and "TOP_N" not in err and "DATA" not in err


def test_pandas_older_than_3_is_refused_at_import_with_one_clear_message(tmp_path):
    fake = tmp_path / "pandas"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "2.2.3"\n', encoding="utf-8")
    finished = subprocess.run(
        [sys.executable, "-c", "import explicit_audit"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert finished.returncode == 1
    last = finished.stderr.strip().splitlines()[-1]
    assert last == (
        "ImportError: explicit_audit needs pandas 3.0 or newer; this environment has pandas "
        "2.2.3: pip install 'pandas>=3,<4' (or use an environment of its own)"
    )
