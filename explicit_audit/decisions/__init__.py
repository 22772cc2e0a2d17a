"""Routing decisions (hyungi document server): policies, routing, replay, checks and sweeps.

The ``decisions`` table is documented in :mod:`explicit_audit.decisions.loader`.
"""

from __future__ import annotations

from .checks import DECISION_RULES, check_decisions, verify_decisions
from .kind import KIND
from .loader import load_decisions
from .patterns import escalation_patterns
from .policies import PolicySet, load_policies, load_policy
from .policy import Escalation, FallbackDomain, Policy, RiskFlag, SubjectDomain
from .routing import RoutingDecision, replay, route
from .sweep import sweep

__all__ = [
    "DECISION_RULES",
    "KIND",
    "Escalation",
    "FallbackDomain",
    "Policy",
    "PolicySet",
    "RiskFlag",
    "RoutingDecision",
    "SubjectDomain",
    "check_decisions",
    "escalation_patterns",
    "load_decisions",
    "load_policies",
    "load_policy",
    "replay",
    "route",
    "sweep",
    "verify_decisions",
]
