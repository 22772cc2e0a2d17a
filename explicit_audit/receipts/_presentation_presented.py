"""The rules on presented lines: what the presentation receipt guarantees.

``renderPresentation`` (``harness/src/presentation.ts``) builds the receipt of
a presented line from the guarded retrieval it ran: its id from the identity
fields, its versions, its retention paths, and its sources from the retrieval
receipt it embeds. :func:`check_presented` says every rule of
:data:`~explicit_audit.receipts.presentation_checks.RULES` such a line
breaks; the rules of a failed line are :mod:`._presentation_failures`.
"""

from __future__ import annotations

import re
from typing import Any

from ._js_json import NonFiniteNumber, presentation_id
from ._presentation_failures import quote as _q
from .shape import PRESENTATION_RECEIPT_KEYS

__all__ = ["check_presented"]

#: The definition versions of a presentation receipt: ``presentations`` column -> key.
_VERSIONS = {
    "view_version": "viewVersion",
    "audience_version": "audienceVersion",
    "delivery_version": "deliveryVersion",
}
_ID_FORMAT = re.compile(r"presentation-[0-9a-f]{32}")
#: engram's record id pattern (``ID_PATTERN`` in ``knowledgeValidation.ts``).
_RECORD_ID = re.compile(r"[a-z][a-z0-9-]*")
_RECEIPT_KEYS = frozenset(PRESENTATION_RECEIPT_KEYS)


def _js_sorted(ids: list) -> list:
    """``Array.prototype.sort()`` of strings: UTF-16 code-unit order."""
    return sorted(ids, key=lambda text: str(text).encode("utf-16-be", "surrogatepass"))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_presented(record: dict, say) -> None:
    """Say each rule a presented line breaks: ``say(rule, detail, *, field=None)``."""
    receipt = record.get("receipt")
    if not isinstance(receipt, dict):
        return
    unknown = [key for key in receipt if key not in _RECEIPT_KEYS]
    if unknown:
        say("receipt_keys", f"the receipt carries {', '.join(map(_q, unknown))}")
    pid = receipt.get("presentationId")
    if not (isinstance(pid, str) and _ID_FORMAT.fullmatch(pid)):
        say("presentation_id_format", f"presentationId is {_q(pid)}")
    try:
        rebuilt = presentation_id(record)
    except NonFiniteNumber as exc:
        say(
            "presentation_id_hash",
            f"presentationId is {_q(pid)}, but {exc.path} is a number JavaScript reads as "
            "an infinity, which engram's canonicalJson refuses: no presentationId comes "
            "from these fields",
        )
    else:
        if rebuilt is not None and rebuilt != pid:
            say("presentation_id_hash", f"presentationId is {_q(pid)}, its fields give {rebuilt}")
    for column, key in _VERSIONS.items():
        version = receipt.get(key)
        if not (_is_int(version) and 0 <= version <= 2**53 - 1):
            say("definition_versions", f"{key} is {_q(version)}", field=column)
    generated = receipt.get("generatedAt")
    if not (isinstance(generated, str) and "T" in generated):
        say("generated_at", f"generatedAt is {_q(generated)}")
    _retention(record, receipt, pid, say)
    retrieval = receipt.get("retrievalReceipt")
    if isinstance(retrieval, dict):
        _presented_sources(receipt, retrieval, say)


def _retention(record: dict, receipt: dict, pid: Any, say) -> None:
    retention, retained = receipt.get("retention"), record.get("retained")
    if ("retention" in receipt) != ("retained" in record):
        has = "carries" if "retained" in record else "does not carry"
        say(
            "retention",
            f"the line {has} retained but its receipt's retention is "
            f"{'absent' if 'retention' not in receipt else 'present'}",
        )
    base = f".engram-presentations/{pid}/"
    if "retention" in receipt and retention != {
        "artifactReference": base + "presentation.md",
        "receiptReference": base + "receipt.json",
    }:
        say("retention", f"retention is {_q(retention)}, not under {base}")
    if isinstance(retained, dict):
        for key, name in (("artifactPath", "presentation.md"), ("receiptPath", "receipt.json")):
            path = retained.get(key)
            if not (isinstance(path, str) and path.endswith("/" + base + name)):
                say("retention", f"retained.{key} is {_q(path)}, not .../{base}{name}")


