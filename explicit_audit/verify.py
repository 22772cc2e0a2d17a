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

Coverage is part of the verdict. Each check counts the records it looked at;
one that looked at none is ``not run`` (no records), never clean. The whole
verdict is in one of three states (:data:`STATES`): ``clean`` (on what was
checked), ``findings``, or ``nothing to check`` (no check looked at a record).
``verify_all(audit, expect=[...])`` names the record kinds (or tables) the
data must hold; one that is absent or empty is listed in ``missing``, and the
verdict is not clean.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

import pandas as pd

from ._core import engine, registry
from ._core.edit_findings import STATE_CHECKER
from ._core.findings import ERROR, FINDING_COLUMNS, RuleTable, concat_found, found_or_none
from ._core.jsonable import json_rows
from ._core.key_check import key_counts
from ._core.records import Check, Checker
from .audit import Audit, with_heads_as_needed
from .errors import AuditError
from .reading.sources import CANNOT_LIST, CANNOT_READ

__all__ = [  # noqa: F822 (CHECKS, RULES and NOTICES are read off the registry when asked)
    "CHECKS",
    "EXIT_STATUS",
    "FINDING_COLUMNS",
    "NOTICES",
    "RULES",
    "STATES",
    "STATUSES",
    "Verification",
    "verify_all",
]

#: What one check's verdict can be: it looked at records and found no error,
#: it found errors, or it looked at no record at all.
STATUSES = ("clean", "findings", "not run")

#: What the whole verdict can be (:attr:`Verification.state`).
STATES = ("clean", "findings", "nothing to check")

