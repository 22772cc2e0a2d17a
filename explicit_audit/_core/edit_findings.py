"""The check of an audit state: the bytes audited before are still there, unchanged.

An audit loaded with ``state=DIR`` (:mod:`explicit_audit.state`) carries
``Audit.changes``: one row per difference between the files and the bytes
the state audited before. :data:`STATE_CHECKER` makes each a finding of the
check ``audited_bytes``, which ``verify_all`` runs only over such an audit
(an audit without a state has no earlier audit to compare with). What it
examined is the lines the state audited before (``Audit.audited_before``):
on the first load into an empty state there are none, and it is not run.
"""

from __future__ import annotations

import pandas as pd

from .findings import NOTICE, Rule, RuleTable, _typed
from .records import Check, Checker

__all__ = ["CHANGE_COLUMNS", "STATE_CHECK", "STATE_CHECKER", "STATE_RULES", "state_findings"]

#: The check's name.
STATE_CHECK = "audited_bytes"

#: Columns of ``Audit.changes``.
CHANGE_COLUMNS = {
    "source_file": "the file (as named now; for a rotation, its new name)",
    "source_line": "the first line that changed, or 0 when no line can be named",
    "rule": "audited_bytes_changed, audited_file_shrank, audited_file_replaced, "
    "audited_file_missing or log_rotated",
    "detail": "what changed, in words, the record the line held before and now included",
}

STATE_RULES = RuleTable(
    [
        Rule(
            "audited_bytes_changed",
            "An append-only log keeps the bytes audited before: a line audited before that "
            "reads otherwise now is an edit of the log.",
            check=STATE_CHECK,
            kind="",
        ),
        Rule(
            "audited_file_shrank",
            "An append-only log only grows: a file shorter than the bytes audited before was "
            "cut short (its rotation aside, recognised by content).",
            check=STATE_CHECK,
            kind="",
        ),
        Rule(
            "audited_file_replaced",
            "A log audited before is the same file at the next audit: another file (another "
            "inode) under its name replaced it.",
            check=STATE_CHECK,
            kind="",
        ),
        Rule(
            "audited_file_missing",
            "A log audited before is still there at the next audit, under its name or "
            "another (a rotation).",
            check=STATE_CHECK,
            kind="",
        ),
        Rule(
            "log_rotated",
            "A log audited before is now under another name, its audited bytes unchanged "
            "(recognised by their SHA-256): a rotation, read on from where it was audited.",
            check=STATE_CHECK,
            kind="",
            severity=NOTICE,
        ),
    ]
)


def state_findings(changes: pd.DataFrame) -> pd.DataFrame:
    """One finding per row of ``Audit.changes``, of the rule it names."""
    n = len(changes)
    rules = [STATE_RULES[name] for name in changes["rule"].astype("str")]
    columns = {
        "check": [STATE_CHECK] * n,
        "kind": [None] * n,
        "source_file": changes["source_file"].tolist(),
        "source_line": changes["source_line"].tolist(),
        "row": [pd.NA] * n,
        "record": [None] * n,
        "rule": [rule.name for rule in rules],
        "severity": [rule.severity for rule in rules],
        "field": [None] * n,
        "detail": changes["detail"].tolist(),
    }
    return _typed(columns, STATE_RULES.dtypes())


#: The check of an audit loaded with a state; ``verify_all`` adds it for such an audit.
STATE_CHECKER = Checker(
    run=state_findings,
    reads=("changes",),
    checks=(
        Check(
            STATE_CHECK,
            "the bytes an earlier audit (its state) read: unchanged, and the files still there",
            examines=None,  # the lines audited before: Audit.audited_before
        ),
    ),
    rules=STATE_RULES,
    order=0,
)
