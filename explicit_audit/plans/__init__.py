"""Retrieval plans (arborist): loading, ``retrieval_plan_hash`` and its verification.

The ``plans`` table is documented in :mod:`explicit_audit.plans.loader`.
"""

from __future__ import annotations

from .checks import check_plans, plan_verdicts, verify_plans
from .hashing import plan_canonical_json, plan_hash
from .kind import KIND
from .loader import load_plans

__all__ = [
    "KIND",
    "check_plans",
    "load_plans",
    "plan_canonical_json",
    "plan_hash",
    "plan_verdicts",
    "verify_plans",
]
