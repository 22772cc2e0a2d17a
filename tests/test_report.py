"""Reports: parameters, execution, static outputs, the HTML page, provenance; nbval set-up."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html.parser
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

import explicit_audit as ea
from explicit_audit.cli import main
from explicit_audit.report._header import TOC_PLACEHOLDER, header_html, insert_contents
from explicit_audit.report._html import clean_html, provenance_html
from explicit_audit.report.provenance import LIBRARIES, file_sha256, hash_dialects, provenance
from explicit_audit.report.writer import (
    PANEL_NOTE,
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
#: The files a report writes beside its pages: the findings and the rejected rows.
TAKEN_AWAY = ("findings.csv", "findings.parquet", "rejected.csv", "rejected.parquet")


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


def test_a_panel_that_only_runs_live_leaves_a_note_in_its_place():
    widget = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    cell = new_code_cell("widgets.withheld_panel(audit)")
    cell.outputs = [
        new_output("display_data", {WIDGET_VIEW: widget, "text/plain": "VBox(children=...)"})
    ]
    plain = new_code_cell("print(1)")
    plain.outputs = []
    nb = static_outputs(_notebook("DATA = 'x'", cell, plain))
    (note,) = nb.cells[2].outputs
    assert note.data["text/html"] == PANEL_NOTE
    assert "explicit-audit notebooks DIR" in clean_html(PANEL_NOTE)
    assert nb.cells[3].outputs == []  # a cell that showed nothing still shows nothing


def test_contents_number_sections_and_list_subsections_under_them():
    page = (
        f"<header>{TOC_PLACEHOLDER}</header>"
        '<h3 id="lead">Before any section</h3>'
        '<h2 id="one">One</h2><h3 id="one-a">One a</h3><h3 id="one-b">One b</h3>'
        '<h2 id="two">Two &amp; <em>more</em></h2>'
        '<h2 id="three">Three</h2><h3 id="three-a">Three a</h3>'
    )
    nav = insert_contents(page)
    nav = nav[nav.index("<nav") : nav.index("</nav>")]
    top = nav[nav.index("<ol>") + 4 : nav.rindex("</ol>")]
    # The numbered list holds the sections and the appendix only: 1, 2, 3, 4.
    depth, numbered = 0, []
    for tag in re.findall(r"<(/?)(ul|li)\b", top):
        closing, name = tag
        if name == "ul":
            depth += -1 if closing else 1
        elif not closing and depth == 0:
            numbered.append(tag)
    assert len(numbered) == 5  # the lead-in (no section above it), One, Two, Three, appendix
    assert nav.count('class="ea-sub"') == 3 and nav.count("<ul>") == 2
    assert '<a href="#two">Two &amp; more</a>' in nav
    assert nav.index('href="#one-b"') < nav.index('href="#two"') < nav.index('href="#three-a"')
    assert '<li><a href="#lead">Before any section</a></li>' in nav


def test_page_opens_with_title_verdict_contents_and_closes_with_provenance(small_report):
    page = small_report["pages"][0]
    main = page.index("<main>")
    title = page.index('<h1 class="ea-title">Small report</h1>')
    verdict = page.index('<section aria-label="verdict" class="ea-verdict')
    provenance_at = page.index('<details class="ea-appendix" id="provenance">')
    assert main < title < verdict < provenance_at
    # nothing but what the page is cited by between the title and the verdict
    about = page.index('<dl aria-label="about this report" class="ea-about">')
    assert title < about < page.index("</dl>", about) < verdict
    assert page[title:about].count("<") == 2  # </h1> and the list's opening tag
    assert page.count("<h1") == 1  # the notebook's own title is not written twice
    assert page.rindex("</details>") > provenance_at > page.rindex("Show code")
    # the one rejected line makes the data unclean: verify would exit 1
    assert "<strong>1 finding</strong> in 1 of 12 checks" in page
    assert "exits 1" in page and "<code>rejected_rows</code>" in page
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
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        [".explicit-audit-pages.json", "fine.html", "index.html", *TAKEN_AWAY]
    )
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'href="fine.html"' in index and "broken" not in index  # only the pages written


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
    # The same notebook passes nbval in this suite (its own item): only the library changed.
    env = dict(os.environ)
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-changed-library.py").write_text(CHANGED_LIBRARY, encoding="utf-8")
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    failing = _nbval(tmp_path, notebook, env)
    assert failing.returncode == 1, failing.stdout[-3000:]
    assert "Cell outputs differ" in failing.stdout
    assert "ea.plan_verdicts(" in failing.stdout


# One audit per run: a snapshot of the inputs ---------------------------------------------


def _counting_notebook() -> nbformat.NotebookNode:
    return _notebook(
        'DATA = "nowhere"',
        new_code_cell(
            "import warnings\nimport explicit_audit as ea\n"
            "with warnings.catch_warnings(action='ignore'):\n"
            "    audit = ea.load(DATA, progress=False)\n"
            "print(f'receipts seen: {len(audit.receipts)}')\n"
            "audit.sources[['source_file', 'values_read']]"
        ),
    )


def _meeting_notebook(folder: Path, mark: str) -> nbformat.NotebookNode:
    """A notebook that says it is here, waits (as long as ``folder/patience`` says) for
    another notebook to be, and records when it ran and whom it met."""
    cell = (
        "import pathlib, time\n"
        f"folder, mark = pathlib.Path({str(folder)!r}), {mark!r}\n"
        "begun = time.monotonic()\n"
        "(folder / f'{mark}.here').touch()\n"
        "patience = float((folder / 'patience').read_text())\n"
        "def others():\n"
        "    return sorted(p.stem for p in folder.glob('*.here') if p.stem != mark)\n"
        "while not others() and time.monotonic() < begun + patience:\n"
        "    time.sleep(0.05)\n"
        "(folder / mark).write_text(f'{begun} {time.monotonic()} {\",\".join(others())}')\n"
        "print('counted', len(ea.load(DATA, progress=False).receipts))"
    )
    first = new_code_cell("import explicit_audit as ea")
    return _notebook('DATA = "nowhere"', first, new_code_cell(cell))


def test_notebooks_run_side_by_side_and_write_the_same_pages(tmp_path):
    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    folder = tmp_path / "meeting"
    folder.mkdir()
    for mark in ("a", "b", "c"):
        nbformat.write(_meeting_notebook(folder, mark), notebooks / f"{mark}.ipynb")

    def run(jobs: int, patience: float) -> tuple[dict, list[bytes]]:
        for here in folder.glob("*.here"):
            here.unlink()
        (folder / "patience").write_text(str(patience))
        written = write_reports(data, tmp_path / f"out{jobs}", notebooks, jobs=jobs)
        ran = {}
        for mark in ("a", "b", "c"):
            begun, ended, met = (folder / mark).read_text().split(" ")
            ran[mark] = (float(begun), float(ended), met)
        return ran, [path.read_bytes() for path in written]

    # One at a time: the first waits a second for company and meets nobody.
    alone, alone_pages = run(1, 1.0)
    assert alone["a"][2] == "" and alone["a"][1] <= alone["b"][0] <= alone["b"][1] <= alone["c"][0]
    # Two at a time: the first two meet, however slowly their kernels start; the third
    # waits for one of them to end.
    side_by_side, pages = run(2, 120.0)
    assert side_by_side["a"][2] == "b" and side_by_side["b"][2] == "a", side_by_side
    assert side_by_side["c"][0] >= min(side_by_side["a"][1], side_by_side["b"][1])
    assert pages == alone_pages and b"counted 2" in pages[0]


def test_report_jobs_is_a_whole_number_from_1(tmp_path, capsys):
    out = str(tmp_path / "out")
    for given in ("0", "two"):
        assert main(["report", "data", "--out", out, "--jobs", given]) == 2
        said = capsys.readouterr().err
        assert "--jobs" in said and ("give at least 1" in said or "not a whole number" in said)
    assert not os.path.exists(out)


def test_a_log_growing_during_a_run_changes_no_page(tmp_path, monkeypatch):
    import explicit_audit.report.writer as writer_module

    data = _data(tmp_path)
    log = data / "receipts.jsonl"
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("a_first", "b_second"):
        nbformat.write(_counting_notebook(), notebooks / f"{name}.ipynb")
    real_execute = writer_module.execute_notebooks
    appended = []

    def execute_while_the_log_grows(runs, **kwargs):
        # A producer appends one more valid receipt for each notebook, before they run.
        for _ in runs:
            with log.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(make_receipt(query=f"late {len(appended)}")) + "\n")
            appended.append(1)
        return real_execute(runs, **kwargs)

    monkeypatch.setattr(writer_module, "execute_notebooks", execute_while_the_log_grows)
    pages = [
        p.read_text(encoding="utf-8") for p in write_reports(data, tmp_path / "out", notebooks)
    ]
    assert len(appended) == 2 and hashlib.sha256(log.read_bytes()).hexdigest() != before
    for page in pages:
        # Provenance names the bytes that were read, and the tables agree with it.
        assert f"<code>{before}</code>" in page
        assert "receipts seen: 2" in page
        assert "<td>receipts</td>" not in page or "<td>2</td>" in page
        values_read = re.search(r"(\d+) values read, (\d+) rejected", page)
        assert values_read.groups() == ("3", "1")
        # The file is named as it was given, never by the copy's temporary folder.
        assert "explicit-audit-report-" not in page
    assert str(log) in pages[0] or os.path.relpath(log) in pages[0]


def test_reports_on_a_relative_path_name_files_as_given(tmp_path, monkeypatch):
    _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_counting_notebook(), notebooks / "count.ipynb")
    monkeypatch.chdir(tmp_path)
    (page,) = write_reports("records", tmp_path / "out", notebooks)
    text = page.read_text(encoding="utf-8")
    # In the notebook's own table and in the appendix alike.
    assert text.count("records/receipts.jsonl") >= 2
    assert str(tmp_path) not in text


# Each page whole or not at all; stale pages removed ----------------------------------------


class _DiskFull:
    """A stream that takes half of what it is given, then fails as a full disk does."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        self.stream.write(text[: len(text) // 2])
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self.stream, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stream.close()


