"""The registry of record kinds: what every layer of the kit iterates.

A record kind is declared once, in its own package, as a
:class:`~explicit_audit._core.records.RecordKind` (how it is read, its
tables, its checks, its documents) and registered with one call::

    from explicit_audit.plugins import register
    register(KIND)

``ea.load`` (both engines), the per-kind loaders, ``Audit``'s tables,
``verify_all``, the command line and the Dask engine all read the kinds from
here; none of them names a kind.

A kind kept outside the kit is registered the same way, from a module that
is imported before the registry is first read. The kit imports, once, every
module named by

- the entry point group ``explicit_audit.kinds`` of an installed
  distribution (``[project.entry-points."explicit_audit.kinds"]``,
  ``toy = "toy_audit.kind"``), and
- the environment variable ``EXPLICIT_AUDIT_KINDS``: module names separated
  by commas (``EXPLICIT_AUDIT_KINDS=toy_audit.kind``), for a kind that is
  not installed (the module must be importable: on ``PYTHONPATH``).

An entry point may also name a ``RecordKind`` object (``toy_audit.kind:KIND``),
which is then registered.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any

from ..errors import AuditError
from .duplicates import CHECK as DUPLICATES_CHECK
from .duplicates import duplicates_checker
from .edit_findings import STATE_CHECKER
from .findings import REJECTED_RULES, RuleTable, rejected_findings
from .key_check import KEYS_CHECKER
from .records import Check, Checker, Documents, RecordKind, Table
from .time_check import CHECK as TIMES_CHECK
from .time_check import times_checker

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENT_VARIABLE",
    "REJECTED_CHECKER",
    "checkers",
    "checks",
    "documents",
    "import_plugins",
    "kind",
    "kinds",
    "references",
    "register",
    "replaced",
    "rules",
    "tables",
    "unregister",
]

#: The entry point group whose modules (or RecordKind objects) register kinds.
ENTRY_POINT_GROUP = "explicit_audit.kinds"

#: The environment variable naming modules that register kinds (comma-separated).
ENVIRONMENT_VARIABLE = "EXPLICIT_AUDIT_KINDS"

#: The check of every value read that could not be loaded; it belongs to no kind.
REJECTED_CHECKER = Checker(
    run=rejected_findings,
    reads=("rejected",),
    checks=(Check("rejected_rows", "input values that could not be loaded", examines=None),),
    rules=REJECTED_RULES,
    order=0,
)

_KINDS: dict[str, RecordKind] = {}
_PLUGINS = {"loaded": False}


def register(kind: RecordKind, *, replace: bool = False) -> RecordKind:
    """Register a record kind, so that every layer of the kit reads and checks it.

    Parameters
    ----------
    kind : RecordKind
    replace : bool, default False
        Replace a kind already registered under the same name (else an error).

    Returns
    -------
    RecordKind
        ``kind``, so that a module may write ``KIND = register(RecordKind(...))``.

    Raises
    ------
    AuditError
        When the name, a table or a check is already another kind's, or a
        checker's rule reports under a check the checker does not declare.
    """
    if kind.name in _KINDS and not replace:
        if _KINDS[kind.name] is kind:
            return kind
        raise AuditError(f"a record kind named {kind.name!r} is already registered")
    others = [other for name, other in _KINDS.items() if name != kind.name]
    taken_tables = {table.name for other in others for table in other.tables}
    taken_tables |= {"rejected", "sources", "keys"}
    taken_checks = {check.name for other in others for c in other.checks for check in c.checks}
    fixed = (REJECTED_CHECKER, KEYS_CHECKER, STATE_CHECKER)
    taken_checks |= {check.name for c in fixed for check in c.checks}
    taken_checks |= {DUPLICATES_CHECK, TIMES_CHECK}
    for table in kind.tables:
        if table.name in taken_tables:
            raise AuditError(f"record kind {kind.name!r}: the table {table.name!r} is taken")
    for checker in kind.checks:
        for check in checker.checks:
            if check.name in taken_checks:
                raise AuditError(f"record kind {kind.name!r}: the check {check.name!r} is taken")
        _refuse_undeclared_checks(kind.name, checker)
    _KINDS[kind.name] = kind
    return kind


def _refuse_undeclared_checks(kind_name: str, checker: Checker) -> None:
    """An error naming the rule and its check when a rule reports under a check the
    checker does not declare: its findings would belong to no check of the verdict."""
    declared = [check.name for check in checker.checks]
    for rule in checker.rules.values():
        if rule.check not in declared:
            raise AuditError(
                f"record kind {kind_name!r}: the rule {rule.name!r} reports under the check "
                f"{rule.check!r}, which its checker does not declare (its checks: "
                f"{', '.join(declared) or 'none'}); name one of them as the rule's check, or "
                f"add Check({rule.check!r}, ...) to the checker"
            )


def unregister(name: str) -> RecordKind:
    """Take the kind ``name`` out of the registry; the kind taken out.

    Raises
    ------
    AuditError
        When no kind of that name is registered.
    """
    if name not in _KINDS:
        raise AuditError(f"no record kind {name!r} is registered")
    return _KINDS.pop(name)


def _load_plugins() -> None:
    """Import, once, the modules of the entry point group and of the environment variable."""
    if _PLUGINS["loaded"]:
        return
    _PLUGINS["loaded"] = True
    for found in import_plugins(ENTRY_POINT_GROUP, ENVIRONMENT_VARIABLE, "record kind"):
        if isinstance(found, RecordKind):
            register(found)


def import_plugins(group: str, variable: str, what: str) -> list[Any]:
    """Import every plug-in of the entry point ``group`` and the environment ``variable``.

    How record kinds and output formats kept outside the kit are found.

    Parameters
    ----------
    group : str
        The entry point group; each entry names a module or an object in one.
    variable : str
        The environment variable naming modules, separated by commas.
    what : str
        What the plug-ins declare (``"record kind"``), for the error message.

    Returns
    -------
    list
        What each entry point names (a module, or the object it names), in order.

    Raises
    ------
    AuditError
        Naming the entry point or the module that cannot be imported, and why.
    """
    found = []
    for entry in metadata.entry_points(group=group):
        try:
            found.append(entry.load())
        except Exception as exc:
            raise AuditError(
                f"the {what} plug-in {entry.name!r} ({entry.value}) of the entry point "
                f"group {group} cannot be imported: {exc}"
            ) from exc
    named = os.environ.get(variable, "")
    for module in filter(None, (part.strip() for part in named.split(","))):
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise AuditError(
                f"the {what} module {module!r} named by {variable} cannot be imported: {exc}"
            ) from exc
    return found


def kinds() -> tuple[RecordKind, ...]:
    """Every registered kind, in order (:attr:`RecordKind.order`, then registration)."""
    _load_plugins()
    ranked = enumerate(_KINDS.values())
    return tuple(kind for _, kind in sorted(ranked, key=lambda pair: (pair[1].order, pair[0])))


def kind(name: str) -> RecordKind:
    """The registered kind ``name``; an :class:`~explicit_audit.AuditError` naming the others."""
    for found in kinds():
        if found.name == name:
            return found
    known = ", ".join(found.name for found in kinds())
    raise AuditError(f"no record kind {name!r}; the kinds are {known}")


def tables() -> dict[str, Table]:
    """Every table of every kind, in order: name -> :class:`Table`."""
    return {table.name: table for found in kinds() for table in found.tables}


def references() -> dict[tuple[str, str], str]:
    """Columns holding another table's row label: ``(table, column) -> table referred to``."""
    return {
        (table.name, column): target
        for table in tables().values()
        for column, target in table.references.items()
    }


