"""The check ``record_times``: a record's time that is not a time, or is still to come.

A record's time columns (:data:`~explicit_audit._core.times.TIME_KEYS`, typed
as UTC times by :func:`~explicit_audit._core.times.typed_times`) are read
against the moment of the verification (``now``, by default when
:func:`~explicit_audit.verify_all` starts):

- ``unparsed_time`` (a notice): the text is not an ISO 8601 time
  (``"yesterday"``); the row keeps it in ``<name>_unparsed``.
- ``future_time`` (a notice): the time is later than ``now`` by more than
  :data:`CLOCK_SKEW` (a receipt dated 2099, or 9999-12-31, which no
  nanosecond column holds and is kept as text).

Both are notices: a logger's clock is not the producer's promise, but a
record from the future, or one whose time cannot be read, places the record
nowhere on the audit's time line (``verify --since`` cannot select it).
Declared once here and added by the registry for every kind's tables
(:func:`times_checker`), on both engines: each row is judged on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from .findings import LISTED_COLUMNS, NOTICE, Rule, RuleTable, listed_findings
from .records import Check, Checker, RecordKind
from .times import TIME_KEYS, UNPARSED_SUFFIX

__all__ = ["CHECK", "CLOCK_SKEW", "TIME_RULES", "time_findings", "times_checker"]

CHECK = "record_times"

#: How far past ``now`` a record's time may be before it is from the future: clocks
#: of two machines disagree by seconds, rarely by minutes.
CLOCK_SKEW = pd.Timedelta(minutes=5)

_SKEW_TEXT = f"{int(CLOCK_SKEW.total_seconds() // 60)} minutes"

#: The rules of the check ``record_times``; each finding names its own kind.
TIME_RULES = RuleTable(
    [
        Rule(
            "unparsed_time",
            "A record's time (timestamp, ts, started_at, sent_at, generated_at, ...) is "
            "written as an ISO 8601 time.",
            check=CHECK,
            kind="",
            severity=NOTICE,
        ),
        Rule(
            "future_time",
            "A record's time is not later than the verification, beyond a clock skew of "
            f"{_SKEW_TEXT}.",
            check=CHECK,
            kind="",
            severity=NOTICE,
        ),
    ]
)


def _as_time(text: str) -> datetime | None:
    """An ISO 8601 time a nanosecond column cannot hold (year 9999), or None."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _record_ids(table: pd.DataFrame, fields: Sequence[str]) -> pd.Series | None:
    for name in (*fields, "request_id"):
        if name in table.columns:
            return table[name]
    return None


def time_findings(
    tables: Sequence[pd.DataFrame],
    kinds: Sequence[str],
    ids: Sequence[Sequence[str]],
    now: pd.Timestamp,
) -> pd.DataFrame:
    """The findings of ``record_times`` over ``tables`` (each of the kind of the same place)."""
    latest = now + CLOCK_SKEW
    found: dict[str, list] = {name: [] for name in LISTED_COLUMNS}
    for table, kind, fields in zip(tables, kinds, ids, strict=True):
        names = [
            name
            for name in table.columns
            if name in TIME_KEYS and isinstance(table[name].dtype, pd.DatetimeTZDtype)
        ]
        if not names or not len(table) or "source_file" not in table.columns:
            continue
        records = _record_ids(table, fields)
        for name in names:
            future = (table[name] > latest).fillna(False).to_numpy()
            unparsed = table.get(name + UNPARSED_SUFFIX)
            text = unparsed.notna().to_numpy() if unparsed is not None else ~future & future
            for position in (future | text).nonzero()[0].tolist():
                if future[position]:
                    moment, written = table[name].iloc[position], None
                else:
                    written = str(unparsed.iloc[position])
                    moment = _as_time(written)
                if moment is not None and moment > latest:
                    rule = "future_time"
                    detail = (
                        f"{name} {written or moment.isoformat()} is later than the "
                        f"verification ({now.isoformat(timespec='seconds')}) by more than "
                        f"{_SKEW_TEXT}"
                    )
                elif moment is None:
                    rule = "unparsed_time"
                    detail = f"{name} {written!r} is not an ISO 8601 time"
                else:
                    continue  # a time before 1677, held as text: not a notice here
                record = records.iloc[position] if records is not None else None
                found["kind"].append(kind)
                found["source_file"].append(table["source_file"].iloc[position])
                found["source_line"].append(int(table["source_line"].iloc[position]))
                found["row"].append(table.index[position])
                found["record"].append(None if pd.isna(record) else str(record))
                found["rule"].append(rule)
                found["field"].append(name)
                found["detail"].append(detail)
    return listed_findings(TIME_RULES, found)


def times_checker(kinds: Sequence[RecordKind], now: pd.Timestamp | None = None) -> Checker:
    """The checker of ``record_times`` over every table of every kind, as of ``now``.

    ``now`` defaults to the moment of the call (UTC).
    """
    moment = pd.Timestamp(now if now is not None else datetime.now(UTC))
    moment = moment.tz_localize("UTC") if moment.tzinfo is None else moment.tz_convert("UTC")
    plan = tuple(
        (kind.name, table.name, _identity(kind)) for kind in kinds for table in kind.tables
    )

    def run(*tables: pd.DataFrame) -> pd.DataFrame:
        return time_findings(
            tables, [name for name, _, _ in plan], [ids for _, _, ids in plan], moment
        )

    return Checker(
        run=run,
        reads=tuple(table for _, table, _ in plan),
        checks=(
            Check(
                CHECK,
                "records' times: text that is not a time, a time later than the verification",
                examines=None,
            ),
        ),
        rules=TIME_RULES,
        order=3,
        examined=lambda frames: _timed(frames, [table for _, table, _ in plan]),
    )


def _timed(frames: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """Of the tables ``names``, those with a time column: the ones whose rows are looked at."""
    return [
        name
        for name in names
        if name in frames and any(column in TIME_KEYS for column in frames[name].columns)
    ]


def _identity(kind: RecordKind) -> tuple[str, ...]:
    declared = [shape.identity for shape in kind.shapes if shape.identity]
    return declared[0] if declared else ()
