"""The report's HTML blocks as Jinja2 templates, every value escaped unless marked safe.

The verdict banner, the page header, the contents and the provenance appendix
are written by templates in ``templates/`` beside this module (shipped as
package data), rendered with autoescape on: a value from the data cannot
become markup, whatever it holds. The page itself is nbconvert's template
(``page.html.j2``), which places these blocks.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .tables import MISSING

__all__ = ["TEMPLATES", "render"]

#: The folder of the page's templates.
TEMPLATES = Path(__file__).parent / "templates"


def _cell(value) -> str:
    """A table cell's text: "—" for a missing value, yes/no, integers with thousands."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _count(n: int, one: str, many: str | None = None) -> str:
    """``1 finding``, ``3 findings``, ``1,204 notices``."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


_ENVIRONMENT = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)
_ENVIRONMENT.filters["cell"] = _cell
_ENVIRONMENT.filters["count"] = _count
_ENVIRONMENT.filters["thousands"] = lambda n: f"{int(n):,}"


def render(name: str, **values) -> str:
    """Render the template ``name`` (in :data:`TEMPLATES`) with ``values``, escaped.

    Parameters
    ----------
    name : str
        A template's file name, such as ``"verdict.html.j2"``.
    **values
        What the template reads.

    Returns
    -------
    str

    Examples
    --------
    A value from the data is escaped:

    >>> sections = [{"anchor": "totals", "text": "<b>Totals</b>", "subs": []}]
    >>> nav = render("contents.html.j2", sections=sections)
    >>> nav[nav.index("<ol>") :]  # doctest: +ELLIPSIS
    '<ol><li><a href="#totals">&lt;b&gt;Totals&lt;/b&gt;</a></li><li><a href="#provenance">...'
    """
    return _ENVIRONMENT.get_template(name).render(**values)
