"""The head of a report page: its title, the verdict of every check, and its contents.

A reviewer reads the top of a page first: what question it answers (the
title), whether anything was found (the verdict, with the exit status
``explicit-audit verify`` gives on the same data), and where each part is
(the contents, from the page's own headings). The verdict is computed with
:func:`explicit_audit.verify_all` on the same audit the page shows.
"""

from __future__ import annotations

import re
from html import escape, unescape

from ..verify import Verification

__all__ = ["TOC_PLACEHOLDER", "header_html", "insert_contents", "verdict_html"]

#: Where the contents go in a page; filled once the page's headings are known.
TOC_PLACEHOLDER = "<!-- explicit_audit: contents -->"

_HEADING = re.compile(r'<h([23])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def verdict_html(verification: Verification, data: str) -> str:
    """The verdict banner: clean, or how many findings each check has, and the exit status.

    Below it, the keys the records hold that their kinds do not declare, or
    leave to a default, counted per key (``Verification.key_counts()``).

    Parameters
    ----------
    verification : Verification
        :func:`~explicit_audit.verify_all` of the audit the page shows.
    data : str
        The data path, as given.

    Returns
    -------
    str
        A ``<section class="ea-verdict">`` element.
    """
    summary = verification.summary()
    findings = summary["findings"].astype("int64")
    notices = int((verification.findings["severity"] == "notice").sum())
    status = verification.exit_status
    command = f"<code>explicit-audit verify {escape(data)}</code> exits {status}"
    notice_note = f", and {_count(notices, 'notice')} that do not count" if notices else ""
    not_run = int((summary["status"] == "not run").sum())
    ran = len(summary) - not_run
    not_run_note = f"; {not_run} not run (no records)" if not_run else ""
    if verification.state == "nothing to check":
        line = (
            f"<strong>Nothing to check</strong>: none of the {len(summary)} checks looked at "
            f"a record. {command}."
        )
        css = "ea-verdict ea-found"
    elif verification.state == "clean":
        line = (
            f"<strong>Clean on what was checked</strong>: none of the {ran} checks that looked "
            f"at records found an error{notice_note}{not_run_note}. {command}."
        )
        css = "ea-verdict ea-clean"
    else:
        found = int(findings.sum())
        checks = int((findings > 0).sum())
        line = (
            f"<strong>{_count(found, 'finding')}</strong> in {checks} of {len(summary)} "
            f"checks{notice_note}{not_run_note}. {command}."
        )
        css = "ea-verdict ea-found"
    rows = []
    has_notices = "notices" in summary
    for row in summary.itertuples(index=False):
        row_notices = int(row.notices) if has_notices else 0
        if row.findings == 0 and row_notices == 0:
            continue
        cells = f"<td><code>{escape(str(row.check))}</code></td><td>{int(row.findings):,}</td>"
        if has_notices:
            cells += f"<td>{row_notices:,}</td>"
        rows.append(f"<tr>{cells}</tr>")
    table = ""
    if rows:
        head = "<th>check</th><th>findings</th>" + ("<th>notices</th>" if has_notices else "")
        table = (
            f'<div class="ea-scroll"><table class="ea-verdict-table"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    return (
        f'<section class="{css}" id="verdict" aria-label="verdict">'
        f'<p class="ea-verdict-line">{line} Every check runs over all the data; '
        f'<a href="#provenance">what was read</a> is in the appendix.</p>{table}'
        f"{_keys_html(verification)}</section>"
    )


def _keys_html(verification: Verification) -> str:
    """The keys not as declared, per key, so that a producer's schema drift shows at once."""
    keys = verification.key_counts()
    if not len(keys):
        return ""
    rows = []
    for row in keys.itertuples(index=False):
        near = row.suggestion
        suggestion = f"<code>{escape(near)}</code>" if isinstance(near, str) else ""
        rows.append(
            f"<tr><td><code>{escape(row.key)}</code></td><td>{escape(row.kind)}</td>"
            f"<td>{escape(row.note)}</td><td>{int(row.count):,}</td><td>{escape(row.files)}</td>"
            f"<td>{suggestion}</td></tr>"
        )
    head = "".join(f"<th>{name}</th>" for name in ("key", "kind", "note", "records", "files",
                                                   "did you mean"))  # fmt: skip
    return (
        '<p class="ea-verdict-keys">Keys not as declared (<code>record_keys</code>), per key:</p>'
        f'<div class="ea-scroll"><table class="ea-verdict-table ea-verdict-keys">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def header_html(title: str, verification: Verification, data: str) -> str:
    """The top of a page: the title, then the verdict, then a place for the contents.

    Parameters
    ----------
    title : str
    verification : Verification
    data : str

    Returns
    -------
    str
        A ``<header class="ea-header">`` element holding :data:`TOC_PLACEHOLDER`.
    """
    return (
        f'<header class="ea-header"><h1 class="ea-title">{escape(title)}</h1>\n'
        f"{verdict_html(verification, data)}\n{TOC_PLACEHOLDER}</header>"
    )


def insert_contents(page: str) -> str:
    """Fill a page's contents with links to its second- and third-level headings.

    Parameters
    ----------
    page : str
        A page holding :data:`TOC_PLACEHOLDER` once.

    Returns
    -------
    str
        The page with a ``<nav class="ea-contents">`` in its place (nothing
        when the page has no heading).
    """
    body = page.split(TOC_PLACEHOLDER, 1)[1] if TOC_PLACEHOLDER in page else page
    items = []
    for level, anchor, inner in _HEADING.findall(body):
        text = " ".join(unescape(_TAG.sub("", inner)).split())
        if text:
            css = ' class="ea-sub"' if level == "3" else ""
            items.append(f'<li{css}><a href="#{anchor}">{escape(text)}</a></li>')
    nav = (
        '<nav class="ea-contents" aria-label="contents"><h2>Contents</h2><ol>'
        + "".join(items)
        + '<li><a href="#provenance">Appendix: provenance</a></li></ol></nav>'
        if items
        else ""
    )
    return page.replace(TOC_PLACEHOLDER, nav, 1)
