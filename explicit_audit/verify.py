"""Every check of the kit, run once over an audit, as one result.

:func:`verify_all` runs each verification the kit has over a loaded
:class:`~explicit_audit.Audit` and gathers what they find into one table of
findings, one row each, whatever the check:

=====================  ===================================================================
check                  what a finding is
=====================  ===================================================================
rejected_rows          an input value that was not loaded (``Audit.rejected``)
plan_hashes            a ``retrieval_plan_hash`` that is not the seed's hash of its plan
                       (:func:`~explicit_audit.verify_plans`)
request_hashes         a ``request_sha256`` that is not the hash of its payload, or is
                       malformed or unhashable (:func:`~explicit_audit.verify_requests`)
request_hiding_rule    a payload carrying a key the §7.1 hiding rule forbids
request_independence   requests for one ``base_id`` carrying different payloads
request_consistency    a record field that contradicts its own payload
receipt_rules          a receipt breaking a guarantee of engram's code
                       (:func:`~explicit_audit.check_receipts`)
presentation_rules     a presentation line breaking a guarantee of engram's rendering
                       (:func:`~explicit_audit.check_presentations`)
decision_policy        a routing decision that does not follow the policy it names
                       (:func:`~explicit_audit.verify_decisions`)
=====================  ===================================================================

``findings`` columns (:data:`FINDING_COLUMNS`):

=============  ========  ==============================================================
check          category  one of :data:`CHECKS`
source_file    str       file of the record at fault
source_line    Int64     1-based line where its value starts; 0 for a whole file
record         str       the record's id where it has one (``run_id``, ``base_id``
                         with ``model``, ``decision_id``, ``request_id``); <NA> otherwise
rule           str       the rule, status or finding kind the check names
detail         str       what is wrong, in the check's own words
severity       category  error / notice
=============  ========  ==============================================================

An explained mismatch (a plan hash written by another known JSON writer, say)
is still a finding: the recorded hash is not the one the producer promises.

A finding is an ``error`` unless the producer's own rule allows what it
shows: a forbidden key name nested inside a payload (``forbidden_key_nested``)
is a ``notice``. explicit_learning's builder only refuses those names at the
payload's top level, so such a payload is valid; it is shown for a look, and
does not make the audit unclean (nor ``explicit-audit verify`` exit 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from ._core.jsonable import json_rows
from .audit import Audit
from .decisions import verify_decisions
from .plans import verify_plans
from .receipts import check_presentations, check_receipts
from .requests import verify_requests

__all__ = ["CHECKS", "FINDING_COLUMNS", "NOTICES", "Verification", "verify_all"]

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

#: Columns of :attr:`Verification.findings`.
FINDING_COLUMNS = MappingProxyType(
    {
        "check": "the check (a key of CHECKS)",
        "source_file": "file of the record at fault",
        "source_line": "1-based line where its value starts; 0 for a whole file",
        "record": "the record's id where it has one",
        "rule": "the rule, status or finding kind the check names",
        "detail": "what is wrong",
        "severity": "error, or notice where the producer's rule allows it (see above)",
    }
)

#: Findings the producer's own rule allows: shown, but the audit stays clean.
NOTICES = frozenset({"forbidden_key_nested"})

_REQUEST_CHECKS = {
    "hash_mismatch": "request_hashes",
    "hash_malformed": "request_hashes",
    "unhashable": "request_hashes",
    "forbidden_key": "request_hiding_rule",
    "forbidden_key_nested": "request_hiding_rule",
    "independence": "request_independence",
    "record_payload_mismatch": "request_consistency",
}


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
        return not (self.findings["severity"] == "error").any()

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
        errors = self.findings["severity"] == "error"
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
            ``findings`` (one object per finding, keys of :data:`FINDING_COLUMNS`).

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


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame:
        return frame[name].astype("str").reset_index(drop=True)
    return pd.Series([pd.NA] * len(frame), dtype="str")


def _part(
    check: str | pd.Series,
    frame: pd.DataFrame,
    *,
    record: pd.Series,
    rule: pd.Series,
    detail: pd.Series,
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "check": check if isinstance(check, pd.Series) else [check] * len(frame),
            "source_file": _column(frame, "source_file"),
            "source_line": frame["source_line"].astype("Int64").reset_index(drop=True),
            "record": record.astype("str").reset_index(drop=True),
            "rule": rule.astype("str").reset_index(drop=True),
            "detail": detail.astype("str").reset_index(drop=True),
            "severity": ["notice" if r in NOTICES else "error" for r in rule.astype("str")],
        }
    )


def _rejected(audit: Audit) -> pd.DataFrame:
    rejected = audit.rejected
    return _part(
        "rejected_rows",
        rejected,
        record=pd.Series([pd.NA] * len(rejected), dtype="str"),
        rule=rejected["kind"].astype("str"),
        detail=rejected["reason"],
    )


def _plans(audit: Audit) -> pd.DataFrame:
    checked = verify_plans(audit.plans)
    bad = checked[~checked["match"].fillna(False).astype(bool)]
    detail = [
        f"{diagnosis} (recorded {recorded}, rebuilt {rebuilt})"
        if isinstance(diagnosis, str)
        else f"recorded {recorded}, rebuilt {rebuilt}"
        for diagnosis, recorded, rebuilt in zip(
            bad["diagnosis"].astype(object).where(bad["diagnosis"].notna(), None),
            bad["recorded_hash"].fillna("(none)"),
            bad["rebuilt_hash"].fillna("(none)"),
            strict=True,
        )
    ]
    detail = pd.Series(detail, dtype="str")
    return _part(
        "plan_hashes", bad, record=_column(bad, "run_id"), rule=bad["status"], detail=detail
    )


def _requests(audit: Audit) -> pd.DataFrame:
    found = verify_requests(audit.requests)
    checks = found["finding"].astype("str").map(_REQUEST_CHECKS)
    record = _column(found, "base_id") + " (" + _column(found, "model").fillna("no model") + ")"
    return _part(
        checks.reset_index(drop=True),
        found,
        record=record,
        rule=found["finding"],
        detail=found["detail"],
    )


def _receipts(audit: Audit) -> pd.DataFrame:
    found = check_receipts(audit.receipts, audit.exposed)
    if "request_id" in audit.receipts:
        record = audit.receipts["request_id"].reindex(found["receipt_row"].to_numpy())
    else:
        record = pd.Series([pd.NA] * len(found), dtype="str")
    return _part("receipt_rules", found, record=record, rule=found["rule"], detail=found["detail"])


def _presentations(audit: Audit) -> pd.DataFrame:
    found = check_presentations(audit.presentations)
    part = _part(
        "presentation_rules",
        found,
        record=_column(audit.presentations, "presentation_id")
        .reindex(found["presentation_row"].to_numpy())
        .reset_index(drop=True),
        rule=found["rule"],
        detail=found["detail"],
    )
    part["severity"] = found["severity"].astype("str").to_numpy()
    return part


def _decisions(audit: Audit) -> pd.DataFrame:
    found = verify_decisions(audit.decisions, audit.policies)
    return _part(
        "decision_policy",
        found,
        record=_column(found, "decision_id"),
        rule=found["rule"],
        detail=found["detail"],
    )


_PARTS: tuple[Callable[[Audit], pd.DataFrame], ...] = (
    _rejected,
    _plans,
    _requests,
    _receipts,
    _presentations,
    _decisions,
)


def verify_all(audit: Audit) -> Verification:
    """Run every check of the kit over an audit.

    Parameters
    ----------
    audit : Audit
        What :func:`explicit_audit.load` returned.

    Returns
    -------
    Verification
        ``.findings`` (one row per finding, every check), ``.summary()``
        (one row per check), ``.clean``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> result = ea.verify_all(ea.load("data/"))  # doctest: +SKIP
    >>> result.summary()  # doctest: +SKIP
    >>> result.findings.query("check == 'plan_hashes'")  # doctest: +SKIP
    """
    findings = pd.concat([part(audit) for part in _PARTS], ignore_index=True)
    findings["check"] = pd.Categorical(findings["check"], categories=list(CHECKS))
    findings = findings.astype(
        {
            "source_file": "str",
            "source_line": "Int64",
            "record": "str",
            "rule": "str",
            "detail": "str",
            "severity": pd.CategoricalDtype(["error", "notice"]),
        }
    )
    findings = findings.sort_values(
        ["check", "source_file", "source_line"], kind="stable", na_position="first"
    ).reset_index(drop=True)
    values_read = int(audit.sources["values_read"].sum()) if len(audit.sources) else 0
    n_requests = len(audit.requests)
    checked = {
        "rejected_rows": values_read,
        "plan_hashes": len(audit.plans),
        "request_hashes": n_requests,
        "request_hiding_rule": n_requests,
        "request_independence": n_requests,
        "request_consistency": n_requests,
        "receipt_rules": len(audit.receipts),
        "presentation_rules": len(audit.presentations),
        "decision_policy": len(audit.decisions),
    }
    return Verification(findings[list(FINDING_COLUMNS)], checked)
