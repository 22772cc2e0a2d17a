"""The stored notebooks are the ones their sources in scripts/notebooks/ build."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from scripts import build_notebooks

ROOT = Path(__file__).resolve().parent.parent
STORED = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))


def test_every_stored_notebook_has_a_source():
    assert sorted(build_notebooks.sources()) == STORED
    assert sorted(build_notebooks.TABLES) == STORED


@pytest.mark.parametrize("name", STORED)
def test_the_stored_cells_are_the_sources(name):
    built = build_notebooks.build(name)
    stored = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    rebuild = "edit scripts/notebooks, then: python scripts/build_notebooks.py --execute"
    assert [(c.id, c.cell_type) for c in built.cells] == [
        (c.id, c.cell_type) for c in stored.cells
    ], rebuild
    for made, kept in zip(built.cells, stored.cells, strict=True):
        assert made.source == kept.source, f"{name} {kept.id}: {rebuild}"
        assert dict(made.metadata) == dict(kept.metadata), f"{name} {kept.id}: {rebuild}"
    for key in ("explicit_audit", "kernelspec"):
        assert built.metadata[key] == stored.metadata[key]


def test_each_notebook_opens_with_its_question_then_the_shared_cells():
    opening = [cell.source for cell in build_notebooks._cells(build_notebooks.OPENING)]
    for name in build_notebooks.sources():
        cells = build_notebooks.build(name).cells
        assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ")
        assert [cell.source for cell in cells[1:3]] == opening
        assert cells[1].metadata["tags"] == ["parameters"]
