"""The wheel is the product: built once, installed into fresh environments, used from elsewhere.

The wheel is built from a copy of the repository's files (no build isolation:
setuptools comes from this environment, so nothing is downloaded). Each
environment is a new ``python -m venv`` into which pip installs the wheel,
with or without an extra, resolving its declared requirements from a folder
of wheels and nothing else (``--no-index``). That folder is this
environment's own installed distributions written back into wheels
(tests/wheelhouse.py), kept in ``.venv/wheelhouse`` between runs. Every
command then runs from a temporary folder outside the repository, on a copy
of the bundled data.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from wheelhouse import wheelhouse

ROOT = Path(__file__).resolve().parent.parent
#: What a wheel is built from: the files setuptools reads.
SOURCES = (
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "explicit_audit",
    "notebooks",
    "docs",
    "jupyter-config",
    "jupyter-data",
)
PIP = (sys.executable, "-m", "pip")
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))


def _run(command: list[str], *, cwd: Path, env: dict | None = None, timeout: int = 600):
    return subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    built = _run(
        [*PIP, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        cwd=source,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = out.glob("explicit_audit-*.whl")
    return path


def _requirements(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(name).decode("utf-8"))
    wanted = []
    for requirement in meta.get_all("Requires-Dist") or []:
        text, _, marker = requirement.partition(";")
        if not marker or any(f'extra == "{e}"' in marker for e in ("report", "dask")):
            if not text.strip().startswith("explicit_audit"):
                wanted.append(text.strip())
    return wanted


@pytest.fixture(scope="module")
def wheels(wheel) -> Path:
    folder = Path(sys.prefix) / "wheelhouse"
    wheelhouse(_requirements(wheel), folder)
    return folder


@pytest.fixture(scope="module")
def install(wheel, wheels, tmp_path_factory):
    """``install(extras)``: a fresh environment with the wheel and those extras; its bin folder."""
    made: dict[str, Path] = {}

    def make(extras: str = "") -> Path:
        if extras in made:
            return made[extras]
        prefix = tmp_path_factory.mktemp(f"env-{extras or 'core'}")
        created = _run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], cwd=prefix)
        assert created.returncode == 0, created.stderr
        target = f"{wheel}[{extras}]" if extras else str(wheel)
        offline = ("-q", "--no-index", "--find-links", str(wheels), "--no-compile")
        installed = _run(
            [*PIP, "--python", str(prefix / "bin" / "python"), "install", *offline, target],
            cwd=prefix,
        )
        assert installed.returncode == 0, installed.stderr[-3000:]
        made[extras] = prefix / "bin"
        return made[extras]

    return make


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory) -> Path:
    """A folder outside the repository holding a copy of the bundled data."""
    folder = tmp_path_factory.mktemp("elsewhere")
    shutil.copytree(ROOT / "data", folder / "data")
    return folder


def _env(bin_folder: Path, home: Path) -> dict:
    return {
        "PATH": f"{bin_folder}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "VIRTUAL_ENV": str(bin_folder.parent),
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
    }


def _in(bin_folder: Path, folder: Path, *command: str, timeout: int = 600):
    return _run(list(command), cwd=folder, env=_env(bin_folder, folder), timeout=timeout)


def _installed(bin_folder: Path, folder: Path) -> set[str]:
    code = "import importlib.metadata as m\nfor d in m.distributions(): print(d.metadata['Name'])"
    listed = _in(bin_folder, folder, "python", "-c", code)
    return {name.lower().replace("_", "-") for name in listed.stdout.split()}


@pytest.fixture(scope="module")
def expected(elsewhere) -> dict:
    """``verify --json`` of the copied data, by this environment's kit."""
    run = _run(
        [sys.executable, "-m", "explicit_audit.cli", "verify", "data", "--json"], cwd=elsewhere
    )
    assert run.returncode == 1, run.stderr
    return json.loads(run.stdout)


