"""The rules on failed presentation lines: which errors each step of the rendering returns.

``renderPresentation`` (``harness/src/presentation.ts``) returns
``failure(errors)`` for every refusal before retrieval (no receipt),
``failure(retrieval.errors, retrieval.receipt)`` when the guarded retrieval
failed and ``failure([retrieval_miss], receipt)`` when it missed (a ``miss``
receipt), and ``failure(errors, retrieval.receipt)`` for the steps after a hit
(view projection, audience adaptation, the word limit, retention). The code
tables below list every code each step can return, with the kind and field
the builders ``presentationError`` / ``retrievalError`` give it.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["check_classes", "check_failed", "quote"]

_ERROR_KINDS = frozenset(
    {
        "validation",
        "retrieval",
        "plan",
        "approval",
        "transaction",
        "lock",
        "authorization",
        "presentation",
        "artifact",
    }
)
#: Errors renderPresentation returns before any retrieval: code -> (kind, field).
_BEFORE_RETRIEVAL = {
    "active_space_unresolved": ("authorization", None),
    "pack_not_installed": ("authorization", "pack"),
    "model_not_allowed": ("authorization", "model"),
    "view_unknown": ("presentation", "viewId"),
    "view_scope_invalid": ("presentation", "viewId"),
    "audience_unknown": ("authorization", "audienceId"),
    "delivery_unknown": ("presentation", "deliveryId"),
    "definition_version_invalid": ("presentation", None),
    "delivery_constraint_invalid": ("presentation", "deliveryId"),
    "generated_at_invalid": ("presentation", "generatedAt"),
    "artifact_root_not_segregated": ("artifact", "delivery"),
    "artifact_root_not_writable": ("artifact", "delivery"),
    "query_not_scoped": ("retrieval", "query"),
    "view_query_failed": ("presentation", None),
}
#: Errors of a guarded retrieval that failed (its receipt is a miss).
_RETRIEVAL_FAILURES = frozenset(
    """policy_shape_invalid policy_presentations_included policy_source_classes_empty
    policy_relevance_threshold_invalid pack_not_installed query_invalid audience_unknown
    source_class_not_allowed query_strategy_failed query_strategy_invalid receipt_incomplete
    qmd_not_run qmd_exit qmd_output_malformed qmd_shape_invalid foreign_locator
    locator_invalid locator_escape records_root_unavailable path_escape record_read_failed
    record_shape_invalid current_markdown_invalid record_identity_mismatch
    scope_space_mismatch source_classification_failed eligibility_policy_failed
    authorization_policy_failed authorization_policy_invalid""".split()
)
#: Errors of the steps after a hit: projection, adaptation, word limit, retention.
_AFTER_HIT = frozenset(
    """view_projection_failed view_projection_invalid text_empty text_multiline
    required_fact_missing recommendation_invalid audience_adaptation_failed
    audience_adaptation_invalid fact_not_in_view uncertainty_not_in_view
    required_fact_hidden uncertainty_hidden action_unauthorized recommendation_required
    recommendation_distinct_required delivery_limit_exceeded presentation_already_retained
    artifact_write_failed""".split()
)
_MISS_MESSAGE = "the view has no eligible current records; a miss is not evidence of absence"


def quote(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def check_classes(retrieval: dict, say, at: str) -> None:
    """``requested_equals_allowed`` on a retrieval receipt found at path ``at``."""
    requested = retrieval.get("requestedSourceClasses")
    if requested != retrieval.get("allowedSourceClasses"):
        say(
            "requested_equals_allowed",
            f"requested {quote(requested)}, allowed {quote(retrieval.get('allowedSourceClasses'))}",
            field=f"{at}requestedSourceClasses",
        )


def _errors(record: dict, say) -> list[dict]:
    errors = record.get("errors")
    if not isinstance(errors, list):
        return []
    good = []
    for index, error in enumerate(errors):
        keys = set(error) if isinstance(error, dict) else set()
        ok = (
            isinstance(error, dict)
            and error.get("kind") in _ERROR_KINDS
            and isinstance(error.get("code"), str)
            and isinstance(error.get("message"), str)
            and keys <= {"kind", "code", "field", "message"}
            and ("field" not in error or isinstance(error["field"], str))
        )
        if ok:
            good.append(error)
        else:
            say("error_shape", f"errors[{index}] is {quote(error)[:200]}")
    return good


def check_failed(record: dict, say) -> None:
    errors = _errors(record, say)
    retrieval = record.get("retrieval")
    kind = retrieval.get("kind") if isinstance(retrieval, dict) else None
    codes = [error["code"] for error in errors]
    if isinstance(retrieval, dict):
        check_classes(retrieval, say, "record.retrieval.")
    if "retrieval_miss" in codes:
        only = errors == [
            {
                "kind": "retrieval",
                "code": "retrieval_miss",
                "field": "query",
                "message": _MISS_MESSAGE,
            }
        ]
        if not only or kind != "miss":
            say("retrieval_miss_error", f"errors {quote(codes)} with a {quote(kind)} receipt")
        return
    known = _BEFORE_RETRIEVAL.keys() | _RETRIEVAL_FAILURES | _AFTER_HIT
    for code in sorted(set(codes) - known):
        say("error_code_unknown", f"error code {quote(code)} is not one engram's rendering returns")
    if retrieval is None:
        for error in errors:
            expected = _BEFORE_RETRIEVAL.get(error["code"])
            if error["code"] in known and expected != (error["kind"], error.get("field")):
                say(
                    "failure_stage",
                    f"{quote(error['code'])} (kind {quote(error['kind'])}, field "
                    f"{quote(error.get('field'))}) with no retrieval receipt",
                )
        if len(errors) > 1 and set(codes) != {"active_space_unresolved"}:
            say("failure_stage", f"{len(errors)} errors before retrieval: {quote(codes)}")
    elif kind == "miss":
        for error in errors:
            if error["code"] in known and (
                error["code"] not in _RETRIEVAL_FAILURES or error["kind"] != "retrieval"
            ):
                say(
                    "failure_stage",
                    f"{quote(error['code'])} (kind {quote(error['kind'])}) with a retrieval miss",
                )
    elif kind == "hit":
        for code in codes:
            if code in known and code not in _AFTER_HIT:
                say("failure_stage", f"{quote(code)} after a retrieval hit")
