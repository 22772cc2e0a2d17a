"""Build the notebooks in notebooks/ from their sources in scripts/notebooks/; optionally run them.

    python scripts/build_notebooks.py            # write the .ipynb files, without outputs
    python scripts/build_notebooks.py --execute  # ... and run them in notebooks/, saving outputs

Each notebook's cells live in ``scripts/notebooks/<name>.py``, a jupytext
percent file (``# %%`` starts a code cell, ``# %% [markdown]`` a markdown
cell, ``tags=[...]`` its tags), so that a change to a notebook is a
reviewable change to Python code. Each notebook answers one question: its
source's first cell is a markdown title and a paragraph saying what it
answers; the build puts the cells every notebook shares after it
(``_opening.py``: a ``parameters`` cell holding ``DATA``, papermill style,
then the set-up that loads the audit); the public API only after that.
Cells that only show an image or an interactive panel carry the
``nbval-ignore-output`` tag: nbval compares the summary tables, not pictures
or widgets.

An executed notebook is saved without its widgets: each panel's output keeps
its static twin (``text/html``: the controls' values written out, the table,
the chart as an embedded PNG) and its text form, and loses its widget view
(``application/vnd.jupyter.widget-view+json``) and the notebook its widget
state (``metadata.widgets``). Why: a notebook opens untrusted, and
JupyterLab then renders only "safe" representations, never a widget view, so
the twin shows. Trusted, a widget view wins over the twin: from saved state,
its controls are drawn disconnected (nothing behind them until the cell runs
again); without saved state, jupyterlab_widgets' renderer (3.0,
``WidgetRenderer.renderModel``) writes "Error displaying widget: model not
found" once the kernel's widget manager is restored, and logs an error. With
no widget view saved, every front end and viewer shows the twin, trusted or
not, and running the cell shows the live panel in its place. The saved
bytes are those of the run: no random model id is stored.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbformat.v4 import new_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = ROOT / "scripts" / "notebooks"
#: The cells every notebook shares, after its title: parameters, then set-up.
OPENING = SOURCES / "_opening.py"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: The tables each notebook reads: alternatives, each the tables needed together.
#: A report of data that meets none says so instead of running the notebook
#: (explicit_audit.report._empty).
TABLES = {
    "plan_hashes.ipynb": [["plans"], ["requests"]],
    "withheld_counts.ipynb": [["receipts"]],
    "routing_sweep.ipynb": [["decisions", "policies"]],
    "trends.ipynb": [["receipts"], ["presentations"], ["plans"], ["requests"], ["decisions"]],
}


#: The section of each notebook that shows a check's findings: ``{check: heading}``.
#: A report's index links each check's tile there (explicit_audit.report._anchors).
CHECKS = {
    "plan_hashes.ipynb": {
        "plan_hashes": "Retrieval plans",
        "request_hashes": "Hash mismatches, and the dialect that explains each, if any",
        "request_hiding_rule": "The hiding rule (§7.1)",
        "request_independence": "Independence",
        "request_consistency": "Compile requests",
    },
    "withheld_counts.ipynb": {
        "receipt_rules": "Receipt checks",
        "presentation_rules": "Rendered views",
    },
    "routing_sweep.ipynb": {"decision_policy": "Replay verification"},
    "trends.ipynb": {},
}


def _cells(source: Path) -> list:
    """The cells of a jupytext percent file, keeping only their tags (``build`` sets ids)."""
    cells = jupytext.read(source, fmt="py:percent").cells
    for cell in cells:
        cell.metadata = {"tags": cell.metadata["tags"]} if cell.metadata.get("tags") else {}
    return cells


def sources() -> dict[str, Path]:
    """Each notebook's name and its source, in scripts/notebooks/."""
    return {f"{path.stem}.ipynb": path for path in sorted(SOURCES.glob("[!_]*.py"))}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name`` from its source: its title cell, the shared opening, its cells."""
    title, *own = _cells(SOURCES / name.replace(".ipynb", ".py"))
    notebook = new_notebook(cells=[title, *_cells(OPENING), *own])
    notebook.metadata["explicit_audit"] = {"tables": TABLES[name], "checks": CHECKS[name]}
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    for index, cell in enumerate(notebook.cells):
        cell.id = f"{Path(name).stem.replace('_', '-')}-{index:02d}"
    return notebook


def execute(notebook: nbformat.NotebookNode) -> float:
    from nbclient import NotebookClient

    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
        record_timing=False,
        store_widget_state=False,
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def static_panels(notebook: nbformat.NotebookNode) -> int:
    """Drop every widget view from the outputs, and the widget state (see the module's notes).

    Returns
    -------
    int
        The number of outputs that held a widget view; each keeps its other
        representations (a panel's static twin and text form).
    """
    dropped = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                dropped += 1
    notebook.metadata.pop("widgets", None)
    return dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(sources()), help="notebooks to build")
    parser.add_argument("--execute", action="store_true", help="run them and save outputs")
    args = parser.parse_args(argv)
    NOTEBOOKS.mkdir(exist_ok=True)
    for name in args.names:
        notebook = build(name)
        if args.execute:
            seconds = execute(notebook)
            panels = static_panels(notebook)
            print(f"{name}: executed in {seconds:.1f} s, {panels} panels saved as their twins")
        nbformat.validate(notebook)
        nbformat.write(notebook, NOTEBOOKS / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
