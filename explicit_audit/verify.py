"""Every check of the kit, run once over an audit, as one result.

:func:`verify_all` runs each check function over a loaded
:class:`~explicit_audit.Audit` and gathers their findings, which all come in
the one findings shape of the kit (:data:`FINDING_COLUMNS`, documented in
:mod:`explicit_audit._core.findings`), into one table:

=====================  ===================================================================
check                  what a finding is
=====================  ===================================================================
rejected_rows          an input value that was not loaded (``Audit.rejected``)
plan_hashes            a ``retrieval_plan_hash`` that is not the seed's hash of its plan
                       (:func:`~explicit_audit.check_plans`)
request_hashes         a ``request_sha256`` that is not the hash of its payload, or is
                       malformed or unhashable (:func:`~explicit_audit.check_requests`)
request_hiding_rule    a payload carrying a key the §7.1 hiding rule forbids
request_independence   requests for one ``base_id`` carrying different payloads
request_consistency    a record field that contradicts its own payload
receipt_rules          a receipt breaking a guarantee of engram's code
                       (:func:`~explicit_audit.check_receipts`)
presentation_rules     a presentation line breaking a guarantee of engram's rendering
                       (:func:`~explicit_audit.check_presentations`)
decision_policy        a routing decision that does not follow the policy it names
                       (:func:`~explicit_audit.check_decisions`)
=====================  ===================================================================

Each finding's severity is its rule's, declared once beside the rule
(:data:`RULES`): nothing is re-derived here. An explained mismatch (a plan hash
written by another known JSON writer, say) is an error: the recorded hash is
not the one the producer promises. Only what the producer's own code allows is
a ``notice`` (a forbidden key name nested inside a request payload), and what
engram's unstable presentation schema (version 0) may add (a receipt key or
an error code this kit does not know); a notice does not make the audit
unclean, nor ``explicit-audit verify`` exit 1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from ._core.findings import (
    ERROR,
    FINDING_COLUMNS,
    REJECTED_RULES,
    RuleTable,
    rejected_findings,
)
from ._core.jsonable import json_rows
from ._core.partitions import Deferred, compute_together, concat_parts, per_partition
from .audit import Audit
from .decisions import check_decisions
from .decisions.checks import RULES as DECISION_RULE_TABLE
from .plans import check_plans
from .plans.checks import RULES as PLAN_RULE_TABLE
from .receipts import check_presentations, check_receipts
from .receipts.checks import RULES as RECEIPT_RULE_TABLE
from .receipts.presentation_checks import RULES as PRESENTATION_RULE_TABLE
from .requests import check_requests
from .requests.checks import RULES as REQUEST_RULE_TABLE
from .requests.checks import deferred_check_requests

__all__ = ["CHECKS", "FINDING_COLUMNS", "NOTICES", "RULES", "Verification", "verify_all"]

#: Every check :func:`verify_all` runs, in report order: name -> what it covers.
CHECKS = MappingProxyType(
    {
        "rejected_rows": "input values that could not be loaded",
        "plan_hashes": "retrieval_plan_hash rebuilt from each plan",
        "request_hashes": "request_sha256 rebuilt from each payload",
        "request_hiding_rule": "payload keys the §7.1 hiding rule forbids",
        "request_independence": "one payload per base_id across models",
        "request_consistency": "record fields that contradict their payload",
        "receipt_rules": "guarantees of engram's receipt code",
        "presentation_rules": "guarantees of engram's presentation rendering",
        "decision_policy": "decisions replayed against the policy they name",
    }
)

#: Every rule of every check, in report order: name -> :class:`Rule` (its check,
#: record kind, severity and what it requires). ``RULES.frame()`` shows them.
RULES: RuleTable = (
    REJECTED_RULES
    | PLAN_RULE_TABLE
    | REQUEST_RULE_TABLE
    | RECEIPT_RULE_TABLE
    | PRESENTATION_RULE_TABLE
    | DECISION_RULE_TABLE
)

#: The rules whose findings are notices (read off :data:`RULES`).
NOTICES = frozenset(name for name, rule in RULES.items() if rule.severity != ERROR)


@dataclass(frozen=True)
class Verification:
    """What every check found in one audit.

    Attributes
    ----------
    findings : DataFrame
        One row per finding, columns of :data:`FINDING_COLUMNS`, ordered by
        check (as in :data:`CHECKS`), then file and line.
    checked : dict
        ``{check: number of records it examined}``.
    """

    findings: pd.DataFrame
    checked: dict[str, int]

    @property
    def clean(self) -> bool:
        """Whether no check found an error (notices aside)."""
        return not (self.findings["severity"] == ERROR).any()

    def summary(self) -> pd.DataFrame:
        """One row per check: what it covers, records checked, findings.

        Returns
        -------
        DataFrame
            Columns ``check``, ``covers``, ``checked``, ``findings`` (errors)
            and ``notices``; every check appears, found something or not.

        Examples
        --------
        >>> ea.verify_all(ea.load("data/")).summary()  # doctest: +SKIP
        """
        errors = self.findings["severity"] == ERROR
        counts = self.findings.loc[errors, "check"].value_counts()
        notices = self.findings.loc[~errors, "check"].value_counts()
        return pd.DataFrame(
            {
                "check": pd.Series(list(CHECKS), dtype="str"),
                "covers": pd.Series(list(CHECKS.values()), dtype="str"),
                "checked": pd.Series([self.checked[c] for c in CHECKS], dtype="int64"),
                "findings": pd.Series([int(counts.get(c, 0)) for c in CHECKS], dtype="int64"),
                "notices": pd.Series([int(notices.get(c, 0)) for c in CHECKS], dtype="int64"),
            }
        )

    def to_dict(self) -> dict:
        """The result as plain JSON-ready values.

        Returns
        -------
        dict
            ``clean`` (bool), ``summary`` (one object per check) and
            ``findings`` (one object per finding, keys of :data:`FINDING_COLUMNS`,
            a missing value as null).

        Examples
        --------
        >>> ea.verify_all(ea.load("data/")).to_dict()["clean"]  # doctest: +SKIP
        False
        """
        return {
            "clean": self.clean,
            "summary": json_rows(self.summary()),
            "findings": json_rows(self.findings),
        }


#: Every check :func:`verify_all` gathers, in report order: the function, the
#: tables it is given, and whether it is also given the policies.
_PARTS: tuple[tuple[Callable[..., pd.DataFrame], tuple[str, ...], bool], ...] = (
    (rejected_findings, ("rejected",), False),
    (check_plans, ("plans",), False),
    (check_requests, ("requests",), False),
    (check_receipts, ("receipts", "exposed"), False),
    (check_presentations, ("presentations",), False),
    (check_decisions, ("decisions",), True),
)


def _frames(audit: Audit, names: tuple[str, ...]) -> list:
    return [getattr(audit, name) for name in names]


def verify_all(audit: Audit) -> Verification:
    """Run every check of the kit over an audit.

    Parameters
    ----------
    audit : Audit
        What :func:`explicit_audit.load` returned.

    Returns
    -------
    Verification
        ``.findings`` (one row per finding, every check, columns of
        :data:`FINDING_COLUMNS`), ``.summary()`` (one row per check), ``.clean``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> result = ea.verify_all(ea.load("data/"))  # doctest: +SKIP
    >>> result.summary()  # doctest: +SKIP
    >>> result.findings.query("check == 'plan_hashes'")  # doctest: +SKIP
    """
    if audit.engine == "dask":
        parts, checked = _partitioned_parts(audit)
    else:
        parts = [
            check(*_frames(audit, names), **({"policies": audit.policies} if policies else {}))
            for check, names, policies in _PARTS
        ]
        checked = _checked(
            int(audit.sources["values_read"].sum()) if len(audit.sources) else 0,
            {name: len(audit.tables[name]) for name in _COUNTED},
        )
    kinds = sorted({str(kind) for part in parts for kind in part["kind"].dropna()})
    dtypes = RULES.dtypes(kinds=kinds)
    dtypes["check"] = pd.CategoricalDtype(list(CHECKS))
    findings = pd.concat(
        [part.astype(dtypes) for part in parts if len(part)] or [RULES.empty_findings()],
        ignore_index=True,
    ).astype(dtypes)
    findings = findings.sort_values(
        ["check", "source_file", "source_line"], kind="stable", na_position="first"
    ).reset_index(drop=True)
    return Verification(findings[list(FINDING_COLUMNS)], checked)


#: The tables whose rows the checks count as examined.
_COUNTED = ("plans", "requests", "receipts", "presentations", "decisions")


def _checked(values_read: int, rows: dict[str, int]) -> dict[str, int]:
    n_requests = rows["requests"]
    return {
        "rejected_rows": values_read,
        "plan_hashes": rows["plans"],
        "request_hashes": n_requests,
        "request_hiding_rule": n_requests,
        "request_independence": n_requests,
        "request_consistency": n_requests,
        "receipt_rules": rows["receipts"],
        "presentation_rules": rows["presentations"],
        "decision_policy": rows["decisions"],
    }


def _partitioned_parts(audit: Audit) -> tuple[list[pd.DataFrame], dict[str, int]]:
    """Every check over Dask tables, computed in one pass: findings, and rows examined.

    The audit's accounting comes along (``Audit.accounting``), so a report of
    this pass needs no other.
    """
    checks = [
        deferred_check_requests(audit.requests)
        if check is check_requests
        else per_partition(
            check,
            _frames(audit, names),
            concat_parts,
            what="verify_all",
            **({"policies": audit.policies} if policies else {}),
        )
        for check, names, policies in _PARTS
    ]
    names = list(audit.tables)
    counts = [per_partition(len, [audit.tables[name]], sum, what="verify_all") for name in names]
    # As delayed partitions, as every other task here: one kind of graph per compute.
    accounting = [
        Deferred(frame.to_delayed(), concat_parts) for frame in (audit.rejected, audit.sources)
    ]
    *parts, rejected, sources = compute_together(*checks, *counts, *accounting)
    rows = dict(zip(names, parts[len(checks) :], strict=True))
    audit.remember_accounting(rejected, sources, rows)
    values_read = int(sources["values_read"].sum()) if len(sources) else 0
    return parts[: len(checks)], _checked(values_read, rows)
