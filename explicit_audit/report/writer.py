"""Reports: each notebook executed on the data, written as one self-contained HTML page.

A report is for a reader who never opens a notebook. A run first copies
every input file once into a temporary folder, hashing the bytes as they are
copied (:mod:`~explicit_audit.report.snapshot`), loads that copy once for the
provenance and the verdict, and runs every notebook on the same copy: a log
that grows during the run changes no page. Then, for every notebook:

1. the data path is injected papermill-style: a new cell tagged
   ``injected-parameters``, right after the cell tagged ``parameters``, sets
   the notebook's data-path variable to the path given;
2. the notebook is executed with :mod:`nbclient` in a kernel of the running
   Python environment, in the copy's working folder, so paths in the output
   read as the user gave them; a notebook whose metadata names the tables it
   reads (``metadata.explicit_audit.tables``) and finds all of them empty is
   not run: its page says there are no records of its kind in the data;
3. widget views (``application/vnd.jupyter.widget-view+json``) are dropped,
   and so are JavaScript outputs; a kit panel's output keeps its static twin
   (``text/html``: its controls' values, table and chart, as displayed), and
   an output left with only a widget's text stand-in goes;
4. :mod:`nbconvert` writes one HTML file: tables and PNG plots embedded, code
   folded away in a ``<details>`` element per cell, HTML outputs cleaned to an
   allowlist of tags (anything else shows as text), no script at all, and a
   Content-Security-Policy that forbids fetching anything, so the page reads
   the same offline;
5. the page opens with the notebook's title, the verdict of every check
   (with the exit status ``explicit-audit verify`` gives on the same data)
   and the contents; it closes with a folded appendix of provenance: the
   input files with their SHA-256, the row counts, the rejected rows, the
   versions of the kit and its libraries, and the hash dialects
   (:mod:`explicit_audit.report.provenance`);
6. the page is written to a temporary file beside its place and moved there
   whole; pages an earlier run wrote into the folder that this run did not
   write (a notebook since removed) are removed.

A report carries no wall-clock time: the same data, notebooks and library
versions give the same bytes, so two reports can be compared with ``diff``.
The file's own modification time says when it was written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.preprocessors import CoalesceStreamsPreprocessor, TagRemovePreprocessor
from nbformat.v4 import new_output

from .._core.engine import reads_lazily
from .._version import __version__
from ..errors import RejectedRowsWarning
from ..loading import ENGINES, load
from ..partitioned.scheduler import use_scheduler
from ..reading.sources import display_name
from ..verify import Verification, verify_all
from ._empty import has_records, no_records_notebook, notebook_tables
from ._files import remove_stale_reports, write_atomically
from ._header import header_html, insert_contents, page_kinds
from ._html import PAGE_TEMPLATE, VERDICT_CSS, clean_html, provenance_html
from ._notebook_run import (
    DATA_PARAMETER_NAMES,
    NotebookError,
    ReportError,
    data_parameter,
    execute_notebook,
    inject_parameters,
    parameter_names,
)
from .index import INDEX_NAME, Page, index_html
from .parameters import chosen_parameters
from .provenance import Provenance, provenance
from .snapshot import take_snapshot

__all__ = [
    "DATA_PARAMETER_NAMES",
    "PANEL_NOTE",
    "NotebookError",
    "ReportError",
    "data_parameter",
    "execute_notebook",
    "inject_parameters",
    "no_records_notebook",
    "notebook_html",
    "notebook_tables",
    "static_outputs",
    "write_reports",
]

_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_DROPPED_DATA = (_WIDGET_VIEW, "application/javascript")


#: What a page shows in place of an interactive panel, which needs a running kernel.
PANEL_NOTE = (
    '<p class="ea-note ea-panel-note">An interactive panel runs here in Jupyter, where its '
    "controls redraw the views above: <code>explicit-audit notebooks DIR</code> copies this "
    "notebook out to open it on your data. A page shows the views with their defaults, "
    "computed once.</p>"
)


def static_outputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop widget views and JavaScript from a notebook's outputs.

    An output that held a widget view keeps its other representations unless
    only the text stand-in (``IntSlider(value=3)``, a progress bar's last
    text) is left, in which case the output goes.

    Parameters
    ----------
    notebook : NotebookNode
        Changed in place, and returned.

    Returns
    -------
    NotebookNode

    Examples
    --------
    >>> static_outputs(executed)  # doctest: +SKIP
    """
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        kept = []
        panels = 0
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data is None:
                kept.append(output)
                continue
            had_widget = _WIDGET_VIEW in data
            panels += had_widget
            for key in _DROPPED_DATA:
                data.pop(key, None)
            if not data or (had_widget and set(data) <= {"text/plain"}):
                continue
            kept.append(output)
        if panels and not kept:
            # A page never ends a sentence with nothing: the panel's place says where it runs.
            kept.append(new_output("display_data", data={"text/html": PANEL_NOTE}))
        cell.outputs = kept
    notebook.metadata.pop("widgets", None)
    return notebook


