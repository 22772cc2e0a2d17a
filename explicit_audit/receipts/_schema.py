"""The normal Arrow layout both reading paths produce, and the keys they read it from.

The keys are those the receipt line shapes declare (:mod:`.shape`), named here
for the reading paths.
"""

from __future__ import annotations

import pyarrow as pa

from .._core.shape import arrow_struct
from .shape import EXPOSED_FIELDS, PRESENTATION_SHAPES, RECEIPT_KEYS, WRAPPER_KEYS

__all__ = [
    "CATEGORIES",
    "EXPOSED_STRUCT",
    "NORMAL_SCHEMA",
    "PRESENTATION_STATUSES",
    "RECEIPT_KEYS",
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
# Exposed results keep the producer's field names inside Arrow (no copy to
# rename them); the ``exposed`` DataFrame gets snake_case names.
EXPOSED_STRUCT = arrow_struct(EXPOSED_FIELDS)
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
