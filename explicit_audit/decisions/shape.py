"""A routing decision record's shape, declared once: nested and flat; and a policy's.

The inputs of ``decide_routing`` and the fields of the ``RoutingDecision`` it
returns, with the defaults ``decide_routing`` and ``RoutingDecision`` give.
The loader's defaults, the columnar path's Arrow types, the JSON Schema of
``explicit-audit schema decisions`` and the tables of ``docs/formats.md``
section 4 are all read off these declarations.

A routing policy (one YAML file, ``docs/formats.md`` section 5) is declared
here too (:data:`POLICY_SHAPES`): the keys the policy reader accepts, which of
them are required (:mod:`explicit_audit.decisions._policy_yaml`), the JSON
Schema of ``explicit-audit schema policies`` and its table in the document.
"""

from __future__ import annotations

from .._core.shape import Field, Shape, defaults
from .._core.shape_arrow import arrow_type

__all__ = [
    "FIELD_TYPES",
    "INPUT_DEFAULTS",
    "INPUT_FIELDS",
    "OUTPUT_DEFAULTS",
    "OUTPUT_FIELDS",
    "POLICY_SHAPES",
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

#: The fields that identify one record (a decision is identified by its id).
IDENTITY = ("decision_id",)

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
        identity=IDENTITY,
    ),
    Shape(
        "decisions",
        "flat",
        "recognised by `subject_domain` and `escalate_to_26b` at the top level",
        (*_IDS, *INPUT_FIELDS, *OUTPUT_FIELDS),
        record=("decision_id",),
        identity=IDENTITY,
    ),
)

#: What ``decide_routing`` and ``RoutingDecision`` fill in for a field left out.
INPUT_DEFAULTS = defaults(INPUT_FIELDS)
OUTPUT_DEFAULTS = defaults(OUTPUT_FIELDS)

#: The Arrow type of every field of a decision record, inputs then outputs.
FIELD_TYPES = {field.name: arrow_type(field) for field in (*INPUT_FIELDS, *OUTPUT_FIELDS)}

_FLAGS = Field("default_risk_flags", "array", "risk flags it always carries; null for none",
               required=False, nullable=True, items=Field("flag", "name"))  # fmt: skip

#: A routing policy, as its YAML file writes it.
POLICY_SHAPES = (
    Shape("policies", "policy", "one YAML file, read with safe loading", (
        Field("policy_id", "name", "the policy's id; the file name's stem when left out",
              required=False),
        Field("description", "string", "free text, not part of the rules", required=False),
        Field("escalation", "object", "the escalation thresholds", fields=(
            Field("context_char_cap_4b", "count", "content_chars above it escalates"),
            Field("escalate_on_multi_doc_count", "count",
                  "evidence_doc_count at or above it escalates"),
            Field("confidence_threshold", "probability", "confidence below it escalates"),
        )),
        Field("subject_domains", "object", "domain name -> its rules; null for none",
              nullable=True, items=Field("domain", "object", "a subject domain", fields=(
                  Field("high_impact", "boolean", "the domain is high impact"),
                  _FLAGS,
              ))),
        Field("fallback_domain", "object", "the domain used for a domain not named", fields=(
            Field("name", "name", "its name, as subject_domain_used says it"),
            Field("high_impact", "boolean", "it is high impact"),
            _FLAGS,
        )),
        Field("risk_flags", "object", "flag name -> its rules; null for none", nullable=True,
              items=Field("flag", "object", "a risk flag", fields=(
                  Field("requires_26b", "boolean", "the flag forces the 26B model"),
                  Field("synthesis_directive", "string", "its directive; null or empty for none",
                        required=False, nullable=True),
              ))),
    ), open=False),
)  # fmt: skip
