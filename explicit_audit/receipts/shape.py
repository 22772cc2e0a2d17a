"""engram's receipt lines, declared once: a bare receipt, its wrappers, its presentations.

The receipt is ``RetrievalReceipt`` (camelCase keys, schema version 0); the
CLI and the internal outcome wrap it. engram's presentation lines
(``PresentationOutcome``, presented or failed) embed one; they fill the
``presentations`` table and are published on their own
(:data:`PRESENTATION_SHAPES`). These declarations give the JSON Schemas of
``explicit-audit schema receipts`` and ``schema presentations``, the field
tables of ``docs/formats.md`` section 1, the keys the loaders and checks know
(:data:`RECEIPT_KEYS`, :data:`WRAPPER_KEYS`, :data:`PRESENTATION_KEYS`,
:data:`PRESENTATION_RECEIPT_KEYS`); the value-by-value reader
(:mod:`explicit_audit.receipts._values`) is tested against them.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = [
    "EXPOSED_FIELDS",
    "PRESENTATION_KEYS",
    "PRESENTATION_RECEIPT_FIELDS",
    "PRESENTATION_RECEIPT_KEYS",
    "PRESENTATION_SHAPES",
    "RECEIPT_FIELDS",
    "RECEIPT_KEYS",
    "SHAPES",
    "WRAPPER_KEYS",
]

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

_VERSION = "a definition version: a whole number from 0 to 2**53-1"

#: engram's ``PresentationReceipt`` (the ``const receipt`` literal of ``presentation.ts``).
PRESENTATION_RECEIPT_FIELDS = (
    Field("schemaVersion", "integer", "the presentation receipt schema", values=(0,)),
    Field("presentationId", "string", "`presentation-` and 32 hex characters of its identity"),
    Field("activeSpace", "string", "the space it was rendered in"),
    Field("viewId", "string", "the view"),
    Field("viewVersion", "count", _VERSION),
    Field("audienceId", "string", "who it was rendered for"),
    Field("audienceVersion", "count", _VERSION),
    Field("deliveryId", "string", "the delivery"),
    Field("deliveryVersion", "count", _VERSION),
    Field("sourceRecordIds", "strings", "the retrieval's record ids, sorted"),
    Field("sourceReferences", "array", "each source's locator",
          items=Field("reference", "object", fields=(
              Field("recordId", "string", "the record's id"),
              Field("sourceUri", "string", "its locator"),
              Field("relativePath", "string", "its path inside the collection"),
          ))),
    Field("retrievalReceipt", "object", "the retrieval receipt", fields=RECEIPT_FIELDS),
    Field("pack", "object", "the pack", fields=(
        Field("id", "string", "its id"),
        Field("version", "string", "its version"),
    )),
    Field("model", "string", "the model that drafted it"),
    Field("recommendationIds", "strings", "recommended record ids, each a source"),
    Field("generatedAt", "string", "when it was generated, an ISO 8601 time"),
    Field("retention", "object", "where the files were retained", required=False, fields=(
        Field("artifactReference", "string", "the rendered text's file"),
        Field("receiptReference", "string", "the receipt's file"),
    )),
)  # fmt: skip

_SCHEMA_VERSION = Field("schema_version", "integer", "the outcome schema", values=(0,))

#: engram's ``PresentationOutcome``: the two shapes ``renderPresentation`` returns.
PRESENTATION_SHAPES = (
    Shape("presentations", "presented", "recognised by `status` \"presented\"", (
        _SCHEMA_VERSION,
        Field("status", "string", "the rendering's status", values=("presented",)),
        Field("content", "string", "the rendered text"),
        Field("receipt", "object", "the presentation receipt",
              fields=PRESENTATION_RECEIPT_FIELDS),
        Field("retained", "object", "the files written", required=False, fields=(
            Field("artifactPath", "string", "the rendered text's path"),
            Field("receiptPath", "string", "the receipt's path"),
        )),
    ), record=("receipt.presentationId",), identity=("presentation_id",)),
    Shape("presentations", "failed",
          "recognised by `status` \"failed\", `schema_version` and no `receipt`", (
        _SCHEMA_VERSION,
        Field("status", "string", "the rendering's status", values=("failed",)),
        Field("errors", "array", "what failed", items=Field("error", "object", fields=(
            Field("kind", "string", "the step's kind of error"),
            Field("code", "string", "the error's code"),
            Field("field", "string", "the field at fault", required=False),
            Field("message", "string", "the error in words"),
        ))),
        Field("retrieval", "object", "the retrieval receipt, when retrieval ran",
              required=False, fields=RECEIPT_FIELDS),
    )),
)  # fmt: skip


def _names(fields: tuple[Field, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(field.name for field in fields))


#: The keys of a retrieval receipt, and of its CLI and outcome wrappers.
RECEIPT_KEYS = _names(RECEIPT_FIELDS)
WRAPPER_KEYS = _names(field for shape in SHAPES[1:] for field in shape.fields)
#: The keys of a presentation line, presented or failed: a logger's keys are the others.
PRESENTATION_KEYS = _names(field for shape in PRESENTATION_SHAPES for field in shape.fields)
#: The keys of a presentation receipt.
PRESENTATION_RECEIPT_KEYS = _names(PRESENTATION_RECEIPT_FIELDS)