#: The exit status of ``explicit-audit verify`` (and ``report``) per state; an
#: expected kind that is absent or empty exits as ``nothing to check``.
EXIT_STATUS = MappingProxyType({"clean": 0, "findings": 1, "nothing to check": 3})


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
    expected : dict
        ``{kind or table: records found}`` for every name ``verify_all`` was
        told to expect; empty when it was told none.
    """

    findings: pd.DataFrame
    checked: dict[str, int]
    covers: dict[str, str] = field(default_factory=dict)
    accounting: Audit | None = field(default=None, repr=False, compare=False)
    expected: dict[str, int] = field(default_factory=dict)

    @property
    def statuses(self) -> dict[str, str]:
        """``{check: status}``: ``clean``, ``findings`` or ``not run`` (:data:`STATUSES`).

        A check that found an error is ``findings`` even where it counted no
        record (a file rejected whole holds no value read).
        """
        errors = set(self.findings.loc[self.findings["severity"] == ERROR, "check"].astype(str))
        return {
            name: "findings" if name in errors else "not run" if not count else "clean"
            for name, count in self.checked.items()
        }

    @property
    def state(self) -> str:
        """``findings``, ``nothing to check`` (no check looked at a record), or ``clean``."""
        statuses = self.statuses.values()
        if "findings" in statuses:
            return "findings"
        if all(status == "not run" for status in statuses):
            return "nothing to check"
        return "clean"

    @property
    def missing(self) -> list[str]:
        """The expected kinds (or tables) that are absent or empty, in the order named."""
        return [name for name, count in self.expected.items() if not count]

    @property
    def clean(self) -> bool:
        """Whether the checks looked at records, found no error (notices aside), and
        every expected kind was there. Nothing checked is never clean."""
        return self.state == "clean" and not self.missing

    @property
    def exit_status(self) -> int:
        """What ``explicit-audit verify`` exits with (:data:`EXIT_STATUS`).

        ``2`` when a file could not be read or a folder listed at all (its
        file-level rejection names it: nothing in it was checked); else ``1``
        for findings; else ``3`` when nothing was checked or an expected kind
        is absent or empty; else ``0``.
        """
        if self.accounting is not None and _unreadable(self.accounting.rejected):
            return 2
        if self.state == "clean" and self.missing:
            return EXIT_STATUS["nothing to check"]
        return EXIT_STATUS[self.state]

    def summary(self) -> pd.DataFrame:
        """One row per check: what it covers, records checked, findings.

        Returns
        -------
        DataFrame
            Columns ``check``, ``covers``, ``checked`` (records looked at),
            ``status`` (:data:`STATUSES`), ``findings`` (errors) and
            ``notices``; every check appears, found something or not.

        Examples
        --------
        >>> summary = ea.verify_all(ea.load("data/", progress=False)).summary()
        >>> summary.loc[summary["check"] == "plan_hashes", ["checked", "status"]].values.tolist()
        [[324, 'findings']]
        """
        errors = self.findings["severity"] == ERROR
        counts = self.findings.loc[errors, "check"].value_counts()
        notices = self.findings.loc[~errors, "check"].value_counts()
        names = list(self.checked)
        covers = self.covers or {name: registry.checks()[name].covers for name in names}
        statuses = self.statuses
        return pd.DataFrame(
            {
                "check": pd.Series(names, dtype="str"),
                "covers": pd.Series([covers[c] for c in names], dtype="str"),
                "checked": pd.Series([self.checked[c] for c in names], dtype="int64"),
                "status": pd.Series([statuses[c] for c in names], dtype=_STATUS_DTYPE),
                "findings": pd.Series([int(counts.get(c, 0)) for c in names], dtype="int64"),
                "notices": pd.Series([int(notices.get(c, 0)) for c in names], dtype="int64"),
            }
        )

    def key_counts(self) -> pd.DataFrame:
        """The ``record_keys`` notices counted per key: schema drift at a glance.

        Returns
        -------
        DataFrame
            One row per key, kind and note: ``key`` (its dotted path,
            ``inputs.confidance``), ``kind``, ``note`` (``unknown_key`` or
            ``defaulted_field`` or ``undeclared_value``), ``count`` (records),
            ``files`` (where, comma-separated) and ``suggestion`` (the closest
            declared key, or None); the most frequent first.

        Examples
        --------
        The bundled plans hold values arborist reads but does not declare
        (``"top_k": "5"``, a null MT field), on purpose:

        >>> counts = ea.verify_all(ea.load("data/", progress=False)).key_counts()
        >>> sorted(set(counts["note"])), int(counts["count"].sum())
        (['undeclared_value'], 5)
        """
        return key_counts(self.findings)

    def to_dict(self) -> dict:
        """The result as plain JSON-ready values.

        Returns
        -------
        dict
            ``clean`` (bool), ``state`` (:data:`STATES`), ``expected`` (records
            per expected kind) and ``missing`` (the expected kinds absent or
            empty), ``summary`` (one object per check, its ``status`` included)
            , ``keys`` (:meth:`key_counts`, one object per key) and
            ``findings`` (one object per finding, keys of
            :data:`FINDING_COLUMNS`, a missing value as null).

        Examples
        --------
        >>> result = ea.verify_all(ea.load("data/", progress=False)).to_dict()
        >>> result["clean"], result["state"]
        (False, 'findings')
        """
        return {
            "clean": self.clean,
            "state": self.state,
            "expected": dict(self.expected),
            "missing": self.missing,
            "summary": json_rows(self.summary()),
            "keys": json_rows(self.key_counts()),
            "findings": json_rows(self.findings),
        }


_STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES))


def _frames(audit: Audit, checker: Checker) -> tuple[list, dict[str, Any]]:
    """The tables a checker reads and the documents it is given, from ``audit``."""
    frames = [getattr(audit, name) for name in checker.reads]
    return frames, {name: getattr(audit, name) for name in checker.documents}


def _in_memory(checker: Checker, audit: Audit) -> pd.DataFrame:
    known = audit.known_findings or {}
    key = ",".join(check.name for check in checker.checks)
    if key in known:  # found as a load with state= joined the rows (explicit_audit.state)
        return known[key]
    frames, documents = _frames(audit, checker)
    if checker.whole is not None:
        return checker.whole(*frames, **documents)
    if checker.combine is not None:
        return checker.combine([checker.run(*frames, **documents)])
    return checker.run(*frames, **documents)


def _deferred(checker: Checker, audit: Audit) -> engine.Deferred:
    frames, documents = _frames(audit, checker)
    if checker.combine is not None:
        return engine.deferred(checker.run, checker.combine, frames, what="verify_all", **documents)
    # A partition that found nothing is held as None until the pass gathers them.
    return engine.deferred(
        partial(found_or_none, checker.run),
        partial(concat_found, checker.rules),
        frames,
        what="verify_all",
        **documents,
    )


def verify_all(
    audit: Audit,
    *,
    expect: Iterable[str] | str | None = None,
    now: Any = None,
    earliest: Any = None,
) -> Verification:
    """Run every check of the kit over an audit.

    Parameters
    ----------
    audit : Audit
        What :func:`explicit_audit.load` returned.
    expect : str or iterable of str, optional
        Names of record kinds, tables or documents (as ``Audit.summary()``
        lists them) the data must hold; a comma-separated string works too.
        One that is absent or empty is in ``Verification.missing``, and the
        verdict is not clean.
    now : str, datetime or Timestamp, optional
        The moment the records' times are read against (``record_times``: a
        time later than it by more than a few minutes is a ``future_time``
        notice); by default, when the verification starts. A time without a
        zone is UTC.
    earliest : str, datetime or Timestamp, optional
        A record's time earlier than it is a ``past_time`` notice; by default
        2020-01-01 (``explicit_audit._core.time_check.EARLIEST``), before which
        none of the kit's producers existed. A time without a zone is UTC.

    Returns
    -------
    Verification
        ``.findings`` (one row per finding, every check, columns of
        :data:`FINDING_COLUMNS`), ``.summary()`` (one row per check, with its
        status), ``.state``, ``.clean``, ``.missing`` and ``.accounting`` (the
        audit with its accounting in memory).

    Raises
    ------
    AuditError
        When ``expect`` names no record kind, table or document, or ``now`` or
        ``earliest`` is not a time.

    Examples
    --------
    >>> result = ea.verify_all(ea.load("data/", progress=False))  # doctest: +SKIP
    >>> result.summary()  # doctest: +SKIP
    >>> result.findings.query("check == 'plan_hashes'")  # doctest: +SKIP
    """
    expected_names = _expected_names(expect)
    checkers = registry.checkers(now=now, earliest=earliest, state=audit.changes is not None)
    if audit.lazy:
        # The edits a state found are in memory, at the client: checked there.
        edits = [c for c in checkers if c is STATE_CHECKER]
        lazy = [c for c in checkers if c is not STATE_CHECKER]
        parts, rows, accounted = _partitioned_parts(audit, lazy)
        parts = [_in_memory(checker, audit) for checker in edits] + parts
    else:
        parts = [_in_memory(checker, audit) for checker in checkers]
        rows = {name: len(frame) for name, frame in audit.tables.items()}
        accounted = audit
    sources = accounted.sources
    values_read = int(sources["values_read"].sum()) if len(sources) else 0
    checks = [check for checker in checkers for check in checker.checks]
    # The tables of the plan the checks ran on (a Dask load planned again shows more columns).
    checked = {
        check.name: audit.audited_before
        if checker is STATE_CHECKER
        else _checked(checker, check, accounted.tables, rows, values_read)
        for checker in checkers
        for check in checker.checks
    }
    rules = RuleTable([])
    for checker in checkers:
        rules = rules | checker.rules
    kinds = sorted({str(kind) for part in parts for kind in part["kind"].dropna().unique()})
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
    expected = {name: _records(accounted, rows, name) for name in expected_names}
    return Verification(findings[list(FINDING_COLUMNS)], checked, covers, accounted, expected)


def _checked(
    checker: Checker, check: Check, frames: dict, rows: dict[str, int], values_read: int
) -> int:
    """How many records ``check`` looked at: the rows of the tables it examines
    (:func:`registry.examined`), or else every value read."""
    names = registry.examined(checker, check, frames)
    return values_read if names is None else sum(rows.get(name, 0) for name in names)


def _unreadable(rejected: pd.DataFrame) -> bool:
    """Whether a file-level rejection says the system would not let the kit read a file."""
    if not len(rejected):
        return False
    reasons = rejected["reason"].astype("str")
    return bool(
        (
            (rejected["kind"] == "file")
            & (rejected["source_line"] == 0)
            & reasons.str.startswith((CANNOT_READ, CANNOT_LIST))
        ).any()
    )


def _expected_names(expect: Iterable[str] | str | None) -> list[str]:
    """The names ``expect`` gives, each a known kind, table or document."""
    if expect is None:
        return []
    names = expect.split(",") if isinstance(expect, str) else list(expect)
    names = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    known = [kind.name for kind in registry.kinds()]
    known += [name for name in registry.tables() if name not in known]
    known += [docs.name for docs in registry.documents()]
    # An empty name (--expect "$KINDS" with the variable unset) asks for no gate: refused.
    unknown = [name for name in names if name not in known] or ([] if names else [expect])
    if unknown:
        raise AuditError(
            f"expect: no record kind, table or document named {', '.join(map(repr, unknown))}; "
            f"the names are {', '.join(known)}"
        )
    return names


def _records(audit: Audit, rows: dict[str, int], name: str) -> int:
    """How many records of the kind, table or document ``name`` the audit holds."""
    tables = {kind.name: kind.tables[0].name for kind in registry.kinds()}
    table = tables.get(name, name)
    if table in rows:
        return int(rows[table])
    return len(getattr(audit, name))


def _partitioned_parts(
    audit: Audit, checkers: list[Checker]
) -> tuple[list[pd.DataFrame], dict[str, int], Audit]:
    """Every check over Dask tables, computed in one pass: findings, rows per table, accounting.

    The audit's accounting comes along, so a report of this pass needs no other.
    A partition holding a key the heads of the files did not show has the
    load planned again (:func:`~explicit_audit.audit.with_heads_as_needed`).
    """
    return with_heads_as_needed(audit, lambda planned: _computed_parts(planned, checkers))


def _computed_parts(
    audit: Audit, checkers: list[Checker]
) -> tuple[list[pd.DataFrame], dict[str, int], Audit]:
    """:func:`_partitioned_parts` of one plan of the load."""
    deferred = [_deferred(checker, audit) for checker in checkers]
    names = list(audit.tables)
    counts = [engine.deferred(len, sum, [audit.tables[name]], what="verify_all") for name in names]
    # As delayed partitions, as every other task here: one kind of graph per compute.
    accounting = [engine.delayed_parts(frame) for frame in (audit.rejected, audit.sources)]
    *parts, rejected, sources = engine.compute_together(*deferred, *counts, *accounting)
    rows = dict(zip(names, parts[len(deferred) :], strict=True))
    return parts[: len(deferred)], rows, audit.with_accounting(rejected, sources, rows)
