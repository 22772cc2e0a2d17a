"""Column helpers shared by the record builders.

Arrow-backed string columns hold UTF-8 only, and a JSON string may carry a
lone surrogate (``"\\ud800"``, which the standard library's parser accepts).
Such a value is shown in a flattened column with each lone surrogate as its
JSON escape, as written (``x\\ud800y``): two values that differ there stay
two (as U+FFFD, two run ids would read as one record written twice). Only a
value that holds that escape's very text (a backslash, then ``ud800``) reads
alike. The record's own object column (``plan``, ``payload``) keeps the value
exactly as parsed, and hashes are rebuilt from that.

Extra (logger) keys become one column each, up to ``max_extra_columns``
(:mod:`explicit_audit.reading.limits`) per table: past it, the keys that come
later (ranked by the first row holding a value, then by name) are kept, not
dropped, in one text column, :data:`EXTRA_JSON`: per row, the JSON object of
its later keys that hold a value, keys sorted. A key itself named
``extra_json`` is never a column, whatever the number of keys: it is kept in
that text too (``{"extra_json": ...}``), so that the column always holds the
JSON text of keys that are not columns, and no key's values are merged with
it. :func:`extra_columns` builds
every kind's extra columns from the values read one by one, and
:func:`limit_extra` applies the same limit to parts joined from both
reading paths, so that a key lands in the same place whichever path read it.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import re
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
import orjson
import pandas as pd

__all__ = [
    "ALL_LABEL",
    "EXTRA_JSON",
    "INT64_MAX",
    "INT64_MIN",
    "apart_from",
    "beside",
    "displayable",
    "extra_columns",
    "extra_columns_limited",
    "extra_json_text",
    "fits_int64",
    "limit_extra",
    "limit_placed",
    "max_extra_columns",
    "overflow_column",
    "text_safe_series",
    "typed_columns",
]

#: The column holding, as JSON text, the extra keys past ``max_extra_columns``.
EXTRA_JSON = "extra_json"
#: In a part's extra columns: per row, a dict of its keys past the limit (or None).
OVERFLOW = "\0overflow"

_MAX_EXTRA: ContextVar[int] = ContextVar("max_extra_columns", default=256)


def max_extra_columns() -> int:
    """The ``max_extra_columns`` in force for the tables being built."""
    return _MAX_EXTRA.get()


@contextlib.contextmanager
def extra_columns_limited(limit: int) -> Iterator[None]:
    """Build tables, inside the block, with at most ``limit`` extra columns each."""
    token = _MAX_EXTRA.set(limit)
    try:
        yield
    finally:
        _MAX_EXTRA.reset(token)


def extra_json_text(keys: dict[str, Any]) -> str:
    """The JSON text of a row's extra keys past the limit: an object, keys sorted.

    orjson writes it, or the standard library where orjson cannot: an integer
    beyond 64 bits stays exact, and a lone surrogate is written as its escape.
    """
    try:
        return orjson.dumps(keys, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except TypeError:
        return json.dumps(keys, sort_keys=True, separators=(",", ":"))


#: The label of a row, or a choice, that stands for every group: the overall
#: row of a withheld summary, "every audience" or "every variant" in a panel.
ALL_LABEL = "(all)"

#: The bounds of an int64 column: a whole number outside them cannot be stored.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def fits_int64(value: int) -> bool:
    """Whether a whole number fits an int64 column."""
    return INT64_MIN <= value <= INT64_MAX


_SURROGATE = re.compile("[\ud800-\udfff]")


def displayable(value: Any) -> Any:
    """A value as an Arrow string column can hold it: each lone surrogate as its escape.

    Examples
    --------
    >>> displayable(["x" + chr(0xD800) + "y", chr(0xDC01)])
    ['x\\\\ud800y', '\\\\udc01']
    """
    if isinstance(value, str):
        return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", value)
    if isinstance(value, list):
        return [displayable(item) for item in value]
    return value


def text_safe_series(values: Sequence[Any], dtype: Any, index: pd.Index | None = None) -> pd.Series:
    """``pd.Series(values, dtype=dtype)``, lone surrogates shown escaped if Arrow refuses them."""
    try:
        return pd.Series(values, dtype=dtype, index=index)
    except UnicodeEncodeError:
        return pd.Series([displayable(v) for v in values], dtype=dtype, index=index)


def _dtype(values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return object
    kinds = {type(v) for v in present}
    if kinds == {str}:
        return "str"
    if kinds == {bool}:
        return "boolean"
    if kinds == {int} and all(fits_int64(v) for v in present):
        return "Int64"
    if kinds <= {int, float} and kinds != {int}:
        return "Float64"
    return object


def extra_columns(
    records: Sequence[dict[str, Any]],
    index: pd.Index,
    *,
    as_text: bool = True,
    typed: bool = True,
) -> pd.DataFrame:
    """One column per extra key, in first-seen order, with a declared dtype.

    Strings become ``str``, booleans ``boolean``, integers ``Int64``, numbers
    ``Float64`` (a missing value is <NA>); anything else (objects, arrays,
    mixed types) stays ``object``, holding the values as written.

    Past :func:`max_extra_columns` keys, the later ones (see the module
    docstring), and a key named ``extra_json``, go to one :data:`EXTRA_JSON`
    column, last; with
    ``as_text=False``, to an object column of dicts (:data:`OVERFLOW`), for
    :func:`limit_extra` to place once the parts are joined. With ``typed=False``
    every column holds the values as read (``object``), for a part whose
    columns are typed once joined with the others
    (:func:`~explicit_audit.reading.columnar.in_file_order`): a column typed
    part by part may differ (text with a lone surrogate is shown escaped in
    a ``str`` column, and kept as read in a column of mixed types).
    """
    build = typed_columns if typed else _object_columns
    limit = max_extra_columns()
    first_held: dict[str, int] = {}
    for row, record in enumerate(records):
        for name, value in record.items():
            if name not in first_held:
                first_held[name] = -1
            if value is not None and first_held[name] < 0:
                first_held[name] = row
    if len(first_held) <= limit and EXTRA_JSON not in first_held:
        names = list(first_held)
        return build({name: [record.get(name) for record in records] for name in names}, index)
    kept = _first_keys(first_held, limit)
    # One pass over the rows' keys: a key per row costs its entries, not rows times keys.
    columns: dict[str, list[Any]] = {
        name: [None] * len(records) for name in first_held if name in kept
    }
    for row, record in enumerate(records):
        for name, value in record.items():
            if name in columns:
                columns[name][row] = value
    later = [
        {k: v for k, v in record.items() if k not in kept and v is not None} or None
        for record in records
    ]
    frame = build(columns, index)
    if as_text:
        frame[EXTRA_JSON] = _json_column(later, index)
    else:
        frame[OVERFLOW] = overflow_column(later, index)
    return frame


def _object_columns(columns: dict[str, list[Any]], index: pd.Index) -> pd.DataFrame:
    """Each column's values as read, in ``object`` columns, named as :func:`typed_columns` does."""
    frame: dict[str, pd.Series] = {}
    for name, values in columns.items():
        held = np.empty(len(values), dtype=object)
        held[:] = values  # a list or dict value stays one element
        frame[_column_name(name, frame)] = pd.Series(held, index=index, dtype=object)
    return pd.DataFrame(frame, index=index)


