"""The withheld-count explorer's view, and the day window it is filtered by.

A day window is a pair ``(start, end)``, end exclusive. Either bound may be
open: None, or one of the two distinct sentinels :data:`OPEN_START` and
:data:`OPEN_END` that a slider's option list holds at its two ends. They are
distinct objects on purpose: a selection control finds an option's index by
its value, and two equal "open" values would send both handles to the first.

A sentinel at its own side leaves that side open; at the other side it
closes the window: a start moved onto :data:`OPEN_END` begins after the last
day, an end moved onto :data:`OPEN_START` ends before the first, and a start
at or after the end keeps no day. Such a window is *empty*: it keeps no
receipt, and says so, rather than falling back to every receipt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from .._core import engine
from ..receipts.withheld import withheld_summary, within_time_window
from ._shared import ALL, NO_AUDIENCE, rounded

__all__ = [
    "MAX_DAYS",
    "OPEN_END",
    "OPEN_START",
    "OpenEnd",
    "time_range",
    "window_is_empty",
    "window_options",
    "window_readout",
    "withheld_view",
]


class OpenEnd:
    """An open end of a day window: no bound on that side.

    Two instances exist, :data:`OPEN_START` and :data:`OPEN_END`; each equals
    only itself.

    Parameters
    ----------
    side : {"start", "end"}
        The side of the window it leaves open.
    """

    __slots__ = ("side",)

    def __init__(self, side: str) -> None:
        self.side = side

    @property
    def label(self) -> str:
        """The option label a control shows for it, ``"open (start)"`` or ``"open (end)"``."""
        return f"open ({self.side})"

    def __repr__(self) -> str:
        return f"OPEN_{self.side.upper()}"


OPEN_START = OpenEnd("start")
"""The open start of a day window (no lower bound)."""

OPEN_END = OpenEnd("end")
"""The open end of a day window (no upper bound)."""


def _receipts(data: Any) -> pd.DataFrame:
    return getattr(data, "receipts", data)


def _bound(value: Any) -> Any:
    return None if value is None or isinstance(value, OpenEnd) else value


def window_is_empty(window: tuple[Any, Any] | None) -> bool:
    """Whether a day window keeps no day at all.

    Parameters
    ----------
    window : (start, end) or None
        Bounds as :func:`withheld_view` takes them.

    Returns
    -------
    bool
        True when the start is :data:`OPEN_END`, the end is :data:`OPEN_START`,
        or both are days and the start is not before the end.

    Examples
    --------
    >>> from explicit_audit.views import OPEN_END, OPEN_START, window_is_empty
    >>> window_is_empty((OPEN_START, OPEN_START)), window_is_empty((OPEN_START, OPEN_END))
    (True, False)
    >>> window_is_empty(("2025-03-04", "2025-03-04"))
    True
    """
    if window is None:
        return False
    start, end = window
    if start is OPEN_END or end is OPEN_START:
        return True
    start, end = _bound(start), _bound(end)
    return start is not None and end is not None and pd.Timestamp(start) >= pd.Timestamp(end)


def time_range(receipts: Any, column: str = "timestamp") -> list[pd.Timestamp] | None:
    """The whole UTC days the receipts' timestamps span, for a window control.

    Parameters
    ----------
    receipts : DataFrame or Audit
        The ``receipts`` table (or an ``Audit``).
    column : str, default "timestamp"
        The column holding ISO 8601 times.

    Returns
    -------
    list of Timestamp or None
        Midnight of each day from the first timestamp's day to the day after
        the last (so a window ``[first, last)`` holds every receipt); None
        when the column is missing, empty, or not ISO 8601 times. The days
        end at 9999-12-31, the last day a date can be written for: receipts
        dated that day are in a window whose end is open. Over a span of more
        than :data:`MAX_DAYS` days, every k-th day (k the span over
        :data:`MAX_DAYS`, rounded up), with the first and the last.

    Examples
    --------
    >>> import pandas as pd
    >>> from explicit_audit.views import time_range
    >>> days = time_range(pd.DataFrame({"timestamp": ["2025-03-03T08:00:00Z"]}))
    >>> [str(day.date()) for day in days]
    ['2025-03-03', '2025-03-04']
    >>> stamps = ["2025-03-03T08:00:00Z", "9999-12-30T00:00:00Z"]
    >>> far = time_range(pd.DataFrame({"timestamp": stamps}))
    >>> len(far) <= MAX_DAYS + 1, str(far[0].date()), str(far[-1].date())
    (True, '2025-03-03', '9999-12-31')
    """
    frame = _receipts(receipts)
    if column not in frame:
        return None
    bounds = engine.reduce(
        _time_bounds, _widest, frame[[column]], what="time_range", whole=_time_bounds, column=column
    )
    if bounds is None or bounds is _NOT_TIMES:
        return None
    first, last = bounds[0].floor("D"), bounds[1].floor("D") + pd.Timedelta(days=1)
    # A day past 9999-12-31 cannot be written as a date (strftime refuses year
    # 10000); receipts of that last day are in a window with an open end.
    last = min(last, _LAST_DAY)
    # A control of millions of days (one receipt dated far off) would take minutes
    # to build and could not be moved day by day anyway: past MAX_DAYS, a day
    # every so many, the first and the last always among them.
    step = max(1, -(-(last - first).days // MAX_DAYS))
    days = list(pd.date_range(first, last, freq=f"{step}D"))
    if days[-1] != last:
        days.append(last)
    return days


#: At most this many days (and the last) in a window control; over a longer span,
#: every k-th day (see :func:`time_range`).
MAX_DAYS = 1000


#: The last day a date can be written for (``datetime.max``), as a window bound.
_LAST_DAY = pd.Timestamp("9999-12-31", tz="UTC")


#: A partition whose column does not hold ISO 8601 times: no range at all.
_NOT_TIMES = object()


def _time_bounds(frame: pd.DataFrame, column: str) -> Any:
    """``(first, last)`` of the column's times; None when it holds none, :data:`_NOT_TIMES`."""
    values = frame[column]
    if values.isna().all():
        return None
    try:
        times = pd.to_datetime(values, utc=True, format="ISO8601")
    except (ValueError, TypeError):
        return _NOT_TIMES
    return times.min(), times.max()


