"""Withheld counts: how much authorization withheld, and what the counts reveal.

engram's receipt carries ``withheld: {audienceId, count}``, how many records
authorization withheld from one retrieval, never which. Its own comment calls
the count "a weak oracle": one count says little, but a caller who asks many
queries learns for which of them restricted content matched. The views here
measure both: the volume withheld (:func:`withheld_summary`) and how much a
caller could infer from counts alone (:func:`withheld_oracle`, built on the
per-query table :func:`withheld_queries`).

Every function takes the ``receipts`` table of :func:`explicit_audit.load`
(or any subset of its rows) and leaves it unchanged. Receipts with no audience
(unguarded retrieval, which never withholds) form their own group, with a
missing audience label. An invalid count (negative, flagged by
:func:`explicit_audit.check_receipts`) is never summed: it would hide real
withheld records. Such receipts are counted in ``invalid_counts`` instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._core import engine
from .._core.columns import ALL_LABEL
from .._core.docstrings import fill_docs
from .._core.lists import list_column, list_lengths
from ..errors import AuditError

__all__ = [
    "ALL_LABEL",
    "withheld_oracle",
    "withheld_queries",
    "withheld_summary",
    "within_time_window",
]


#: What identifies "the same query" for the oracle views: the same text asked
#: of the same space; a space receipt (no query) is one enumeration per space.
DEFAULT_QUERY_COLUMNS = ("active_space", "scope", "query")


def _as_list(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _counts(receipts: pd.DataFrame) -> pd.DataFrame:
    count = receipts["withheld_count"].astype("Int64")
    invalid = (count < 0).astype("boolean").fillna(False)
    return pd.DataFrame(
        {
            "count": count.mask(invalid, 0),
            "as_loaded": count,
            "invalid": invalid.astype("int64"),
            "withheld": (count > 0).astype("boolean").fillna(False).astype("int64"),
            "returned": list_lengths(list_column(receipts, "record_ids")),
        },
        index=receipts.index,
    )


def _ratio(numerator: pd.Series, denominator: pd.Series) -> pd.Series:
    numerator = numerator.astype("Float64")
    denominator = denominator.astype("Float64")
    return (numerator / denominator.where(denominator != 0)).astype("Float64")


def withheld_summary(
    receipts: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    overall: bool = False,
) -> pd.DataFrame:
    """How many receipts withheld anything, and how many records, per group.

    Parameters
    ----------
    receipts : DataFrame
        The ``receipts`` table.
    by : str or list of str, optional
        Columns to group by (``"withheld_audience"``, ``"active_space"``,
        ``"scope"``, ``"outcome"``, ...). None gives one row for everything.
    overall : bool, default False
        Append a row over all receipts, labelled :data:`ALL_LABEL` in every
        grouping column.

    Returns
    -------
    DataFrame
        Indexed by the grouping columns (a missing value is a group of its
        own), with columns ``receipts``, ``receipts_withheld`` (count > 0),
        ``records_withheld`` (sum of counts), ``withheld_rate``
        (receipts_withheld / receipts), ``records_returned`` (record ids
        returned), ``withheld_share`` (records_withheld /
        (records_withheld + records_returned); <NA> when both are 0) and
        ``invalid_counts`` (receipts whose count is negative, left out of
        ``records_withheld``).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> receipts = ea.load_receipts("data/receipts/", progress=False)
    >>> every = ea.withheld_summary(receipts, by="withheld_audience", overall=True).loc["(all)"]
    >>> int(every["receipts"]), int(every["receipts_withheld"]), int(every["records_withheld"])
    (2789, 1231, 3915)
    """
    keys = _as_list(by)
    parts = engine.reduce(_summary_part, list, receipts, what="withheld_summary", keys=keys)
    return _summary_of(parts, keys, overall)


#: The sums a withheld summary is made of, per group, and their dtypes.
_SUMS = {
    "receipts": "int64",
    "receipts_withheld": "int64",
    "records_withheld": "Int64",
    "records_returned": "int64",
    "invalid_counts": "int64",
}


def _summary_part(receipts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The sums of :data:`_SUMS` per group of ``keys`` over some receipts."""
    counts = _counts(receipts).rename(
        columns={"withheld": "receipts_withheld", "count": "records_withheld"}
    )
    counts = counts.rename(columns={"returned": "records_returned", "invalid": "invalid_counts"})
    counts["receipts"] = np.int64(1)
    if not keys:
        return counts[list(_SUMS)].sum().to_frame().T
    grouped = counts.groupby(
        [receipts[key] for key in keys], observed=True, dropna=False, sort=True
    )
    return grouped[list(_SUMS)].sum()


def _levels(index: pd.Index) -> list[pd.Index]:
    if isinstance(index, pd.MultiIndex):
        return [index.get_level_values(i) for i in range(index.nlevels)]
    return [index]


