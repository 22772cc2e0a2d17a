"""Retrieval plans (arborist): loading, ``retrieval_plan_hash`` and its verification.

The ``plans`` table is documented in :mod:`explicit_audit.plans.loader`.
"""

from __future__ import annotations

from .checks import verify_plans
from .hashing import plan_canonical_json, plan_hash
from .loader import KIND

__all__ = [
    "KIND",
    "plan_canonical_json",
    "plan_hash",
    "verify_plans",
]
