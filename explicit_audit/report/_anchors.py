"""Where each check's findings are on a page: an anchor in its own section, for the index.

The index has one tile per check; its link lands on the section of a page
that shows that check's findings, not on the top of the page. A notebook
says which of its sections is whose in its metadata
(``metadata.explicit_audit.checks``: ``{check: heading}``, written by
``scripts/build_notebooks.py`` for the kit's notebooks); the page gives that
heading an element with the id ``check-<name>`` (:func:`check_anchor`), so a
link names the check and not the heading's words. A page whose notebook was
not run (no records of its kind) anchors its checks in the section that says
so. The two checks of every kind have an anchor in every report: the keys not
as declared in the verdict (``record_keys``), the rejected rows in the
provenance appendix (``rejected_rows``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape, unescape

import nbformat

__all__ = ["anchored_checks", "check_anchor", "notebook_checks", "place_check_anchors"]

_HEADING = re.compile(r'(<h([23])\b[^>]*\bid="[^"]+"[^>]*>)(.*?)</h\2>', re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def check_anchor(check: str) -> str:
    """The id of the element that marks ``check``'s section (``check-plan_hashes``)."""
    return f"check-{check}"


def notebook_checks(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """``{check: heading}``: the section of the notebook that shows each check's findings.

    Parameters
    ----------
    notebook : NotebookNode

    Returns
    -------
    dict
        As the notebook's metadata names them (``metadata.explicit_audit.checks``);
        empty when it does not.

    Examples
    --------
    >>> nb = nbformat.v4.new_notebook(
    ...     metadata={"explicit_audit": {"checks": {"plan_hashes": "Retrieval plans"}}})
    >>> notebook_checks(nb)
    {'plan_hashes': 'Retrieval plans'}
    """
    checks = notebook.metadata.get("explicit_audit", {}).get("checks", {})
    return {str(check): str(heading) for check, heading in dict(checks).items()}


def _text(inner: str) -> str:
    return " ".join(unescape(_TAG.sub("", inner)).split())


def place_check_anchors(
    body: str, headings: Mapping[str, str], *, after: str = "", first: bool = False
) -> tuple[str, tuple[str, ...]]:
    """Give each check's heading an element with its id (:func:`check_anchor`).

    Parameters
    ----------
    body : str
        A page's HTML.
    headings : mapping
        ``{check: heading text}`` (:func:`notebook_checks`).
    after : str, optional
        Headings are looked for after the first occurrence of this text only
        (the page's contents placeholder: the verdict and contents above it
        are not sections).
    first : bool, default False
        Anchor every check in the first section instead (a page whose
        notebook was not run: the one section says why).

    Returns
    -------
    tuple
        The page, and the checks anchored in it (a heading the page lacks
        anchors nothing).
    """
    start = body.index(after) + len(after) if after and after in body else 0
    head, rest = body[:start], body[start:]
    placed: list[str] = []

    def anchored(match: re.Match) -> str:
        opening, _, inner = match.groups()
        if first and placed:
            return match.group(0)
        text = _text(inner)
        checks = [c for c, h in headings.items() if first or (h == text and c not in placed)]
        if not checks:
            return match.group(0)
        placed.extend(checks)
        spans = "".join(
            f'<span class="ea-check-anchor" id="{escape(check_anchor(c))}"></span>' for c in checks
        )
        return match.group(0).replace(opening, opening + spans, 1)

    rest = _HEADING.sub(anchored, rest)
    return head + rest, tuple(placed)


_ANCHOR = re.compile(r'<span class="ea-check-anchor" id="check-([^"]+)"></span>')


def anchored_checks(page: str) -> tuple[str, ...]:
    """The checks :func:`place_check_anchors` anchored in ``page``, in page order."""
    return tuple(dict.fromkeys(unescape(name) for name in _ANCHOR.findall(page)))