def _unified(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Parts indexed by one grouping as one; a categorical level gets all parts' categories."""
    if len(parts) == 1:
        return parts[0]
    levels = [_levels(part.index) for part in parts]
    names = list(parts[0].index.names)
    for i in range(len(names)):
        dtypes = [part_levels[i].dtype for part_levels in levels]
        if not all(isinstance(d, pd.CategoricalDtype) for d in dtypes):
            continue
        categories = [list(d.categories) for d in dtypes]
        if all(c == categories[0] for c in categories):
            continue
        union = pd.CategoricalDtype(
            pd.Index(sorted({c for cs in categories for c in cs}), dtype=dtypes[0].categories.dtype)
        )
        for part_levels in levels:
            part_levels[i] = part_levels[i].astype(union)
    frames = []
    for part, part_levels in zip(parts, levels, strict=True):
        part = part.copy()
        if len(part_levels) > 1:
            part.index = pd.MultiIndex.from_arrays(part_levels, names=names)
        else:
            part.index = part_levels[0]
        frames.append(part)
    return pd.concat(frames)


def _regrouped(parts: list[pd.DataFrame], keys: list[str]):
    return _unified(parts).groupby(
        level=list(range(len(keys))), observed=True, dropna=False, sort=True
    )


def _summary_of(parts: list[pd.DataFrame], keys: list[str], overall: bool) -> pd.DataFrame:
    totals = {name: sum(part[name].sum() for part in parts) for name in _SUMS}
    if keys:
        table = _regrouped(parts, keys)[list(_SUMS)].sum()
    else:
        table = _overall_row(totals, [])
    if overall and keys:
        table = pd.concat([_relabel(table, keys), _overall_row(totals, keys)])
    table = table.astype(_SUMS)
    table["withheld_rate"] = _ratio(table["receipts_withheld"], table["receipts"])
    table["withheld_share"] = _ratio(
        table["records_withheld"], table["records_withheld"] + table["records_returned"]
    )
    return table[
        [
            "receipts",
            "receipts_withheld",
            "records_withheld",
            "withheld_rate",
            "records_returned",
            "withheld_share",
            "invalid_counts",
        ]
    ]


def _overall_row(totals: dict, keys: list[str]) -> pd.DataFrame:
    row = {name: [totals[name]] for name in _SUMS}
    if len(keys) > 1:
        index = pd.MultiIndex.from_tuples([(ALL_LABEL,) * len(keys)], names=keys)
    else:
        index = pd.Index([ALL_LABEL], name=keys[0] if keys else None, dtype=object)
    return pd.DataFrame(row, index=index)


def _relabel(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    # Group labels become plain objects so the overall row's label can join them.
    if len(keys) > 1:
        levels = [table.index.get_level_values(i).astype(object) for i in range(len(keys))]
        table.index = pd.MultiIndex.from_arrays(levels, names=keys)
    else:
        table.index = pd.Index(table.index.astype(object), name=keys[0])
    return table


#: The parameters of the per-query views, described once.
_QUERY_DOCS = {
    "query_parameters": """\
receipts : DataFrame
    The ``receipts`` table.
by : str or list of str, default "withheld_audience"
    Who sees the counts.
query_columns : sequence of str, default ("active_space", "scope", "query")
    What makes two receipts the same question."""
}


@fill_docs(_QUERY_DOCS)
def withheld_queries(
    receipts: pd.DataFrame,
    by: str | Sequence[str] = "withheld_audience",
    *,
    query_columns: Sequence[str] = DEFAULT_QUERY_COLUMNS,
) -> pd.DataFrame:
    """Per audience and distinct query: what the withheld count said each time.

    Parameters
    ----------
    %(query_parameters)s

    Returns
    -------
    DataFrame
        Indexed by ``by`` + ``query_columns``, with ``receipts``,
        ``receipts_withheld``, ``min_count``, ``max_count`` and
        ``records_withheld`` (sum of the valid, non-negative counts).

    Examples
    --------
    >>> receipts = ea.load_receipts("data/receipts/", progress=False)
    >>> queries = ea.withheld_queries(receipts)
    >>> len(queries), int((queries["max_count"] > 0).sum())
    (1445, 556)
    """
    keys = _as_list(by) + list(query_columns)
    parts = engine.reduce(_queries_part, list, receipts, what="withheld_queries", keys=keys)
    return _queries_of(parts, keys)


#: Each column of :func:`withheld_queries`: the column of :func:`_counts` it is made
#: of (None: the receipts themselves), how a group's values, and then the
#: partitions' values, are combined, and its dtype. The counts as loaded give the
#: minimum and maximum, so that an invalid count stays visible there.
_QUERY_COLUMNS = {
    "receipts": (None, "sum", "int64"),
    "receipts_withheld": ("withheld", "sum", "int64"),
    "min_count": ("as_loaded", "min", "Int64"),
    "max_count": ("as_loaded", "max", "Int64"),
    "records_withheld": ("count", "sum", "Int64"),
}


def _queries_part(receipts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: the columns of :data:`_QUERY_COLUMNS`; keys as the index."""
    grouped = _counts(receipts).groupby(
        [receipts[key] for key in keys], observed=True, dropna=False, sort=True
    )
    return pd.DataFrame(
        {
            name: (grouped.size() if made_of is None else grouped[made_of].agg(how)).astype(dtype)
            for name, (made_of, how, dtype) in _QUERY_COLUMNS.items()
        }
    )


def _queries_of(parts: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    grouped = _regrouped(parts, keys)
    return pd.DataFrame(
        {
            name: grouped[name].agg(how).astype(dtype)
            for name, (_, how, dtype) in _QUERY_COLUMNS.items()
        }
    )


@fill_docs(_QUERY_DOCS)
def withheld_oracle(
    receipts: pd.DataFrame,
    by: str | Sequence[str] = "withheld_audience",
    *,
    query_columns: Sequence[str] = DEFAULT_QUERY_COLUMNS,
) -> pd.DataFrame:
    """How much each audience could learn from withheld counts alone.

    A non-zero count tells the caller that restricted content matched the
    query. Per audience, this counts over how many distinct queries that
    happened, out of how many it asked.

    Parameters
    ----------
    %(query_parameters)s

    Returns
    -------
    DataFrame
        Indexed by ``by``, with ``queries`` (distinct queries asked),
        ``queries_withheld`` (with a non-zero count at least once),
        ``query_share`` (their ratio), ``queries_always_withheld`` (non-zero
        every time asked), ``queries_count_varies`` (asked again with a
        different count), ``receipts``, ``receipts_withheld`` and
        ``records_withheld``.

    Examples
    --------
    >>> receipts = ea.load_receipts("data/receipts/", progress=False)
    >>> ea.withheld_oracle(receipts)["query_share"].round(3).sort_values().tail(2).to_dict()
    {'external-auditor': 0.551, 'status-only': 0.63}
    """
    keys = _as_list(by)
    per_query = withheld_queries(receipts, keys, query_columns=query_columns)
    flags = pd.DataFrame(
        {
            "queries": 1,
            "queries_withheld": (per_query["max_count"] > 0).fillna(False).astype("int64"),
            "queries_always_withheld": (per_query["min_count"] > 0).fillna(False).astype("int64"),
            "queries_count_varies": (per_query["min_count"] != per_query["max_count"])
            .fillna(False)
            .astype("int64"),
            "receipts": per_query["receipts"],
            "receipts_withheld": per_query["receipts_withheld"],
            "records_withheld": per_query["records_withheld"],
        },
        index=per_query.index,
    )
    table = flags.groupby(level=list(range(len(keys))), dropna=False, sort=True).sum()
    table = table.astype({"records_withheld": "Int64"})
    table.insert(2, "query_share", _ratio(table["queries_withheld"], table["queries"]))
    return table


def within_time_window(
    receipts: pd.DataFrame,
    start=None,
    end=None,
    *,
    column: str = "timestamp",
    unit: str | None = None,
) -> pd.DataFrame:
    """The receipts logged in ``[start, end)``, by a timestamp a logger added.

    Parameters
    ----------
    receipts : DataFrame
        The ``receipts`` table, or any table with the timestamp column.
    start, end : str, datetime or Timestamp, optional
        Window bounds; a missing bound is open. Naive values are read as UTC.
    column : str, default "timestamp"
        The column holding the time (ISO 8601 strings or datetimes).
    unit : str, optional
        For a numeric column: the unit of the epoch numbers (``"s"``, ``"ms"``).

    Returns
    -------
    DataFrame
        The rows inside the window, index labels kept. Rows with no
        timestamp are outside every window.

    Examples
    --------
    >>> receipts = ea.load_receipts("data/receipts/", progress=False)
    >>> len(ea.within_time_window(receipts, "2025-03-01", "2025-03-08")), len(receipts)
    (1970, 2789)

    A Dask table gives a lazy table of the rows inside the window.
    """
    return engine.each_row(_within, receipts, start=start, end=end, column=column, unit=unit)


def _within(receipts: pd.DataFrame, *, start, end, column: str, unit) -> pd.DataFrame:
    """:func:`within_time_window` of an in-memory table (or one partition of it)."""
    if column not in receipts:
        raise AuditError(
            f"the receipts have no {column!r} column; pass column= the name of the "
            "timestamp key your logger writes"
        )
    values = receipts[column]
    if pd.api.types.is_numeric_dtype(values) and unit is None:
        raise AuditError(
            f"column {column!r} holds numbers; pass unit='s' or unit='ms' to read them as "
            "Unix epoch times"
        )
    try:
        times = pd.to_datetime(values, utc=True, unit=unit, format=None if unit else "ISO8601")
    except (ValueError, TypeError) as error:
        raise AuditError(
            f"column {column!r} holds a value that is not a time ({error}); filter those "
            "rows out first, or pass the right column="
        ) from error
    keep = np.ones(len(receipts), dtype=bool)
    if start is not None:
        keep &= (times >= _utc(start)).to_numpy(dtype=bool, na_value=False)
    if end is not None:
        keep &= (times < _utc(end)).to_numpy(dtype=bool, na_value=False)
    return receipts[keep]


def _utc(value) -> pd.Timestamp:
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