def _first_keys(first_held: dict[str, int], limit: int) -> set[str]:
    """The ``limit`` keys that hold a value first (then by name); a key named extra_json never."""
    end = 1 << 62
    ranked = heapq.nsmallest(
        limit,
        ((end if row < 0 else row, name) for name, row in first_held.items() if name != EXTRA_JSON),
    )
    return {name for _, name in ranked}


def overflow_column(values: list[Any], index: pd.Index) -> pd.Series:
    """The :data:`OVERFLOW` column of ``values``: per row, a dict of its keys set apart, or None."""
    held = np.empty(len(values), dtype=object)
    held[:] = values  # each dict one element, never spread into columns
    return pd.Series(held, index=index, dtype=object)


def _json_column(later: list[dict | None], index: pd.Index) -> pd.Series:
    dumps, option = orjson.dumps, orjson.OPT_SORT_KEYS
    try:
        # Every row through orjson at once: its text is :func:`extra_json_text`'s where it can.
        texts = [None if keys is None else dumps(keys, option=option).decode() for keys in later]
    except TypeError:
        texts = [None if keys is None else extra_json_text(keys) for keys in later]
    return pd.Series(texts, index=index, dtype="str")


def limit_extra(frame: pd.DataFrame, positions: np.ndarray) -> pd.DataFrame:
    """Joined parts' extra columns, with at most :func:`max_extra_columns` keys as columns.

    Parameters
    ----------
    frame : DataFrame
        The parts' extra columns joined (dense, and maybe :data:`OVERFLOW`).
    positions : ndarray of int64
        Where each of its rows stands in the table's order.

    Returns
    -------
    DataFrame
        ``frame`` itself when its keys fit the limit; else the columns of the
        first keys (in that order, see the module docstring) and
        :data:`EXTRA_JSON` for the rest.
    """
    limit = max_extra_columns()
    names = [name for name in frame.columns if name != OVERFLOW]
    if len(names) <= limit and OVERFLOW not in frame.columns and EXTRA_JSON not in names:
        return frame
    end = 1 << 62
    first_held: dict[str, int] = {}
    for name in frame.columns:
        column = frame[name]
        if name == OVERFLOW:
            for row, keys in zip(positions.tolist(), column.tolist(), strict=True):
                if not isinstance(keys, dict):
                    continue
                for key, value in keys.items():
                    if value is None:
                        first_held.setdefault(key, end)
                    elif row < first_held.get(key, end):
                        first_held[key] = row
            continue
        held = np.flatnonzero(column.notna().to_numpy(dtype=bool))
        first = int(positions[held].min()) if len(held) else end
        first_held[name] = min(first_held.get(name, end), first)
    first_held = {name: (-1 if row == end else row) for name, row in first_held.items()}
    if len(first_held) <= limit and EXTRA_JSON not in first_held:
        kept = set(first_held)
    else:
        kept = _first_keys(first_held, limit)
    return limit_placed(frame, kept)


