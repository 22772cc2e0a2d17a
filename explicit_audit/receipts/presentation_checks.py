"""Presentation checks: what engram's ``renderPresentation`` guarantees about each line.

Every rule restates the code of ``harness/src/presentation.ts`` (and of the
guarded retrieval it calls, ``guardedRetrievalInternal.ts`` and
``knowledgeRetrieval.ts``); :data:`PRESENTATION_RULES` names the call each
rests on. A line engram wrote passes them all. The embedded retrieval receipt
is checked by :func:`~explicit_audit.check_receipts` as any other receipt.

Not checked, because the line does not record what they depend on: the
rendered text against the delivery's format and word limit, recommendation
ids against the records' kinds and statuses, and the view, pack, delivery and
model against the space's configuration.

Severity is ``error`` for a broken guarantee, ``notice`` where engram's
schema (version 0, declared unstable) may grow: a receipt key or an error
code this kit does not know.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from .._core import engine
from .._core.findings import ERROR, FINDING_COLUMNS, NOTICE, FindingsBuilder, Rule, RuleTable
from ._js_json import NonFiniteNumber, presentation_id
from ._presentation_failures import check_classes, check_failed
from ._presentation_failures import quote as _q
from .shape import PRESENTATION_RECEIPT_KEYS

__all__ = ["FINDING_COLUMNS", "PRESENTATION_RULES", "RULES", "check_presentations"]

_RR = "record.receipt.retrievalReceipt."
_RULE_TEXT = (
    # name, field at fault, severity, what engram guarantees; above each, the
    # code of presentation.ts it rests on.
    # `return { schema_version: 0, status: "presented", content, receipt[, retained] }`
    # and `failure(errors, retrieval?)`: the only two shapes renderPresentation returns.
    (
        "status_fields",
        "status",
        ERROR,
        "A presented line carries content and receipt and no errors or retrieval; a failed "
        "line carries a non-empty errors list and no content, receipt or retained.",
    ),
    # `presentationError` / `retrievalError` build every error: {kind, code[, field], message}.
    (
        "error_shape",
        "record.errors",
        ERROR,
        "Each error is {kind, code, [field,] message}: kind one of engram's KnowledgeErrorKind "
        "values, code and message strings, field a string when present.",
    ),
    # The `const receipt: PresentationReceipt = {...}` literal. A notice: the
    # schema (version 0) is declared unstable and may grow.
    (
        "receipt_keys",
        "record.receipt",
        NOTICE,
        "The presentation receipt carries only the keys engram writes (schemaVersion ... "
        "generatedAt, and retention).",
    ),
    # `presentation-${sha256(canonicalJson(identity)).slice(0, 32)}`
    (
        "presentation_id_format",
        "presentation_id",
        ERROR,
        "presentationId is 'presentation-' and 32 lowercase hex digits.",
    ),
    (
        "presentation_id_hash",
        "presentation_id",
        ERROR,
        "presentationId is the SHA-256 of canonicalJson of the presentation's identity (its "
        "own fields and content), as presentationIdentity builds it.",
    ),
    # `activeSpace: active.spaceId`; the same `active` is handed to guarded retrieval.
    (
        "active_space",
        "active_space",
        ERROR,
        "The receipt's activeSpace is the retrieval receipt's activeSpace.",
    ),
    # `{ audienceId: audienceSnapshot.id, ... }` is the retrieval filter's audience.
    (
        "audience_withheld",
        "audience_id",
        ERROR,
        "The retrieval receipt's withheld.audienceId is the audience the view was rendered for.",
    ),
    # `Number.isSafeInteger(version) && version >= 0` or definition_version_invalid.
    (
        "definition_versions",
        None,
        ERROR,
        "viewVersion, audienceVersion and deliveryVersion are integers in [0, 2**53 - 1].",
    ),
    # `validateGeneratedAt`: `generatedAt.includes("T")` (and Date.parse accepts it).
    ("generated_at", "generated_at", ERROR, "generatedAt contains 'T'."),
    # A miss or a failed retrieval returns failure(...): only a hit is presented.
    (
        "presented_retrieval_hit",
        _RR + "kind",
        ERROR,
        "A presented line's retrieval receipt is a hit.",
    ),
    # `sourceRecordIds: records.map((r) => r.record.id).sort()`, records[i] = recordIds[i].
    (
        "source_record_ids",
        "source_record_ids",
        ERROR,
        "sourceRecordIds is the retrieval receipt's recordIds, sorted.",
    ),
    # `referencesFor(records)`: {recordId, sourceUri, relativePath} sorted by recordId,
    # each from the exposed result of the same record (performRetrieval).
    (
        "source_references",
        "source_references",
        ERROR,
        "sourceReferences is the retrieval receipt's exposedResults as {recordId, sourceUri, "
        "relativePath}, sorted by recordId.",
    ),
    # safeRelativeMarkdownPath(candidate.file, collection) gave relativePath.
    (
        "source_reference_locator",
        "source_references",
        ERROR,
        "Each source reference's sourceUri is a locator of the retrieval receipt, "
        "qmd://<collection>/<relativePath>.",
    ),
    # `uniqueStrings([...projection.recommendationIds, ...draft.recommendationIds])`,
    # each found among `records` by validateRecommendationIds.
    (
        "recommendation_ids",
        "recommendation_ids",
        ERROR,
        "recommendationIds has no repeats, and each is a source record.",
    ),
    # renderPresentation never passes requestedSourceClasses: performRetrieval copies
    # the allowed classes.
    (
        "requested_equals_allowed",
        None,
        ERROR,
        "The retrieval receipt's requested source classes are its allowed source classes.",
    ),
    # validatePolicy: policy_source_classes_empty.
    (
        "presented_policy_nonempty",
        _RR + "allowedSourceClasses",
        ERROR,
        "A presented line's retrieval allowed at least one source class.",
    ),
    # query_invalid: a search needs a non-blank query without NUL.
    (
        "presented_search_query",
        _RR + "query",
        ERROR,
        "A presented search view's query is a non-blank string without NUL.",
    ),
    # enumerateCandidates sorts the file names (localeCompare) and filterCandidates
    # keeps that order.
    (
        "space_locator_order",
        _RR + "locatorUris",
        ERROR,
        "A space view's locators name their files in sorted order.",
    ),
    # retentionPaths(active, presentationId) and retain().
    (
        "retention",
        "retained",
        ERROR,
        "retention (when present) names .engram-presentations/<presentationId>/presentation.md "
        "and receipt.json, and a line carries retained exactly when its receipt carries "
        "retention.",
    ),
    # The early returns of renderPresentation: failures before retrieval carry no
    # receipt, retrieval failures a miss with retrieval errors, later ones a hit.
    (
        "failure_stage",
        "error_codes",
        ERROR,
        "A failed line's errors belong to the step its retrieval receipt shows: none (before "
        "retrieval), a miss (retrieval errors), or a hit (a later step).",
    ),
    # The code tables of _presentation_failures.py list every code a step returns.
    # A notice: engram's schema (version 0) may add codes.
    (
        "error_code_unknown",
        "error_codes",
        NOTICE,
        "Each error code of a failed line is one engram's rendering returns.",
    ),
    # `failure([presentationError("retrieval_miss", ..., "query", "retrieval")], receipt)`.
    (
        "retrieval_miss_error",
        "error_codes",
        ERROR,
        "retrieval_miss is the only error of its line, of kind 'retrieval' and field 'query', "
        "with a miss receipt.",
    ),
)

#: Every rule :func:`check_presentations` applies, in report order. Each is an
#: error but ``receipt_keys`` and ``error_code_unknown``, notices: engram's
#: presentation schema (version 0) is declared unstable and may grow.
RULES = RuleTable(
    Rule(name, text, check="presentation_rules", kind="presentations", severity=severity,
         field=field)
    for name, field, severity, text in _RULE_TEXT
)  # fmt: skip

PRESENTATION_RULES = RULES.descriptions
"""Every rule :func:`check_presentations` applies: name -> what engram guarantees."""

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


def _presented(record: dict, say) -> None:
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


def _line(record: Any, say) -> None:
    if not isinstance(record, dict):
        return
    status = record.get("status")
    present = set(record)
    if status == "presented":
        wrong = sorted(present & {"errors", "retrieval"})
        if wrong or not {"content", "receipt"} <= present:
            say("status_fields", f"presented, with keys {_q(sorted(present))}")
        _presented(record, say)
        retrieval = (record.get("receipt") or {}).get("retrievalReceipt")
    else:
        wrong = sorted(present & {"content", "receipt", "retained"})
        if wrong or not record.get("errors"):
            n = len(record.get("errors") or [])
            say("status_fields", f"failed with {n} error(s) and {_q(wrong)}")
        check_failed(record, say)
        return
    if isinstance(retrieval, dict):
        check_classes(retrieval, say, _RR)


def check_presentations(presentations) -> pd.DataFrame:
    """Check every presentation line against the rules engram's code guarantees.

    Parameters
    ----------
    presentations : DataFrame or Audit
        The ``presentations`` table of :func:`explicit_audit.load` (or any
        subset of its rows), or an ``Audit``, whose ``presentations`` is used.
        The rules read each line as written (the ``record`` column).

    Returns
    -------
    DataFrame
        The findings table of the kit (:data:`FINDING_COLUMNS`): one row per
        finding, ordered by line then rule; ``kind`` is ``presentations``,
        ``row`` the line's index label in ``presentations`` (its retrieval
        receipt is that row's ``receipt_row``), ``record`` its
        ``presentation_id`` (<NA> for a failed line), ``rule`` a categorical
        over the keys of :data:`PRESENTATION_RULES`, ``severity`` the rule's
        own (:data:`RULES`). Empty when every line passes.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("tests/data/engram/presentations.jsonl", progress=False)
    >>> len(ea.check_presentations(audit))
    0
    """
    if not engine.is_table(presentations):
        presentations = presentations.presentations
    return engine.findings(presentation_findings, presentations, what="check_presentations")


def presentation_findings(presentations: pd.DataFrame) -> pd.DataFrame:
    """:func:`check_presentations` of an in-memory table (or one partition of it)."""
    found = FindingsBuilder(
        RULES,
        presentations,
        record=presentations.get("presentation_id"),
        what="check_presentations",
    )
    for position, record in enumerate(presentations["record"].to_numpy(dtype=object)):

        def say(rule: str, detail: str, *, field: str | None = None, at=position) -> None:
            found.add(at, rule, detail, field=field)

        _line(record, say)
    return found.frame()
