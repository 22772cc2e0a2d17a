"""The notebooks and the reports on the Dask engine say what they say on the pandas engine.

A notebook run with ``ENGINE = "dask"`` shows, cell by cell, the outputs
committed for the pandas engine; ``explicit-audit report --engine dask`` on a
real cluster writes the pages the pandas engine writes, but for the
parameters injected.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from explicit_audit.cli import main
from explicit_audit.report.writer import ReportError, execute_notebook, write_reports

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
IGNORE_OUTPUT = "nbval-ignore-output"


def _shown(cell) -> list:
    """What a cell shows as nbval compares it: streams joined, text and HTML data, errors."""
    shown: list = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            if shown and shown[-1][0] == "stream" and shown[-1][1] == output.name:
                shown[-1] = ("stream", output.name, shown[-1][2] + output.text)
            else:
                shown.append(("stream", output.name, output.text))
        elif output.output_type == "error":
            shown.append(("error", output.ename, output.evalue))
        elif "data" in output:
            data = output.data
            shown.append(("data", data.get("text/plain"), data.get("text/html")))
    return shown


def test_a_notebook_on_dask_shows_the_committed_outputs():
    """Every compared cell of the plan notebook, the tables read anew at every pass."""
    committed = nbformat.read(NOTEBOOKS / "plan_hashes.ipynb", as_version=4)
    executed = execute_notebook(
        NOTEBOOKS / "plan_hashes.ipynb",
        cwd=NOTEBOOKS,
        parameters={"ENGINE": "dask", "SCHEDULER": "synchronous", "PERSIST": False},
    )
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "ENGINE = 'dask'" in injected[0].source
    executed.cells.remove(injected[0])
    compared = 0
    for mine, theirs in zip(executed.cells, committed.cells, strict=True):
        assert mine.source == theirs.source
        if mine.cell_type != "code" or IGNORE_OUTPUT in mine.metadata.get("tags", []):
            continue
        assert _shown(mine) == _shown(theirs), mine.source
        compared += bool(_shown(theirs))
    assert compared >= 10


#: The notebook reported on both engines: the one whose views (flips, spans) reach furthest.
#: The plan notebook runs on Dask above; the view receipts are computed on the cluster in
#: ``test_dask_views``.
REPORTED = ("routing_sweep.ipynb",)

#: The lines the injected parameters cell adds to a page run on Dask.
_INJECTED = re.compile(
    r'^<span class="n">(ENGINE|SCHEDULER|PERSIST)</span> <span class="o">=</span> '
    r"""<span class="(s1|kc)">('dask'|'tcp://[0-9.:]+'|True)</span>$"""
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory, cluster):
    """The bundled decisions reported with the pandas engine, and on the cluster with Dask."""
    root = tmp_path_factory.mktemp("reports")
    for kind in ("decisions", "policies"):  # what the routing notebook reads
        shutil.copytree(ROOT / "data" / kind, root / "data" / kind)
    notebooks = root / "notebooks"
    notebooks.mkdir()
    for name in REPORTED:
        shutil.copy(NOTEBOOKS / name, notebooks / name)
    pandas_pages = write_reports(root / "data", root / "pandas", notebooks)
    address = cluster.scheduler.address
    before = set(
        cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    )
    status = main(
        [
            "report", str(root / "data"), "--out", str(root / "dask"),
            "--notebooks", str(notebooks), "--engine", "dask",
            "--scheduler", address, "--persist",
        ]
    )  # fmt: skip
    after = set(cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))
    return pandas_pages, root / "dask", status, after - before


def _written_by(line: str) -> bool:
    """The header's line naming what wrote the page: the command, or a call from Python."""
    return line.startswith("<div><dt>Written by</dt>")


def test_reports_on_a_cluster_are_the_pandas_pages(reports):
    pandas_pages, dask_folder, status, _ = reports
    assert status == 1  # as verify exits on the bundled data: it plants findings
    taken_away = ["findings.csv", "findings.parquet", "rejected.csv", "rejected.parquet"]
    names = [".explicit-audit-pages.json", "index.html", *taken_away]
    names = sorted(names + [p.name for p in pandas_pages])
    assert sorted(p.name for p in dask_folder.iterdir()) == names
    pandas_folder = pandas_pages[0].parent
    for name in taken_away:  # the findings and rejected rows, byte for byte
        assert (dask_folder / name).read_bytes() == (pandas_folder / name).read_bytes(), name
    # The index too: the same verdict, period and tiles on either engine; only what wrote
    # it differs (the command line, or a call from Python).
    index = (pandas_folder / "index.html").read_text().splitlines()
    lines = (dask_folder / "index.html").read_text().splitlines()
    assert sum(map(_written_by, lines)) == 1
    assert [line for line in lines if not _written_by(line)] == [
        line for line in index if not _written_by(line)
    ]
    for page in pandas_pages:
        expected = [line for line in page.read_text().splitlines() if not _written_by(line)]
        lines = (dask_folder / page.name).read_text().splitlines()
        injected = [line for line in lines if _INJECTED.match(line)]
        assert len(injected) == 3, page.name
        kept = [line for line in lines if not _INJECTED.match(line) and not _written_by(line)]
        assert kept == expected, page.name


def test_the_notebook_computed_on_the_cluster(reports):
    """What only the notebook computes on Dask (the flips between variants) ran on the workers."""
    *_, prefixes = reports
    # Task names drop a function's leading underscore: _flips runs as "flips".
    assert "flips" in prefixes, sorted(prefixes)


def test_a_notebook_without_an_engine_parameter_is_refused_on_dask(tmp_path):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell('DATA = "data"', metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("print(DATA)"),
        ]
    )
    nbformat.write(notebook, tmp_path / "own.ipynb")
    with pytest.raises(ReportError, match=r"own\.ipynb: its parameters cell sets no ENGINE"):
        write_reports(ROOT / "data" / "plans", tmp_path / "out", tmp_path, engine="dask")
    with pytest.raises(ReportError, match="engine must be one of"):
        write_reports(ROOT / "data" / "plans", tmp_path / "out", tmp_path, engine="spark")
