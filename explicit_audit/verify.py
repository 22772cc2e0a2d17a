"""Every check of the kit, run once over an audit, as one result.

:func:`verify_all` runs the checks of every registered record kind
(:mod:`explicit_audit._core.registry`; each kind declares its own, with the
tables it reads and how its findings combine across partitions) over a loaded
:class:`~explicit_audit.Audit`, and gathers their findings, which all come in
the one findings shape of the kit (:data:`FINDING_COLUMNS`, documented in
:mod:`explicit_audit._core.findings`), into one table. ``CHECKS`` lists the
checks, in verdict order, with what each covers; the first, ``rejected_rows``,
is every input value that was not loaded (``Audit.rejected``).

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

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd

from ._core import engine, registry
from ._core.findings import ERROR, FINDING_COLUMNS, RuleTable
from ._core.jsonable import json_rows
from ._core.records import Checker
from .audit import Audit

__all__ = [  # noqa: F822 (CHECKS, RULES and NOTICES are read off the registry when asked)
    "CHECKS",
    "FINDING_COLUMNS",
    "NOTICES",
    "RULES",
    "Verification",
    "verify_all",
]


def __getattr__(name: str) -> Any:
    # CHECKS: every check verify_all runs, in verdict order: name -> what it covers.
    # RULES: every rule of every check (RULES.frame() shows them); NOTICES: the
    # rules whose findings are notices. All as registered now.
    if name == "CHECKS":
        return MappingProxyType({n: check.covers for n, check in registry.checks().items()})
    if name == "RULES":
        return registry.rules()
    if name == "NOTICES":
        return frozenset(n for n, rule in registry.rules().items() if rule.severity != ERROR)
    raise AttributeError(name)


@dataclass(frozen=True)
class Verification:
    """What every check found in one audit.

    Attributes
    ----------
    findings : DataFrame
        One row per finding, columns of :data:`FINDING_COLUMNS`, ordered by
        check (as in :data:`CHECKS`), then file and line.
    checked : dict
        ``{check: number of records it examined}``, every check in verdict order.
    covers : dict
        ``{check: what it covers}``, in verdict order.
    accounting : Audit or None
        The audit checked, with its accounting in memory (``rejected``,
        ``sources``, rows per table): for Dask tables computed in the checks'
        one pass, so that a report of it needs no other.
    """

    findings: pd.DataFrame
    checked: dict[str, int]
    covers: dict[str, str] = field(default_factory=dict)
    accounting: Audit | None = field(default=None, repr=False, compare=False)

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
        names = list(self.checked)
        covers = self.covers or {name: registry.checks()[name].covers for name in names}
        return pd.DataFrame(
            {
                "check": pd.Series(names, dtype="str"),
                "covers": pd.Series([covers[c] for c in names], dtype="str"),
                "checked": pd.Series([self.checked[c] for c in names], dtype="int64"),
                "findings": pd.Series([int(counts.get(c, 0)) for c in names], dtype="int64"),
                "notices": pd.Series([int(notices.get(c, 0)) for c in names], dtype="int64"),
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


def _frames(audit: Audit, checker: Checker) -> tuple[list, dict[str, Any]]:
    """The tables a checker reads and the documents it is given, from ``audit``."""
    frames = [getattr(audit, name) for name in checker.reads]
    return frames, {name: getattr(audit, name) for name in checker.documents}


def _in_memory(checker: Checker, audit: Audit) -> pd.DataFrame:
    frames, documents = _frames(audit, checker)
    if checker.whole is not None:
        return checker.whole(*frames, **documents)
    if checker.combine is not None:
        return checker.combine([checker.run(*frames, **documents)])
    return checker.run(*frames, **documents)


def _deferred(checker: Checker, audit: Audit) -> engine.Deferred:
    frames, documents = _frames(audit, checker)
    combine = checker.combine or engine.concat_parts
    return engine.deferred(checker.run, combine, frames, what="verify_all", **documents)


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
        :data:`FINDING_COLUMNS`), ``.summary()`` (one row per check), ``.clean``
        and ``.accounting`` (the audit with its accounting in memory).

    Examples
    --------
    >>> result = ea.verify_all(ea.load("data/", progress=False))  # doctest: +SKIP
    >>> result.summary()  # doctest: +SKIP
    >>> result.findings.query("check == 'plan_hashes'")  # doctest: +SKIP
    """
    checkers = registry.checkers()
    if audit.engine == "dask":
        parts, rows, accounted = _partitioned_parts(audit, checkers)
    else:
        parts = [_in_memory(checker, audit) for checker in checkers]
        rows = {name: len(frame) for name, frame in audit.tables.items()}
        accounted = audit
    sources = accounted.sources
    values_read = int(sources["values_read"].sum()) if len(sources) else 0
    checks = [check for checker in checkers for check in checker.checks]
    checked = {
        check.name: values_read if check.examines is None else rows.get(check.examines, 0)
        for check in checks
    }
    rules = RuleTable([])
    for checker in checkers:
        rules = rules | checker.rules
    kinds = sorted({str(kind) for part in parts for kind in part["kind"].dropna()})
    dtypes = rules.dtypes(kinds=kinds)
    dtypes["check"] = pd.CategoricalDtype([check.name for check in checks])
    findings = pd.concat(
        [part.astype(dtypes) for part in parts if len(part)] or [rules.empty_findings()],
        ignore_index=True,
    ).astype(dtypes)
    findings = findings.sort_values(
        ["check", "source_file", "source_line"], kind="stable", na_position="first"
    ).reset_index(drop=True)
    covers = {check.name: check.covers for check in checks}
    return Verification(findings[list(FINDING_COLUMNS)], checked, covers, accounted)


def _partitioned_parts(
    audit: Audit, checkers: list[Checker]
) -> tuple[list[pd.DataFrame], dict[str, int], Audit]:
    """Every check over Dask tables, computed in one pass: findings, rows per table, accounting.

    The audit's accounting comes along, so a report of this pass needs no other.
    """
    deferred = [_deferred(checker, audit) for checker in checkers]
    names = list(audit.tables)
    counts = [engine.deferred(len, sum, [audit.tables[name]], what="verify_all") for name in names]
    # As delayed partitions, as every other task here: one kind of graph per compute.
    accounting = [engine.delayed_parts(frame) for frame in (audit.rejected, audit.sources)]
    *parts, rejected, sources = engine.compute_together(*deferred, *counts, *accounting)
    rows = dict(zip(names, parts[len(deferred) :], strict=True))
    return parts[: len(deferred)], rows, audit.with_accounting(rejected, sources, rows)
