"""The markup of a report page: its template, its provenance block, its HTML cleaning.

Everything here writes or filters HTML; what goes into it is computed
elsewhere (:mod:`explicit_audit.provenance`, the notebook's own outputs).
Every value from the data is escaped before it reaches the page.
"""

from __future__ import annotations

from html import escape

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


# The lab template, less everything that runs or fetches: no require.js,
# MathJax, Mermaid or widget manager; code folded into <details>; HTML and
# Markdown outputs cleaned and set in a box that scrolls sideways when wide.
# The page opens with the title, the verdict and the contents; provenance
# closes it, as a folded appendix.
PAGE_TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block extra_css %}
<meta http-equiv="Content-Security-Policy"
  content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:">
<meta name="generator" content="explicit_audit {{ resources.explicit_audit.version }}">
<style type="text/css">
main { max-width: 1200px; margin: 0 auto; padding: 1em 1.5em; box-sizing: border-box;
  text-align: left; font-family: var(--jp-content-font-family, system-ui, sans-serif); }
main, main p, main li, main td, main th { text-align: left; }
.jp-Cell, .jp-OutputArea, .jp-OutputArea-child, .jp-OutputArea-output, .jp-Cell-outputWrapper,
.jp-Cell-inputWrapper { min-width: 0; max-width: 100%; }
.jp-OutputArea-output { overflow-x: auto; }
.jp-RenderedHTMLCommon table, section.ea-provenance table, table.ea-verdict-table {
  margin-left: 0; margin-right: auto; }
/* JupyterLab right-aligns every cell of an HTML output; a report reads left to right. */
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th, .jp-RenderedHTMLCommon tr,
.dataframe thead th, .dataframe thead tr { text-align: left !important; }
.ea-scroll { overflow-x: auto; max-width: 100%; }
pre { overflow-x: auto; max-width: 100%; }
.jp-OutputArea-output img { max-width: 100%; height: auto; }
header.ea-header h1.ea-title { font-size: 1.8em; margin: 0.3em 0 0.4em 0; }
section.ea-verdict { border-radius: 4px; padding: 0.6em 1em; margin: 0 0 1em 0;
  border: 1px solid; }
section.ea-verdict.ea-clean { background: #e8f4ea; border-color: #009e73; }
section.ea-verdict.ea-found { background: #fdf0e3; border-color: #d55e00; }
section.ea-verdict p { margin: 0 0 0.4em 0; font-size: 1.05em; }
section.ea-verdict table { border-collapse: collapse; font-size: 0.9em; }
section.ea-verdict th, section.ea-verdict td { border: 1px solid #ccc; padding: 2px 8px; }
nav.ea-contents { margin: 0 0 1.5em 0; font-size: 0.95em; }
nav.ea-contents h2 { font-size: 1.1em; margin: 0.2em 0; }
nav.ea-contents ol { margin: 0.2em 0; padding-left: 1.5em; }
nav.ea-contents li.ea-sub { margin-left: 1.2em; list-style-type: circle; }
details.ea-code > summary { cursor: pointer; color: #666; font-size: 0.85em; margin: 0.2em 0;
  font-family: var(--jp-ui-font-family, system-ui, sans-serif); }
details.ea-code[open] > summary { margin-bottom: 0.4em; }
details.ea-appendix { border-top: 2px solid #ccc; margin: 2em 0 0 0; padding: 0.5em 0; }
details.ea-appendix > summary { cursor: pointer; }
details.ea-appendix > summary h2 { display: inline; font-size: 1.2em; }
section.ea-provenance { border: 1px solid #ccc; border-radius: 4px; padding: 0.6em 1em;
  margin: 0.5em 0 1.5em 0; background: #fafafa; font-size: 0.85em; }
section.ea-provenance h3 { font-size: 1em; margin: 1em 0 0.3em 0; }
section.ea-provenance table { border-collapse: collapse; margin: 0.2em 0; }
section.ea-provenance th, section.ea-provenance td { border: 1px solid #ddd; padding: 2px 6px;
  vertical-align: top; }
section.ea-provenance code { font-family: monospace; word-break: break-all; }
.ea-note { color: #555; font-size: 0.9em; }
section.ea-provenance .ea-row { display: flex; flex-wrap: wrap; gap: 0 2em; }
section.ea-provenance .ea-row > div { min-width: 0; max-width: 100%; }
section.ea-provenance details > summary { cursor: pointer; margin: 0.5em 0 0.2em 0;
  font-weight: 600; }
</style>
{% endblock extra_css %}
{%- block body_header -%}
{{ super() }}
{{ resources.explicit_audit.header_html }}
{%- endblock body_header -%}
{% block body_footer %}
{{ resources.explicit_audit.provenance_html }}
{{ super() }}
{% endblock body_footer %}
{% block input_group -%}
<details class="ea-code"><summary>Show code</summary>
{{ super() }}
</details>
{%- endblock input_group %}
{% block data_html scoped -%}
<div class="jp-RenderedHTMLCommon jp-RenderedHTML jp-OutputArea-output ea-scroll
  {{ extra_class }}" data-mime-type="text/html">
{{ output.data['text/html'] | ea_clean_html }}
</div>
{%- endblock data_html %}
{% block data_markdown scoped -%}
<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-OutputArea-output ea-scroll
  {{ extra_class }}" data-mime-type="text/markdown">
{{ output.data['text/markdown'] | markdown2html | ea_clean_html }}
</div>
{%- endblock data_markdown %}
{%- block data_javascript scoped -%}{%- endblock data_javascript -%}
{%- block data_widget_view scoped -%}{%- endblock data_widget_view -%}
"""