def _widest(bounds: list) -> Any:
    """The partitions' bounds combined: one that is not times makes the whole column not times."""
    if any(b is _NOT_TIMES for b in bounds):
        return _NOT_TIMES
    known = [b for b in bounds if b is not None]
    if not known:
        return None
    return min(b[0] for b in known), max(b[1] for b in known)


def window_options(days: Sequence[pd.Timestamp]) -> list[tuple[str, Any]]:
    """The (label, value) options of a day-window slider: open start, each day, open end.

    Parameters
    ----------
    days : sequence of Timestamp
        What :func:`time_range` returned.

    Returns
    -------
    list of (str, object)
        ``("open (start)", OPEN_START)``, one ``("YYYY-MM-DD", day)`` per
        day, ``("open (end)", OPEN_END)``: every value distinct, so each
        handle can reach every option.

    Examples
    --------
    >>> import pandas as pd
    >>> from explicit_audit.views import window_options
    >>> [label for label, _ in window_options([pd.Timestamp("2025-03-03")])]
    ['open (start)', '2025-03-03', 'open (end)']
    """
    return [
        (OPEN_START.label, OPEN_START),
        *((f"{day:%Y-%m-%d}", day) for day in days),
        (OPEN_END.label, OPEN_END),
    ]


def window_readout(window: tuple[Any, Any] | None) -> str:
    """A day window as a reader reads it: ``"2025-03-04 → open"``.

    Parameters
    ----------
    window : (start, end) or None
        As for :func:`window_is_empty`.

    Returns
    -------
    str
        Both bounds, ``open`` for an open one, and what the window keeps.

    Examples
    --------
    >>> import pandas as pd
    >>> from explicit_audit.views import OPEN_END, window_readout
    >>> window_readout((pd.Timestamp("2025-03-04"), OPEN_END))
    '2025-03-04 → open (receipts from 2025-03-04 00:00 UTC on)'
    >>> window_readout(None)
    'open → open (every receipt, with or without a timestamp)'
    >>> window_readout((OPEN_END, OPEN_END))
    'after the last day → open: an empty window, no receipt in it'
    """

    def day(value: Any) -> str:
        return f"{pd.Timestamp(value):%Y-%m-%d}"

    if window_is_empty(window):
        start, end = window
        shown = [
            "after the last day" if start is OPEN_END else _shown_bound(start, day),
            "before the first day" if end is OPEN_START else _shown_bound(end, day),
        ]
        return f"{shown[0]} → {shown[1]}: an empty window, no receipt in it"
    start, end = (None, None) if window is None else (_bound(window[0]), _bound(window[1]))
    text = f"{'open' if start is None else day(start)} → {'open' if end is None else day(end)}"
    if start is None and end is None:
        return f"{text} (every receipt, with or without a timestamp)"
    if end is None:
        return f"{text} (receipts from {day(start)} 00:00 UTC on)"
    if start is None:
        return f"{text} (receipts before {day(end)} 00:00 UTC)"
    return f"{text} (receipts from {day(start)} 00:00 to {day(end)} 00:00 UTC, end excluded)"


