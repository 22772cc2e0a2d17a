"""The findings of row-by-row checks, kept in the state for the rows audited before.

A checker that declares neither ``combine`` nor ``whole``
(:class:`~explicit_audit._core.records.Checker`) finds each record's
findings from that record alone: the Dask engine concatenates its findings
over partitions, and so does a run from a state, over the rows kept and the
rows read. Its findings of the rows kept are read from the state (their
``row`` labels followed to the joined tables, their file renamed after a
rotation); only the rows read this run are checked. A checker reading a
document (the routing policies) reuses nothing when the documents changed.
``record_times`` is judged as of the verification's moment, which a state
cannot know: it runs on every row at each verification, as do the checks
across rows (duplicates, withheld totals), on the whole joined tables, in
:func:`~explicit_audit.verify_all`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._core import registry
from .._core.records import Checker
from .._core.time_check import CHECK as TIME_CHECK
from .join import Joined, follow, rows_of, select_rows, stacked_rows

__all__ = ["checker_key", "joined_findings", "row_checkers", "row_findings"]


def checker_key(checker: Checker) -> str:
    """The name a checker's findings are known by: its checks' names."""
    return ",".join(check.name for check in checker.checks)


def row_checkers() -> list[Checker]:
    """The checkers of each record on its own, over record tables only, but ``record_times``:
    its findings hold as of the moment ``verify_all`` is given (``now``, ``earliest``), not
    of the load, so it is run on every row at each verification."""
    tables = registry.tables()
    return [
        checker
        for checker in registry.checkers()
        if checker.whole is None
        and checker.combine is None
        and all(name in tables for name in checker.reads)
        and all(check.name != TIME_CHECK for check in checker.checks)
    ]


def _as_text(frame: pd.DataFrame) -> pd.DataFrame:
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype(dict.fromkeys(categorical, "str")) if categorical else frame


def joined_findings(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Findings one frame above the other. A column categorical in every frame stays so,
    its categories joined (as checkers give them, and as the state keeps them: no
    text of every kept finding made again); when the frames do not fit so, as text."""
    together = frames[0]
    for frame in frames[1:]:
        together = stacked_rows(together, frame)
        if together is None:
            return pd.concat([_as_text(frame) for frame in frames], ignore_index=True)
    return together.reset_index(drop=True)


def _kept_findings(
    entries: list[dict],
    ranges: list[Mapping[str, tuple[int, int]]],
    names: list[Mapping[str, str]],
) -> list[tuple[pd.DataFrame, np.ndarray, dict[str, int]]]:
    """Per entry: its findings of the rows kept (files renamed), each one's check as a code,
    and the code of each check named there. Taken once for every checker."""
    found = []
    for side, entry in enumerate(entries):
        chosen = select_rows({"f": entry["findings"]}, ranges[side], names[side])["f"]
        codes, checks = pd.factorize(chosen["check"])
        found.append((chosen, codes, {str(check): code for code, check in enumerate(checks)}))
    return found


def _kept(
    checker: Checker, kept: list[tuple[pd.DataFrame, np.ndarray, dict[str, int]]], joined: Joined
) -> pd.DataFrame:
    """The checker's findings of the rows kept (:func:`_kept_findings`), rows relabelled."""
    found = []
    for side, (chosen, codes, code_of) in enumerate(kept):
        rows = chosen["row"].to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
        mine = np.zeros(len(chosen), dtype=bool)
        for check in checker.checks:
            if check.name not in code_of:
                continue
            at = codes == code_of[check.name]
            mine |= at
            if check.examines is not None and check.examines in joined.labels and at.any():
                rows[at] = follow(chosen["row"][at], joined.labels[check.examines][side])
        relabelled = pd.array(rows[mine], dtype="Float64").astype(chosen["row"].dtype)
        found.append(rows_of(chosen, mine).assign(row=relabelled))
    return joined_findings(found)


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
    whole = joined is None or not kept  # no rows kept: every row is checked
    kept_found = None if whole else _kept_findings(kept, ranges, names)  # once, for all
    for checker in row_checkers():
        given = {name: documents[name] for name in checker.documents if name in documents}
        if len(given) < len(checker.documents):
            continue  # a document not loaded: verify_all reads it off the audit
        if whole:
            frames = [tables[name] for name in checker.reads]
            found[checker_key(checker)] = checker.run(*frames, **given)
            continue
        for name in checker.reads:
            if name not in fresh_rows:
                fresh_rows[name] = rows_of(tables[name], joined.fresh[name])
        fresh = [fresh_rows[name] for name in checker.reads]
        new = checker.run(*fresh, **given)
        found[checker_key(checker)] = joined_findings([_kept(checker, kept_found, joined), new])
    return found
