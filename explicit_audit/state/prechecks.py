"""The findings of row-by-row checks, kept in the state for the rows audited before.

A checker that declares neither ``combine`` nor ``whole``
(:class:`~explicit_audit._core.records.Checker`) finds each record's
findings from that record alone: the Dask engine concatenates its findings
over partitions, and so does a run from a state, over the rows kept and the
rows read. Its findings of the rows kept are read from the state (their
``row`` labels followed to the joined tables, their file renamed after a
rotation); only the rows read this run are checked. A checker reading a
document (the routing policies) reuses nothing when the documents changed.
Checks across rows (duplicates, withheld totals) always run on the whole
joined tables, in :func:`~explicit_audit.verify_all`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._core import registry
from .._core.records import Checker
from .join import Joined, follow, rows_of, select_rows

__all__ = ["as_text", "checker_key", "row_checkers", "row_findings"]


def checker_key(checker: Checker) -> str:
    """The name a checker's findings are known by: its checks' names."""
    return ",".join(check.name for check in checker.checks)


def row_checkers() -> list[Checker]:
    """The checkers of each record on its own, over record tables only."""
    tables = registry.tables()
    return [
        checker
        for checker in registry.checkers()
        if checker.whole is None
        and checker.combine is None
        and all(name in tables for name in checker.reads)
    ]


def as_text(frame: pd.DataFrame) -> pd.DataFrame:
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype(dict.fromkeys(categorical, "str")) if categorical else frame


def _kept(
    checker: Checker,
    entries: list[dict],
    ranges: list[Mapping[str, tuple[int, int]]],
    names: list[Mapping[str, str]],
    joined: Joined,
) -> pd.DataFrame:
    """The checker's findings of the rows kept, files renamed and rows relabelled."""
    checks = [check.name for check in checker.checks]
    examined = {check.name: check.examines for check in checker.checks}
    found = []
    for side, entry in enumerate(entries):
        kept = entry["findings"]
        mine = kept[kept["check"].isin(checks)]
        mine = select_rows({"findings": mine}, ranges[side], names[side])["findings"]
        rows = mine["row"].to_numpy(dtype=np.float64, na_value=np.nan).copy()
        for check, table in examined.items():
            at = (mine["check"].astype("str") == check).to_numpy()
            if table is not None and at.any() and table in joined.labels:
                rows[at] = follow(mine.loc[at, "row"], joined.labels[table][side])
        found.append(mine.assign(row=pd.array(rows, dtype="Float64").astype(mine["row"].dtype)))
    return pd.concat(found, ignore_index=True) if found else entries[0]["findings"].iloc[:0]


def row_findings(
    tables: Mapping[str, pd.DataFrame],
    documents: Mapping[str, object],
    joined: Joined | None,
    kept: list[dict] | None,
    ranges: list[Mapping[str, tuple[int, int]]],
    names: list[Mapping[str, str]],
) -> dict[str, pd.DataFrame]:
    """Each row checker's findings over the joined tables, by :func:`checker_key`.

    With ``joined`` and ``kept`` (the state's entries, each with the findings
    of its rows; ``ranges`` and ``names`` per entry: the lines kept of each
    file there, and its name now), only the rows read this run are checked;
    else every row.
    """
    found = {}
    fresh_rows: dict[str, pd.DataFrame] = {}  # each table's rows read this run, taken once
    for checker in row_checkers():
        given = {name: documents[name] for name in checker.documents if name in documents}
        if len(given) < len(checker.documents):
            continue  # a document not loaded: verify_all reads it off the audit
        if joined is None or not kept:
            frames = [tables[name] for name in checker.reads]
            found[checker_key(checker)] = checker.run(*frames, **given)
            continue
        for name in checker.reads:
            if name not in fresh_rows:
                fresh_rows[name] = rows_of(tables[name], joined.fresh[name])
        fresh = [fresh_rows[name] for name in checker.reads]
        new = as_text(checker.run(*fresh, **given))
        old = as_text(_kept(checker, kept, ranges, names, joined))
        parts = [part for part in (old, new) if len(part)] or [new]
        found[checker_key(checker)] = pd.concat(parts, ignore_index=True)
    return found
