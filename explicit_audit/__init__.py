"""explicit_audit: load, verify and explore the audit records of AI retrieval and routing.

>>> import explicit_audit as ea
>>> audit = ea.load("data/")  # doctest: +SKIP

Public names are re-exported here; ``__all__`` is pinned by a test.
"""

from importlib.metadata import PackageNotFoundError, version

from .audit import Audit, RejectedRowsWarning, load
from .canonical import (
    DIALECTS,
    PLAN_HASH_DIALECT,
    REQUEST_HASH_DIALECT,
    canonical_hash,
    canonical_json,
)
from .decisions import DECISION_RULES, load_decisions, verify_decisions
from .errors import AuditError, InputError, PolicyError
from .locators import locator_safety, safe_relative_markdown_path
from .plans import load_plans, plan_canonical_json, plan_hash, verify_plans
from .policies import PolicySet, load_policies, load_policy
from .policy import Escalation, FallbackDomain, Policy, RiskFlag, SubjectDomain
from .provenance import Provenance, provenance
from .receipt_checks import RECEIPT_RULES, check_receipts
from .receipts import load_receipts, load_receipts_and_exposed
from .requests import load_requests, request_hash, verify_requests
from .routing import RoutingDecision, replay, route
from .sweep import sweep
from .verify import Verification, verify_all
from .withheld import withheld_oracle, withheld_queries, withheld_summary, within_time_window

try:
    __version__ = version("explicit_audit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "DECISION_RULES",
    "DIALECTS",
    "PLAN_HASH_DIALECT",
    "RECEIPT_RULES",
    "REQUEST_HASH_DIALECT",
    "Audit",
    "AuditError",
    "Escalation",
    "FallbackDomain",
    "InputError",
    "Policy",
    "PolicyError",
    "PolicySet",
    "Provenance",
    "RejectedRowsWarning",
    "RiskFlag",
    "RoutingDecision",
    "SubjectDomain",
    "Verification",
    "__version__",
    "canonical_hash",
    "canonical_json",
    "check_receipts",
    "load",
    "load_decisions",
    "load_plans",
    "load_policies",
    "load_policy",
    "load_receipts",
    "load_receipts_and_exposed",
    "load_requests",
    "locator_safety",
    "plan_canonical_json",
    "plan_hash",
    "provenance",
    "replay",
    "request_hash",
    "route",
    "safe_relative_markdown_path",
    "sweep",
    "verify_all",
    "verify_decisions",
    "verify_plans",
    "verify_requests",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
]