def _title_line(notebook: nbformat.NotebookNode) -> tuple[int, int] | None:
    """Where the notebook's ``# title`` is: its cell's index and its line's, or None."""
    for at, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown":
            continue
        for index, line in enumerate(cell.source.splitlines()):
            if line.startswith("# "):
                return at, index
    return None


def notebook_title(notebook: nbformat.NotebookNode, fallback: str) -> str:
    """The notebook's ``# title`` (its first markdown heading of level 1), or ``fallback``."""
    found = _title_line(notebook)
    if found is None:
        return fallback
    at, index = found
    return notebook.cells[at].source.splitlines()[index][2:].strip()


def _take_title(notebook: nbformat.NotebookNode, fallback: str) -> str:
    """The notebook's ``# title``, taken out of its cell: the page writes it above the verdict."""
    title = notebook_title(notebook, fallback)
    found = _title_line(notebook)
    if found is not None:
        at, index = found
        lines = notebook.cells[at].source.splitlines()
        notebook.cells[at].source = "\n".join(lines[:index] + lines[index + 1 :]).strip("\n")
    return title


_KERNEL_CELL_FILE = re.compile(r"\S*ipykernel_\d+[/\\]\d+\.py")


def _stable_streams(notebook: nbformat.NotebookNode) -> None:
    """Name a cell's code as ``<cell>`` in warnings, not by the kernel's temporary file."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                output["text"] = _KERNEL_CELL_FILE.sub("<cell>", output["text"])


def notebook_html(
    notebook: nbformat.NotebookNode,
    facts: Provenance,
    *,
    name: str,
    notebook_sha256: str | None = None,
    verification: Verification | None = None,
    index: str | None = None,
) -> str:
    """Write an executed notebook as one self-contained HTML page.

    Parameters
    ----------
    notebook : NotebookNode
        An executed notebook (see :func:`execute_notebook`); not changed.
    facts : Provenance
        Shown in the appendix that closes the page.
    name : str
        The notebook's file name, shown in the appendix.
    notebook_sha256 : str, optional
        SHA-256 of the notebook file, shown next to its name.
    verification : Verification, optional
        :func:`~explicit_audit.verify_all` of the audit the page shows, for the
        verdict under the title; without it the page has no verdict. When
        the notebook names the tables it reads (``metadata.explicit_audit.tables``),
        the verdict's first line is about those tables' checks, the verdict
        over all the data one line below.
    index : str, optional
        The index page's address, linked from the verdict over all the data.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> facts = ea.provenance(audit, "data")  # doctest: +SKIP
    >>> page = notebook_html(executed, facts, name="plan_hashes.ipynb")  # doctest: +SKIP
    """
    node = static_outputs(nbformat.from_dict(notebook))
    _stable_streams(node)
    title = _take_title(node, Path(name).stem)
    node.metadata["title"] = title
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[
            DictLoader(
                {
                    "explicit_audit.html.j2": PAGE_TEMPLATE,
                    "explicit_audit_verdict.css": VERDICT_CSS,
                }
            )
        ],
        template_file="explicit_audit.html.j2",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        anchor_link_text="",
    )
    exporter.register_filter("ea_clean_html", clean_html)
    # A cell's prints as one block, however its output was flushed (a long
    # computation between two prints flushes them apart).
    exporter.register_preprocessor(CoalesceStreamsPreprocessor(), enabled=True)
    exporter.register_preprocessor(
        TagRemovePreprocessor(
            remove_cell_tags={"remove-cell"},
            remove_input_tags={"remove-input"},
            remove_all_outputs_tags={"remove-output"},
        ),
        enabled=True,
    )
    tables = [name for alternative in notebook_tables(notebook) for name in alternative]
    kinds = page_kinds(tables) if tables else None
    header = header_html(title, verification, facts.source, kinds=kinds, index=index)
    resources = {
        "metadata": {"name": Path(name).stem},
        "explicit_audit": {
            "version": __version__,
            "header_html": header,
            "provenance_html": provenance_html(
                facts, notebook=name, notebook_sha256=notebook_sha256
            ),
        },
    }
    body, _ = exporter.from_notebook_node(node, resources=resources)
    return _utf8(insert_contents(body))


def _utf8(page: str) -> str:
    """The page as text that UTF-8 can hold: a byte of a file name that is not UTF-8
    (a lone surrogate in a notebook's output) is written ``\\xNN``, as tables name it."""
    try:
        page.encode("utf-8")
        return page
    except UnicodeEncodeError:
        return re.sub("[\\udc80-\\udcff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", page)


def _require_engine_parameter(notebook: nbformat.NotebookNode, name: str) -> None:
    """A notebook run for the Dask engine must read ``ENGINE``, or it would load in memory."""
    if "ENGINE" not in parameter_names(notebook):
        raise ReportError(
            f"{name}: its parameters cell sets no ENGINE, so it would load the data in memory; "
            'add ENGINE = "pandas" (and SCHEDULER = None, PERSIST = False) to the cell and pass '
            "engine=ENGINE to ea.load, or report with the pandas engine"
        )


def _read_notebook(path: Path) -> nbformat.NotebookNode:
    """A notebook file, or a ReportError naming it when it is not one (not JSON, unreadable)."""
    try:
        return nbformat.read(path, as_version=4)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReportError(f"{display_name(path)}: cannot read the notebook ({reason})") from None
    except (ValueError, nbformat.ValidationError) as exc:  # NotJSONError is a ValueError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ReportError(f"{display_name(path)}: not a notebook ({reason[:200]})") from None


def _notebooks(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            return sorted(p for p in path.glob("*.ipynb") if not p.name.startswith("."))
        return [path]
    return [Path(p) for p in source]


def write_reports(
    data: str | os.PathLike,
    out: str | os.PathLike,
    notebooks: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    timeout: int = 300,
    progress=None,
    engine: str = "pandas",
    scheduler: str | None = None,
    persist: bool = False,
    parameters: Mapping[str, object] | None = None,
    verified=None,
) -> list[Path]:
    """Execute every notebook on ``data`` and write one HTML report each into ``out``.

    Parameters
    ----------
    data : str or path
        The data to run on (file, folder or glob), as :func:`explicit_audit.load` takes it.
    out : str or path
        Folder for the reports (created); each is ``<notebook stem>.html``.
    notebooks : folder, notebook path, or list of paths
        A folder means every ``*.ipynb`` in it, in name order.
    timeout : int, default 300
        Seconds a cell may run.
    progress : callable, optional
        Called with a line of text after each report is written.
    engine : {"pandas", "dask"}, default "pandas"
        ``"dask"`` loads the data as lazy Dask tables, for the verdict and
        the provenance here and in every notebook, which is given the
        parameters ``ENGINE``, ``SCHEDULER`` and ``PERSIST``. The pages say
        what the pandas engine's pages say.
    scheduler : str, optional
        With ``engine="dask"``: where the partitions are computed, here and
        in every notebook's kernel (see :func:`~explicit_audit.use_scheduler`).
    persist : bool, default False
        With ``engine="dask"``: keep the rows in the workers' memory after
        the first read (:meth:`~explicit_audit.Audit.persist`), for data the
        cluster's memory holds.
    parameters : mapping, optional
        ``{name: value}`` for parameters the notebooks declare in their
        parameters cells, injected papermill-style into each notebook that
        declares it (``explicit-audit report -p NAME=VALUE``).
    verified : callable, optional
        Called with the :class:`~explicit_audit.Verification` of ``data`` (the
        verdict every page shows) before any notebook runs: how ``explicit-audit
        report`` exits as ``verify`` does on the same data.

    Returns
    -------
    list of Path
        The reports written, in notebook order.

    Raises
    ------
    NotebookError
        When a notebook fails; the reports of the others are written first.
    ReportError
        When there is no notebook, or one has no parameters cell; when a
        parameter given is declared by no notebook, is the data path or an
        engine's, or does not fit a notebook's default; with
        ``engine="dask"``, when one has no ``ENGINE`` parameter.
    AuditError
        When ``data`` cannot be loaded.

    Examples
    --------
    >>> write_reports("data", "reports", "notebooks")  # doctest: +SKIP
    [PosixPath('reports/plan_hashes.html'), ...]
    """
    paths = _notebooks(notebooks)
    if not paths:
        raise ReportError(f"{notebooks}: no notebook (*.ipynb) to report on")
    if engine not in ENGINES:
        raise ReportError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    lazy = reads_lazily(engine)
    read = {path.name: _read_notebook(path) for path in paths}
    if lazy:  # before any work: a notebook that would load in memory is refused
        for path in paths:
            _require_engine_parameter(read[path.name], path.name)
    chosen = chosen_parameters(read, parameters or {})
    engine_values = {"ENGINE": engine, "SCHEDULER": scheduler, "PERSIST": persist} if lazy else {}
    with use_scheduler(scheduler) if lazy else contextlib.nullcontext():
        return _write_reports(
            data,
            Path(out),
            paths,
            timeout=timeout,
            progress=progress,
            engine=engine,
            persist=persist,
            parameters={name: {**engine_values, **values} for name, values in chosen.items()},
            verified=verified,
        )


def _write_reports(
    data: str | os.PathLike,
    out_dir: Path,
    paths: list[Path],
    *,
    timeout: int,
    progress,
    engine: str,
    persist: bool,
    parameters: dict[str, dict[str, object]],
    verified=None,
) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    listed: list[Page] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="explicit-audit-report-") as folder:
        snapshot = take_snapshot(data, folder)
        with contextlib.chdir(snapshot.cwd), warnings.catch_warnings():
            # Rejected rows are listed in every report's appendix.
            warnings.simplefilter("ignore", RejectedRowsWarning)
            audit = load(snapshot.data, progress=False, engine=engine)
            if persist:
                audit = audit.persist()
            # On Dask tables the checks' one pass also computes the accounting.
            verification = verify_all(audit)
            audit = verification.accounting
            if verified is not None:
                verified(verification)
            facts = provenance(audit, data, digests=snapshot.digests)
        for path in paths:
            start = time.perf_counter()
            source = path.read_bytes()
            notebook = nbformat.reads(source.decode("utf-8"), as_version=4)
            ran = has_records(audit, notebook_tables(notebook))
            if ran:
                try:
                    executed = execute_notebook(
                        notebook,
                        snapshot.data,
                        cwd=snapshot.cwd,
                        timeout=timeout,
                        name=path.name,
                        parameters=parameters[path.name],
                    )
                except NotebookError as exc:
                    failures.append(str(exc))
                    continue
            else:
                executed = no_records_notebook(notebook, data, audit)
            listed.append(
                Page(
                    file=f"{path.stem}.html",
                    title=notebook_title(notebook, path.stem),
                    tables=tuple(t for tables in notebook_tables(notebook) for t in tables),
                    ran=ran,
                )
            )
            page = notebook_html(
                executed,
                facts,
                name=path.name,
                notebook_sha256=hashlib.sha256(source).hexdigest(),
                verification=verification,
                index=INDEX_NAME,
            )
            target = out_dir / f"{path.stem}.html"
            write_atomically(target, page)
            written.append(target)
            if progress is not None:
                progress(f"wrote {target} ({time.perf_counter() - start:.1f} s)")
    index = out_dir / INDEX_NAME
    write_atomically(index, _utf8(index_html(verification, listed, display_name(data))))
    if progress is not None:
        progress(f"wrote {index}: the verdict, one tile per check, the pages")
    for stale in remove_stale_reports(out_dir, [*written, index]):
        if progress is not None:
            progress(f"removed {stale}: no notebook of that name was reported on")
    if failures:
        raise NotebookError("\n\n".join(failures))
    return written