def test_a_failed_write_leaves_the_previous_page_whole(tmp_path, monkeypatch):
    from explicit_audit.report._files import write_atomically

    target = tmp_path / "page.html"
    write_atomically(target, "<html>the previous page</html>\n")
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: _DiskFull(real_fdopen(*a, **k)))
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, "<html>" + "x" * 10_000 + "</html>\n")
    monkeypatch.undo()
    assert target.read_text(encoding="utf-8") == "<html>the previous page</html>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]  # no temporary left


@pytest.mark.parametrize("fails", ["one.html", "findings.parquet"])
def test_a_failed_write_in_a_run_leaves_no_cut_off_report(tmp_path, monkeypatch, fails):
    import explicit_audit.report.writer as writer_module
    from explicit_audit.report._files import write_atomically

    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook("DATA = 'x'", new_code_cell("DATA")), notebooks / "one.ipynb")
    out = tmp_path / "out"
    write_reports(data, out, notebooks)
    previous = {p.name: p.read_bytes() for p in out.iterdir()}
    with open(data / "receipts.jsonl", "a", encoding="utf-8") as stream:
        stream.write("{another broken line\n")  # this run's pages and findings differ
    real_fdopen = os.fdopen

    def write_on_a_full_disk(target, text):
        # The disk fills up while that file is written, not while the kernel starts.
        if target.name != fails:
            return write_atomically(target, text)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "fdopen", lambda *a, **k: _DiskFull(real_fdopen(*a, **k)))
            write_atomically(target, text)

    monkeypatch.setattr(writer_module, "write_atomically", write_on_a_full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_reports(data, out, notebooks)
    # No temporary file is left, and no file of this run: the previous run's, every one.
    assert sorted(previous) == sorted(
        [".explicit-audit-pages.json", "index.html", "one.html", *TAKEN_AWAY]
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == previous


def test_stale_reports_are_removed_and_nothing_else(tmp_path):
    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("kept", "renamed"):
        nbformat.write(_notebook("DATA = 'x'", new_code_cell("DATA")), notebooks / f"{name}.ipynb")
    out = tmp_path / "out"
    write_reports(data, out, notebooks)
    (out / "notes.html").write_text("<html>written by hand</html>\n", encoding="utf-8")
    (out / "summary.txt").write_text("not a page\n", encoding="utf-8")
    (notebooks / "renamed.ipynb").rename(notebooks / "new_name.ipynb")
    lines: list[str] = []
    written = write_reports(data, out, notebooks, progress=lines.append)
    assert sorted(p.name for p in written) == ["kept.html", "new_name.html"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            ".explicit-audit-pages.json",
            "index.html",
            "kept.html",
            "new_name.html",
            "notes.html",
            "summary.txt",
            *TAKEN_AWAY,
        ]
    )
    assert any("removed" in line and "renamed.html" in line for line in lines)


def _report_cli(*argv: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explicit_audit.cli", "report", *argv],
        cwd=cwd,
        capture_output=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        **kwargs,
    )


def test_an_exit_2_removes_the_previous_pages_but_never_a_renamed_copy(tmp_path):
    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook("DATA = 'x'", new_code_cell("DATA")), notebooks / "kept.ipynb")
    done = _report_cli(str(data), "--out", "out", "--notebooks", "notebooks", cwd=tmp_path)
    assert done.returncode == 1, done.stderr.decode()  # the data holds a rejected line
    out = tmp_path / "out"
    page = (out / "kept.html").read_text(encoding="utf-8")
    (out / "kept-2025-03-01.html").write_text(page, encoding="utf-8")  # the user's copy
    (out / "notes.html").write_text("<html>by hand</html>\n", encoding="utf-8")
    findings = (out / "findings.csv").read_bytes()
    (out / "findings-2025-03-01.csv").write_bytes(findings)  # the user's copy
    (data / "receipts.jsonl").unlink()  # now the data names nothing to read
    done = _report_cli(str(data), "--out", "out", "--notebooks", "notebooks", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert f"removed {Path('out') / 'kept.html'}: its verdict is not of the data given" in err
    assert f"removed {Path('out') / 'findings.csv'}: its verdict" in err
    kept = ["findings-2025-03-01.csv", "kept-2025-03-01.html", "notes.html"]
    assert sorted(p.name for p in out.iterdir()) == kept
    assert (out / "kept-2025-03-01.html").read_text(encoding="utf-8") == page
    assert (out / "findings-2025-03-01.csv").read_bytes() == findings


def test_a_fifo_in_the_data_is_on_every_page(tmp_path):
    data = _data(tmp_path)
    os.mkfifo(data / "pipe.jsonl")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(
        _notebook(
            "DATA = 'x'",
            new_code_cell(
                "import explicit_audit as ea, warnings\nwarnings.simplefilter('ignore')\n"
                "print(ea.load(DATA).rejected[['source_file', 'reason']].to_dict('records'))"
            ),
        ),
        notebooks / "kept.ipynb",
    )
    done = _report_cli("records", "--out", "out", "--notebooks", "notebooks", cwd=tmp_path)
    assert done.returncode == 1, done.stderr.decode()
    page = (tmp_path / "out" / "kept.html").read_text(encoding="utf-8")
    assert "<strong>2 findings</strong> in 1 of 12 checks" in page
    # In the verdict, the appendix's rejected rows and the notebook's own load.
    assert page.count("records/pipe.jsonl") >= 3
    assert "a FIFO, not a regular file: not read" in page
    assert (data / "pipe.jsonl").is_fifo()


@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["INT", "TERM"]
)
def test_a_signal_during_report_leaves_no_snapshot_and_no_partial_page(tmp_path, signum, status):
    data = _data(tmp_path)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    started = tmp_path / "started"
    nbformat.write(
        _notebook(
            "DATA = 'x'",
            new_code_cell(f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(120)"),
        ),
        notebooks / "slow.ipynb",
    )
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    report = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "explicit_audit.cli",
            "report",
            str(data),
            "--out",
            "out",
            "--notebooks",
            "notebooks",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temporary)},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not started.exists() and report.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), report.stderr.read().decode() if report.poll() is not None else ""
        assert any(p.name.startswith("explicit-audit-report-") for p in temporary.iterdir())
        if signum == signal.SIGINT:
            os.killpg(report.pid, signum)  # Ctrl-C: the terminal signals the whole group
        else:
            report.send_signal(signum)  # kill PID
        returned = report.wait(timeout=120)
        err = report.stderr.read().decode()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(report.pid, signal.SIGKILL)
        report.stdout.close()
        report.stderr.close()
    assert returned == status, err
    assert "Traceback" not in err
    assert [p.name for p in temporary.iterdir() if "explicit-audit" in p.name] == []
    out = tmp_path / "out"
    assert not out.exists() or [p.name for p in out.iterdir() if p.suffix == ".tmp"] == []


