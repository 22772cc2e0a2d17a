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

An executed notebook is saved with its widget state (``metadata.widgets``,
as ``jupyter nbconvert --execute`` stores it), so a notebook opened before it
is run shows its panels' controls and last output rather than their text
form. Widget model ids are random per run; they are renamed here in a fixed
order (from each widget view, in cell order, through the models it refers
to), and models no view refers to are left out, so the same run writes the
same bytes.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from nbformat.v4 import new_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = ROOT / "scripts" / "notebooks"
#: The cells every notebook shares, after its title: parameters, then set-up.
OPENING = SOURCES / "_opening.py"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MODEL_REFERENCE = "IPY_MODEL_"

#: The tables each notebook reads: alternatives, each the tables needed together.
#: A report of data that meets none says so instead of running the notebook
#: (explicit_audit.report._empty).
TABLES = {
    "plan_hashes.ipynb": [["plans"], ["requests"]],
    "withheld_counts.ipynb": [["receipts"]],
    "routing_sweep.ipynb": [["decisions", "policies"]],
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
    notebook.metadata["explicit_audit"] = {"tables": TABLES[name]}
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
        store_widget_state=True,
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start


def _references(value: Any) -> list[str]:
    """The model ids a widget state refers to, in the order its (sorted) keys hold them."""
    if isinstance(value, str):
        return [value[len(MODEL_REFERENCE) :]] if value.startswith(MODEL_REFERENCE) else []
    if isinstance(value, dict):
        return [ref for key in sorted(value) for ref in _references(value[key])]
    if isinstance(value, list):
        return [ref for item in value for ref in _references(item)]
    return []


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        if value.startswith(MODEL_REFERENCE) and value[len(MODEL_REFERENCE) :] in names:
            return MODEL_REFERENCE + names[value[len(MODEL_REFERENCE) :]]
        return value
    if isinstance(value, dict):
        return {
            key: names.get(item, item)
            if key == "model_id" and isinstance(item, str)
            else _renamed(item, names)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_renamed(item, names) for item in value]
    return value


def stable_widget_state(notebook: nbformat.NotebookNode, name: str) -> int:
    """Rename the widget models in a fixed order and drop those no view shows.

    Returns
    -------
    int
        The number of widget models kept.
    """
    stored = notebook.metadata.get("widgets", {}).get(WIDGET_STATE)
    if not stored:
        return 0
    state = stored["state"]
    order: list[str] = []

    def visit(model_id: str) -> None:
        if model_id in state and model_id not in order:
            order.append(model_id)
            for reference in _references(state[model_id]["state"]):
                visit(reference)

    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view:
                visit(view["model_id"])
    stem = Path(name).stem
    names = {
        model_id: uuid.uuid5(uuid.NAMESPACE_URL, f"explicit_audit/{stem}/{index}").hex
        for index, model_id in enumerate(order)
    }
    stored["state"] = {names[m]: _renamed(state[m], names) for m in order}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view and view["model_id"] in names:
                view["model_id"] = names[view["model_id"]]
    return len(order)


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
            kept = stable_widget_state(notebook, name)
            print(f"{name}: executed in {seconds:.1f} s, {kept} widget models saved")
        nbformat.validate(notebook)
        nbformat.write(notebook, NOTEBOOKS / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