def checkers(
    among: Sequence[RecordKind] | None = None,
    *,
    now: Any = None,
    earliest: Any = None,
    state: bool = False,
) -> list[Checker]:
    """Every checker, in verdict order: the rejected rows first, then (with ``state``, for
    an audit loaded with an audit state) the bytes audited before, then the records' keys
    (where any kind declares its shapes) and repeated records (where any declares an
    identity, :mod:`.duplicates`) and the records' times as of ``now`` (by default the
    moment of the call) and not before ``earliest`` (:mod:`.time_check`), then each kind's."""
    among = among or kinds()
    found = [checker for kind_ in among for checker in kind_.checks]
    ranked = sorted(enumerate(found), key=lambda pair: (pair[1].order, pair[0]))
    keys = [KEYS_CHECKER] if any(kind_.shapes for kind_ in among) else []
    duplicates = duplicates_checker(among)
    keys += [duplicates] if duplicates is not None else []
    keys.append(times_checker(among, now, earliest))
    edits = [STATE_CHECKER] if state else []
    return [REJECTED_CHECKER, *edits, *keys, *(checker for _, checker in ranked)]


def examined(
    checker: Checker, check: Check, frames: Mapping[str, Any] | None = None
) -> tuple[str, ...] | None:
    """The tables whose rows ``check``, one of ``checker``'s checks, looks at.

    The table the check examines (:attr:`Check.examines`) where it names one;
    else :attr:`Checker.examined` of the audit's tables (``frames``, name ->
    frame) where the checker says, else every kind's table it reads
    (``frames`` None: every one it may look at); None where it reads none,
    for it looks at every value read.
    """
    if check.examines is not None:
        return (check.examines,)
    if checker.examined is not None and frames is not None:
        return tuple(checker.examined(frames))
    known = tables()
    return tuple(name for name in checker.reads if name in known) or None


def checks(*, state: bool = False) -> dict[str, Check]:
    """Every check, in verdict order: name -> :class:`Check` (``state``: as :func:`checkers`)."""
    return {check.name: check for checker in checkers(state=state) for check in checker.checks}


def rules(*, state: bool = False) -> RuleTable:
    """Every rule of every check, in verdict order (``state``: as :func:`checkers`)."""
    table = RuleTable([])
    for checker in checkers(state=state):
        table = table | checker.rules
    return table


def documents() -> list[Documents]:
    """Every kind's documents (the files read whole beside the records), in kind order."""
    return [found.documents for found in kinds() if found.documents is not None]


@contextlib.contextmanager
def replaced(replacements: Sequence[RecordKind]) -> Iterator[None]:
    """Within the block, these kinds (by name) in place of the registered ones.

    For comparing a kind with a variant of itself (its columnar path switched
    off, say) through every layer of the kit.
    """
    saved = dict(_KINDS)
    try:
        for replacement in replacements:
            _KINDS[replacement.name] = replacement
        yield
    finally:
        _KINDS.clear()
        _KINDS.update(saved)


def load_tables(source: Any, kind_name: str, **options: Any) -> dict[str, Any]:
    """The tables of one kind from ``source``, loaded with ``ea.load``'s options.

    What every per-kind loader (``ea.load_plans``, ...) calls: values of other
    kinds are recognised and skipped. The kit's loader
    (:func:`explicit_audit.loading.load_tables`) sits above the kinds, so it
    is asked for by name, when a kind's tables are first loaded.
    """
    loading = importlib.import_module("explicit_audit.loading")
    return loading.load_tables(source, kind(kind_name), **options)
