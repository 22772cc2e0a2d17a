"""Reports: parameters, execution, static outputs, the HTML page, provenance; nbval set-up."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import explicit_audit as ea
from explicit_audit.report._html import clean_html
from explicit_audit.report.provenance import LIBRARIES, file_sha256, hash_dialects, provenance
from explicit_audit.report.writer import (
    NotebookError,
    ReportError,
    data_parameter,
    execute_notebook,
    inject_parameters,
    notebook_html,
    static_outputs,
    write_reports,
)

ROOT = Path(__file__).parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALERT = "<script>alert(1)</script>"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _notebook(parameters: str = 'DATA = "../data"', *cells) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [
        new_markdown_cell("# Small report\n\nWhat this answers."),
        new_code_cell(parameters, metadata={"tags": ["parameters"]}),
        *cells,
    ]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def _data(root: Path) -> Path:
    """Two receipts, one of them with a query that is markup, and one broken line."""
    folder = root / "records"
    folder.mkdir(parents=True)
    lines = [
        json.dumps(make_receipt()),
        json.dumps(make_receipt(query=ALERT)),
        '{"schemaVersion": 0, "query": "' + ALERT + '", ',
    ]
    (folder / "receipts.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


# Parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ('DATA = "../data"', "DATA"),
        ('where = "../data"  # the data', "where"),
        ('TITLE = "x"\ndata_path: str = "../data"\nLIMIT = 5', "data_path"),
    ],
)
def test_data_parameter(source, name):
    assert data_parameter(_notebook(source)) == name


@pytest.mark.parametrize(
    ("notebook", "message"),
    [
        (new_notebook(cells=[new_code_cell('DATA = "x"')]), "no cell tagged 'parameters'"),
        (_notebook('TITLE = "x"\nLIMIT = 5'), "name the data path"),
        (_notebook("DATA = "), "not valid Python"),
    ],
)
def test_data_parameter_refuses(notebook, message):
    with pytest.raises(ReportError, match=message):
        data_parameter(notebook)


def test_inject_parameters_after_the_parameters_cell_once():
    nb = _notebook('DATA = "../data"', new_code_cell("print(DATA)"))
    odd = 'it\'s "quoted"\\data'
    inject_parameters(nb, {"DATA": "first"})
    inject_parameters(nb, {"DATA": odd})
    tags = [cell.metadata.get("tags", []) for cell in nb.cells]
    assert tags[1] == ["parameters"] and tags[2] == ["injected-parameters"]
    assert sum("injected-parameters" in t for t in tags) == 1
    namespace: dict = {}
    exec(nb.cells[2].source, namespace)
    assert namespace["DATA"] == odd
    nbformat.validate(nb)


# Static outputs and HTML cleaning ----------------------------------------------------------


def test_static_outputs_drop_widgets_and_javascript():
    widget = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    cell = new_code_cell("panel")
    cell.outputs = [
        new_output("display_data", {WIDGET_VIEW: widget, "text/plain": "IntSlider(value=3)"}),
        new_output("display_data", {WIDGET_VIEW: widget, "text/html": "<b>static</b>"}),
        new_output("display_data", {"application/javascript": "alert(1)"}),
        new_output("display_data", {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}),
        new_output("stream", name="stdout", text="3\n"),
    ]
    nb = _notebook("DATA = 'x'", cell)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}
    static_outputs(nb)
    kept = nb.cells[2].outputs
    assert [sorted(o.get("data", {"stream": 1})) for o in kept] == [
        ["text/html"],
        ["image/png", "text/plain"],
        ["stream"],
    ]
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize(
    ("markup", "kept", "gone"),
    [
        (f"<table><tr><th>q</th><td>{ALERT}</td></tr></table>", "<th>q</th>", "<script>"),
        ('<img src="x" onerror="alert(1)">', "<img", "onerror"),
        ('<a href="javascript:alert(1)">x</a>', "<a>x</a>", "javascript:"),
        ('<style scoped>.x {color: red}</style><div class="x">t</div>', "<style", "<iframe"),
        ('<iframe src="https://example.org"></iframe>', "&lt;iframe", "<iframe"),
    ],
)
def test_clean_html(markup, kept, gone):
    cleaned = clean_html(markup)
    assert kept in cleaned
    assert gone not in cleaned


# Provenance --------------------------------------------------------------------------------


def test_provenance(tmp_path):
    data = _data(tmp_path)
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(data, progress=False)
    facts = provenance(audit, data)
    path = data / "receipts.jsonl"
    assert facts.files["sha256"].tolist() == [hashlib.sha256(path.read_bytes()).hexdigest()]
    assert facts.files["bytes"].tolist() == [path.stat().st_size]
    assert facts.files[["values_read", "loaded", "rejected"]].iloc[0].tolist() == [3, 2, 1]
    assert dict(zip(facts.tables["table"], facts.tables["rows"], strict=True))["receipts"] == 2
    assert facts.rejected["source_line"].tolist() == [3]
    assert list(facts.versions) == [*LIBRARIES, "python"]
    assert facts.versions["pandas"] == __import__("pandas").__version__
    used = dict(zip(hash_dialects()["dialect"], hash_dialects()["used_for"], strict=True))
    assert set(used) == set(ea.DIALECTS)
    # Each recorded hash is named with the dialect that actually rebuilds it.
    plan = {"retrieval_keywords": "서울", "top_k": 1, "over_fetch": 1, "max_context_chars": 1,
            "shard_ids": []}  # fmt: skip
    plan_dialect = next(d for d, u in used.items() if u == "retrieval_plan_hash")
    assert ea.canonical_hash(plan, plan_dialect) == ea.plan_hash(plan)
    request_dialect = next(d for d, u in used.items() if u == "request_sha256")
    assert ea.canonical_hash({"q": "é"}, request_dialect) == ea.request_hash({"q": "é"})
    assert json.loads(json.dumps(facts.to_dict()))["files"][0]["sha256"] == file_sha256(path)


# Execution and the page --------------------------------------------------------------------


SMALL_CELLS = [
    new_code_cell(
        "import warnings\nimport matplotlib.pyplot as plt\nimport ipywidgets\n"
        "from IPython.display import Markdown, display\nimport explicit_audit as ea\n"
        "audit = ea.load(DATA, progress=False)"
    ),
    new_code_cell('audit.receipts[["query", "withheld_count"]]'),
    new_code_cell("display(Markdown(f\"Last query: {audit.receipts['query'].iloc[-1]}\"))"),
    new_code_cell("fig, ax = plt.subplots()\nax.bar(['a', 'b'], [1, 2])\nplt.show()"),
    new_code_cell("ipywidgets.IntSlider(value=len(audit.receipts))"),
]


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    """A small notebook reported twice on the same data, and the executed notebook."""
    root = tmp_path_factory.mktemp("report")
    data = _data(root)
    notebooks = root / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook('DATA = "nowhere"', *SMALL_CELLS), notebooks / "small.ipynb")
    executed = execute_notebook(notebooks / "small.ipynb", data)
    pages = []
    for run in ("one", "two"):
        (written,) = write_reports(data, root / run, notebooks)
        pages.append(written.read_text(encoding="utf-8"))
    return {"data": data, "executed": executed, "pages": pages, "notebook": notebooks}


def test_execution_runs_on_the_given_data(small_report):
    executed = small_report["executed"]
    assert executed.cells[2].metadata["tags"] == ["injected-parameters"]
    table = executed.cells[4].outputs[0]["data"]["text/plain"]
    assert "beacon status" in table and "alert(1)" in table
    slider = executed.cells[7].outputs[0]["data"]
    assert WIDGET_VIEW in slider and "IntSlider(value=2" in slider["text/plain"]


def test_page_is_self_contained_and_static(small_report):
    page = small_report["pages"][0]
    assert "<script" not in page.lower()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page)
    assert WIDGET_VIEW not in page and "IntSlider(value=" not in page


def test_page_hides_code_and_embeds_tables_and_plots(small_report):
    page = small_report["pages"][0]
    code_cells = sum(c.cell_type == "code" for c in small_report["executed"].cells)
    assert page.count('<details class="ea-code">') == code_cells
    assert "<th>withheld_count</th>" in page
    images = re.findall(r'<img[^>]*src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == 1
    assert base64.b64decode(images[0]).startswith(PNG_SIGNATURE)


def test_page_shows_markup_in_data_as_text(small_report):
    page = small_report["pages"][0]
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert ALERT not in page
    # The table (pandas), the Markdown output (cleaned), the rejected row (provenance).
    assert page.count(escaped) >= 3


def test_page_opens_with_provenance(small_report):
    page = small_report["pages"][0]
    main = page.index("<main>")
    assert page.index('<section class="ea-provenance"') > main
    assert page.index('<section class="ea-provenance"') < page.index("<h1")
    data = small_report["data"]
    digest = file_sha256(data / "receipts.jsonl")
    assert f"<code>{digest}</code>" in page
    notebook_digest = file_sha256(small_report["notebook"] / "small.ipynb")
    assert notebook_digest in page
    assert "Rejected rows (1)" in page
    for name in ("pandas", "pyarrow", "numpy", "orjson", "PyYAML", "rfc8785", "nbconvert"):
        assert f"<th>{name}</th>" in page
    for dialect in ea.DIALECTS:
        assert f"<code>{dialect}</code>" in page


def test_page_is_reproducible(small_report):
    one, two = small_report["pages"]
    assert one == two
    assert not re.search(r"ipykernel_\d+", one)


def test_failing_notebook_is_named(tmp_path):
    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook("DATA = 'x'", new_code_cell("1 / 0")), notebooks / "broken.ipynb")
    nbformat.write(_notebook("DATA = 'x'", new_code_cell("DATA")), notebooks / "fine.ipynb")
    with pytest.raises(NotebookError, match=r"broken\.ipynb(.|\n)*ZeroDivisionError"):
        write_reports(data, tmp_path / "out", notebooks)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["fine.html"]


def test_no_notebook(tmp_path):
    data = _data(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportError, match="no notebook"):
        write_reports(data, tmp_path / "out", tmp_path / "empty")


def test_notebook_html_leaves_its_input_alone(small_report):
    executed = small_report["executed"]
    before = nbformat.writes(executed)
    with pytest.warns(ea.RejectedRowsWarning):
        facts = provenance(ea.load(small_report["data"], progress=False), "records")
    page = notebook_html(executed, facts, name="small.ipynb")
    assert "IntSlider(value=" not in page
    assert nbformat.writes(executed) == before


# nbval over the committed notebooks ------------------------------------------------------


NBVAL_OPTIONS = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with"]
SANITIZE = ROOT / "notebooks" / "nbval_sanitize.cfg"

# A deliberate change to a verified figure: one plan that matches is reported as
# changed after hashing. It runs as an IPython start-up file, once the kernel is
# up, as a changed library would load (importing pandas any earlier changes how
# it prints frames).
CHANGED_LIBRARY = """
import explicit_audit as ea

_plan_verdicts = ea.plan_verdicts


def plan_verdicts(plans):
    result = _plan_verdicts(plans)
    first_match = result.index[result["match"].fillna(False).astype(bool)][0]
    result.loc[first_match, "status"] = "no_known_variant"
    return result


ea.plan_verdicts = plan_verdicts
"""


def _nbval(tmp_path: Path, notebook: Path, env: dict) -> subprocess.CompletedProcess:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-c", str(tmp_path / "pytest.ini")]
    command += ["--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-q"]
    command += [*NBVAL_OPTIONS, str(SANITIZE), str(notebook)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


def test_nbval_catches_a_changed_figure(tmp_path):
    notebook = ROOT / "notebooks" / "plan_hashes.ipynb"
    assert notebook.exists(), "the committed notebooks are missing"
    env = dict(os.environ)
    passing = _nbval(tmp_path, notebook, env)
    assert passing.returncode == 0, passing.stdout[-3000:]
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-changed-library.py").write_text(CHANGED_LIBRARY, encoding="utf-8")
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    failing = _nbval(tmp_path, notebook, env)
    assert failing.returncode == 1, failing.stdout[-3000:]
    assert "Cell outputs differ" in failing.stdout
    assert "ea.plan_verdicts(" in failing.stdout
