"""The receipt line shapes' keys, and the normal Arrow layout both reading paths produce."""

from __future__ import annotations

import pyarrow as pa

__all__ = [
    "CATEGORIES",
    "EXPOSED_STRUCT",
    "NORMAL_SCHEMA",
    "PRESENTATION_STATUSES",
    "RECEIPT_KEYS",
    "STRINGS",
    "WRAPPER_KEYS",
]

RECEIPT_KEYS = (
    "schemaVersion",
    "scope",
    "query",
    "activeSpace",
    "collection",
    "requestedSourceClasses",
    "allowedSourceClasses",
    "kind",
    "locatorUris",
    "recordIds",
    "exposedResults",
    "relevanceThreshold",
    "withheld",
)
WRAPPER_KEYS = ("schema_version", "status", "kind", "records", "errors", "receipt")
#: ``status`` of engram's presentation rendering (``PresentationOutcome``).
PRESENTATION_STATUSES = ("presented", "failed")

#: The categories of the ``receipts`` table's categorical columns. A receipt
#: embedded in a presentation line has ``shape`` "presentation" and ``outcome``
#: "presented" or "failed" (the rendering's status).
CATEGORIES = {
    "shape": ["receipt", "cli", "outcome", "presentation"],
    "outcome": ["hit", "miss", "failed", "presented"],
    "scope": ["search", "space"],
    "kind": ["hit", "miss"],
}

STRINGS = pa.list_(pa.string())
# Exposed results keep the producer's field names inside Arrow (no copy to
# rename them); the ``exposed`` DataFrame gets snake_case names.
EXPOSED_STRUCT = pa.struct(
    [
        ("recordId", pa.string()),
        ("sourceUri", pa.string()),
        ("relativePath", pa.string()),
        ("sourceClasses", STRINGS),
        ("score", pa.float64()),
    ]
)
NORMAL_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("shape", pa.string()),
        ("outcome", pa.string()),
        ("error_codes", STRINGS),
        ("n_records", pa.int64()),
        ("schema_version", pa.int64()),
        ("scope", pa.string()),
        ("query", pa.string()),
        ("active_space", pa.string()),
        ("collection", pa.string()),
        ("kind", pa.string()),
        ("requested_source_classes", STRINGS),
        ("allowed_source_classes", STRINGS),
        ("locator_uris", STRINGS),
        ("record_ids", STRINGS),
        ("relevance_threshold", pa.float64()),
        ("withheld_audience", pa.string()),
        ("withheld_count", pa.int64()),
        ("exposed", pa.list_(EXPOSED_STRUCT)),
    ]
)
