"""The markup of a report page: its template, its provenance block, its HTML cleaning.

Everything here writes or filters HTML; what goes into it is computed
elsewhere (:mod:`explicit_audit.provenance`, the notebook's own outputs).
Every value from the data is escaped before it reaches the page.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import bleach
import pandas as pd
from bleach.css_sanitizer import CSSSanitizer

from .provenance import Provenance
from .tables import MISSING

__all__ = ["PAGE_TEMPLATE", "REJECTED_SHOWN", "clean_html", "provenance_html"]

#: At most this many rejected rows are listed in a page's provenance block.
REJECTED_SHOWN = 50

_HTML_TAGS = frozenset(
    {
        *bleach.sanitizer.ALLOWED_TAGS,
        *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"),
        *("div", "span", "p", "pre", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6"),
        *("details", "summary", "small", "sub", "sup", "dl", "dt", "dd", "figure"),
        *("figcaption", "img", "style", "mark", "del", "ins", "kbd", "samp", "var"),
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


def _cell(value) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))


def _table(frame: pd.DataFrame, *, labels: dict[str, str], code: tuple[str, ...] = ()) -> str:
    """A plain HTML table of ``frame``'s ``labels`` columns, values escaped, in a scroll box."""
    columns = list(labels)
    head = "".join(f"<th>{escape(labels[c])}</th>" for c in columns)
    rows = []
    for row in frame[columns].astype(object).itertuples(index=False):
        cells = []
        for column, value in zip(columns, row, strict=True):
            text = _cell(value)
            cells.append(f"<td><code>{text}</code></td>" if column in code else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="ea-scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def provenance_html(facts: Provenance, *, notebook: str, notebook_sha256: str | None) -> str:
    """The block that opens a report: what it was computed from.

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
        holding a ``<section class="ea-provenance">``.
    """
    notebook_hash = f" (SHA-256 <code>{escape(notebook_sha256)}</code>)" if notebook_sha256 else ""
    kit = escape(facts.versions.get("explicit_audit", "?"))
    files, rejected = facts.files, facts.rejected
    values_read = int(files["values_read"].sum()) if len(files) else 0
    rebuilt = facts.dialects[facts.dialects["used_for"].str.contains("_hash|_sha256", regex=True)]
    rebuilt_in = "; ".join(
        f"{escape(used)} in <code>{escape(name)}</code>"
        for name, used in zip(rebuilt["dialect"], rebuilt["used_for"], strict=True)
    )
    row_counts = pd.DataFrame([dict(zip(facts.tables["table"], facts.tables["rows"], strict=True))])
    parts = [
        '<details class="ea-appendix" id="provenance">',
        '<summary><h2>Appendix: provenance</h2> <span class="ea-note">'
        f"{len(files)} input files with their SHA-256, rows per table, {len(rejected)} rejected, "
        "versions, hash dialects</span></summary>",
        '<section class="ea-provenance">',
        f"<p>Notebook <code>{escape(notebook)}</code>{notebook_hash}, run on "
        f"<code>{escape(facts.source)}</code>: {len(files)} input files, {values_read:,} values "
        f"read, {len(rejected):,} rejected. Hashes rebuilt: {rebuilt_in}. "
        '<span class="ea-note">The report records no time of day: the same inputs and '
        "versions give the same page.</span></p>",
        '<div class="ea-row"><div><h3>Rows per table</h3>',
        _table(row_counts, labels={name: name for name in row_counts.columns}),
        f"</div><div><h3>Versions (explicit_audit {kit})</h3>",
        _table(pd.DataFrame([facts.versions]), labels={name: name for name in facts.versions}),
        "</div></div>",
        f"<details><summary>Input files ({len(files)}), with their SHA-256</summary>",
        _table(
            files,
            labels={
                "source_file": "file",
                "bytes": "bytes",
                "sha256": "SHA-256",
                "values_read": "values read",
                "loaded": "loaded",
                "rejected": "rejected",
            },
            code=("sha256",),
        ),
        "</details>",
        f"<details><summary>Rejected rows ({len(rejected)})</summary>",
    ]
    if len(rejected):
        parts.append(
            _table(
                rejected.head(REJECTED_SHOWN),
                labels={
                    "source_file": "file",
                    "source_line": "line",
                    "kind": "kind",
                    "reason": "reason",
                    "raw": "raw text (excerpt)",
                },
                code=("raw",),
            )
        )
        if len(rejected) > REJECTED_SHOWN:
            parts.append(
                f'<p class="ea-note">The first {REJECTED_SHOWN} of {len(rejected)}; '
                "<code>explicit-audit verify DATA --json</code> lists them all.</p>"
            )
    else:
        parts.append("<p>None: every value read was loaded.</p>")
    parts += [
        "</details>",
        f"<details><summary>Hash dialects ({len(facts.dialects)})</summary>",
        _table(
            facts.dialects,
            labels={
                "dialect": "dialect",
                "canonical": "canonical",
                "used_for": "used for",
                "description": "writes",
            },
            code=("dialect",),
        ),
        "</details>",
        "</section>",
        "</details>",
    ]
    return "\n".join(parts)


#: The page's Jinja2 template (``templates/page.html.j2`` beside this module, shipped as
#: package data): nbconvert's lab template, less everything that runs or fetches (no
#: require.js, MathJax, Mermaid or widget manager); code folded into <details>; HTML and
#: Markdown outputs cleaned and set in a box that scrolls sideways when wide. The page
#: opens with the title, the verdict and the contents; provenance closes it, as a folded
#: appendix.
PAGE_TEMPLATE = (Path(__file__).parent / "templates" / "page.html.j2").read_text(encoding="utf-8")
