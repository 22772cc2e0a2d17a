"""The public API is a decision: this test pins it."""

from __future__ import annotations

import explicit_audit as ea

PUBLIC = {
    # loading
    "Audit", "Limits", "LoadOptions", "load", "load_receipts", "load_receipts_and_exposed",
    "load_plans", "load_requests", "load_decisions", "load_policy", "load_policies",
    "load_bytes", "read_parquet",
    # errors and warnings
    "AuditError", "InputError", "PolicyError", "RejectedRowsWarning",
    "UnparsedTimeWarning", "ExtraColumnsWarning",
    # receipts
    "RECEIPT_RULES", "check_receipts", "locator_safety", "safe_relative_markdown_path",
    "withheld_summary", "withheld_queries", "withheld_oracle", "within_time_window",
    # presentations
    "PRESENTATION_RULES", "check_presentations", "view_receipts",
    # hashes
    "DIALECTS", "PLAN_HASH_DIALECT", "REQUEST_HASH_DIALECT", "canonical_json",
    "canonical_hash", "plan_canonical_json", "plan_hash", "plan_verdicts", "check_plans",
    "request_hash", "check_requests",
    # deprecated 0.1 names of check_plans/plan_verdicts, check_requests, check_decisions
    "verify_plans", "verify_requests", "verify_decisions",
    # routing
    "Policy", "PolicySet", "Escalation", "SubjectDomain", "FallbackDomain", "RiskFlag",
    "RoutingDecision", "route", "replay", "check_decisions", "DECISION_RULES", "sweep",
    "escalation_patterns",
    # everything at once
    "Provenance", "provenance", "Verification", "verify_all",
    # over time
    "trend",
    "audit_runs",
    # where lazy (engine="dask") tables are computed
    "use_scheduler", "collect",
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


def test_the_format_contract_ships_with_the_kit_and_messages_point_to_it(tmp_path):
    import re
    import warnings
    from pathlib import Path

    from explicit_audit._core.describe import FORMATS_DOC

    root = Path(__file__).parent.parent
    contract = (root / FORMATS_DOC.split(" ")[0]).read_text(encoding="utf-8")
    for heading in ("## Files", "Retrieval receipts", "Retrieval plans", "compile requests"):
        assert heading in contract
    for shape in ("bare", "CLI", "outcome", "canonical", "flat", "Nested", "gzip", ".ndjson"):
        assert shape in contract, shape
    package = root / "explicit_audit"
    stale = [p.name for p in package.rglob("*.py") if re.search(r"\bFORMATS\.md", p.read_text())]
    assert stale == []
    path = tmp_path / "odd.jsonl"
    path.write_text('{"neither": "kind"}\n', encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        reason = ea.load(path, progress=False).rejected["reason"].iloc[0]
    assert reason.endswith(f"see {FORMATS_DOC} for the record shapes")
