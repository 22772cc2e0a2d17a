"""``Audit.changes``: the edits of audited bytes, each with the record its line held and holds.

The record a changed line held before is read from the rows the state kept
(the table and the id of the row at that line, or the reason it was
rejected); the record it holds now, from the line as it is, read on its own
(as :func:`~explicit_audit.loading.load_bytes` reads bytes).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from .._core import registry
from .._core.edit_findings import CHANGE_COLUMNS
from ..audit import audit_of_reading
from ..reading.reader import read_bytes
from .compare import Edit
from .lines import line_at

__all__ = ["changes_frame", "describe_line", "with_unreported"]


def _id_of(frame: pd.DataFrame, position: int) -> str:
    row = frame.iloc[position]
    for column in frame.columns:
        if str(column).endswith("_id") and isinstance(row[column], str | int) and row[column] != "":
            return f"{column} {row[column]!r}"
    return f"line {row['source_line']}"


def describe_line(parts: dict[str, Any] | None, source_file: str, line: int) -> str | None:
    """The record ``parts`` (an audit's tables and rejected rows) hold at a file's line."""
    if parts is None:
        return None
    for name, frame in parts["tables"].items():
        if "source_file" not in frame.columns or not len(frame):
            continue
        at = (frame["source_file"].astype("str") == source_file) & (frame["source_line"] == line)
        found = at.to_numpy().nonzero()[0]
        if len(found):
            return f"{name} row with {_id_of(frame, int(found[0]))}"
    rejected = parts["rejected"]
    at = (rejected["source_file"].astype("str") == source_file) & (rejected["source_line"] == line)
    found = at.to_numpy().nonzero()[0]
    if len(found):
        return f"a value rejected ({rejected['reason'].iloc[int(found[0])]})"
    return "no record (a blank line)"


def _now(edit: Edit) -> str | None:
    path, line, offset = edit.now
    data = line_at(path, offset)
    if data is None:
        return "nothing (the file ends before it)"
    kinds = registry.kinds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reading = read_bytes(
            data + b"\n", edit.source_file, kinds, jsonl=True, first_line=line, file_start=False
        )
        part = audit_of_reading(reading, kinds, strict=False)
    return describe_line({"tables": part.tables, "rejected": part.rejected}, edit.source_file, line)


def changes_frame(edits: list[Edit], before: Callable[[str, int], str | None]) -> pd.DataFrame:
    """``Audit.changes`` (:data:`CHANGE_COLUMNS`) of ``edits``.

    ``before(file, line)`` describes the record the state keeps at a file's line.
    """
    details = []
    for edit in edits:
        detail = edit.detail
        if edit.before is not None:
            held = before(*edit.before)
            now = _now(edit) if edit.now is not None else None
            if held is not None:
                detail += f": it held {held}"
            if now is not None:
                detail += f"{'; it' if held is not None else ': it'} now holds {now}"
        details.append(detail)
    return _frame(
        [e.source_file for e in edits],
        [e.source_line for e in edits],
        [e.rule for e in edits],
        details,
    )


def _frame(files: list, lines: list, rules: list, details: list) -> pd.DataFrame:
    """``Audit.changes`` (:data:`CHANGE_COLUMNS`) of its columns' values."""
    return pd.DataFrame(
        {
            "source_file": pd.Series(files, dtype="str"),
            "source_line": pd.Series(lines, dtype="int64"),
            "rule": pd.Series(rules, dtype="str"),
            "detail": pd.Series(details, dtype="str"),
        },
        columns=list(CHANGE_COLUMNS),
    )


def with_unreported(
    changes: pd.DataFrame, unreported: list[dict[str, Any]], hold: bool
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """``Audit.changes`` with the edits earlier loads found and no run reported, and what
    the state keeps as unreported now.

    A stopped run's state already holds the bytes it found edited: compared with
    it, they are not edits any more. So they are kept as unreported and shown
    here first, each saying when it was found. With ``hold`` (this run is
    reported later, :func:`~.store.mark_reported`) the state keeps them and
    this load's edits until it is; else none.
    """
    kept = []
    if hold:
        found = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        kept = [*unreported] + [
            {
                "source_file": str(row.source_file),
                "source_line": int(row.source_line),
                "rule": str(row.rule),
                "detail": str(row.detail),
                "found": found,
            }
            for row in changes.itertuples(index=False)
        ]
    if not unreported:
        return changes, kept
    earlier = _frame(
        [c["source_file"] for c in unreported],
        [c["source_line"] for c in unreported],
        [c["rule"] for c in unreported],
        [
            f"{c['detail']} (found at {c['found']} by a run stopped before it reported it)"
            for c in unreported
        ],
    )
    return pd.concat([earlier, changes], ignore_index=True), kept
