"""What ``verify`` found, as later runs and CI dashboards read it.

- :mod:`~explicit_audit.verdicts.verdict`: one run's findings, its window and
  its comparison with a baseline, and the exit status they give;
- :mod:`~explicit_audit.verdicts.baseline`: how a finding is identified from
  one run to the next, and what is new, resolved and persisting;
- :mod:`~explicit_audit.verdicts.window`: ``--since/--until``, which time each
  table's records have, and what becomes of records that have none;
- :mod:`~explicit_audit.verdicts.text`, :mod:`~explicit_audit.verdicts.junit`
  and :mod:`~explicit_audit.verdicts.sarif`: the outputs.
"""

from __future__ import annotations

from .baseline import BaselineComparison, compare_findings, finding_identity, fingerprint
from .verdict import Verdict
from .window import TIME_KEYS, Window, WindowResult, apply_window, parse_time

__all__ = [
    "TIME_KEYS",
    "BaselineComparison",
    "Verdict",
    "Window",
    "WindowResult",
    "apply_window",
    "compare_findings",
    "finding_identity",
    "fingerprint",
    "parse_time",
]
