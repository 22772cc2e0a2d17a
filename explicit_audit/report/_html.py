"""The markup of a report page: its template, its provenance block, its HTML cleaning.

Everything here writes or filters HTML; what goes into it is computed
elsewhere (:mod:`explicit_audit.provenance`, the notebook's own outputs).
Every value from the data is escaped before it reaches the page.
"""

from __future__ import annotations

from pathlib import Path

import bleach
import pandas as pd
from bleach.css_sanitizer import CSSSanitizer

from ._templates import render
from .provenance import Provenance
from .whole_text import WholeText

__all__ = ["PAGE_TEMPLATE", "REJECTED_SHOWN", "VERDICT_CSS", "clean_html", "provenance_html"]

#: At most this many rejected rows are listed in a page's provenance block.
REJECTED_SHOWN = 50

_HTML_TAGS = frozenset(
    {
        *bleach.sanitizer.ALLOWED_TAGS,
        *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"),
        *("div", "span", "p", "pre", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6"),
        *("details", "summary", "small", "sub", "sup", "dl", "dt", "dd", "figure"),
        *("figcaption", "img", "style", "mark", "del", "ins", "kbd", "samp", "var", "wbr"),
    }
)
_HTML_ATTRIBUTES = {
    "*": ["class", "id", "title", "style", "align", "valign", "colspan", "rowspan"],
    "a": ["href", "title"],
    "img": ["src", "alt", "width", "height"],
    "table": ["border", "cellpadding", "cellspacing"],
    "style": ["scoped", "type"],
    "details": ["open"],
}
_CSS = CSSSanitizer()


def clean_html(text: str) -> str:
    """Keep an allowlist of tags and attributes of an HTML output; escape the rest.

    Tables, text markup, ``<style>`` and images pass; a ``<script>``, an event
    handler attribute or a ``javascript:`` link does not: the tag is written
    out as text, so the reader sees what the data held.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> clean_html("<b>ok</b><script>alert(1)</script>")
    '<b>ok</b>&lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return bleach.clean(
        text,
        tags=_HTML_TAGS,
        attributes=_HTML_ATTRIBUTES,
        protocols={"data", "https", "http", "mailto"},
        css_sanitizer=_CSS,
        strip=False,
        strip_comments=True,
    )


def _table(frame: pd.DataFrame, labels: dict[str, str], code: tuple[str, ...] = ()) -> dict:
    """``frame``'s ``labels`` columns as the provenance template's table takes them."""
    columns = list(labels)
    rows = frame[columns].astype(object).values.tolist() if len(frame) else []
    return {
        "labels": [labels[column] for column in columns],
        "rows": [[_plain(value) for value in row] for row in rows],
        "code": tuple(columns.index(column) for column in code),
    }


def _whole(excerpt: str, whole: WholeText) -> dict:
    """A cut excerpt's cell: the excerpt, and one click away the whole text it was cut from."""
    if whole.whole:
        note = f"The whole {whole.what}, {whole.size:,} bytes."
    else:
        note = f"The {whole.what}'s first {whole.shown:,} of {whole.size:,} bytes."
    return {"excerpt": excerpt, "text": whole.text, "note": note}


def _plain(value):
    """A numpy scalar as the Python value it holds (an integer keeps its thousands)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, str) else value


def provenance_html(facts: Provenance, *, notebook: str, notebook_sha256: str | None) -> str:
    """The block that closes a report: what it was computed from.

    Parameters
    ----------
    facts : Provenance
    notebook : str
        The notebook's file name.
    notebook_sha256 : str or None
        The notebook file's SHA-256.

    Returns
    -------
    str
        A closed ``<details id="provenance">`` element (the page's appendix)
        holding a ``<section class="ea-provenance">`` (``templates/provenance.html.j2``).
    """
    files, rejected = facts.files, facts.rejected
    rebuilt = facts.dialects[facts.dialects["used_for"].str.contains("_hash|_sha256", regex=True)]
    row_counts = pd.DataFrame([dict(zip(facts.tables["table"], facts.tables["rows"], strict=True))])
    shown = _table(
        rejected.head(REJECTED_SHOWN),
        {
            "source_file": "file",
            "source_line": "line",
            "kind": "kind",
            "reason": "reason",
            "raw": "raw text (excerpt)",
        },
        code=("raw",),
    )
    for position, whole in facts.whole_texts.items():
        if position < len(shown["rows"]):
            shown["rows"][position][-1] = _whole(shown["rows"][position][-1], whole)
    return render(
        "provenance.html.j2",
        notebook=notebook,
        notebook_sha256=notebook_sha256,
        source=facts.source,
        kit=facts.versions.get("explicit_audit", "?"),
        values_read=int(files["values_read"].sum()) if len(files) else 0,
        rebuilt=list(zip(rebuilt["dialect"], rebuilt["used_for"], strict=True)),
        row_counts=_table(row_counts, {name: name for name in row_counts.columns}),
        versions=_table(pd.DataFrame([facts.versions]), {name: name for name in facts.versions}),
        files=_table(
            files,
            {
                "source_file": "file",
                "bytes": "bytes",
                "sha256": "SHA-256",
                "values_read": "values read",
                "loaded": "loaded",
                "rejected": "rejected",
            },
            code=("sha256",),
        ),
        rejected={**shown, "total": len(rejected)},
        dialects=_table(
            facts.dialects,
            {
                "dialect": "dialect",
                "canonical": "canonical",
                "used_for": "used for",
                "description": "writes",
            },
            code=("dialect",),
        ),
    )


#: The page's Jinja2 template (``templates/page.html.j2`` beside this module, shipped as
#: package data): nbconvert's lab template, less everything that runs or fetches (no
#: require.js, MathJax, Mermaid or widget manager); code folded into <details>; HTML and
#: Markdown outputs cleaned and set in a box that scrolls sideways when wide. The page
#: opens with the title, the verdict and the contents; provenance closes it, as a folded
#: appendix.
PAGE_TEMPLATE = (Path(__file__).parent / "templates" / "page.html.j2").read_text(encoding="utf-8")

#: The rules the pages and the index share (the verdict banner, notes, scroll boxes),
#: included by both templates.
VERDICT_CSS = (Path(__file__).parent / "templates" / "_verdict.css").read_text(encoding="utf-8")