def _shown_bound(value: Any, day) -> str:
    return "open" if _bound(value) is None else day(value)


def withheld_view(
    data: Any,
    *,
    audience: str = ALL,
    space: str = ALL,
    by: str | Sequence[str] = "scope",
    window: tuple[Any, Any] | None = None,
    digits: int = 3,
) -> pd.DataFrame:
    """Withheld counts for one audience and space, in a time window, per group.

    Parameters
    ----------
    data : DataFrame or Audit
        The ``receipts`` table (or an ``Audit``).
    audience : str, default ALL
        A ``withheld_audience``; :data:`ALL` for every one, :data:`NO_AUDIENCE`
        for receipts with none.
    space : str, default ALL
        An ``active_space``; :data:`ALL` for every one.
    by : str or list of str, default "scope"
        Grouping passed to :func:`~explicit_audit.withheld_summary`.
    window : (start, end), optional
        Keep receipts whose ``timestamp`` is in ``[start, end)``; None, or a
        sentinel at its own side (:data:`OPEN_START` as the start,
        :data:`OPEN_END` as the end), is open. With any bound set, receipts
        without a timestamp are left out; both open keeps every receipt. An
        empty window (:func:`window_is_empty`) keeps none.
    digits : int, default 3
        Rates are rounded to this many decimals.

    Returns
    -------
    DataFrame
        :func:`~explicit_audit.withheld_summary` of the selected receipts,
        with an overall ``(all)`` row.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.views import withheld_view
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> withheld_view(audit, audience="peer", window=("2025-03-03", "2025-03-05"))  # doctest: +SKIP
    """
    receipts = _receipts(data)
    selected = engine.each_row(_selected, receipts, audience=audience, space=space)
    if window_is_empty(window):
        selected = engine.each_row(_no_rows, selected)
    else:
        start, end = (None, None) if window is None else (_bound(window[0]), _bound(window[1]))
        if start is not None or end is not None:
            selected = within_time_window(selected, start, end)
    return rounded(withheld_summary(selected, by=by, overall=True), digits)


def _no_rows(receipts: pd.DataFrame) -> pd.DataFrame:
    """None of the rows: what an empty window keeps."""
    return receipts.iloc[:0]


def _selected(receipts: pd.DataFrame, *, audience: str, space: str) -> pd.DataFrame:
    """The receipts of one audience (or all, or none) in one space (or all)."""
    keep = pd.Series(True, index=receipts.index)
    if audience == NO_AUDIENCE:
        keep &= receipts["withheld_audience"].isna()
    elif audience != ALL:
        keep &= (receipts["withheld_audience"] == audience).fillna(False).astype(bool)
    if space != ALL:
        keep &= (receipts["active_space"] == space).fillna(False).astype(bool)
    return receipts[keep.to_numpy(dtype=bool)]
