"""The head of a report page: its title, the verdict of every check, and its contents.

A reviewer reads the top of a page first: what question it answers (the
title), whether anything was found (the verdict, with the exit status
``explicit-audit verify`` gives on the same data), and where each part is
(the contents, from the page's own headings). The verdict is computed with
:func:`explicit_audit.verify_all` on the same audit the page shows.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from html import unescape

import pandas as pd
from markupsafe import Markup

from .._core import registry
from .._core.key_check import KEYS_CHECKER
from ..verify import Verification
from ._templates import render

__all__ = [
    "LISTED_ROWS",
    "TOC_PLACEHOLDER",
    "About",
    "check_kinds",
    "header_html",
    "insert_contents",
    "listed_checks",
    "page_kinds",
    "verdict_html",
]

#: Where the contents go in a page; filled once the page's headings are known.
TOC_PLACEHOLDER = "<!-- explicit_audit: contents -->"

_HEADING = re.compile(r'<h([23])\b[^>]*\bid="([^"]+)"[^>]*>(.*?)</h\1>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class About:
    """What a reviewer cites a page by, written under its title (``templates/_about.html.j2``).

    Attributes
    ----------
    data : str
        The data path, as given.
    period : str
        The period its records cover (:attr:`TimeRange.text
        <explicit_audit.report._time_range.TimeRange.text>`).
    version : str
        The kit's version.
    command : str or None
        The command line that wrote the report; None when written from Python.
    scope : tuple of str, optional
        The record kinds the period is over (a page's); None for every kind.
    report : str, optional
        On a page: the report's title, linked to ``index``.
    index : str, optional
        The index page's address.
    since : str, optional
        With an audit state (``report --state``): what is new since the last
        audit recorded in it, in words.
    """

    data: str
    period: str
    version: str
    command: str | None = None
    scope: tuple[str, ...] | None = None
    report: str | None = None
    index: str | None = None
    since: str | None = None


def check_kinds() -> dict[str, str | None]:
    """Each registered check's record kind (None for the rejected rows, of every kind)."""
    kind_of = {table.name: kind.name for kind in registry.kinds() for table in kind.tables}
    return {
        name: kind_of.get(check.examines, check.examines)
        for name, check in registry.checks().items()
    }


def listed_checks() -> list[str]:
    """The checks of every kind whose findings the verdict lists, for no notebook shows them.

    Not the rejected rows (each page's appendix lists them) nor the keys not
    as declared (the verdict counts them per key): records written twice,
    records' times, and whatever a plug-in registers beside them.
    """
    shown = {check.name for c in (registry.REJECTED_CHECKER, KEYS_CHECKER) for check in c.checks}
    return [name for name, kind in check_kinds().items() if kind is None and name not in shown]


#: The findings of one listed check a verdict shows; the rest are in ``findings.csv``.
LISTED_ROWS = 50
_LISTED_COLUMNS = ["source_file", "source_line", "record", "rule", "severity", "detail"]


def _listed(verification: Verification, kinds: set[str] | None) -> list[dict]:
    """Per listed check: its id, whether it looked at any record, its findings as rows (at
    most LISTED_ROWS), how many more."""
    findings = verification.findings
    sections = []
    for check in listed_checks():
        if check not in verification.checked:
            continue
        own = findings[findings["check"].astype("str") == check]
        if kinds is not None:
            own = own[own["kind"].astype("str").isin(kinds)]
        rows = [list(row) for row in own[_LISTED_COLUMNS].head(LISTED_ROWS).itertuples(index=False)]
        sections.append(
            {
                "check": check,
                "ran": bool(verification.checked[check]),
                "rows": rows,
                "more": max(len(own) - LISTED_ROWS, 0),
            }
        )
    return sections


def page_kinds(tables: Collection[str]) -> set[str]:
    """The record kinds of the tables a notebook reads (``policies`` and the like: none)."""
    kind_of = {table.name: kind.name for kind in registry.kinds() for table in kind.tables}
    return {kind_of[name] for name in tables if name in kind_of}


def _counts(summary: pd.DataFrame) -> dict:
    """What a verdict line says of some checks: their state and their counts."""
    findings = summary["findings"].astype("int64")
    statuses = set(summary["status"])
    not_run = int((summary["status"] == "not run").sum())
    if "findings" in statuses:
        state = "findings"
    elif not len(summary) or statuses == {"not run"}:
        state = "nothing to check"
    else:
        state = "clean"
    return {
        "state": state,
        "checks": len(summary),
        "ran": len(summary) - not_run,
        "not_run": not_run,
        "found": int(findings.sum()),
        "checks_found": int((findings > 0).sum()),
        "notices": int(summary["notices"].sum()) if "notices" in summary else 0,
    }


def verdict_html(
    verification: Verification,
    data: str,
    *,
    appendix: str = "#provenance",
    per_check: bool = True,
    kinds: Collection[str] | None = None,
    index: str | None = None,
) -> str:
    """The verdict banner: clean, or how many findings each check has, and the exit status.

    Below it, the keys the records hold that their kinds do not declare, or
    leave to a default, counted per key (``Verification.key_counts()``), and
    the findings of :func:`listed_checks` (records written twice, records'
    times), which no notebook shows: the first :data:`LISTED_ROWS` of each.

    Parameters
    ----------
    verification : Verification
        :func:`~explicit_audit.verify_all` of the audit the page shows.
    data : str
        The data path, as given.
    appendix : str, default "#provenance"
        Where the provenance appendix is: this page's, or a page's from the index.
    per_check : bool, default True
        With the table of the checks that found something (the index shows
        one tile per check instead).
    kinds : collection of str, optional
        The record kinds a page is about: its banner's first line, its table
        and its keys are its own checks' (the verdict over all the data one
        line below). By default, every check.
    index : str, optional
        The index page's address, linked from the line over all the data.

    Returns
    -------
    str
        A ``<section class="ea-verdict">`` element (``templates/verdict.html.j2``).
    """
    summary = verification.summary()
    everything = {**_counts(summary), "state": verification.state}
    shown = summary
    keys = verification.key_counts()
    if kinds is not None:
        kinds = set(kinds)
        of = check_kinds()
        shown = summary[[of.get(check) in kinds for check in summary["check"]]]
        keys = keys[keys["kind"].isin(kinds)]
    has_notices = "notices" in shown
    labels = ["check", "findings", *(["notices"] if has_notices else [])]
    rows = []
    for row in shown.itertuples(index=False):
        row_notices = int(row.notices) if has_notices else 0
        if row.findings == 0 and row_notices == 0:
            continue
        rows.append([str(row.check), int(row.findings), *([row_notices] if has_notices else [])])
    return render(
        "verdict.html.j2",
        data=data,
        status=verification.exit_status,
        page=_counts(shown) if kinds is not None else None,
        scope=sorted(kinds) if kinds is not None else None,
        whole=everything,
        rows=rows if per_check else [],
        labels=labels,
        appendix=appendix,
        index=index,
        keys=[
            [row.key, row.kind, row.note, int(row.count), row.files, row.suggestion]
            for row in keys.itertuples(index=False)
        ],
        listed=_listed(verification, kinds),
        listed_labels=["file", "line", "record", "rule", "severity", "detail"],
    )


def header_html(
    title: str,
    verification: Verification | None,
    data: str,
    *,
    kinds: Collection[str] | None = None,
    index: str | None = None,
    about: About | None = None,
) -> str:
    """The top of a page: the title, what it is cited by, the verdict, a place for the contents.

    Parameters
    ----------
    title : str
    verification : Verification or None
        None for a page with no verdict (its title only).
    data : str
    kinds : collection of str, optional
        The record kinds the page is about: its verdict's first line is its
        own checks' (see :func:`verdict_html`).
    index : str, optional
        The index page's address.
    about : About, optional
        The data, its period, the kit's version and the command line, under the title.

    Returns
    -------
    str
        A ``<header class="ea-header">`` element holding :data:`TOC_PLACEHOLDER`
        when it has a verdict (``templates/header.html.j2``).
    """
    verdict = None
    if verification is not None:
        verdict = Markup(verdict_html(verification, data, kinds=kinds, index=index))
    return render(
        "header.html.j2",
        title=title,
        about=about,
        verdict=verdict,
        placeholder=Markup(TOC_PLACEHOLDER),
    )


def insert_contents(page: str) -> str:
    """Fill a page's contents with links to its second- and third-level headings.

    The sections (``<h2>``) are numbered; each one's subsections (``<h3>``)
    are listed under it, unnumbered, so the numbers count sections only.

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
    sections: list[dict] = []
    for level, anchor, inner in _HEADING.findall(body):
        text = " ".join(unescape(_TAG.sub("", inner)).split())
        if not text:
            continue
        # The anchor as the page holds it (already escaped there).
        if level == "2" or not sections:  # a subsection before any section counts as one
            sections.append({"anchor": Markup(anchor), "text": text, "subs": []})
        else:  # under its section, unnumbered, so the numbers count sections: 1, 2, 3 ...
            sections[-1]["subs"].append((Markup(anchor), text))
    nav = render("contents.html.j2", sections=sections) if sections else ""
    return page.replace(TOC_PLACEHOLDER, nav, 1)
