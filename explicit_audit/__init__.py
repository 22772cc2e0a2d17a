"""explicit_audit: load, verify and explore the audit records of AI retrieval and routing.

>>> import explicit_audit as ea
>>> audit = ea.load("data/")  # doctest: +SKIP

Public names are re-exported here; ``__all__`` is pinned by a test.
"""

from importlib.metadata import PackageNotFoundError, version

from .audit import Audit, RejectedRowsWarning, load
from .errors import AuditError, InputError, PolicyError
from .receipts import load_receipts, load_receipts_and_exposed
from .canonical import DIALECTS, canonical_hash, canonical_json
from .plans import load_plans, plan_hash, verify_plans
from .requests import load_requests, request_hash, verify_requests
from .locators import locator_safety, safe_relative_markdown_path
from .receipt_checks import RECEIPT_RULES, check_receipts
from .withheld import withheld_oracle, withheld_queries, withheld_summary, within_time_window
from .policy import Escalation, FallbackDomain, Policy, RiskFlag, SubjectDomain
from .policies import PolicySet, load_policies, load_policy
from .routing import RoutingDecision, replay, route
from .decisions import DECISION_RULES, load_decisions, verify_decisions
from .sweep import sweep

try:
    __version__ = version("explicit_audit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "Audit",
    "AuditError",
    "InputError",
    "PolicyError",
    "RejectedRowsWarning",
    "__version__",
    "load",
    "load_receipts",
    "load_receipts_and_exposed",
    "DIALECTS",
    "canonical_hash",
    "canonical_json",
    "load_plans",
    "plan_hash",
    "verify_plans",
    "load_requests",
    "request_hash",
    "verify_requests",
    "RECEIPT_RULES",
    "check_receipts",
    "locator_safety",
    "safe_relative_markdown_path",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
    "Escalation",
    "FallbackDomain",
    "Policy",
    "PolicySet",
    "RiskFlag",
    "SubjectDomain",
    "load_policies",
    "load_policy",
    "RoutingDecision",
    "replay",
    "route",
    "DECISION_RULES",
    "load_decisions",
    "verify_decisions",
    "sweep",
]