def limit_placed(frame: pd.DataFrame, kept: set[str]) -> pd.DataFrame:
    """One part's extra columns: the ``kept`` keys as columns, the rest as JSON text."""
    later_names = [name for name in frame.columns if name not in kept and name != OVERFLOW]
    overflow = frame[OVERFLOW].tolist() if OVERFLOW in frame.columns else [None] * len(frame)
    # The part's own dicts, copied only in a row that changes (they may be shared with the part).
    later: list[dict | None] = [keys if isinstance(keys, dict) else None for keys in overflow]
    copied = [False] * len(later)
    for name in later_names:
        column = frame[name]
        held = np.flatnonzero(column.notna().to_numpy(dtype=bool))
        values = column.to_numpy(dtype=object)
        for row in held.tolist():
            keys = later[row]
            if keys is None:
                keys = later[row] = {}
            elif not copied[row]:
                keys = later[row] = dict(keys)
            copied[row] = True
            keys[name] = _plain(values[row])
    columns = {name: frame[name] for name in frame.columns if name in kept}
    # Per key lifted to a column: its rows and values (a key of few rows costs those).
    pairs: dict[str, tuple[list[int], list]] = {}
    for row, keys in enumerate(later):
        if not keys or kept.isdisjoint(keys):
            continue
        if not copied[row]:
            keys = later[row] = dict(keys)
        for name in [key for key in keys if key in kept]:
            rows, values = pairs.setdefault(name, ([], []))
            rows.append(row)
            values.append(keys.pop(name))
    if pairs:
        lifted: dict[str, pd.Series] = {}
        for name, (rows, values) in pairs.items():
            lifted[_column_name(name, lifted)] = _sparse_series(
                len(frame), rows, values, frame.index
            )
        for name, values in lifted.items():
            if name in columns:
                merged = columns[name].astype(object).where(columns[name].notna(), None).tolist()
                values = [
                    old if old is not None else new
                    for old, new in zip(
                        merged,
                        values.astype(object).where(values.notna(), None).tolist(),
                        strict=True,
                    )
                ]
                columns[name] = typed_columns({name: values}, frame.index)[name]
            else:
                columns[name] = values
    result = pd.DataFrame(columns, index=frame.index, copy=False)
    result[EXTRA_JSON] = _json_column([keys or None for keys in later], frame.index)
    return result


