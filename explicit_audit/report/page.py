"""A report page: one executed notebook written as one self-contained HTML document.

The page drops widget views and JavaScript (:func:`static_outputs`), takes the
notebook's ``# title`` out to write it above the verdict, names a cell's code
``<cell>`` in warnings rather than by the kernel's temporary file, and renders
with :mod:`nbconvert` through the kit's template: code folded away, HTML
outputs cleaned to an allowlist, no script, the verdict and contents at the
top and the provenance appendix at the bottom (:func:`notebook_html`).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter
from nbconvert.preprocessors import CoalesceStreamsPreprocessor, TagRemovePreprocessor
from nbformat.v4 import new_output

from .._core import registry
from .._version import __version__
from ..verify import Verification
from ._anchors import notebook_checks, place_check_anchors
from ._empty import notebook_tables
from ._header import TOC_PLACEHOLDER, About, header_html, insert_contents, page_kinds
from ._html import PAGE_TEMPLATE, VERDICT_CSS, clean_html, provenance_html
from .provenance import Provenance

__all__ = ["PANEL_NOTE", "notebook_html", "notebook_title", "static_outputs", "utf8_page"]

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
    about: About | None = None,
    ran: bool = True,
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
    about : About, optional
        What the page is cited by, under its title: the data, the period its
        records cover, the kit's version, the command line, the report's title.
    ran : bool, default True
        False for a notebook not run (no records of its kind): the checks its
        metadata places in sections (``metadata.explicit_audit.checks``) are
        anchored in its one section, which says why.

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
    report = about.report if about is not None else None
    node.metadata["title"] = f"{title} · {report}" if report else title
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
    header = header_html(title, verification, facts.source, kinds=kinds, index=index, about=about)
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
    known = registry.checks()
    checks = {c: heading for c, heading in notebook_checks(notebook).items() if c in known}
    body, _ = place_check_anchors(body, checks, after=TOC_PLACEHOLDER, first=not ran)
    return utf8_page(insert_contents(body))


def utf8_page(page: str) -> str:
    """The page as text that UTF-8 can hold: a byte of a file name that is not UTF-8
    (a lone surrogate in a notebook's output) is written ``\\xNN``, as tables name it."""
    try:
        page.encode("utf-8")
        return page
    except UnicodeEncodeError:
        return re.sub("[\\udc80-\\udcff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", page)
