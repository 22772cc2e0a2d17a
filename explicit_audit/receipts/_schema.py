"""The normal Arrow layout both reading paths produce, and the keys they read it from.

The keys are those the receipt line shapes declare (:mod:`.shape`), named here
for the reading paths.
"""

from __future__ import annotations

import pyarrow as pa

from .._core.shape_arrow import arrow_type
from .shape import PRESENTATION_SHAPES, RECEIPT_KEYS, SHAPES, WRAPPER_KEYS

__all__ = [
    "CATEGORIES",
    "NORMAL_SCHEMA",
    "PRESENTATION_STATUSES",
    "RECEIPT_COLUMNS",
    "RECEIPT_KEYS",
    "RECEIPT_SHAPE",
    "STRINGS",
    "WRAPPER_KEYS",
]

#: ``status`` of engram's presentation rendering (``PresentationOutcome``).
PRESENTATION_STATUSES = tuple(shape.field("status").values[0] for shape in PRESENTATION_SHAPES)

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
#: The receipt's fields the ``receipts`` table holds, each by its dotted path in
#: the receipt, and the column it fills, in the table's order.
RECEIPT_COLUMNS = {
    "schemaVersion": "schema_version",
    "scope": "scope",
    "query": "query",
    "activeSpace": "active_space",
    "collection": "collection",
    "kind": "kind",
    "requestedSourceClasses": "requested_source_classes",
    "allowedSourceClasses": "allowed_source_classes",
    "locatorUris": "locator_uris",
    "recordIds": "record_ids",
    "relevanceThreshold": "relevance_threshold",
    "withheld.audienceId": "withheld_audience",
    "withheld.count": "withheld_count",
    # The exposed results keep the producer's field names inside Arrow (no copy
    # to rename them); the ``exposed`` DataFrame gets snake_case names.
    "exposedResults": "exposed",
}
#: A bare receipt's shape, whose fields :data:`RECEIPT_COLUMNS` names.
RECEIPT_SHAPE = SHAPES[0]
NORMAL_SCHEMA = pa.schema(
    [
        ("source_file", pa.string()),
        ("source_line", pa.int64()),
        ("shape", pa.string()),
        ("outcome", pa.string()),
        ("error_codes", STRINGS),
        ("n_records", pa.int64()),
        *(
            (column, arrow_type(RECEIPT_SHAPE.field(path)))
            for path, column in RECEIPT_COLUMNS.items()
        ),
    ]
)
