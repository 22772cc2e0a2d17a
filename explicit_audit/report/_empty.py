"""A notebook's page when the data holds no record of its kind.

A notebook may say in its metadata which tables it reads
(``metadata.explicit_audit.tables``, written by ``scripts/build_notebooks.py``
for the kit's notebooks): a list of alternatives, each a table name or a list
of names that are needed together. ``[["plans"], ["requests"]]`` runs on data
holding plans or requests; ``[["decisions", "policies"]]`` needs both. When
no alternative is met, the notebook is not run (it would have nothing to
show, and might fail on an empty table); its page says so instead, with the
same verdict and appendix as every other page.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import nbformat

from .._core import registry
from ..audit import Audit

__all__ = ["has_records", "missing_tables", "no_records_notebook", "notebook_tables"]


def notebook_tables(notebook: nbformat.NotebookNode) -> tuple[tuple[str, ...], ...]:
    """The tables a notebook reads, as its metadata names them (``metadata.explicit_audit.tables``).

    Parameters
    ----------
    notebook : NotebookNode

    Returns
    -------
    tuple of tuple of str
        The alternatives, each the names of :class:`~explicit_audit.Audit`
        tables (``"policies"`` included) needed together; empty when the
        notebook does not say.

    Examples
    --------
    >>> nb = nbformat.v4.new_notebook(
    ...     metadata={"explicit_audit": {"tables": ["plans", ["decisions", "policies"]]}})
    >>> notebook_tables(nb)
    (('plans',), ('decisions', 'policies'))
    """
    alternatives = notebook.metadata.get("explicit_audit", {}).get("tables", ())
    return tuple((group,) if isinstance(group, str) else tuple(group) for group in alternatives)


def _sizes(audit: Audit) -> dict[str, int]:
    # Audit.rows: on Dask tables, the accounting's counts (computed once).
    sizes = {name: audit.rows(name) for name in audit.tables}
    sizes.update(
        (declared.name, len(getattr(audit, declared.name))) for declared in registry.documents()
    )
    return sizes


def has_records(audit: Audit, tables: Sequence[Sequence[str]]) -> bool:
    """Whether ``audit`` meets one of the alternatives (every table of it has rows)."""
    if not tables:
        return True
    sizes = _sizes(audit)
    return any(all(sizes.get(name, 0) for name in group) for group in tables)


def missing_tables(audit: Audit, tables: Sequence[Sequence[str]]) -> list[str]:
    """The tables, of every alternative, that ``audit`` holds no row of."""
    sizes = _sizes(audit)
    missing = [name for group in tables for name in group if not sizes.get(name, 0)]
    return list(dict.fromkeys(missing))


def _names(names: Sequence[str], joint: str) -> str:
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + f" {joint} " + quoted[-1]


def no_records_notebook(
    notebook: nbformat.NotebookNode, data: str | os.PathLike, audit: Audit
) -> nbformat.NotebookNode:
    """What a notebook's page says when the data holds no record of its kind.

    Parameters
    ----------
    notebook : NotebookNode
        The notebook (not run, not changed).
    data : str or path
        The data path, as given.
    audit : Audit
        What was loaded from it.

    Returns
    -------
    NotebookNode
        The notebook's opening Markdown (title and question) and one cell
        naming the tables it needs that ``data`` leaves empty: its heading
        names them when ``data`` holds some of what the notebook needs (the
        decisions without their policies), and says there are no records of
        this kind when it holds none.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Plans?")],
    ...                               metadata={"explicit_audit": {"tables": ["plans"]}})
    >>> no_records_notebook(nb, "logs", ea.Audit()).cells[-1].source.splitlines()[0]
    '## No records of this kind in `logs`'
    """
    opening = [cell for cell in notebook.cells[:1] if cell.cell_type == "markdown"]
    tables = notebook_tables(notebook)
    needs = " or ".join(_names(group, "and") for group in tables)
    missing = missing_tables(audit, tables)
    sizes = _sizes(audit)
    held = [name for group in tables for name in group if sizes.get(name, 0)]
    held = list(dict.fromkeys(held))
    if held:
        # Some of what it needs is there: the page names what is not, not "no records".
        heading = f"No {_names(missing, 'or')} in `{os.fspath(data)}`"
        holds = ", ".join(f"{sizes[name]:,} in `{name}`" for name in held)
        found = f"the data holds {holds} but none in {_names(missing, 'or')}"
    else:
        heading = f"No records of this kind in `{os.fspath(data)}`"
        found = f"the data holds none in {_names(missing, 'or')}"
    note = nbformat.v4.new_markdown_cell(
        f"## {heading}\n\n"
        f"This notebook needs rows in {needs}; {found}, so the notebook was not run and "
        "there is nothing to show. The verdict above covers all the data; the rows of every "
        "table are in the appendix."
    )
    return nbformat.v4.new_notebook(cells=[*opening, note], metadata=dict(notebook.metadata))
