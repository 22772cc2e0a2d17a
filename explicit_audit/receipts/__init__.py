"""Retrieval receipts (engram): loading, receipt checks, locators and withheld counts.

The ``receipts`` and ``exposed`` tables are documented in
:mod:`explicit_audit.receipts.loader`; the rules in :mod:`explicit_audit.receipts.checks`.
"""

from __future__ import annotations

from .checks import RECEIPT_RULES, check_receipts
from .loader import KIND
from .locators import locator_safety, safe_relative_markdown_path
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
    "RECEIPT_RULES",
    "check_receipts",
    "locator_safety",
    "safe_relative_markdown_path",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
]