def _sparse_series(size: int, rows: list[int], values: list, index: pd.Index) -> pd.Series:
    """A column of ``size`` rows holding ``values`` at ``rows``, typed as :func:`typed_columns`.

    The same column ``typed_columns`` makes of a list holding None elsewhere,
    built without a Python object per row.
    """
    dtype = _dtype(values)
    where = np.asarray(rows, dtype=np.int64)
    mask = np.ones(size, dtype=bool)
    mask[where] = False
    if dtype in ("Int64", "Float64", "boolean"):
        kind = {"Int64": np.int64, "Float64": np.float64, "boolean": np.bool_}[dtype]
        data = np.zeros(size, dtype=kind)
        data[where] = np.asarray(values, dtype=np.float64 if dtype == "Float64" else kind)
        array = {
            "Int64": pd.arrays.IntegerArray,
            "Float64": pd.arrays.FloatingArray,
            "boolean": pd.arrays.BooleanArray,
        }[dtype](data, mask)
        return pd.Series(array, index=index)
    held = np.full(size, None, dtype=object)
    for row, value in zip(rows, values, strict=True):
        held[row] = value
    return text_safe_series(held, dtype, index)


def _plain(value: Any) -> Any:
    """A value of a typed column as the parsed value it came from."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def typed_columns(columns: dict[str, list[Any]], index: pd.Index) -> pd.DataFrame:
    """Columns of parsed values (None where absent), each with a declared dtype.

    The dtypes are those of :func:`extra_columns`.
    """
    safe: dict[str, pd.Series] = {}
    for name, values in columns.items():
        safe[_column_name(name, safe)] = text_safe_series(values, _dtype(values), index)
    return pd.DataFrame(safe, index=index)


def beside(frame: pd.DataFrame, extra: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """``frame`` with the logger keys' columns ``extra`` after its own, named by :func:`apart_from`.

    ``extra`` is renamed in place; without columns, ``frame`` is returned as it is.
    """
    if not len(extra.columns):
        return frame
    extra.columns = apart_from(list(extra.columns), list(frame.columns), prefix)
    return pd.concat([frame, extra], axis=1)


def apart_from(names: Sequence[str], columns: Sequence[str], prefix: str) -> list[str]:
    """Logger keys as column names beside a table's own ``columns``, each name once.

    A key that is a column's name takes ``prefix`` (``record.top_k``); a name
    then taken already, by a column or by another key (a logger's own
    ``record.top_k``), takes a ``#2``, ``#3``, ... suffix, as
    :func:`typed_columns` does.

    Examples
    --------
    >>> apart_from(["plan", "record.plan", "note"], ["plan"], "record.")
    ['record.plan', 'record.plan#2', 'note']
    """
    own = set(columns)
    taken: dict[str, None] = dict.fromkeys(columns)
    renamed = []
    for name in names:
        wanted = f"{prefix}{name}" if name in own else name
        found, number = wanted, 1
        while found in taken:
            number += 1
            found = f"{wanted}#{number}"
        taken[found] = None
        renamed.append(found)
    return renamed


def _column_name(name: str, taken: dict[str, Any]) -> str:
    """A key as a column name: one holding a lone surrogate (a JSON escape) as its escape.

    Arrow cannot store a lone surrogate; written as ``\\ud800`` it may meet a
    key written that way, so a name already taken gets a ``#2``, ``#3``, ... suffix.
    """
    try:
        name.encode("utf-8")
        if name not in taken:
            return name
    except UnicodeEncodeError:
        name = name.encode("utf-8", errors="backslashreplace").decode("utf-8")
    found, number = name, 1
    while found in taken:
        number += 1
        found = f"{name}#{number}"
    return found
