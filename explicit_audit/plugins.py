"""What a record kind kept outside the kit imports: the declarations, and ``register``.

A kind is a :class:`RecordKind`: how a JSON value is recognised and built
into tables (:class:`KindTables`, values that do not fit rejected by raising
:class:`~explicit_audit.errors.RecordError` through :func:`sort_out`), its
tables (:class:`Table`), its checks (:class:`Checker`, reporting
:class:`Check` verdicts with :class:`Rule` findings built by
:class:`FindingsBuilder`), and the shapes of its records (:class:`Shape` of
:class:`Field`, from which it gets its JSON Schema and the check
``record_keys`` of every key, with no code of its own). :func:`register`
makes every layer of the kit read and check it: ``ea.load`` on both
engines, ``ea.verify_all``, and the ``explicit-audit`` commands.
``docs/howto/plugin-kind.md`` walks through one; a module that registers a kind
is found through the entry point group ``explicit_audit.kinds`` or the
environment variable ``EXPLICIT_AUDIT_KINDS``
(:mod:`explicit_audit._core.registry`).

An output format of ``explicit-audit verify --format`` is registered the
same way, with :func:`explicit_audit.verdicts.register_format`
(``docs/howto/output-format.md``); the shared way of finding plug-ins is
:func:`~explicit_audit._core.registry.import_plugins`.
"""

from __future__ import annotations

from ._core.findings import ERROR, NOTICE, FindingsBuilder, Rule, RuleTable
from ._core.records import (
    Check,
    Checker,
    Documents,
    KindTables,
    RawValue,
    RecordKind,
    Rejection,
    Table,
    segment_values,
    sort_out,
)
from ._core.registry import (
    ENTRY_POINT_GROUP,
    ENVIRONMENT_VARIABLE,
    kinds,
    register,
    unregister,
)
from ._core.shape import Field, Shape
from .errors import RecordError

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENT_VARIABLE",
    "ERROR",
    "NOTICE",
    "Check",
    "Checker",
    "Documents",
    "Field",
    "FindingsBuilder",
    "KindTables",
    "RawValue",
    "RecordError",
    "RecordKind",
    "Rejection",
    "Rule",
    "RuleTable",
    "Shape",
    "Table",
    "kinds",
    "register",
    "segment_values",
    "sort_out",
    "unregister",
]
