"""An arborist plan record, declared once: the canonical and the flat plan shape.

``RetrievalPlan``'s fields with the dataclass's defaults (a field left out
takes its default, as ``canonical()`` reads it). These declarations give the
JSON Schema of ``explicit-audit schema plans`` and the field tables of
``docs/formats.md`` section 2.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = ["CORE_FIELDS", "SHAPES"]

#: The plan's fields in both shapes, with ``RetrievalPlan``'s defaults.
CORE_FIELDS = (
    Field("retrieval_keywords", "string", "the keywords, as hashed", default=""),
    Field("top_k", "integer", "results kept", default=0),
    Field("over_fetch", "integer", "extra results fetched", default=0),
    Field("max_context_chars", "integer", "the context budget", default=0),
    Field("shard_ids", "strings", "the shards searched", default=[]),
)

_RECORD = (
    Field("run_id", "string", "the run", required=False, nullable=True),
    Field("retrieval_plan_hash", "string", "the recorded hash: 64 lowercase hex characters"),
)

#: The two shapes of ``retrieval_plan`` (the ``plan_shape`` column).
SHAPES = (
    Shape(
        "plans",
        "canonical",
        "what `RetrievalPlan.canonical()` returns; `mt` only when an MT field is set",
        (
            _RECORD[0],
            Field("retrieval_plan", "object", "the plan, canonical", fields=(
                *CORE_FIELDS,
                Field("mt", "object", "the MT block", required=False, fields=(
                    Field("engine", "string", "the MT engine", default=""),
                    Field("manifest_hash", "string", "the MT manifest hash", default=""),
                    Field("source_lang", "string", "the query language before MT", default=""),
                )),
            )),
            _RECORD[1],
        ),
        record=("run_id",),
    ),
    Shape(
        "plans",
        "flat",
        "the dataclass as `dataclasses.asdict` writes it",
        (
            _RECORD[0],
            Field("retrieval_plan", "object", "the plan, flat", fields=(
                *CORE_FIELDS,
                Field("mt_engine", "string", "the MT engine", default=""),
                Field("mt_manifest_hash", "string", "the MT manifest hash", default=""),
                Field("source_lang", "string", "the query language before MT", default=""),
            )),
            _RECORD[1],
        ),
        record=("run_id",),
    ),
)  # fmt: skip
