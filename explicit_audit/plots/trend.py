"""A picture of :func:`~explicit_audit.trend`: chosen measures, one line each, over the periods."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .._core.extras import needs

with needs("report", "explicit_audit.plots"):
    from matplotlib.axes import Axes
    from matplotlib.ticker import FuncFormatter, PercentFormatter

from .._plot_style import current_axes, require, thousands
from ._docs import plot_docs

__all__ = ["plot_trend", "trend_columns"]


def trend_columns(table: pd.DataFrame, prefix: str = "findings.") -> list[str]:
    """The columns of a trend table under ``prefix`` that count anything, in order.

    Parameters
    ----------
    table : DataFrame
        What :func:`~explicit_audit.trend` returned.
    prefix : str, default "findings."
        ``"records."``, ``"findings."``, ``"notices."``, ``"withheld."``,
        ``"escalation.reason."``.

    Returns
    -------
    list of str
    """
    return [
        name
        for name in table.columns
        if name.startswith(prefix) and name != "escalation.rate" and table[name].any()
    ]


@plot_docs("plot")
def plot_trend(
    table: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    title: str | None = None,
    ax: Axes | None = None,
    **kwargs,
) -> Axes:
    """Lines: measures of a trend table, one per column, across its dated periods.

    The row of what has no time (period ``NaT``) has no place on a time axis:
    it is left out of the picture, and how many of each measure it holds is
    said in the legend (``findings.receipt_rules (+1 undated)``).

    Parameters
    ----------
    table : DataFrame
        What :func:`~explicit_audit.trend` returned.
    columns : sequence of str, optional
        The measures to draw; by default the ``findings.`` columns that count
        anything, or the ``records.`` columns when no check found anything.
        ``escalation.rate`` alone is drawn in percent.
    title : str, optional
        The Axes title; by default it names the measures' group and the period.
    %(drawn)s

    %(axes)s

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.plots import plot_trend
    >>> table = ea.trend(ea.load("data/", progress=False))
    >>> plot_trend(table, ["records.receipts"]).get_ylabel()
    'records.receipts (count)'
    """
    if columns is None:
        columns = trend_columns(table, "findings.") or trend_columns(table, "records.")
    columns = list(columns)
    require(table, columns, "plot_trend")
    ax = current_axes(ax)
    dated = table[table.index.notna()]
    undated = table.loc[table.index.isna(), columns].sum() if len(dated) < len(table) else None
    kwargs.setdefault("drawstyle", "steps-post")
    for name in columns:
        extra = 0 if undated is None or name == "escalation.rate" else undated[name]
        label = f"{name} (+{extra:,} undated)" if extra else name
        ax.plot(dated.index, dated[name].to_numpy(), label=label, **kwargs)
    rate = columns == ["escalation.rate"]
    if rate:
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.set_ylabel("decisions escalated to 26B (%)")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(thousands))  # as the tables write counts
        ax.set_ylabel(f"{columns[0]} (count)" if len(columns) == 1 else "count")
    ax.set_ylim(bottom=0)
    if title is None:
        group = ", ".join(dict.fromkeys(name.split(".")[0] for name in columns))
        title = f"{group.capitalize()} per period"
    ax.set_title(title)
    if len(columns) > 1 or undated is not None:
        ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    ax.figure.autofmt_xdate()
    return ax
