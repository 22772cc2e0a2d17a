"""Retrieval receipts (engram): loading, receipt checks, locators and withheld counts.

The ``receipts`` and ``exposed`` tables are documented in
:mod:`explicit_audit.receipts.loader`, ``presentations`` in
:mod:`explicit_audit.receipts.presentations`; the rules in
:mod:`explicit_audit.receipts.checks` and :mod:`explicit_audit.receipts.presentation_checks`.
"""

from __future__ import annotations

from .checks import RECEIPT_RULES, check_receipts
from .kind import KIND
from .loader import load_receipts, load_receipts_and_exposed
from .locators import locator_safety, safe_relative_markdown_path
from .presentation_checks import PRESENTATION_RULES, check_presentations
from .rendered import view_receipts
from .withheld import (
    ALL_LABEL,
    withheld_oracle,
    withheld_queries,
    withheld_summary,
    within_time_window,
)

__all__ = [
    "ALL_LABEL",
    "KIND",
    "PRESENTATION_RULES",
    "RECEIPT_RULES",
    "check_presentations",
    "check_receipts",
    "load_receipts",
    "load_receipts_and_exposed",
    "locator_safety",
    "safe_relative_markdown_path",
    "view_receipts",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
]
