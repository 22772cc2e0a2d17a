"""The findings contract: one table shape for what every check finds, one rule record.

Every check of the kit (:func:`~explicit_audit.check_receipts`,
:func:`~explicit_audit.check_plans`, :func:`~explicit_audit.check_requests`,
:func:`~explicit_audit.check_decisions`, and the rejected inputs gathered by
:func:`~explicit_audit.verify_all`) returns its findings as one DataFrame with
the columns below, one row per finding. What a check looks for is declared once,
as :class:`Rule` records beside the check: the rule's name, the check it belongs
to, the record kind it reads, its severity and what it requires.

Columns (:data:`FINDING_COLUMNS`, dtypes in :data:`FINDING_DTYPES`):

============  ========  =====================================================================
column        dtype     meaning
============  ========  =====================================================================
check         category  the group of rules the finding belongs to (``receipt_rules``,
                        ``plan_hashes``, ...), as ``verify_all`` reports them
kind          category  record kind of the record at fault (``receipts``, ``plans``,
                        ``requests``, ``decisions``); for a rejected input, the kind it was
                        meant for (``unknown`` when none claimed it, ``file`` for a whole file)
source_file   str       file of the record at fault
source_line   Int64     1-based line where its value starts; 0 for a file as a whole
row           Int64     index label of the record in its table; <NA> for a rejected input,
                        which is in no table, and for a note about a record's keys
                        (``record_keys``: file, line and ``record`` name the record)
record        str       the record's id where it has one (``run_id``, ``base_id (model)``,
                        ``decision_id``, a logger's ``request_id``); <NA> otherwise
rule          category  the rule broken; categories are the rules of the check(s) that made
                        the table, in the order their rule tables list them
severity      category  ``error`` or ``notice`` (:data:`SEVERITIES`), the rule's own
field         str       the column of the record's table at fault (a dotted path below it
                        for a nested value, ``payload.operator_name``; several joined by
                        ``", "``); <NA> when the finding is about the record as a whole
detail        str       what exactly is wrong, naming the values
============  ========  =====================================================================

Rows are ordered by the record's position in its table, then by rule (in rule
table order), then as found.

Severity is decided once per rule, from what the producer's own code allows:

- ``error``: the producer's code cannot have written this. A hash that another
  known writer explains is still an error, since the recorded hash is not the
  one the producer promises.
- ``notice``: the producer's code allows it, so the record is valid, but it is
  worth a look (a forbidden key name nested inside a request payload, which
  explicit_learning's builder only refuses at the top level). A notice never
  makes an audit unclean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ..errors import AuditError
from .columns import text_safe_series
from .engine import concat_parts

__all__ = [
    "ERROR",
    "FINDING_COLUMNS",
    "FINDING_DTYPES",
    "LISTED_COLUMNS",
    "NOTICE",
    "REJECTED_RULES",
    "SEVERITIES",
    "FindingsBuilder",
    "Rule",
    "RuleTable",
    "concat_found",
    "found_or_none",
    "listed_findings",
    "rejected_findings",
]

ERROR = "error"
NOTICE = "notice"
#: Every severity a rule may have, the graver first.
SEVERITIES = (ERROR, NOTICE)

# name, dtype, meaning: the one declaration the two mappings below are read from.
_COLUMNS = (
    ("check", "category", "the group of rules the finding belongs to"),
    ("kind", "category", "record kind of the record at fault (of a rejected input: its kind)"),
    ("source_file", "str", "file of the record at fault"),
    ("source_line", "Int64", "1-based line where its value starts; 0 for a file as a whole"),
    (
        "row",
        "Int64",
        "index label of the record in its table; <NA> for a rejected input or a key note",
    ),
    ("record", "str", "the record's id where it has one; <NA> otherwise"),
    ("rule", "category", "the rule broken"),
    ("severity", pd.CategoricalDtype(SEVERITIES), "error, or notice where the producer allows it"),
    ("field", "str", "the column at fault (dotted path below it); <NA> for the whole record"),
    ("detail", "str", "what exactly is wrong, naming the values"),
)

#: Columns of every findings table: name -> meaning.
FINDING_COLUMNS = MappingProxyType({name: meaning for name, _, meaning in _COLUMNS})
#: Columns of every findings table: name -> dtype (``rule``, ``check`` and ``kind``
#: get their categories from the rule table, see :meth:`RuleTable.dtypes`).
FINDING_DTYPES = MappingProxyType({name: dtype for name, dtype, _ in _COLUMNS})


@dataclass(frozen=True)
class Rule:
    """One rule a check applies, declared once beside the check.

    Attributes
    ----------
    name : str
        The rule's name, unique across the kit (``space_query``, ``INV-3``).
    description : str
        What the rule requires, in the producer's terms.
    check : str
        The group of rules it reports under (``receipt_rules``, ``plan_hashes``).
    kind : str
        The record kind it reads; ``""`` where each finding names its own kind
        (a rejected input).
    severity : {"error", "notice"}
        ``notice`` only when the producer's own code allows what it finds.
    field : str, optional
        The column at fault, when the rule always names the same one.
    """

    name: str
    description: str
    check: str
    kind: str
    severity: str = ERROR
    field: str | None = None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"rule {self.name!r}: severity {self.severity!r} is not one of "
                f"{', '.join(SEVERITIES)}"
            )


class RuleTable(Mapping[str, Rule]):
    """Rules by name, in the order findings are sorted by and reported in.

    Examples
    --------
    >>> table = RuleTable([Rule("r", "what r requires", check="c", kind="plans")])
    >>> table.descriptions["r"], table["r"].severity
    ('what r requires', 'error')
    """

    def __init__(self, rules: Iterable[Rule]) -> None:
        self._rules: dict[str, Rule] = {}
        for rule in rules:
            if rule.name in self._rules:
                raise ValueError(f"rule {rule.name!r} is declared twice")
            self._rules[rule.name] = rule
        self._empty: pd.DataFrame | None = None

    def __getitem__(self, name: str) -> Rule:
        return self._rules[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def __repr__(self) -> str:
        return f"RuleTable({', '.join(self._rules)})"

    def __or__(self, other: RuleTable) -> RuleTable:
        return RuleTable([*self.values(), *other.values()])

    @property
    def descriptions(self) -> Mapping[str, str]:
        """Rule name -> what it requires."""
        return MappingProxyType({name: rule.description for name, rule in self._rules.items()})

    @property
    def checks(self) -> tuple[str, ...]:
        """The checks the rules belong to, in the order they first appear."""
        return tuple(dict.fromkeys(rule.check for rule in self._rules.values()))

    def dtypes(self, kinds: Iterable[str] = ()) -> dict[str, Any]:
        """The dtype of every findings column, with this table's categories.

        Parameters
        ----------
        kinds : iterable of str
            Record kinds to allow besides those the rules name (the kinds of
            rejected inputs).
        """
        named = [rule.kind for rule in self._rules.values() if rule.kind]
        dtypes = dict(FINDING_DTYPES)
        dtypes["check"] = pd.CategoricalDtype(list(self.checks))
        dtypes["kind"] = pd.CategoricalDtype(list(dict.fromkeys([*named, *kinds])))
        dtypes["rule"] = pd.CategoricalDtype(list(self._rules))
        return dtypes

    def frame(self) -> pd.DataFrame:
        """The rules as a table: name, check, kind, severity, field, description."""
        rules = list(self._rules.values())
        return pd.DataFrame(
            {
                "rule": pd.Series([r.name for r in rules], dtype="str"),
                "check": pd.Series([r.check for r in rules], dtype="category"),
                "kind": pd.Series([r.kind for r in rules], dtype="category"),
                "severity": pd.Series(
                    [r.severity for r in rules], dtype=pd.CategoricalDtype(SEVERITIES)
                ),
                "field": pd.Series([r.field for r in rules], dtype="str"),
                "description": pd.Series([r.description for r in rules], dtype="str"),
            }
        )

    def empty_findings(self) -> pd.DataFrame:
        """A findings table with no row and this table's dtypes (a new one each call).

        Built once and copied: a check over many partitions most often finds
        nothing in one, and its categorical dtypes take far longer to build.
        """
        if self._empty is None:
            dtypes = self.dtypes()
            self._empty = pd.DataFrame(
                {name: pd.Series([], dtype=dtypes[name]) for name in FINDING_COLUMNS}
            )
        return self._empty.copy()


def _row_labels(index: pd.Index, positions: np.ndarray, what: str) -> pd.Series:
    labels = index[positions]
    if len(labels) and not pd.api.types.is_integer_dtype(labels.dtype):
        raise AuditError(
            f"{what}: the table's index labels are {labels.dtype}, not integers, so a finding "
            "cannot name its row; check the table as loaded, or call .reset_index() first"
        )
    return pd.Series(np.asarray(labels, dtype=np.int64), dtype="Int64")


def _column_at(table: pd.DataFrame, name: str, positions: np.ndarray) -> list:
    if name not in table:
        return [None] * len(positions)
    return table[name].to_numpy(dtype=object, na_value=None)[positions].tolist()


class FindingsBuilder:
    """Findings of one check over one table, added one by one, built into one frame.

    Parameters
    ----------
    rules : RuleTable
        The rules the check applies; each finding names one of them.
    table : DataFrame
        The table checked; a finding names a record by its integer position.
    record : Series or array-like, optional
        The id of each record of ``table`` (by position), for the ``record`` column.
    what : str
        The check's name, for an error message.

    Examples
    --------
    >>> rules = RuleTable([Rule("r", "...", check="c", kind="plans", field="top_k")])
    >>> table = pd.DataFrame({"source_file": ["p.jsonl"], "source_line": [3]})
    >>> found = FindingsBuilder(rules, table)
    >>> found.add(0, "r", "top_k is -1")
    >>> found.frame()[["source_line", "row", "rule", "field", "detail"]].to_dict("records")
    [{'source_line': 3, 'row': 0, 'rule': 'r', 'field': 'top_k', 'detail': 'top_k is -1'}]
    """

    def __init__(
        self,
        rules: RuleTable,
        table: pd.DataFrame,
        *,
        record: Any = None,
        what: str = "check",
    ) -> None:
        self._rules = rules
        self._order = {name: i for i, name in enumerate(rules)}
        self._table = table
        self._record = None if record is None else list(record)
        self._what = what
        self._positions: list[int] = []
        self._rule_order: list[int] = []
        self._fields: list[str | None] = []
        self._details: list[str] = []

    def add(self, position: int, rule: str, detail: str, *, field: str | None = None) -> None:
        """One finding for the record at integer ``position`` of the table.

        ``field`` defaults to the rule's own :attr:`Rule.field`.
        """
        self._positions.append(int(position))
        self._rule_order.append(self._order[rule])
        self._fields.append(field if field is not None else self._rules[rule].field)
        self._details.append(detail)

    def __len__(self) -> int:
        return len(self._positions)

    def frame(self) -> pd.DataFrame:
        """The findings, ordered by record position, then rule, then as found."""
        if not self._positions:
            return self._rules.empty_findings()
        positions = np.asarray(self._positions, dtype=np.int64)
        rule_order = np.asarray(self._rule_order, dtype=np.int64)
        order = np.lexsort((np.arange(len(positions)), rule_order, positions))
        positions, rule_order = positions[order], rule_order[order]
        rules = [self._rules[name] for name in self._rules]
        found = [rules[i] for i in rule_order]
        table = self._table
        record = (
            [self._record[p] for p in positions]
            if self._record is not None
            else [None] * len(positions)
        )
        columns = {
            "check": [rule.check for rule in found],
            "kind": [rule.kind for rule in found],
            "source_file": _column_at(table, "source_file", positions),
            "source_line": _column_at(table, "source_line", positions),
            "row": _row_labels(table.index, positions, self._what),
            "record": [None if _missing(r) else str(r) for r in record],
            "rule": [rule.name for rule in found],
            "severity": [rule.severity for rule in found],
            "field": [self._fields[i] for i in order],
            "detail": [self._details[i] for i in order],
        }
        return _typed(columns, self._rules.dtypes())


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def _typed(columns: Mapping[str, Any], dtypes: Mapping[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            name: text_safe_series(list(columns[name]), dtypes[name])
            if dtypes[name] == "str"
            else pd.Series(columns[name], dtype=dtypes[name])
            for name in FINDING_COLUMNS
        }
    )


#: The columns :func:`listed_findings` takes: all but a rule's own ``check`` and ``severity``.
LISTED_COLUMNS = ("kind", "source_file", "source_line", "row", "record", "rule", "field", "detail")


def listed_findings(rules: RuleTable, listed: Mapping[str, list]) -> pd.DataFrame:
    """Findings listed column by column (:data:`LISTED_COLUMNS`), each of its own kind.

    Each finding's ``check`` and ``severity`` are its rule's, from ``rules``.
    """
    if not listed["rule"]:
        return rules.empty_findings()
    found = [rules[name] for name in listed["rule"]]
    columns = dict(listed)
    columns["check"] = [rule.check for rule in found]
    columns["severity"] = [rule.severity for rule in found]
    return _typed(columns, rules.dtypes(kinds=sorted(set(listed["kind"]))))


#: The one rule of the rejected inputs: every input value is loaded or rejected.
REJECTED_RULES = RuleTable(
    [
        Rule(
            "rejected_row",
            "Every input value is loaded into its table; a value that cannot be read, or does "
            "not fit the record kind it was meant for, is an error.",
            check="rejected_rows",
            kind="",
        )
    ]
)


def rejected_findings(rejected: pd.DataFrame) -> pd.DataFrame:
    """One ``rejected_row`` finding per rejected input (``Audit.rejected``).

    ``kind`` is the kind the input was meant for, ``row`` <NA> (it is in no
    table) and ``detail`` the reason it was rejected.
    """
    n = len(rejected)
    rule = REJECTED_RULES["rejected_row"]
    kinds = rejected["kind"].astype("str").tolist()
    columns = {
        "check": [rule.check] * n,
        "kind": kinds,
        "source_file": rejected["source_file"].tolist(),
        "source_line": rejected["source_line"].tolist(),
        "row": [pd.NA] * n,
        "record": [None] * n,
        "rule": [rule.name] * n,
        "severity": [rule.severity] * n,
        "field": [None] * n,
        "detail": rejected["reason"].tolist(),
    }
    return _typed(columns, REJECTED_RULES.dtypes(kinds=sorted(set(kinds))))


def found_or_none(
    run: Callable[..., pd.DataFrame], *frames: Any, **documents: Any
) -> pd.DataFrame | None:
    """``run``'s findings over one partition of each table, or None when it found nothing.

    A partition's findings are held until the pass gathers every partition's
    (:func:`~explicit_audit._core.engine.compute_together`): None, not an empty
    table (55 KB, per check and partition).
    """
    found = run(*frames, **documents)
    return found if len(found) else None


def concat_found(rules: RuleTable, parts: list[pd.DataFrame | None]) -> pd.DataFrame:
    """The findings of every partition (:func:`found_or_none`'s), in partition order."""
    found = [part for part in parts if part is not None]
    return concat_parts(found) if found else rules.empty_findings()
