"""engram's receipt lines, declared once: a bare receipt, its CLI and outcome wrappers.

The receipt is ``RetrievalReceipt`` (camelCase keys, schema version 0); the
CLI and the internal outcome wrap it. engram's presentation lines (which
embed one) are declared in :mod:`explicit_audit.receipts.presentations` and
checked there. These declarations give the JSON Schema of ``explicit-audit
schema receipts`` and the field tables of ``docs/formats.md`` section 1; the
value-by-value reader (:mod:`explicit_audit.receipts._values`) is tested
against them.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = ["EXPOSED_FIELDS", "RECEIPT_FIELDS", "SHAPES"]

#: One exposed result of a guarded retrieval.
EXPOSED_FIELDS = (
    Field("recordId", "string", "the record's id"),
    Field("sourceUri", "string", "its locator, `qmd://<collection>/<path>.md`"),
    Field("relativePath", "string", "its path inside the collection"),
    Field("sourceClasses", "strings", "its source classes"),
    Field("score", "number", "its relevance; absent for an enumerated result", required=False,
          nullable=True),
)  # fmt: skip

#: ``RetrievalReceipt``, schema version 0.
RECEIPT_FIELDS = (
    Field("schemaVersion", "integer", "the receipt schema", values=(0,)),
    Field("scope", "string", "a query ran, or the records root was enumerated",
          values=("search", "space")),
    Field("query", "string", "the query; null for a space enumeration", required=False,
          nullable=True),
    Field("activeSpace", "string", "the space; null when it never resolved", required=False,
          nullable=True),
    Field("collection", "string", "the collection; `\"\"` when the space never resolved"),
    Field("requestedSourceClasses", "strings", "the source classes asked for"),
    Field("allowedSourceClasses", "strings", "the source classes authorization allowed"),
    Field("kind", "string", "whether anything was found", values=("hit", "miss")),
    Field("locatorUris", "strings", "the locators returned"),
    Field("recordIds", "strings", "the record ids returned"),
    Field("exposedResults", "array", "the results exposed (guarded retrieval only)",
          items=Field("result", "object", fields=EXPOSED_FIELDS)),
    Field("relevanceThreshold", "number", "the threshold; null for a space enumeration",
          required=False, nullable=True),
    Field("withheld", "object", "what authorization withheld: how many, never which", fields=(
        Field("audienceId", "string", "the audience", required=False, nullable=True),
        Field("count", "integer", "how many records were withheld"),
    )),
)  # fmt: skip

_RECEIPT = Field("receipt", "object", "the retrieval receipt", fields=RECEIPT_FIELDS)
_RECORDS = Field("records", "array", "what was recalled", required=False, nullable=True,
                 items=Field("record", "any"))  # fmt: skip
_ERRORS = Field("errors", "array", "what failed", required=False, nullable=True,
                items=Field("error", "any"))  # fmt: skip

#: The receipt line shapes (a presentation line is declared with presentations).
SHAPES = (
    Shape("receipts", "receipt", "a bare `RetrievalReceipt`", RECEIPT_FIELDS),
    Shape(
        "receipts",
        "cli",
        "what the engram CLI prints for `recall` / guarded retrieval",
        (
            Field("schema_version", "integer", "the CLI schema", values=(0,)),
            Field("status", "string", "the outcome", values=("hit", "miss", "failed")),
            _RECORDS,
            _ERRORS,
            _RECEIPT,
        ),
    ),
    Shape(
        "receipts",
        "outcome",
        "the internal outcome",
        (
            Field("kind", "string", "the outcome", values=("hit", "miss", "failure")),
            _RECORDS,
            _ERRORS,
            _RECEIPT,
        ),
    ),
)
