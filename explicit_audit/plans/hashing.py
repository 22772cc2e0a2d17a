"""arborist's ``retrieval_plan_hash``: the canonical JSON of a plan and its SHA-256."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import AuditError
from ._canonical import (
    PlanError,
    canonical_text,
    digest,
    written_plan,
)

__all__ = ["plan_canonical_json", "plan_hash"]


def plan_hash(plan: Mapping[str, Any] | str) -> str:
    """arborist's ``retrieval_plan_hash`` of a written plan, byte for byte.

    Parameters
    ----------
    plan : mapping or str
        A ``retrieval_plan`` in the canonical shape (``mt`` object, present
        only when an MT field is set) or the flat dataclass shape
        (``mt_engine``, ``mt_manifest_hash``, ``source_lang``), or its JSON
        text (a value of the ``plan`` column), read as the seed reads it
        (``json.loads``). Missing fields
        take the dataclass defaults; the seed's coercions apply (``top_k: "8"``
        hashes as 8, ``retrieval_keywords: null`` as ``""``).

    Returns
    -------
    str
        SHA-256 hex over ``json.dumps(canonical, sort_keys=True,
        separators=(",", ":"))``, non-ASCII escaped as ``\\uXXXX``.

    Raises
    ------
    AuditError
        Where the seed would raise (``top_k: "8.0"``, ``shard_ids: None``) or
        the mapping is no shape a producer writes (an unknown key).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> plan = {"retrieval_keywords": "서울", "top_k": 8, "over_fetch": 2,
    ...         "max_context_chars": 12000, "shard_ids": ["s1"]}
    >>> ea.plan_hash(plan)[:16]
    '69948a403a3a1a09'
    >>> ea.plan_hash(dict(plan, top_k="8")) == ea.plan_hash(plan)
    True
    >>> ea.plan_hash('{"retrieval_keywords": "\\uc11c\\uc6b8", "top_k": 8, "over_fetch": 2, '
    ...              '"max_context_chars": 12000, "shard_ids": ["s1"]}')[:16]
    '69948a403a3a1a09'
    """
    try:
        return digest(written_plan(plan))
    except PlanError as exc:
        raise AuditError(
            f"cannot hash this plan: {exc}. Fix the field, or check whether the record was "
            "written by arborist at all."
        ) from None


def plan_canonical_json(plan: Mapping[str, Any] | str) -> str:
    """The exact text arborist hashes for a written plan (either shape).

    Parameters
    ----------
    plan : mapping or str
        A ``retrieval_plan`` or its JSON text, as for :func:`plan_hash`.

    Returns
    -------
    str
        ``json.dumps(canonical, sort_keys=True, separators=(",", ":"))`` of the
        seed's ``canonical()``: non-ASCII escaped, the MT block only when an MT
        field is set. Its UTF-8 bytes' SHA-256 is :func:`plan_hash`.

    Raises
    ------
    AuditError
        Where the seed would raise, as for :func:`plan_hash`.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> print(ea.plan_canonical_json({"retrieval_keywords": "서울", "top_k": 8}))
    {"max_context_chars":0,"over_fetch":0,"retrieval_keywords":"\\uc11c\\uc6b8","shard_ids":[],"top_k":8}
    """
    try:
        return canonical_text(written_plan(plan))
    except PlanError as exc:
        raise AuditError(f"cannot write this plan's canonical JSON: {exc}") from None