def test_the_wheel_holds_the_notebooks_the_formats_the_template_and_the_licence(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for notebook in NOTEBOOKS:
        assert f"explicit_audit/notebooks/{notebook}" in names
    assert "explicit_audit/docs/formats.md" in names
    assert "explicit_audit/report/templates/page.html.j2" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    # The Jupyter server extension that keeps a saved panel's twin, enabled on install.
    config = ".data/data/etc/jupyter/jupyter_server_config.d/explicit_audit.json"
    assert any(name.endswith(config) for name in names)
    # The kit's Voila template, where Voila looks for templates (<prefix>/share/jupyter).
    for part in ("conf.json", "index.html.j2"):
        template = f".data/data/share/jupyter/voila/templates/explicit_audit/{part}"
        assert any(name.endswith(template) for name in names), part
    tracked = {
        f"explicit_audit/{path.relative_to(ROOT / 'explicit_audit').as_posix()}"
        for path in (ROOT / "explicit_audit").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert tracked <= names


def test_the_core_verifies_and_loads_from_elsewhere_without_jupyter(install, elsewhere, expected):
    core = install("")
    installed = _installed(core, elsewhere)
    assert "explicit-audit" in installed or "explicit-audit".replace("-", "_") in installed
    for heavy in ("matplotlib", "ipykernel", "nbconvert", "ipywidgets", "jupyterlab", "dask"):
        assert heavy not in installed, heavy

    run = _in(core, elsewhere, "explicit-audit", "verify", "data", "--json")
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["findings"] == expected["findings"]

    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "audit = ea.load('data', progress=False)\n"
        "print(len(audit.receipts), len(audit.rejected))\n"
        "from explicit_audit.report.bundled import formats_document\n"
        "print(formats_document().read_text(encoding='utf-8').splitlines()[0])\n"
    )
    run = _in(core, elsewhere, "python", "-c", code)
    assert run.returncode == 0, run.stderr
    counts, title = run.stdout.splitlines()
    assert counts == f"2789 {expected['summary'][0]['findings']}"
    assert title.startswith("# ")

    run = _in(core, elsewhere, "explicit-audit", "verify", "data", "--format", "sarif")
    assert run.returncode == 1 and json.loads(run.stdout)["version"] == "2.1.0"


def test_the_core_copies_the_notebooks(install, elsewhere):
    core = install("")
    run = _in(core, elsewhere, "explicit-audit", "notebooks", "mine", "--data", "data")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (elsewhere / "mine").glob("*.ipynb")) == NOTEBOOKS
    assert "DATA = '../data'" in (elsewhere / "mine" / NOTEBOOKS[0]).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (["explicit-audit", "report", "data", "--out", "reports"], "report"),
        (["explicit-audit", "verify", "data", "--engine", "dask"], "dask"),
        (["python", "-c", "import explicit_audit.plots"], "report"),
        (["python", "-c", "import explicit_audit as ea; ea.load('data', engine='dask')"], "dask"),
    ],
)
def test_without_an_extra_the_hint_names_its_install(install, elsewhere, command, extra):
    run = _in(install(""), elsewhere, *command)
    assert run.returncode in (1, 2)
    assert run.stderr.strip().splitlines()[-1].endswith(f"pip install 'explicit_audit[{extra}]'")


def test_report_writes_the_pages_from_elsewhere(install, elsewhere):
    report = install("report")
    run = _in(
        report,
        elsewhere,
        *("explicit-audit", "report", "data", "--out", "reports", "--exit-zero"),
        timeout=900,
    )
    # The bundled data holds findings on purpose: --exit-zero renders it with exit 0.
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    assert "verify would exit 1" in run.stdout
    for notebook in NOTEBOOKS:
        page = (elsewhere / "reports" / notebook.replace(".ipynb", ".html")).read_text("utf-8")
        assert 'class="ea-header"' in page and "Traceback" not in page
    assert "dask" not in _installed(report, elsewhere)
    run = _in(report, elsewhere, "explicit-audit", "verify", "data", "--engine", "dask")
    assert run.returncode == 2
    assert run.stderr.strip().endswith("pip install 'explicit_audit[dask]'")


def test_the_dask_engine_from_its_extra_gives_the_same_findings(install, elsewhere, expected):
    lazy = install("dask")
    assert "matplotlib" not in _installed(lazy, elsewhere)
    run = _in(
        lazy,
        elsewhere,
        "explicit-audit",
        "verify",
        "data",
        "--json",
        "--engine",
        "dask",
        "--scheduler",
        "synchronous",
    )
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["findings"] == expected["findings"]
    run = _in(lazy, elsewhere, "explicit-audit", "report", "data", "--out", "reports")
    assert run.returncode == 2
    assert run.stderr.strip().endswith("pip install 'explicit_audit[report]'")
