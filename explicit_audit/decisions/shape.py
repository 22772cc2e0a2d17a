"""A routing decision record's shape, declared once: nested and flat.

The inputs of ``decide_routing`` and the fields of the ``RoutingDecision`` it
returns, with the defaults ``decide_routing`` and ``RoutingDecision`` give.
The loader's defaults, the columnar path's Arrow types, the JSON Schema of
``explicit-audit schema decisions`` and the tables of ``docs/formats.md``
section 4 are all read off these declarations.
"""

from __future__ import annotations

from .._core.shape import Field, Shape, arrow_type, defaults

__all__ = [
    "FIELD_TYPES",
    "INPUT_DEFAULTS",
    "INPUT_FIELDS",
    "OUTPUT_DEFAULTS",
    "OUTPUT_FIELDS",
    "SHAPES",
]

#: The inputs of ``decide_routing``, in its order; those with a default may be left out.
INPUT_FIELDS = (
    Field("subject_domain", "string", "the domain upstream matched"),
    Field("content_chars", "count", "characters given to the 4B model"),
    Field("deterministic_keyword_hits", "strings", "keyword matches", default=[]),
    Field(
        "self_declared_high_impact",
        "boolean",
        "the 4B model's high-impact declaration",
        default=False,
    ),
    Field("self_declared_risk_flags", "strings", "flags the 4B model declared", default=[]),
    Field("confidence", "probability", "the 4B model's confidence", default=1.0),
    Field("evidence_doc_count", "count", "documents the answer draws on", default=0),
)

#: The fields of the ``RoutingDecision`` returned, in its order.
OUTPUT_FIELDS = (
    Field("escalate_to_26b", "boolean", "the answer goes to the 26B model"),
    Field("escalation_reasons", "strings", "reasons, in the decision's order"),
    Field("risk_flags", "strings", "every risk flag, sorted"),
    Field("high_impact_task", "boolean", "the task is high impact"),
    Field("synthesis_directives", "strings", "directives of the known flags, in flag order"),
    Field("subject_domain_used", "string", "the domain applied (the fallback's name if used)"),
    Field("used_fallback", "boolean", "the subject domain was not in the policy", default=False),
)

_IDS = (
    Field("decision_id", "string", "the decision's id", required=False, nullable=True),
    Field("policy_id", "string", "the policy the decision says it followed", required=False,
          nullable=True),
)  # fmt: skip

#: The shapes a decision is written in.
SHAPES = (
    Shape(
        "decisions",
        "nested",
        "recognised by `inputs` and `decision`",
        (
            *_IDS,
            Field("inputs", "object", "the inputs of decide_routing", fields=INPUT_FIELDS),
            Field("decision", "object", "the RoutingDecision returned", fields=OUTPUT_FIELDS),
        ),
        record=("decision_id",),
    ),
    Shape(
        "decisions",
        "flat",
        "recognised by `subject_domain` and `escalate_to_26b` at the top level",
        (*_IDS, *INPUT_FIELDS, *OUTPUT_FIELDS),
        record=("decision_id",),
    ),
)

#: What ``decide_routing`` and ``RoutingDecision`` fill in for a field left out.
INPUT_DEFAULTS = defaults(INPUT_FIELDS)
OUTPUT_DEFAULTS = defaults(OUTPUT_FIELDS)

#: The Arrow type of every field of a decision record, inputs then outputs.
FIELD_TYPES = {field.name: arrow_type(field) for field in (*INPUT_FIELDS, *OUTPUT_FIELDS)}
