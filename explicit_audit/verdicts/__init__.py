"""What ``verify`` found, as later runs and CI dashboards read it.

- :mod:`~explicit_audit.verdicts.verdict`: one run's findings, its window and
  its comparison with a baseline, and the exit status they give;
- :mod:`~explicit_audit.verdicts.baseline`: how a finding is identified from
  one run to the next, and what is new, resolved and persisting;
- :mod:`~explicit_audit.verdicts.audit_runs`: each run from an audit state,
  recorded in it, and the last one as the baseline of the next;
- :mod:`~explicit_audit.verdicts.window`: ``--since/--until``, which time each
  table's records have, and what becomes of records that have none;
- :mod:`~explicit_audit.verdicts.formats`: the registry of output formats
  (:func:`register_format`), which ``verify --format`` reads;
  :mod:`~explicit_audit.verdicts.outputs` registers the kit's own:
  :mod:`~explicit_audit.verdicts.text`, JSON, :mod:`~explicit_audit.verdicts.junit`
  and :mod:`~explicit_audit.verdicts.sarif`;
- :mod:`~explicit_audit.verdicts.exits`: the exit statuses and what each means.
"""

from __future__ import annotations

from . import outputs  # noqa: F401 (registers the kit's own formats)
from .audit_runs import audit_runs, last_audit, record_audit
from .baseline import BaselineComparison, compare_findings, finding_identity, fingerprint
from .exits import ExitStatus
from .formats import (
    Failure,
    OutputFormat,
    Rendering,
    output_formats,
    register_format,
    unregister_format,
)
from .verdict import Verdict
from .window import TIME_KEYS, Window, WindowResult, apply_window, parse_time

__all__ = [
    "TIME_KEYS",
    "BaselineComparison",
    "ExitStatus",
    "Failure",
    "OutputFormat",
    "Rendering",
    "Verdict",
    "Window",
    "WindowResult",
    "apply_window",
    "audit_runs",
    "compare_findings",
    "finding_identity",
    "fingerprint",
    "last_audit",
    "output_formats",
    "parse_time",
    "record_audit",
    "register_format",
    "unregister_format",
]
