"""The check ``record_keys``: a notice per key note, and the notes counted per key.

Declared once here and added by the registry for every kind that declares
its shapes (:data:`KEYS_CHECKER`), so that a kind gets it with no code of
its own. :func:`key_counts` counts its findings per key, for the verdict
(``verify``'s text and ``--json``, the report's banner).
"""

from __future__ import annotations

import re

import pandas as pd

from .findings import NOTICE, Rule, RuleTable, _typed
from .keys import DEFAULTED_FIELD, UNDECLARED_VALUE, UNKNOWN_KEY
from .records import Check, Checker

__all__ = ["KEYS_CHECKER", "KEY_COUNT_COLUMNS", "KEY_RULES", "key_counts", "key_findings"]

#: Columns of :func:`key_counts`.
KEY_COUNT_COLUMNS = ("key", "kind", "note", "count", "files", "suggestion")

#: The rules of the check ``record_keys``; each finding names its own kind.
KEY_RULES = RuleTable(
    [
        Rule(
            UNKNOWN_KEY,
            "Every key of a record is one its kind declares, at every level of the objects "
            "it declares; a logger's own keys at the top level of a line are extra columns, "
            "but one within a small edit distance of a declared key is a likely typo.",
            check="record_keys",
            kind="",
            severity=NOTICE,
        ),
        Rule(
            DEFAULTED_FIELD,
            "A declared field the record leaves out takes the producer's default, which the "
            "kit uses as the producer does; the record does not say what it held.",
            check="record_keys",
            kind="",
            severity=NOTICE,
        ),
        Rule(
            UNDECLARED_VALUE,
            "Every value is of the type the producer declares for its field; one the "
            "producer's own code reads though its type does not declare it (arborist's "
            'int("5")) loads as that code reads it, and the JSON Schema allows it as '
            "deprecated.",
            check="record_keys",
            kind="",
            severity=NOTICE,
        ),
    ]
)


def key_findings(keys: pd.DataFrame) -> pd.DataFrame:
    """One ``notice`` finding per row of ``Audit.keys`` (the check ``record_keys``)."""
    n = len(keys)
    kinds = keys["kind"].astype("str").tolist()
    notes = keys["note"].astype("str").tolist()
    columns = {
        "check": ["record_keys"] * n,
        "kind": kinds,
        "source_file": keys["source_file"].tolist(),
        "source_line": keys["source_line"].tolist(),
        "row": [pd.NA] * n,
        "record": keys["record"].tolist(),
        "rule": notes,
        "severity": [NOTICE] * n,
        "field": keys["key"].tolist(),
        "detail": keys["detail"].tolist(),
    }
    return _typed(columns, KEY_RULES.dtypes(kinds=sorted(set(kinds))))


#: The check of every record's keys against its kind's shapes; every kind that
#: declares shapes has it, with no code of its own.
KEYS_CHECKER = Checker(
    run=key_findings,
    reads=("keys",),
    checks=(
        Check(
            "record_keys",
            "keys the record kinds declare: unknown keys, fields left to a default, "
            "values of an undeclared type",
            examines=None,
        ),
    ),
    rules=KEY_RULES,
    order=1,
)


_SUGGESTION = re.compile(r"did you mean `([^`]*)`\?$")


def key_counts(findings: pd.DataFrame) -> pd.DataFrame:
    """The ``record_keys`` findings counted per key, so that schema drift shows at a glance.

    Parameters
    ----------
    findings : DataFrame
        Findings in the kit's shape (``Verification.findings``); those of
        other checks are left aside.

    Returns
    -------
    DataFrame
        One row per key, kind and note (:data:`KEY_COUNT_COLUMNS`): ``key``
        (its dotted path), ``kind``, ``note`` (``unknown_key``,
        ``defaulted_field`` or ``undeclared_value``), ``count`` (records),
        ``files`` (the files it is in, comma-separated, in verdict order) and
        ``suggestion`` (the closest declared key, or None). The most frequent first, then by
        kind and key.
    """
    found = findings.loc[findings["check"].astype("str") == "record_keys"]
    rows = []
    if len(found):
        frame = found.astype({"kind": "str", "rule": "str", "field": "str", "source_file": "str"})
        for (kind, note, key), group in frame.groupby(["kind", "rule", "field"], sort=False):
            suggestions = group["detail"].astype("str").str.extract(_SUGGESTION)[0].dropna()
            rows.append(
                (key, kind, note, len(group), ", ".join(dict.fromkeys(group["source_file"])),
                 suggestions.iloc[0] if len(suggestions) else None)
            )  # fmt: skip
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(KEY_COUNT_COLUMNS)
    table = pd.DataFrame(
        {
            name: pd.Series(list(values), dtype="int64" if name == "count" else "str")
            for name, values in zip(KEY_COUNT_COLUMNS, columns, strict=True)
        }
    )
    table = table.sort_values(["count", "kind", "key"], ascending=[False, True, True])
    return table.reset_index(drop=True)
