"""The check ``record_times``: a record's time that is not a time, or is still to come.

A record's time columns (:data:`~explicit_audit._core.times.TIME_KEYS`, typed
as UTC times by :func:`~explicit_audit._core.times.typed_times`; in a column
that mixes text and numbers, its text) are read against the moment of the
verification (``now``, by default when :func:`~explicit_audit.verify_all`
starts). Numbers are not judged: which epoch and unit they count in cannot
be told from them.

- ``unparsed_time`` (a notice): the text is not an ISO 8601 time
  (``"yesterday"``); the row keeps it in ``<name>_unparsed``.
- ``future_time`` (a notice): the time is later than ``now`` by more than
  :data:`CLOCK_SKEW` (a receipt dated 2099, or 9999-12-31, which no
  nanosecond column holds and is kept as text).
- ``past_time`` (a notice): the time is earlier than ``earliest``, by
  default :data:`EARLIEST`, before any producer of these records existed (a
  clock read as zero, 1970-01-01, or a year 0001 kept as text).

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
from .records import Check, Checker, RecordKind, Table
from .times import (
    TIME_KEYS,
    UNPARSED_SUFFIX,
    far_times,
    held_in_nanoseconds,
    is_text,
    parse_time,
    utc_times,
)

__all__ = ["CHECK", "CLOCK_SKEW", "EARLIEST", "TIME_RULES", "time_findings", "times_checker"]

CHECK = "record_times"

#: How far past ``now`` a record's time may be before it is from the future: clocks
#: of two machines disagree by seconds, rarely by minutes.
CLOCK_SKEW = pd.Timedelta(minutes=5)

#: The earliest time a record of the kit's kinds can hold: engram's receipts,
#: arborist's plans, explicit_learning's requests and the document server's
#: routing decisions all log language models' retrievals and routing, none of
#: which was written before 2020. ``verify_all(earliest=)`` and ``verify
#: --earliest`` set another (a plug-in kind's producer may be older).
EARLIEST = pd.Timestamp("2020-01-01", tz="UTC")

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
        Rule(
            "past_time",
            "A record's time is not earlier than the earliest the verification allows (by "
            "default 2020-01-01, before which no producer of these records existed).",
            check=CHECK,
            kind="",
            severity=NOTICE,
        ),
    ]
)


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
    earliest: pd.Timestamp = EARLIEST,
) -> pd.DataFrame:
    """The findings of ``record_times`` over ``tables`` (each of the kind of the same place)."""
    latest = now + CLOCK_SKEW
    found: dict[str, list] = {name: [] for name in LISTED_COLUMNS}
    for table, kind, fields in zip(tables, kinds, ids, strict=True):
        names = [name for name in table.columns if name in TIME_KEYS]
        if not names or not len(table) or "source_file" not in table.columns:
            continue
        records = _record_ids(table, fields)
        # Per row, plain values: the loop below runs once per time to judge.
        ids = records.to_numpy(dtype=object) if records is not None else None
        files = table["source_file"].to_numpy(dtype=object)
        lines = table["source_line"].to_numpy()
        for name in names:
            judged = _judged(table, name)
            if judged is None:
                continue
            times, written, far = judged
            typed = ((times > latest) | (times < earliest)).fillna(False).to_numpy()
            text = written.notna().to_numpy()
            written_at = written.to_numpy(dtype=object)
            far_at = far.to_numpy(dtype=object) if far is not None else None
            typed_at = times.to_numpy(dtype=object)
            for position in (typed | text).nonzero()[0].tolist():
                if typed[position]:
                    moment, shown = typed_at[position], None
                else:
                    shown = str(written_at[position])
                    moment = far_at[position] if far_at is not None else None
                    moment = None if pd.isna(moment) else moment
                if moment is not None and moment > latest:
                    rule = "future_time"
                    detail = (
                        f"{name} {shown or moment.isoformat()} is later than the "
                        f"verification ({now.isoformat(timespec='seconds')}) by more than "
                        f"{_SKEW_TEXT}"
                    )
                elif moment is None:
                    rule = "unparsed_time"
                    detail = f"{name} {shown!r} is not an ISO 8601 time"
                elif moment < earliest:
                    rule = "past_time"
                    detail = (
                        f"{name} {shown or moment.isoformat()} is earlier than "
                        f"{earliest.isoformat()}, the earliest time a record of these "
                        "kinds holds (earliest=, --earliest)"
                    )
                else:
                    continue
                record = ids[position] if ids is not None else None
                found["kind"].append(kind)
                found["source_file"].append(files[position])
                found["source_line"].append(int(lines[position]))
                found["row"].append(table.index[position])
                found["record"].append(None if pd.isna(record) else str(record))
                found["rule"].append(rule)
                found["field"].append(name)
                found["detail"].append(detail)
    return listed_findings(TIME_RULES, found)


def _judged(table: pd.DataFrame, name: str) -> tuple[pd.Series, pd.Series, pd.Series | None] | None:
    """A time column as ``record_times`` judges it, or None for a column of numbers.

    Three parts per row: the time a nanosecond column holds; the text as
    written where there is none (not a time, or one before 1677 or after 2262);
    and that text read as a time (year 1 to 9999), or None when no row has
    such text. A column typed by :func:`~explicit_audit._core.times.typed_times`
    is read as it is; one of mixed JSON values (text beside numbers) has its
    text read as the window and a trend read it (:func:`utc_times`), its
    numbers left as a column of numbers is, so that one record is judged
    alike whichever partition holds it.
    """
    values = table[name]
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        unparsed = table.get(name + UNPARSED_SUFFIX)
        if unparsed is None:
            unparsed = pd.Series(None, index=table.index, dtype=object)
        return values, unparsed, far_times(table, name)
    if values.dtype != object:
        return None
    parsed = utc_times(values)
    held = held_in_nanoseconds(parsed)
    text = is_text(values) & ~held
    far = parsed.where(text)
    return parsed.where(held), values.where(text), far if far.notna().any() else None


def times_checker(kinds: Sequence[RecordKind], now: Any = None, earliest: Any = None) -> Checker:
    """The checker of ``record_times`` over every table of every kind, as of ``now``.

    ``now`` defaults to the moment of the call and ``earliest`` to
    :data:`EARLIEST`; a time without a zone is UTC.
    """
    moment = parse_time(now if now is not None else datetime.now(UTC), what="now")
    first = EARLIEST if earliest is None else parse_time(earliest, what="earliest")
    plan = tuple((*_named(kind, table), table.name) for kind in kinds for table in kind.tables)

    def run(*tables: pd.DataFrame) -> pd.DataFrame:
        return time_findings(
            tables, [name for name, _, _ in plan], [ids for _, ids, _ in plan], moment, first
        )

    return Checker(
        run=run,
        reads=tuple(table for _, _, table in plan),
        checks=(
            Check(
                CHECK,
                "records' times: text that is not a time, a time later than the verification "
                "or before the records' producers existed",
                examines=None,
            ),
        ),
        rules=TIME_RULES,
        order=3,
        examined=lambda frames: _timed(frames, [table for _, _, table in plan]),
    )


def _timed(frames: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """Of the tables ``names``, those with a time column: the ones whose rows are looked at."""
    return [
        name
        for name in names
        if name in frames and any(column in TIME_KEYS for column in frames[name].columns)
    ]


def _named(kind: RecordKind, table: Table) -> tuple[str, tuple[str, ...]]:
    """The kind a table's findings name, and the fields that identify its records.

    As ``record_duplicates`` names them: the kind the table's shapes declare
    (a presentation's ``presentations``, whose rows a finding's ``row``
    labels), the record kind where the table has no shape of its own.
    """
    main = kind.tables[0] if kind.tables else None
    shapes = table.shapes or (kind.shapes if table is main else ())
    declared = [shape.identity for shape in shapes if shape.identity]
    return (shapes[0].kind if shapes else kind.name), (declared[0] if declared else ())
