"""An arborist plan record, declared once: the canonical and the flat plan shape.

``RetrievalPlan``'s fields with the dataclass's defaults (a field left out
takes its default, as ``canonical()`` reads it). These declarations give the
JSON Schema of ``explicit-audit schema plans``, the field tables of
``docs/formats.md`` section 2, the record's keys (the loader's), the plan's
fields and defaults (:mod:`explicit_audit.plans._canonical`).

The dataclass declares its types, but ``canonical()`` reads what it is given
with its own expressions, and the seed hashes the result: ``keywords or ""``
(any value), ``int()`` on the three counts (a string, a number, a boolean),
``list()`` on ``shard_ids`` (any array, a string, an object), ``or ""`` on the
MT fields (any value, ``null`` included). Each field ``accepts`` those: the
kit loads and hashes such a plan as the seed does (listing what the seed
changed in ``seed_coercions``), the schema allows it marked ``deprecated``,
and the check ``record_keys`` notes it (``undeclared_value``), so that a
producer is told both ways. A value ``int()`` or ``list()`` refuses
(``"8.0"``, ``null``) is rejected by the kit, though the schema cannot say so.
"""

from __future__ import annotations

from .._core.shape import Field, Shape

__all__ = ["CORE_FIELDS", "FLAT_MT_FIELDS", "MT_FIELDS", "RECORD_KEYS", "SHAPES", "shape_of"]

_ANY = ("any",)
_INT = ("string", "number", "boolean")  # what int() reads

#: The plan's fields in both shapes, with ``RetrievalPlan``'s defaults.
CORE_FIELDS = (
    Field("retrieval_keywords", "string", "the keywords, as hashed", default="", accepts=_ANY),
    Field("top_k", "integer", "results kept", default=0, accepts=_INT),
    Field("over_fetch", "integer", "extra results fetched", default=0, accepts=_INT),
    Field("max_context_chars", "integer", "the context budget", default=0, accepts=_INT),
    Field("shard_ids", "strings", "the shards searched", default=[],
          accepts=("array", "string", "object")),
)  # fmt: skip

#: The MT fields inside the canonical ``mt`` object, and flat.
MT_FIELDS = (
    Field("engine", "string", "the MT engine", default="", accepts=_ANY),
    Field("manifest_hash", "string", "the MT manifest hash", default="", accepts=_ANY),
    Field("source_lang", "string", "the query language before MT", default="", accepts=_ANY),
)
FLAT_MT_FIELDS = (
    Field("mt_engine", "string", "the MT engine", default="", accepts=_ANY),
    Field("mt_manifest_hash", "string", "the MT manifest hash", default="", accepts=_ANY),
    Field("source_lang", "string", "the query language before MT", default="", accepts=_ANY),
)

_RECORD = (
    Field("run_id", "string", "the run", required=False, nullable=True),
    Field("retrieval_plan_hash", "string", "the recorded hash: 64 lowercase hex characters"),
)

#: The two shapes of ``retrieval_plan`` (the ``plan_shape`` column).
#: The fields that identify one record (a plan record is identified by its run).
IDENTITY = ("run_id",)

SHAPES = (
    Shape(
        "plans",
        "canonical",
        "what `RetrievalPlan.canonical()` returns; `mt` only when an MT field is set",
        (
            _RECORD[0],
            Field("retrieval_plan", "object", "the plan, canonical", fields=(
                *CORE_FIELDS,
                Field("mt", "object", "the MT block", required=False, fields=MT_FIELDS),
            )),
            _RECORD[1],
        ),
        record=("run_id",),
        identity=IDENTITY,
    ),
    Shape(
        "plans",
        "flat",
        "the dataclass as `dataclasses.asdict` writes it",
        (
            _RECORD[0],
            Field("retrieval_plan", "object", "the plan, flat", fields=(
                *CORE_FIELDS,
                *FLAT_MT_FIELDS,
            )),
            _RECORD[1],
        ),
        record=("run_id",),
        identity=IDENTITY,
    ),
)  # fmt: skip


#: The keys of a plan record, in both shapes.
RECORD_KEYS = tuple(field.name for field in SHAPES[0].fields)

_CANONICAL, _FLAT = SHAPES
_FLAT_KEYS = tuple(field.name for field in FLAT_MT_FIELDS)
_MT_KEYS = frozenset(field.name for field in MT_FIELDS)


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
