"""Trends: what the records and their findings say, period by period.

:func:`trend` turns one audit into one table with a row per period (a day by
default) and a column per measure, read from the records' own times (the
first column of :data:`~explicit_audit._core.times.TIME_KEYS` a table has,
``timestamp``, ``ts``, ``started_at``, ...):

=============================  ================================================================
column                         what it counts in the period
=============================  ================================================================
``records.<table>``            rows of the table (every table of the audit)
``findings.<check>``           findings of severity ``error`` (every check that looked at records)
``notices.<check>``            findings of severity ``notice`` (the checks that gave one)
``withheld.count``             the records authorization withheld, summed over the receipts
``withheld.receipts``          receipts that withheld at least one record
``escalation.decisions``       routing decisions with a recorded outcome
``escalation.escalated``       decisions that escalated to the 26B model
``escalation.rate``            ``escalation.escalated / escalation.decisions`` (NaN: none)
``escalation.reason.<name>``   decisions that give the reason (one decision may give several)
=============================  ================================================================

A finding falls in the period of the record it is about. Nothing is left
out: a record with no time (its table has no time column, or the value is
missing or did not parse) and a finding about no record (a rejected input,
a key note) are counted in a last row whose period is ``NaT``, so that each
count column sums to the table or findings it counts. Periods between the
first and the last with no records are rows of zeros, so that a plot shows
a gap as a gap. The measures are read from the tables as loaded; hashes are
not rebuilt here (:func:`~explicit_audit.verify_all` gives the findings).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ._core import engine
from ._core.times import TIME_KEYS, UNPARSED_SUFFIX, time_column, time_parts
from .audit import Audit, with_heads_as_needed
from .verify import Verification, verify_all

__all__ = ["TREND_PERIOD", "trend"]

#: The name of the index of :func:`trend`'s table.
TREND_PERIOD = "period"


def _withheld(receipts: pd.DataFrame) -> pd.DataFrame:
    counts = receipts["withheld_count"].astype("Float64")
    return pd.DataFrame(
        {
            "withheld.count": counts.fillna(0),
            "withheld.receipts": (counts > 0).fillna(False).astype("int64"),
        },
        index=receipts.index,
    )


def _escalation(decisions: pd.DataFrame) -> pd.DataFrame:
    escalated = decisions["recorded_escalate_to_26b"].astype("boolean")
    columns = {
        "escalation.decisions": escalated.notna().astype("int64"),
        "escalation.escalated": escalated.fillna(False).astype("int64"),
    }
    reasons = decisions["recorded_escalation_reasons"]
    given = [list(value) if value is not None else [] for value in reasons.tolist()]
    for name in sorted({reason for row in given for reason in row}):
        columns[f"escalation.reason.{name}"] = np.fromiter(
            (name in row for row in given), dtype="int64", count=len(given)
        )
    return pd.DataFrame(columns, index=decisions.index)


#: Per table, the columns a measure reads and the per-row measures it gives.
_MEASURES: dict[str, tuple[tuple[str, ...], Callable[[pd.DataFrame], pd.DataFrame]]] = {
    "receipts": (("withheld_count",), _withheld),
    "decisions": (("recorded_escalate_to_26b", "recorded_escalation_reasons"), _escalation),
}


def _needed(audit: Audit) -> dict[str, pd.DataFrame]:
    """Per table, the columns a trend reads, in memory (computed together where lazy)."""
    names, frames = [], []
    for name, table in audit.tables.items():
        columns = [column for column in TIME_KEYS if column in table.columns][:1]
        kept = [column + UNPARSED_SUFFIX for column in columns]  # a far time is kept as text
        columns += [column for column in kept if column in table.columns]
        measure = _MEASURES.get(name)
        if measure is not None and all(column in table.columns for column in measure[0]):
            columns += list(measure[0])
        names.append(name)
        frames.append(table[columns])
    return dict(zip(names, engine.computed(*frames), strict=True))


def _in_us(times: pd.Series) -> pd.Series:
    """UTC times in microseconds, floored (never into the next period).

    Microseconds, not nanoseconds: a period's bounds reach past the times it
    holds, and a week around a record of 2262-04-11 ends past the last
    nanosecond time.
    """
    return (times.dt.floor("us") if times.dt.unit == "ns" else times).dt.as_unit("us")


class _Periods:
    """One binning of every time a trend counts, so that each part falls on the same periods.

    pandas sets a multiple frequency's bins (``"2W"``, ``"6h"``) from the first
    time it is given: tables binned apart would each get bins of their own.
    Here every time of every part is binned once, together.
    """

    def __init__(self, times: list[pd.Series], freq: str) -> None:
        every = pd.DatetimeIndex(pd.concat([column.dropna() for column in times])).unique()
        every = every.sort_values()
        counts = pd.Series(1, index=every).resample(freq).count()
        self._times = every
        self._labels = counts.index.repeat(counts.to_numpy())
        #: Every period from the first time's to the last's, empty ones included.
        self.grid = counts.index

    def rows(self, times: pd.Series, values: pd.DataFrame) -> pd.DataFrame:
        """``values`` summed per period of ``times``; rows with no time summed under NaT."""
        dated = times.notna().to_numpy()
        where = self._times.get_indexer(pd.DatetimeIndex(times[dated]))
        by_period = values[dated].groupby(self._labels[where]).sum()
        nowhen = pd.DatetimeIndex([pd.NaT], tz="UTC").as_unit("us")
        untimed = values[~dated].sum().to_frame().T.set_axis(nowhen)
        return pd.concat([by_period, untimed]) if (~dated).any() else by_period


def _finding_times(findings: pd.DataFrame, times: dict[str, pd.Series]) -> pd.Series:
    """The time of the record each finding is about (NaT where it is about none)."""
    found = pd.Series(pd.NaT, index=findings.index, dtype=pd.DatetimeTZDtype("us", "UTC"))
    for kind, rows in findings.groupby("kind", observed=True).groups.items():
        dated = times.get(str(kind))
        if dated is None:
            continue
        labels = findings.loc[rows, "row"]
        known = labels.notna() & labels.isin(dated.index)
        found.loc[known[known].index] = dated.reindex(labels[known].astype("int64")).to_numpy()
    return found


def trend(
    audit: Audit, freq: str = "D", *, verification: Verification | None = None
) -> pd.DataFrame:
    """Records, findings, withheld counts and escalations per period of the records' times.

    Parameters
    ----------
    audit : Audit
        What :func:`~explicit_audit.load` returned (either engine).
    freq : str, default "D"
        A pandas frequency: ``"h"`` (hours), ``"D"`` (days), ``"W"`` (weeks
        from Monday to Sunday), ``"MS"`` or ``"ME"`` (months) ...; periods
        are in UTC. Each period is labelled by its first instant, whatever
        end the frequency is anchored on (``"W"``'s row for the week of
        Monday 3 March is ``2025-03-03``), so the row labelled ``t`` counts
        the records from ``t`` up to the next label: ``verify --since t
        --until NEXT`` checks the same records.
    verification : Verification, optional
        The findings to place in time; by default ``verify_all(audit)``.

    Returns
    -------
    DataFrame
        A row per period from the first record's to the last's (index
        ``period``, the period's start in UTC), then a row ``NaT`` for what
        has no time where there is any; the columns of the module's table, in
        that order. The counts are ``int64``; ``escalation.rate`` is a float.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> audit = ea.load("data/", progress=False)  # doctest: +SKIP
    >>> ea.trend(audit, "D")[["records.receipts", "findings.receipt_rules"]]  # doctest: +SKIP
    """
    verification = verify_all(audit) if verification is None else verification
    tables = with_heads_as_needed(audit, _needed)  # a Dask load planned again where it must
    times: dict[str, pd.Series] = {}
    for name, table in tables.items():
        column = time_column(table)
        dated = pd.Series(pd.NaT, index=table.index, dtype="M8[us, UTC]")
        for part in time_parts(table, column) if column else []:
            dated = dated.where(dated.notna(), _in_us(part))
        times[name] = dated
    periods = _Periods(list(times.values()), freq)
    parts: list[pd.DataFrame] = []
    for name, table in tables.items():
        values = pd.DataFrame({f"records.{name}": np.ones(len(table), "int64")}, index=table.index)
        measure = _MEASURES.get(name)
        if measure is not None and all(c in table.columns for c in measure[0]):
            values = values.join(measure[1](table))
        parts.append(periods.rows(times[name], values))
    findings = verification.findings
    when = _finding_times(findings, times)
    for severity, prefix in (("error", "findings"), ("notice", "notices")):
        chosen = (findings["severity"] == severity).to_numpy()
        # A check that looked at no record has no column: a row of zeros would read as clean.
        ran = [check for check, examined in verification.checked.items() if examined]
        checks = ran if severity == "error" else []
        checks += [c for c in findings.loc[chosen, "check"].astype(str).unique() if c not in checks]
        counts = pd.DataFrame(
            {
                f"{prefix}.{check}": (findings["check"].astype(str) == check).to_numpy() & chosen
                for check in checks
            },
            index=findings.index,
        ).astype("int64")
        parts.append(periods.rows(when, counts))
    return _joined(parts, periods.grid, freq)


def _joined(parts: list[pd.DataFrame], grid: pd.DatetimeIndex, freq: str) -> pd.DataFrame:
    """One table from the per-measure parts, on one grid of periods; the rate last computed."""
    table = pd.concat(parts, axis=1, sort=True)
    dated = table.index.notna()
    if len(grid):
        table = pd.concat([table[dated].reindex(grid), table[~dated]])
    table = table.fillna(0).astype("int64")
    if "escalation.decisions" in table.columns:
        decided = table["escalation.decisions"].where(table["escalation.decisions"] > 0)
        rate = (table["escalation.escalated"] / decided).astype("float64")
        table.insert(table.columns.get_loc("escalation.escalated") + 1, "escalation.rate", rate)
    table.index = _starts(table.index, freq)
    table.index.name = TREND_PERIOD
    return table


def _starts(periods: pd.DatetimeIndex, freq: str) -> pd.DatetimeIndex:
    """Each period's first instant, where pandas labels it by its end.

    pandas bins an end-anchored frequency (``"W"``, ``"ME"``, ``"QE"``, ...)
    from the day after one anchor to the end of the next anchor's day, and
    labels the bin by that anchor: the start is the day after the anchor
    before.
    """
    if pd.Grouper(freq=freq).label != "right":
        return periods
    dated = periods.notna()
    offset = pd.tseries.frequencies.to_offset(freq)
    starts = periods[dated] - offset + pd.Timedelta(days=1)
    return starts.append(periods[~dated])