def _presented_sources(receipt: dict, retrieval: dict, say) -> None:
    if receipt.get("activeSpace") != retrieval.get("activeSpace"):
        say(
            "active_space",
            f"activeSpace is {_q(receipt.get('activeSpace'))}, the retrieval's "
            f"{_q(retrieval.get('activeSpace'))}",
        )
    withheld = retrieval.get("withheld")
    audience = withheld.get("audienceId") if isinstance(withheld, dict) else None
    if audience != receipt.get("audienceId"):
        say(
            "audience_withheld",
            f"rendered for {_q(receipt.get('audienceId'))} but the withheld count is "
            f"{_q(audience)}'s",
        )
    record_ids = retrieval.get("recordIds") or []
    if retrieval.get("kind") != "hit" or not record_ids:
        say(
            "presented_retrieval_hit",
            f"retrieval kind is {_q(retrieval.get('kind'))} with {len(record_ids)} record id(s)",
        )
    source_ids = receipt.get("sourceRecordIds")
    if source_ids != _js_sorted(record_ids):
        say(
            "source_record_ids",
            f"sourceRecordIds {_q(source_ids)}, retrieval recordIds sorted "
            f"{_q(_js_sorted(record_ids))}",
        )
    exposed = retrieval.get("exposedResults") or []
    projected = [
        {k: item.get(k) for k in ("recordId", "sourceUri", "relativePath")}
        for item in exposed
        if isinstance(item, dict)
    ]
    references = receipt.get("sourceReferences") or []
    # referencesFor sorts with localeCompare, which is code-point order for
    # engram's record ids ([a-z][a-z0-9-]*); for other ids only the set is checked.
    if all(_RECORD_ID.fullmatch(str(item["recordId"])) for item in projected):
        expected, actual = sorted(projected, key=lambda item: item["recordId"]), references
    else:
        expected, actual = sorted(projected, key=_q), sorted(references, key=_q)
    if actual != expected:
        say(
            "source_references",
            f"{len(references)} source reference(s) differ from the {len(exposed)} exposed "
            f"result(s) projected and sorted: {_q(references)[:200]}",
        )
    locators = set(retrieval.get("locatorUris") or [])
    prefix = f"qmd://{retrieval.get('collection')}/"
    for reference in references:
        uri = reference.get("sourceUri")
        if uri not in locators or uri != prefix + str(reference.get("relativePath")):
            say(
                "source_reference_locator",
                f"sourceUri {_q(uri)} (relativePath {_q(reference.get('relativePath'))}) is "
                f"not a locator of the retrieval in {_q(retrieval.get('collection'))}",
            )
    recommendations = receipt.get("recommendationIds") or []
    repeated = len(set(recommendations)) != len(recommendations)
    stray = [rid for rid in recommendations if rid not in (source_ids or [])]
    if repeated or stray:
        say(
            "recommendation_ids",
            f"recommendationIds {_q(recommendations)}"
            + (" repeat an id" if repeated else f": {_q(stray)} not among the sources"),
        )
    if not retrieval.get("allowedSourceClasses"):
        say("presented_policy_nonempty", "the retrieval allowed no source class")
    query = retrieval.get("query")
    if retrieval.get("scope") == "search" and not (
        isinstance(query, str) and query.strip() and "\x00" not in query
    ):
        say("presented_search_query", f"search query is {_q(query)}")
    if retrieval.get("scope") == "space":
        names = [uri.rsplit("/", 1)[-1] for uri in retrieval.get("locatorUris") or []]
        # Record-id file names: code-point order is localeCompare order for them.
        if all(n.endswith(".md") and _RECORD_ID.fullmatch(n[:-3]) for n in names):
            if names != sorted(names):
                say("space_locator_order", f"locator files in the order {_q(names)}")
