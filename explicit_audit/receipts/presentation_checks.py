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

from typing import Any

import pandas as pd

from .._core import engine
from .._core.findings import ERROR, FINDING_COLUMNS, NOTICE, FindingsBuilder, Rule, RuleTable
from .._core.shape import shape_problems
from ._presentation_failures import check_classes, check_failed
from ._presentation_failures import quote as _q
from ._presentation_presented import check_presented
from .shape import PRESENTATION_SHAPES

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
    # The shapes of PresentationOutcome (explicit-audit schema presentations). A
    # notice: the schema (version 0) is declared unstable and may grow.
    (
        "presentation_shape",
        "record",
        NOTICE,
        "A line fits the shape engram declares for it (explicit-audit schema presentations): "
        "each declared field present where required and of its type, and no other key in "
        "the objects it declares (the presentation receipt's own keys are receipt_keys).",
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
#: error but ``presentation_shape``, ``receipt_keys`` and ``error_code_unknown``, notices: engram's
#: presentation schema (version 0) is declared unstable and may grow.
RULES = RuleTable(
    Rule(name, text, check="presentation_rules", kind="presentations", severity=severity,
         field=field)
    for name, field, severity, text in _RULE_TEXT
)  # fmt: skip

PRESENTATION_RULES = RULES.descriptions
"""Every rule :func:`check_presentations` applies: name -> what engram guarantees."""

_PRESENTED, _FAILED = PRESENTATION_SHAPES


def _shape(record: dict, say) -> None:
    """Say ``presentation_shape`` with what of the line its declared shape does not hold."""
    shape = _PRESENTED if record.get("status") == "presented" else _FAILED
    problems = [
        problem
        for problem in shape_problems(shape, record, keys=True)
        # A key of the presentation receipt itself is said by receipt_keys.
        if not (problem.startswith("receipt.") and problem.count(".", 0, problem.find(":")) == 1
                and problem.endswith(": not a declared key"))
    ]  # fmt: skip
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        say("presentation_shape", "; ".join(problems[:3]) + more)


def _line(record: Any, say) -> None:
    if not isinstance(record, dict):
        return
    _shape(record, say)
    status = record.get("status")
    present = set(record)
    if status == "presented":
        wrong = sorted(present & {"errors", "retrieval"})
        if wrong or not {"content", "receipt"} <= present:
            say("status_fields", f"presented, with keys {_q(sorted(present))}")
        check_presented(record, say)
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
