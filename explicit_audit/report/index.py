"""The report's index page: the verdict of every check, one tile each, and the pages.

``explicit-audit report`` writes ``index.html`` beside the pages. A reviewer
reads the verdict first (the same banner as every page, with the exit status
``explicit-audit verify`` gives on the same data), then one tile per check:
clean, findings or not run, with the records it looked at, linking to the
section of the page that shows its findings. The page a check belongs to is
the one whose notebook reads the table the check examines
(``metadata.explicit_audit.tables``), and the section the one its notebook
names for it (``metadata.explicit_audit.checks``, see
:mod:`~explicit_audit.report._anchors`; a page that names none: its
verdict); a check of no table (the rejected rows) links to the rejected
rows in the provenance appendix, where every page lists them; the keys not
as declared to the index's own verdict, which counts them per key. Below
the tiles, the index links the findings and rejected rows written beside
it as CSV and Parquet (:mod:`~explicit_audit.report.downloads`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from .._core import registry
from .._version import __version__
from ..verify import Verification
from ._anchors import check_anchor
from ._header import About, check_kinds, listed_checks, verdict_html
from ._templates import render
from .downloads import DOWNLOADS

__all__ = ["INDEX_NAME", "Page", "index_html", "tiles"]

#: The index page's file name, beside the pages.
INDEX_NAME = "index.html"


@dataclass(frozen=True)
class Page:
    """One report page, as the index lists it.

    Parameters
    ----------
    file : str
        Its file name, beside the index (``plan_hashes.html``).
    title : str
        The notebook's title.
    tables : tuple of str
        Every table its notebook reads.
    ran : bool
        False when the data held no records of its kind (the page says so).
    checks : tuple of str
        The checks that have a section of their own in it, marked with an
        anchor (:func:`~explicit_audit.report._anchors.check_anchor`).
    """

    file: str
    title: str
    tables: tuple[str, ...]
    ran: bool = True
    checks: tuple[str, ...] = ()


def tiles(verification: Verification, pages: Sequence[Page]) -> list[dict]:
    """One tile per check: its status and counts, and the page that shows its findings.

    Parameters
    ----------
    verification : Verification
    pages : sequence of Page

    Returns
    -------
    list of dict
        ``check``, ``covers``, ``status`` (clean, findings, not run),
        ``findings``, ``notices``, ``checked``, ``page`` (a title or None),
        ``href`` (``page.html#check-NAME``: the check's own section, or the
        page's verdict when the page marks none) and ``link`` (the link's
        words), in the verdict's order.
    """
    of = check_kinds()
    kind_of = {table.name: kind.name for kind in registry.kinds() for table in kind.tables}
    rejected = {check.name for check in registry.REJECTED_CHECKER.checks}
    listed = set(listed_checks())
    summary = verification.summary()
    found = []
    keys = len(verification.key_counts())
    for row in summary.to_dict("records"):
        check, kind = row["check"], of.get(row["check"])
        # The page that marks the check's section, else the first that reads its kind (a
        # page about every kind, such as the trends, marks none).
        page = next((p for p in pages if check in p.checks), None) or next(
            (p for p in pages if kind in {kind_of.get(t, t) for t in p.tables}), None
        )
        # The check's own section on its page; a page that does not mark it, its verdict.
        where = check_anchor(check) if page is not None and check in page.checks else "verdict"
        href = f"{page.file}#{where}" if page is not None else None
        link = "its findings" if row["status"] == "findings" else "its page"
        if kind is None and pages:
            # A check of every kind: the rejected rows are listed in every page's
            # appendix; the keys not as declared in the verdict, the index's own first.
            page = pages[0]
            if check in rejected:
                href, link = f"{page.file}#{check_anchor(check)}", "listed in the appendix"
            elif check in listed:  # no notebook shows them: the verdict above lists them
                href, link, page = f"#{check_anchor(check)}", "listed above", None
            elif keys:  # on this page: its verdict counts them per key
                href, link, page = f"#{check_anchor(check)}", "counted per key above", None
            else:
                href, link = f"{page.file}#verdict", "listed in each page's verdict"
        found.append(
            {
                "check": row["check"],
                "covers": row["covers"],
                "status": row["status"],
                "findings": int(row["findings"]),
                "notices": int(row.get("notices", 0) or 0),
                "checked": int(row["checked"]),
                "page": page.title if page is not None else None,
                "href": href,
                "link": link,
            }
        )
    return found


def index_html(
    verification: Verification,
    pages: Sequence[Page],
    data: str,
    *,
    title: str | None = None,
    about: About | None = None,
) -> str:
    """The index page of a report folder.

    Parameters
    ----------
    verification : Verification
        :func:`~explicit_audit.verify_all` of the data every page shows.
    pages : sequence of Page
        The pages written, in notebook order.
    data : str
        The data path, as given.
    title : str, optional
        The report's title; by default ``Audit of DATA``.
    about : About, optional
        What the report is cited by, under its title: the data, the period
        its records cover, the kit's version, the command line.

    Returns
    -------
    str
        A self-contained HTML page (``templates/index.html.j2``): no script,
        nothing fetched, no time of day; it links the findings and rejected
        rows written beside it (:data:`~explicit_audit.report.downloads.DOWNLOADS`).
    """
    appendix = f"{pages[0].file}#provenance" if pages else "#"
    return render(
        "index.html.j2",
        title=title if title is not None else f"Audit of {data}",
        about=dataclasses.replace(about, report=None) if about is not None else None,
        downloads=DOWNLOADS,
        findings=len(verification.findings),
        rejected=verification.accounting.rows("rejected") if verification.accounting else None,
        version=__version__,
        verdict=Markup(verdict_html(verification, data, appendix=appendix, per_check=False)),
        tiles=tiles(verification, pages),
        pages=list(pages),
    )
