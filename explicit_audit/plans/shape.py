"""An arborist plan record, declared once: the canonical and the flat plan shape.

``RetrievalPlan``'s fields with the dataclass's defaults (a field left out
takes its default, as ``canonical()`` reads it). These declarations give the
JSON Schema of ``explicit-audit schema plans`` and the field tables of
``docs/formats.md`` section 2.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = ["CORE_FIELDS", "SHAPES", "shape_of"]

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


_CANONICAL, _FLAT = SHAPES
_FLAT_KEYS = ("mt_engine", "mt_manifest_hash", "source_lang")
_MT_KEYS = frozenset(("engine", "manifest_hash", "source_lang"))


def shape_of(value: object) -> Shape | None:
    """The shape a plan record is read as, for its keys: what the kit's general rule
    (:func:`explicit_audit._core.keys.shape_of`) finds, without walking both shapes.

    Both shapes declare the same record keys, so the rule comes down to the fewest
    unknown keys inside the plan: the canonical shape does not know the flat MT keys
    (nor a key of ``mt`` other than its three), the flat shape does not know ``mt``;
    a tie goes to the canonical shape, declared first.
    """
    if not isinstance(value, dict):
        return None
    plan = value.get("retrieval_plan")
    if not isinstance(plan, dict):
        return _CANONICAL
    flat_keys = sum(1 for key in _FLAT_KEYS if key in plan)
    if not flat_keys:
        return _CANONICAL
    block = plan.get("mt")
    unknown_in_mt = sum(1 for key in block if key not in _MT_KEYS) if isinstance(block, dict) else 0
    return _FLAT if ("mt" in plan) < flat_keys + unknown_in_mt else _CANONICAL
