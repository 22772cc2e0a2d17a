"""The period a report's data covers: the earliest and latest time its records carry.

A reviewer citing a report needs to say which period it covers. The
producers' records carry no time of their own, except engram's presentations
(``generatedAt``); a logger that wraps a record adds one (``timestamp``,
``ts``, ...). A table's time is its first column named in
:data:`~explicit_audit._core.times.TIME_KEYS`, its values read as
``verify --since`` and a trend read them
(:func:`~explicit_audit._core.times.time_parts`: ISO 8601 text is a time, an
epoch number is not). The range is taken over the records
that have a time; how many do, of how many, is said beside it, and a page
whose records carry none says so rather than show an empty range.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import pandas as pd

from .._core import engine, registry
from .._core.times import iso_utc, time_column, time_parts
from ..audit import Audit, with_heads_as_needed

__all__ = ["TimeRange", "table_times", "time_range"]


@dataclass(frozen=True)
class TimeRange:
    """The earliest and latest record time over some tables, and how many records have one.

    Attributes
    ----------
    first, last : Timestamp or None
        UTC; None when no record has a time.
    dated : int
        Records with a time.
    records : int
        Records in the tables looked at.
    columns : tuple of str
        The time columns read (``timestamp``, ``generated_at``).
    """

    first: pd.Timestamp | None
    last: pd.Timestamp | None
    dated: int
    records: int
    columns: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """``2025-03-04T08:00:00Z .. 2025-03-05T17:30:00Z (40 of 52 records dated)``,
        or what says there is none (``no timestamps (none of the 52 records has one)``)."""
        if self.first is None or self.last is None:
            if not self.records:
                return "no records, so no timestamps"
            return f"no timestamps (none of the {self.records:,} records has one)"
        return (
            f"{iso_utc(self.first)} .. {iso_utc(self.last)} "
            f"({self.dated:,} of {self.records:,} records dated)"
        )

    @property
    def days(self) -> str | None:
        """The range in days (``2025-03-04 to 2025-03-05``, one date when they are the
        same), or None when no record has a time."""
        if self.first is None or self.last is None:
            return None
        first, last = self.first.date().isoformat(), self.last.date().isoformat()
        return first if first == last else f"{first} to {last}"


def _part(frame: pd.DataFrame, *, column: str) -> tuple[int, int, object, object]:
    # A time no nanosecond column holds (9999-12-31) is kept as text beside: a time still.
    dated = [times.dropna() for times in time_parts(frame, column)]
    count = sum(len(times) for times in dated)
    if not count:
        return len(frame), 0, None, None
    return (
        len(frame),
        count,
        min(times.min() for times in dated if len(times)),
        max(times.max() for times in dated if len(times)),
    )


def _combined(parts: list) -> tuple[int, int, object, object]:
    firsts = [part[2] for part in parts if part[2] is not None]
    lasts = [part[3] for part in parts if part[3] is not None]
    return (
        sum(part[0] for part in parts),
        sum(part[1] for part in parts),
        min(firsts) if firsts else None,
        max(lasts) if lasts else None,
    )


def table_times(audit: Audit) -> dict[str, TimeRange]:
    """Each record table's period, in one pass over each table that has a time column.

    A kind's main table holds its records; another of its tables counts when
    its rows carry a time of their own (engram's presentations), not when
    they are parts of a record (a receipt's exposed results).

    Parameters
    ----------
    audit : Audit
        Either engine.

    Returns
    -------
    dict of str to TimeRange
        By table name, for the tables ``audit`` holds that count.
    """
    return with_heads_as_needed(audit, _table_times)


def _table_times(audit: Audit) -> dict[str, TimeRange]:
    main = {kind.tables[0].name for kind in registry.kinds()}
    found = {}
    for kind in registry.kinds():
        for table in kind.tables:
            frame = audit.tables.get(table.name)
            if frame is None:
                continue
            column = time_column(frame)
            if column is None:
                if table.name in main:
                    found[table.name] = TimeRange(None, None, 0, audit.rows(table.name))
                continue
            rows, dated, first, last = engine.reduce(
                _part, _combined, frame, what="report time range", column=column
            )
            found[table.name] = TimeRange(first, last, dated, rows, (column,))
    return found


def time_range(
    audit: Audit,
    kinds: Collection[str] | None = None,
    *,
    tables: dict[str, TimeRange] | None = None,
) -> TimeRange:
    """The earliest and latest record time in ``audit``, over some record kinds or all.

    Parameters
    ----------
    audit : Audit
        Either engine.
    kinds : collection of str, optional
        Record kinds (``receipts``, ``plans``): every table of theirs is
        looked at. By default, every kind's.
    tables : dict, optional
        :func:`table_times` of ``audit``, when it is already known: several
        ranges over one audit read each table once.

    Returns
    -------
    TimeRange

    Examples
    --------
    >>> time_range(ea.load("data", progress=False)).text  # doctest: +SKIP
    '2025-03-01T09:00:00Z .. 2025-03-04T16:20:00Z (412 of 1,828 records dated)'
    """
    tables = table_times(audit) if tables is None else tables
    names = {
        table.name
        for kind in registry.kinds()
        if kinds is None or kind.name in kinds
        for table in kind.tables
    }
    chosen = [period for name, period in tables.items() if name in names]
    firsts = [period.first for period in chosen if period.first is not None]
    lasts = [period.last for period in chosen if period.last is not None]
    return TimeRange(
        first=min(firsts) if firsts else None,
        last=max(lasts) if lasts else None,
        dated=sum(period.dated for period in chosen),
        records=sum(period.records for period in chosen),
        columns=tuple(dict.fromkeys(c for period in chosen for c in period.columns)),
    )
