"""Tables as a report shows them: missing values named, numbers grouped, rates as percentages.

pandas writes a missing value as ``NaN``, ``<NA>`` or ``NaT`` depending on
the column's type, and a count of 12345 as ``12345``. A reader of a report
should not need to know pandas: here a missing value is ``—`` wherever it is
(cell or row label), whole numbers carry thousands separators, and a rate
(a column named ``*_rate`` or ``*_share``, a fraction of 1) is a percentage.
A header may break after each ``_`` or ``.`` of its name (``<wbr>``), so that
a wide table fits a narrow page by wrapping its headers there first.

Only the rendering changes; the table itself is never touched. The kit's
notebooks call :func:`use_report_tables` in their first cell, so every
DataFrame they show renders this way in Jupyter and in the reports alike.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable

import pandas as pd

__all__ = ["MISSING", "Percentages", "is_rate", "table_html", "use_report_tables"]

#: How a missing value (None, NaN, <NA>, NaT) is shown in a report's tables.
MISSING = "—"

_RATE_SUFFIXES = ("_rate", "_share")
#: A header cell's text (pandas escapes it: no ``<`` inside).
_HEADER = re.compile(r"(<th\b[^>]*>)([^<]+)(</th>)")


def is_rate(name: object) -> bool:
    """Whether a column holds a rate, a fraction of 1 shown as a percentage.

    Examples
    --------
    A column under a group (a tuple of labels, as a table with two levels of
    columns names it) is a rate when its own, last, label is:

    >>> is_rate("escalation_rate"), is_rate("withheld_share"), is_rate("records")
    (True, True, False)
    >>> is_rate(("sliders at 0.7", "escalation_rate")), is_rate(("rate_share", "count"))
    (True, False)
    """
    if isinstance(name, tuple) and name:
        name = name[-1]
    return isinstance(name, str) and name.endswith(_RATE_SUFFIXES)


def _missing(value: object) -> bool:
    try:
        return value is None or bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array in a cell is not missing
        return False


def _number(value: object) -> str:
    if _missing(value):
        return MISSING
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{value:,}"
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            return str(number)
        return f"{number:,.2f}" if abs(number) >= 1000 else f"{number:.6g}"
    return str(value)


def _percent(value: object) -> str:
    if _missing(value):
        return MISSING
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{float(value):.1%}"
    return str(value)


def _label(value: object) -> object:
    return MISSING if _missing(value) else value


def _cell_writer(dtype: object, name: object, percent) -> Callable[[object], object]:
    numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    if numeric and (percent is True or name in percent or is_rate(name)):
        return _percent
    if numeric:
        return _number
    return _label


def _shown(frame: pd.DataFrame, percent) -> pd.DataFrame:
    """A copy holding each cell as it is shown, and :data:`MISSING` for missing labels.

    The cells are written here rather than by ``to_html(na_rep=...)``:
    pandas writes a missing value of an extension type (``Int64``,
    ``boolean``) as ``<NA>`` whatever ``na_rep`` says.
    """
    chosen = True if percent is True else set(percent or ())
    dtypes = frame.dtypes
    columns = {}
    for position in range(frame.shape[1]):
        # By position: two columns may share a name.
        write = _cell_writer(dtypes.iloc[position], frame.columns[position], chosen)
        values = frame.iloc[:, position].astype(object).tolist()
        columns[position] = [write(value) for value in values]
    shown = pd.DataFrame(columns, index=frame.index, dtype=object)
    shown.columns = frame.columns
    for axis in ("index", "columns"):
        labels = getattr(shown, axis)
        if isinstance(labels, pd.MultiIndex):
            levels = [labels.get_level_values(i) for i in range(labels.nlevels)]
            if any(level.isna().any() for level in levels):
                arrays = [[_label(v) for v in level] for level in levels]
                setattr(shown, axis, pd.MultiIndex.from_arrays(arrays, names=labels.names))
        elif labels.hasnans:
            setattr(shown, axis, pd.Index([_label(v) for v in labels], name=labels.name))
    return shown


def table_html(frame: pd.DataFrame, *, percent: bool | Iterable[object] = ()) -> str:
    """The HTML of a table as a report shows it.

    Parameters
    ----------
    frame : DataFrame
        Not changed.
    percent : bool or iterable of column names, default ()
        Columns shown as percentages besides those :func:`is_rate` names;
        ``True`` for every numeric column.

    Returns
    -------
    str
        A ``<table class="dataframe">`` (truncated as pandas' display options
        say), with :data:`MISSING` for every missing value and label.

    Examples
    --------
    >>> frame = pd.DataFrame({"rows": [12345, None], "escalation_rate": [0.125, None]},
    ...                      index=pd.Index(["a", None], name="group"))
    >>> html = table_html(frame.astype({"rows": "Int64"}))
    >>> "12,345" in html and "12.5%" in html and "NaN" not in html and "&lt;NA" not in html
    True
    >>> "<th>escalation_<wbr>rate</th>" in html
    True
    """
    shown = frame
    # As pandas' own notebook display truncates: a long table shows its head and tail.
    max_rows = pd.get_option("display.max_rows")
    if max_rows and len(shown) > max_rows:
        keep = pd.get_option("display.min_rows") or max_rows
        shown = pd.concat([shown.head(keep // 2 + keep % 2), shown.tail(keep // 2)])
        note = f"<p>{len(frame):,} rows × {frame.shape[1]:,} columns; the first and last shown.</p>"
    else:
        note = ""
    html = _shown(shown, percent).to_html(
        na_rep=MISSING,
        max_cols=pd.get_option("display.max_columns"),
        notebook=True,
        border=1,
    )
    return _HEADER.sub(_breakable, html) + note


def _breakable(header: re.Match) -> str:
    """A header cell whose text may break after each ``_`` and ``.`` (``<wbr>``)."""
    opening, text, closing = header.groups()
    return opening + re.sub(r"([_.])(?=\w)", r"\1<wbr>", text) + closing


class Percentages:
    """A table to show with every numeric column as a percentage (a pivot of rates, say).

    Parameters
    ----------
    frame : DataFrame
        Fractions of 1; shown, never changed.

    Examples
    --------
    >>> Percentages(pd.DataFrame({"baseline": [0.25]}))._repr_html_().count("25.0%")
    1
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def _repr_html_(self) -> str:
        return table_html(self.frame, percent=True)

    def __repr__(self) -> str:
        return repr(self.frame)


def use_report_tables(shell=None) -> None:
    """Show every DataFrame of an IPython session (a notebook) with :func:`table_html`.

    Parameters
    ----------
    shell : InteractiveShell, optional
        The running IPython shell; found when not given. Outside IPython this
        does nothing.

    Examples
    --------
    >>> use_report_tables()  # in a notebook's first cell  # doctest: +SKIP
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # no IPython, no notebook to render for
            return
        shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, table_html)
