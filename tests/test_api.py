"""The public API is a decision: this test pins it."""

from __future__ import annotations

import explicit_audit as ea

PUBLIC = {
    # loading
    "Audit", "load", "load_receipts", "load_receipts_and_exposed", "load_plans",
    "load_requests", "load_decisions", "load_policy", "load_policies",
    # errors and warnings
    "AuditError", "InputError", "PolicyError", "RejectedRowsWarning",
    # receipts
    "RECEIPT_RULES", "check_receipts", "locator_safety", "safe_relative_markdown_path",
    "withheld_summary", "withheld_queries", "withheld_oracle", "within_time_window",
    # presentations
    "PRESENTATION_RULES", "check_presentations",
    # hashes
    "DIALECTS", "PLAN_HASH_DIALECT", "REQUEST_HASH_DIALECT", "canonical_json",
    "canonical_hash", "plan_canonical_json", "plan_hash", "verify_plans", "request_hash",
    "verify_requests",
    # routing
    "Policy", "PolicySet", "Escalation", "SubjectDomain", "FallbackDomain", "RiskFlag",
    "RoutingDecision", "route", "replay", "verify_decisions", "DECISION_RULES", "sweep",
    # everything at once
    "Provenance", "provenance", "Verification", "verify_all",
    "__version__",
}  # fmt: skip


def test_public_names_are_pinned():
    assert set(ea.__all__) == PUBLIC
    assert len(ea.__all__) == len(PUBLIC), "a name is listed twice in __all__"


def test_every_public_name_exists_and_is_documented():
    for name in ea.__all__:
        value = getattr(ea, name)
        if callable(value):
            assert value.__doc__, f"{name} has no docstring"


def test_computing_does_not_import_drawing_or_widgets():
    import subprocess
    import sys

    code = (
        "import sys, explicit_audit as ea; "
        "ea.load; print(sorted(m for m in ('matplotlib', 'ipywidgets', 'nbconvert') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
