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
from ._core.times import TIME_KEYS, time_column
from .audit import Audit
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
        measure = _MEASURES.get(name)
        if measure is not None and all(column in table.columns for column in measure[0]):
            columns += list(measure[0])
        names.append(name)
        frames.append(table[columns])
    return dict(zip(names, engine.computed(*frames), strict=True))


def _period_rows(times: pd.Series, values: pd.DataFrame, freq: str) -> pd.DataFrame:
    """``values`` summed per period of ``times``; rows with no time summed under NaT."""
    dated = times.notna().to_numpy()
    by_period = values[dated].set_axis(pd.DatetimeIndex(times[dated])).resample(freq).sum()
    untimed = values[~dated].sum().to_frame().T.set_axis(pd.DatetimeIndex([pd.NaT], tz="UTC"))
    return pd.concat([by_period, untimed]) if (~dated).any() else by_period


def _finding_times(findings: pd.DataFrame, times: dict[str, pd.Series]) -> pd.Series:
    """The time of the record each finding is about (NaT where it is about none)."""
    found = pd.Series(pd.NaT, index=findings.index, dtype=pd.DatetimeTZDtype("ns", "UTC"))
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
        ending on Sunday), ``"MS"`` (months) ...; periods are in UTC.
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
    tables = _needed(audit)
    times: dict[str, pd.Series] = {}
    parts: list[pd.DataFrame] = []
    for name, table in tables.items():
        column = time_column(table)
        dated = (
            table[column] if column else pd.Series(pd.NaT, index=table.index, dtype="M8[ns, UTC]")
        )
        times[name] = dated
        values = pd.DataFrame({f"records.{name}": np.ones(len(table), "int64")}, index=table.index)
        measure = _MEASURES.get(name)
        if measure is not None and all(c in table.columns for c in measure[0]):
            values = values.join(measure[1](table))
        parts.append(_period_rows(dated, values, freq))
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
        parts.append(_period_rows(when, counts, freq))
    return _joined(parts, freq)


def _joined(parts: list[pd.DataFrame], freq: str) -> pd.DataFrame:
    """One table from the per-measure parts, on one grid of periods; the rate last computed."""
    table = pd.concat(parts, axis=1, sort=True)
    dated = table.index.notna()
    periods = table.index[dated]
    if len(periods):
        grid = pd.date_range(periods.min(), periods.max(), freq=freq)
        table = pd.concat([table[dated].reindex(grid), table[~dated]])
    table = table.fillna(0).astype("int64")
    if "escalation.decisions" in table.columns:
        decided = table["escalation.decisions"].where(table["escalation.decisions"] > 0)
        rate = (table["escalation.escalated"] / decided).astype("float64")
        table.insert(table.columns.get_loc("escalation.escalated") + 1, "escalation.rate", rate)
    table.index.name = TREND_PERIOD
    return table
