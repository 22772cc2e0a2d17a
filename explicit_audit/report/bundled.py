"""The files that ship inside the kit: its notebooks and the formats document.

The repository keeps them where its tests and readers find them,
``notebooks/`` (nbval runs them there) and ``docs/formats.md``; the
package maps those two folders in as ``explicit_audit.notebooks`` and
``explicit_audit.docs`` (``[tool.setuptools.package-dir]`` in
``pyproject.toml``), so a wheel carries them and an editable install reads
the repository's own files: one copy, read by both.

``explicit-audit report DATA`` runs :func:`notebooks_folder`'s notebooks
unless ``--notebooks`` names others; ``explicit-audit notebooks DIR`` copies
them into a folder of one's own (:func:`copy_notebooks`) to explore one's
own data. Nothing here needs Jupyter.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
from pathlib import Path

from ..errors import AuditError
from .parameters import cell_source, data_parameter, parameters_cell

__all__ = ["copy_notebooks", "formats_document", "notebooks_folder"]


def _folder(package: str) -> Path:
    module = importlib.import_module(package)
    for entry in getattr(module, "__path__", []):
        if Path(entry).is_dir():
            return Path(entry)
    raise AuditError(
        f"{package}: the kit's bundled files are missing from this installation; reinstall "
        "explicit_audit"
    )


def notebooks_folder() -> Path:
    """The folder of the notebooks that ship with the kit.

    Examples
    --------
    >>> sorted(path.name for path in notebooks_folder().glob("*.ipynb"))
    ['plan_hashes.ipynb', 'routing_sweep.ipynb', 'trends.ipynb', 'withheld_counts.ipynb']
    """
    return _folder("explicit_audit.notebooks")


def formats_document() -> Path:
    """``formats.md``: every record shape and file format the kit reads.

    Examples
    --------
    >>> formats_document().read_text(encoding="utf-8").startswith("#")
    True
    """
    return _folder("explicit_audit.docs") / "formats.md"


def copy_notebooks(
    target: str | os.PathLike, *, data: str | None = None, overwrite: bool = False
) -> list[Path]:
    """Copy the kit's notebooks into ``target``, outputs cleared, to run on one's own data.

    The stored outputs are left behind: they show the kit's sample data, not
    the data the copy will read.

    Parameters
    ----------
    target : str or path
        The folder to copy into (created).
    data : str, optional
        The data path to write into each notebook's parameters cell
        (``DATA = ...``): a URL or an absolute path as given, a relative one
        rewritten relative to ``target``, where the notebooks run. Without
        it the notebooks keep their default, ``"../data"`` (a ``data``
        folder beside ``target``).
    overwrite : bool, default False
        Replace notebooks of the same name already in ``target``; without it
        such a notebook stops the copy before anything is written.

    Returns
    -------
    list of Path
        The notebooks written, in name order.

    Raises
    ------
    AuditError
        When a notebook of the same name is in ``target`` (and not
        ``overwrite``), or ``target`` is a file.

    Examples
    --------
    >>> copy_notebooks("my-audit/notebooks", data="logs/")  # doctest: +SKIP
    [PosixPath('my-audit/notebooks/plan_hashes.ipynb'), ...]
    """
    folder = Path(target)
    sources = sorted(notebooks_folder().glob("*.ipynb"))
    if folder.exists() and not folder.is_dir():
        raise AuditError(f"{folder}: not a folder; name a folder to copy the notebooks into")
    taken = [folder / source.name for source in sources if (folder / source.name).exists()]
    if taken and not overwrite:
        raise AuditError(
            f"{', '.join(str(path) for path in taken)}: already there; pass --force to replace "
            "them, or name another folder"
        )
    written_data = None if data is None else _data_as_seen_from(data, folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources:
        notebook = json.loads(source.read_text(encoding="utf-8"))
        _clear_outputs(notebook)
        if written_data is not None:
            _set_data(notebook, written_data, source.name)
        path = folder / source.name
        text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    return written


def _data_as_seen_from(data: str, folder: Path) -> str:
    """``data`` as a notebook in ``folder`` must name it: relative paths re-rooted there."""
    if "://" in data or os.path.isabs(data):
        return data
    return os.path.relpath(Path(data).absolute(), folder.absolute())


def _clear_outputs(notebook: dict) -> None:
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    # The panels' saved state shows the sample data too.
    notebook.get("metadata", {}).pop("widgets", None)


def _set_data(notebook: dict, data: str, name: str) -> None:
    """Rewrite the data path's assignment in the parameters cell, leaving the rest as it is."""
    cell = parameters_cell(notebook)
    if cell is None:
        raise AuditError(f"{name}: no cell tagged 'parameters' to write the data path into")
    variable = data_parameter(notebook)
    source = cell_source(cell)
    lines = source.splitlines(keepends=True)
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            first, last = node.lineno - 1, node.end_lineno - 1
            ending = "\n" if lines[last].endswith("\n") else ""
            lines[first : last + 1] = [f"{variable} = {data!r}{ending}"]
            cell["source"] = "".join(lines)
            return
    raise AuditError(f"{name}: the parameters cell does not assign {variable} plainly")