# Data that holds no record of a notebook's kind ---------------------------------------------

KIT_NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _only(tmp_path: Path, *parts: str) -> Path:
    """A data folder holding only some of the sample data's kinds."""
    import shutil

    folder = tmp_path / "only"
    for part in parts:
        if part == "receipts":  # receipts built in code: no logger timestamp
            (folder / "receipts").mkdir(parents=True)
            lines = [json.dumps(make_receipt()), json.dumps(make_receipt(query="q2"))]
            (folder / "receipts" / "r.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
        else:
            shutil.copytree(ROOT / "data" / part, folder / part)
    return folder


def _empty_page(page: str) -> bool:
    return "so the notebook was not run and there is nothing to show" in page


@pytest.mark.parametrize(
    ("parts", "executed", "missing"),
    [
        # The trends page runs on records of any kind.
        (("receipts", "requests"), {"withheld_counts", "plan_hashes", "trends"}, {}),
        (("decisions", "policies"), {"routing_sweep", "trends"}, {}),
        (("decisions",), {"trends"}, {"routing_sweep": "`policies`"}),
        (("plans",), {"plan_hashes", "trends"}, {}),
    ],
)
def test_notebooks_without_records_of_their_kind_say_so(tmp_path, parts, executed, missing):
    data = _only(tmp_path, *parts)
    out = tmp_path / "out"
    written = write_reports(data, out, KIT_NOTEBOOKS)
    assert sorted(p.stem for p in written) == sorted(p.stem for p in KIT_NOTEBOOKS)
    index = (out / "index.html").read_text(encoding="utf-8")
    for path in written:
        page = path.read_text(encoding="utf-8")
        # Run or not, the page marks where each of its checks is, and the index links there.
        notebook = nbformat.read(ROOT / "notebooks" / f"{path.stem}.ipynb", as_version=4)
        for check in notebook.metadata["explicit_audit"]["checks"]:
            assert f'id="check-{check}"' in page, (path.stem, check)
            assert f'href="{path.name}#check-{check}"' in index, (path.stem, check)
        if path.stem in executed:
            assert not _empty_page(page), path.stem
            assert page.count('<details class="ea-code">') > 3
        else:
            assert _empty_page(page), path.stem
            if path.stem in missing:  # some of what it needs is there: it names what is not
                heading = f"No {missing[path.stem]} in `{data}`"
                assert heading in page.replace("<code>", "`").replace("</code>", "`")
                assert "No records of this kind" not in page
            else:
                assert f"No records of this kind in <code>{data}</code>" in page
            assert '<details class="ea-appendix" id="provenance">' in page
            assert '<section aria-label="verdict"' in page
            if path.stem in missing:
                assert missing[path.stem] in page.replace("<code>", "`").replace("</code>", "`")


def test_names_that_are_not_utf8_are_on_the_pages_one_to_one(tmp_path):
    folder = os.path.join(os.fsencode(tmp_path), b"d\xe9")
    os.mkdir(folder)
    raw, literal = os.path.join(folder, b"r\xe9.jsonl"), os.path.join(folder, b"r\\xe9.jsonl")
    with open(raw, "wb") as stream:
        stream.write((json.dumps(make_receipt()) + "\n").encode())
    with open(literal, "wb") as stream:
        stream.write(b"{cut\n")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(_notebook("DATA = 'x'", new_code_cell("print(DATA)")), notebooks / "n.ipynb")
    (page,) = write_reports(os.fsdecode(folder), tmp_path / "out", notebooks)
    text = page.read_bytes().decode("utf-8")  # strict: the page is UTF-8
    for path in (raw, literal):
        with open(path, "rb") as stream:
            assert f"<code>{hashlib.sha256(stream.read()).hexdigest()}</code>" in text
    # Named as the report names an absolute path: relative to the current folder.
    assert f"{tmp_path.name}/d\\xe9/r\\xe9.jsonl" in text
    assert f"{tmp_path.name}/d\\xe9/r\\\\xe9.jsonl" in text


# --- the page's blocks, written by Jinja2 templates with autoescape --------------------


class _Elements(html.parser.HTMLParser):
    """The tags of a page and its text, as a browser's parser sees them."""

    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parsed(markup: str) -> _Elements:
    elements = _Elements()
    elements.feed(markup)
    return elements


def test_every_value_in_the_header_contents_and_provenance_is_text(tmp_path):
    hostile = tmp_path / "<i>a & 'b'"
    hostile.mkdir()
    receipt = json.dumps(make_receipt(query=ALERT))
    (hostile / "<b>r.jsonl").write_text(f"{receipt}\n<em>not json</em>\n", encoding="utf-8")
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(hostile, progress=False)
    verification = ea.verify_all(audit)
    data = f"{hostile}<script>"
    header = header_html(f"Title {ALERT}", verification, data)
    page = insert_contents(header + '<h2 id="x&amp;y">A <em>b</em> &lt;i&gt;</h2>')
    appendix = provenance_html(
        provenance(audit, str(hostile)), notebook="<u>n</u>.ipynb", notebook_sha256="<s>"
    )
    for block in (page, appendix):
        tags = set(_parsed(block).tags)
        assert not tags & {"script", "i", "b", "u", "s"}, tags
    text = "".join(_parsed(page).text)
    assert f"Title {ALERT}" in text and f"explicit-audit verify {data}" in text
    assert "A b <i>" in text  # the contents entry: the heading's text, its markup dropped
    text = "".join(_parsed(appendix).text)
    assert "<u>n</u>.ipynb" in text and "<b>r.jsonl" in text and "<em>not json</em>" in text
    assert _parsed(appendix).tags.count("details") == 4  # the appendix and its 3 folds


def test_each_page_banner_is_its_own_checks_with_the_whole_verdict_below(tmp_path):
    # Plans with a tampered hash (a finding of plan_hashes); receipts clean but for a
    # broken line (rejected_rows, a check of every kind); no decisions at all.
    data = tmp_path / "data"
    data.mkdir()
    plans = (ROOT / "data" / "plans" / "arborist_runs.jsonl").read_text("utf-8").splitlines()
    (data / "plans.jsonl").write_text("\n".join(plans[:40]) + "\n", encoding="utf-8")
    (data / "receipts.jsonl").write_text(
        json.dumps(make_receipt()) + "\n{broken\n", encoding="utf-8"
    )
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name, tables in [
        ("plans_page", [["plans"]]),
        ("routing_page", [["decisions", "policies"]]),
    ]:
        notebook = _notebook("DATA = 'x'", new_code_cell("DATA"))
        notebook.metadata["explicit_audit"] = {"tables": tables}
        nbformat.write(notebook, notebooks / f"{name}.ipynb")
    with pytest.warns(ea.RejectedRowsWarning):
        summary = ea.verify_all(ea.load(data, progress=False)).summary().set_index("check")
    found = int(summary.loc["plan_hashes", "findings"])
    assert found and summary.loc["rejected_rows", "findings"] == 1
    write_reports(data, tmp_path / "out", notebooks)

    def banner(name: str) -> tuple[str, str]:
        page = (tmp_path / "out" / f"{name}.html").read_text(encoding="utf-8")
        start = page.index('id="verdict"')
        lines = re.findall(r"<p class=\"ea-verdict-[^\"]*\">(.*?)</p>", page[start:])
        return lines[0], lines[1]

    own, whole = banner("plans_page")
    assert own.startswith("This page's checks (plans): ")
    assert f"<strong>{found:,} finding" in own and "in 1 of 1 checks" in own
    total = int(summary["findings"].sum())
    assert whole.startswith(f"Over all the data: <strong>{total:,} findings</strong>")
    assert "exits 1" in whole and '<a href="index.html">every check</a>' in whole
    own, whole = banner("routing_page")
    assert own.startswith("This page's checks (decisions): <strong>Nothing to check</strong>")
    assert whole.startswith(f"Over all the data: <strong>{total:,} findings</strong>")
