"""A record's time as a time: the columns named for one, typed as UTC datetimes.

Loggers add a time beside the records they wrap (``timestamp``, ``ts``), and
a few producers write one of their own (engram's ``generatedAt``). Written as
ISO 8601 text, such a column is typed ``datetime64[ns, UTC]`` whichever
engine loads it: a time with a zone is converted to UTC, one without is read
as UTC (as ``verify --since`` reads its bounds). A value that is not a time
(``"yesterday"``, a date in another layout) is never turned into a missing
value in silence: the column ``<name>_unparsed`` holds the text as written
on those rows (missing on the rows that parsed), and the in-memory load
warns with an :class:`~explicit_audit.UnparsedTimeWarning`. Columns of
numbers (epoch times, whose unit the numbers do not tell) and of mixed JSON
values are left as they are. Hashes never read these columns: they are
rebuilt from the records as written.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pandas as pd

from ..errors import AuditError

__all__ = [
    "TIME_KEYS",
    "UNPARSED_SUFFIX",
    "far_times",
    "held_in_nanoseconds",
    "is_text",
    "iso_times",
    "iso_utc",
    "parse_time",
    "time_column",
    "time_parts",
    "typed_times",
    "unparsed_counts",
    "utc_times",
]

#: Column names read as a record's time, the first a table has winning.
TIME_KEYS = (
    "timestamp",
    "ts",
    "time",
    "started_at",
    "sent_at",
    "generated_at",
    "created_at",
    "logged_at",
)

#: ``<name><UNPARSED_SUFFIX>`` holds the text of a time column where it did not parse.
UNPARSED_SUFFIX = "_unparsed"

_UTC = pd.DatetimeTZDtype("ns", "UTC")
#: The first and last times a ``datetime64[ns, UTC]`` column holds.
_FIRST, _LAST = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")


def typed_times(frame: pd.DataFrame, only: Collection[str] | None = None) -> pd.DataFrame:
    """``frame`` with each text column named in :data:`TIME_KEYS` typed as UTC times.

    Parameters
    ----------
    frame : DataFrame
        A table as its kind built it.
    only : collection of str, optional
        Type these columns only (a partition typed as the lazy table's meta
        types its columns); by default every one named in :data:`TIME_KEYS`.

    Returns
    -------
    DataFrame
        The same rows; a time column typed ``datetime64[ns, UTC]``, followed by
        its ``<name>_unparsed`` column (``str``: the text where it is not a time).
        ``frame`` itself when it has no text time column.

    Examples
    --------
    >>> table = pd.DataFrame({"timestamp": ["2025-03-04T09:00:00+09:00", "soon", None]})
    >>> typed = typed_times(table)
    >>> typed["timestamp"].tolist()[0]
    Timestamp('2025-03-04 00:00:00+0000', tz='UTC')
    >>> typed["timestamp_unparsed"].tolist()[1:]
    ['soon', nan]
    >>> typed_times(pd.DataFrame({"timestamp": ["9999-12-31T00:00:00Z"]}))["timestamp_unparsed"][0]
    '9999-12-31T00:00:00Z'
    """
    names = [
        name
        for name in frame.columns
        if name in TIME_KEYS
        and (only is None or name in only)
        and name + UNPARSED_SUFFIX not in frame.columns
        and pd.api.types.is_string_dtype(frame[name].dtype)
        and frame[name].dtype != object
    ]
    if not names:
        return frame
    columns: dict = {}
    for name in frame.columns:
        values = frame[name]
        if name not in names:
            columns[name] = values
            continue
        times = pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601")
        # A time a nanosecond column cannot hold (before 1677, after 2262: a receipt
        # dated 9999-12-31) is kept as written, as text that is not a time is.
        held = times.isna() | held_in_nanoseconds(times)
        times = times.where(held).astype(_UTC)
        unparsed = values.where(values.notna() & times.isna())
        columns[name] = times
        columns[name + UNPARSED_SUFFIX] = unparsed.astype("str")
    return pd.DataFrame(columns, index=frame.index)


def held_in_nanoseconds(times: pd.Series) -> pd.Series:
    """Per UTC time: whether a ``datetime64[ns, UTC]`` column holds it (1677 to 2262)."""
    return (times >= _FIRST) & (times <= _LAST)


def time_column(frame) -> str | None:
    """A table's time: its first column named in :data:`TIME_KEYS`, or None.

    Whatever its values: :func:`utc_times` reads them, and a value that is not
    a time (an epoch number, ``"yesterday"``) dates no row. A trend, a report's
    period and ``verify --since/--until`` all read a table's time this way, so
    that they place each record alike.
    """
    return next((name for name in TIME_KEYS if name in frame.columns), None)


def utc_times(values: pd.Series) -> pd.Series:
    """A time column as UTC times: missing where the value is missing or is not a time.

    Typed times are converted to UTC (a time without a zone is UTC); ISO 8601
    text is parsed (a mixed column's text too). Numbers are not read as
    times: which epoch and unit they count in cannot be told from the numbers.

    Examples
    --------
    >>> mixed = pd.Series(["2025-03-04T09:00:00+09:00", 1741046400, "soon"], dtype=object)
    >>> utc_times(mixed).tolist()
    [Timestamp('2025-03-04 00:00:00+0000', tz='UTC'), NaT, NaT]
    """
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values.dtype):
        return values.dt.tz_localize("UTC")
    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return pd.Series(pd.NaT, index=values.index, dtype=_UTC)
    if not pd.api.types.is_string_dtype(values.dtype) or values.dtype == object:
        values = values.where(is_text(values))
    return iso_times(values)


def is_text(values: pd.Series) -> pd.Series:
    """Per value: whether it is text (a column of mixed JSON values holds numbers too)."""
    found = values.map(lambda value: isinstance(value, str), na_action="ignore")
    return found.fillna(False).astype(bool)


def far_times(frame: pd.DataFrame, column: str) -> pd.Series | None:
    """The times kept as text beside ``column`` because no nanosecond column holds them.

    A time before 1677 or after 2262 (a receipt dated 9999-12-31) is typed
    missing, its text kept in ``<column>_unparsed``; read with
    :func:`iso_times`, it is still a time, and ``record_times`` judges it as
    one. Missing where the text is not a time; None when there is no text.
    """
    unparsed = frame.get(column + UNPARSED_SUFFIX)
    if unparsed is None or not unparsed.notna().any():
        return None
    return iso_times(unparsed)


def time_parts(frame: pd.DataFrame, column: str) -> list[pd.Series]:
    """The times of ``frame``'s records by ``column``: the column's own (:func:`utc_times`),
    then, where there are any, those kept as text past 2262 (:func:`far_times`). A row is
    dated by one of them at most; the units are each one's own, so that a window compares
    each exactly."""
    far = far_times(frame, column)
    return [utc_times(frame[column])] + ([far] if far is not None else [])


#: A fraction of a second past its sixth digit.
_PAST_MICROSECONDS = r"(\.\d{6})\d+"


def iso_times(text: pd.Series) -> pd.Series:
    """ISO 8601 text as UTC times to the microsecond; missing where it is not a time.

    pandas parses a column in one unit, the finest its values need: one value
    with nine digits of fraction would make the column nanoseconds, and a
    time past 2262 that shares it missing, which alone (or in another Dask
    partition) parses. Cut to microseconds, every value parses alike wherever
    it is (year 1 to 9999).

    Examples
    --------
    >>> far, fine = iso_times(pd.Series(["9999-12-31T00:00:00Z", "2025-03-04T00:00:00.123456789Z"]))
    >>> far
    Timestamp('9999-12-31 00:00:00+0000', tz='UTC')
    >>> fine
    Timestamp('2025-03-04 00:00:00.123456+0000', tz='UTC')
    """
    cut = text.str.replace(_PAST_MICROSECONDS, r"\1", regex=True)
    return pd.to_datetime(cut, errors="coerce", utc=True, format="ISO8601").dt.as_unit("us")


def iso_utc(stamp: pd.Timestamp) -> str:
    """``stamp`` in ISO 8601, in UTC: ``2025-03-04T00:00:00Z``, its fraction where it has one.

    Examples
    --------
    >>> iso_utc(pd.Timestamp("0001-01-02", tz="UTC"))
    '0001-01-02T00:00:00Z'
    >>> iso_utc(pd.Timestamp("2025-03-04T00:00:00.5Z"))
    '2025-03-04T00:00:00.500000Z'
    """
    return stamp.tz_convert(None).isoformat() + "Z"


def unparsed_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Per time column of ``frame``: how many values did not parse (only those above 0)."""
    counts = {}
    for name in frame.columns:
        if isinstance(name, str) and name.endswith(UNPARSED_SUFFIX):
            time_name = name[: -len(UNPARSED_SUFFIX)]
            if time_name in TIME_KEYS and time_name in frame.columns:
                count = int(frame[name].notna().sum())
                if count:
                    counts[time_name] = count
    return counts


def parse_time(text: Any, *, what: str = "time") -> pd.Timestamp:
    """A time given by a user as a UTC timestamp; a time without a zone is read as UTC.

    Parameters
    ----------
    text : str or datetime
        A time, or ISO 8601 text: ``2025-03-04``, ``2025-03-04T08:00:00Z``,
        ``2025-03-04 08:00+09:00``.
    what : str
        The option's name, for the message.

    Raises
    ------
    AuditError
        When ``text`` is not a time.

    Examples
    --------
    >>> parse_time("2025-03-04")
    Timestamp('2025-03-04 00:00:00+0000', tz='UTC')
    >>> parse_time("2025-03-04T09:00:00+09:00")
    Timestamp('2025-03-04 00:00:00+0000', tz='UTC')
    """
    try:
        stamp = pd.Timestamp(text)
    except (ValueError, TypeError) as error:
        raise AuditError(
            f"{what}: {text!r} is not a time ({error}); write it in ISO 8601, as 2025-03-04 or "
            "2025-03-04T08:00:00Z"
        ) from None
    if stamp is pd.NaT:
        raise AuditError(f"{what}: {text!r} is not a time; write it as 2025-03-04")
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
