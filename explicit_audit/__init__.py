"""explicit_audit: load, verify and explore the audit records of AI retrieval and routing.

>>> import explicit_audit as ea
>>> audit = ea.load("data/")  # doctest: +SKIP

Public names are re-exported here; ``__all__`` is pinned by a test.

Every check returns its findings in one shape (``ea.verify.FINDING_COLUMNS``):
:func:`check_receipts`, :func:`check_plans`, :func:`check_requests` and
:func:`check_decisions`; :func:`verify_all` runs them all. The 0.1 names
``verify_plans``, ``verify_requests`` and ``verify_decisions`` are deprecated
aliases kept for one release (``verify_plans`` returns :func:`plan_verdicts`).

The kit logs to ``logging.getLogger("explicit_audit")`` and its module loggers
(``explicit_audit.loading``, ``explicit_audit.cache``, ...); it configures no
handler but a :class:`logging.NullHandler`, so an application decides where
the records go (``logging.basicConfig(level="INFO")`` shows the loads').

Importing the kit makes the system allocator pyarrow's default memory pool,
unless the environment variable ``ARROW_DEFAULT_MEMORY_POOL`` names one
(:func:`explicit_audit.reading.memory.use_system_pool` says why).
"""

import logging

from ._version import __version__
from .audit import Audit
from .canonical import (
    DIALECTS,
    PLAN_HASH_DIALECT,
    REQUEST_HASH_DIALECT,
    canonical_hash,
    canonical_json,
)
from .decisions import (
    DECISION_RULES,
    Escalation,
    FallbackDomain,
    Policy,
    PolicySet,
    RiskFlag,
    RoutingDecision,
    SubjectDomain,
    check_decisions,
    escalation_patterns,
    load_decisions,
    load_policies,
    load_policy,
    replay,
    route,
    sweep,
    verify_decisions,
)
from .errors import (
    AuditError,
    ExtraColumnsWarning,
    InputError,
    PolicyError,
    RejectedRowsWarning,
    UnparsedTimeWarning,
)
from .loading import load, load_bytes, read_parquet
from .partitioned.results import collect
from .partitioned.scheduler import use_scheduler
from .plans import (
    check_plans,
    load_plans,
    plan_canonical_json,
    plan_hash,
    plan_verdicts,
    verify_plans,
)
from .reading.limits import Limits
from .reading.memory import use_system_pool
from .reading.options import LoadOptions
from .receipts import (
    PRESENTATION_RULES,
    RECEIPT_RULES,
    check_presentations,
    check_receipts,
    load_receipts,
    load_receipts_and_exposed,
    locator_safety,
    safe_relative_markdown_path,
    view_receipts,
    withheld_oracle,
    withheld_queries,
    withheld_summary,
    within_time_window,
)
from .report import Provenance, provenance
from .requests import check_requests, load_requests, request_hash, verify_requests
from .trends import trend
from .verdicts.audit_runs import audit_runs
from .verify import Verification, verify_all

# The library's records go where the application sends them; none is printed unasked.
logging.getLogger(__name__).addHandler(logging.NullHandler())
use_system_pool()

__all__ = [
    "DECISION_RULES",
    "DIALECTS",
    "PLAN_HASH_DIALECT",
    "PRESENTATION_RULES",
    "RECEIPT_RULES",
    "REQUEST_HASH_DIALECT",
    "Audit",
    "AuditError",
    "Escalation",
    "ExtraColumnsWarning",
    "FallbackDomain",
    "InputError",
    "Limits",
    "LoadOptions",
    "Policy",
    "PolicyError",
    "PolicySet",
    "Provenance",
    "RejectedRowsWarning",
    "RiskFlag",
    "RoutingDecision",
    "SubjectDomain",
    "UnparsedTimeWarning",
    "Verification",
    "__version__",
    "audit_runs",
    "canonical_hash",
    "canonical_json",
    "check_decisions",
    "check_plans",
    "check_presentations",
    "check_receipts",
    "check_requests",
    "collect",
    "escalation_patterns",
    "load",
    "load_bytes",
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
    "plan_verdicts",
    "provenance",
    "read_parquet",
    "replay",
    "request_hash",
    "route",
    "safe_relative_markdown_path",
    "sweep",
    "trend",
    "use_scheduler",
    "verify_all",
    "verify_decisions",
    "verify_plans",
    "verify_requests",
    "view_receipts",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
]
