"""One partition's tables made to fit the lazy tables' meta, with global row labels.

The meta (columns and dtypes) of a lazy table is learned from the head of
every file. A partition's declared columns always fit it; its extra columns
(keys a logger added beside the record) are typed from the values the
partition holds, so a partition may lack one, or type it more narrowly than
the whole load would. :func:`conform` widens such a column exactly as the
in-memory engine types it over every row, and refuses, naming the file and
the key, what the sampled meta cannot hold.

Row labels: the in-memory tables number their rows 0, 1, ... across every
file; each partition's rows are renumbered from the number of rows the
partitions before it hold (``offsets``), and the columns that name a row of
another table (a kind's :class:`~explicit_audit._core.records.Table` declares them in
``references``) are shifted by that table's offset.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._core.columns import EXTRA_JSON, OVERFLOW, limit_placed
from .._core.times import typed_times
from ..errors import InputError

__all__ = [
    "EXTRA_JSON_AFTER",
    "FILE_RANKS",
    "SAMPLE_ADVICE",
    "SampleError",
    "Where",
    "conform",
    "empty_meta",
]

#: What to do when a partition holds what the sampled heads of the files did not show.
SAMPLE_ADVICE = (
    "Load with a larger sample_bytes= (explicit-audit --sample-bytes N: the bytes of each "
    "file read to learn the columns), or with engine='pandas'"
)


class SampleError(InputError):
    """A partition holds what the heads of the files, read to learn the columns, did not show.

    A key first seen after ``sample_bytes``, or a type the heads did not give
    it: a load planned with a sample that takes the partition in fits it.

    Attributes
    ----------
    needed : int or None
        The sample, in bytes, that takes in the partition's bytes (set where
        the partition is known; None for a URL's).
    """

    needed: int | None = None


class Where(NamedTuple):
    """A partition, for an error: in words, and its file and first line."""

    text: str
    source_file: str
    source_line: int | None = None


def _first_place(table: pd.DataFrame, column: object, where: Where) -> Where:
    """The file and line of the first row holding a value in ``column``; else the partition's.

    A partition may hold several small files: the row names its own.
    """
    if "source_line" in table.columns and column in table.columns:
        held = table[column].notna().to_numpy()
        if held.any():
            first = int(held.argmax())
            source_file = where.source_file
            if "source_file" in table.columns:
                source_file = str(table["source_file"].iloc[first])
            return where._replace(
                source_file=source_file,
                source_line=int(table["source_line"].to_numpy()[first]),
            )
    return where


def empty_meta(table: pd.DataFrame, declared: pd.DataFrame | None = None) -> pd.DataFrame:
    """The zero-row meta of ``table``, with categories learned from the rows left unknown.

    Parameters
    ----------
    table : DataFrame
        A table as its kind built it from some rows.
    declared : DataFrame, optional
        The same kind's table built from no rows. A categorical column that
        has categories even there (``status``: presented / failed) has them
        declared, the same in every partition, and they stay known; the
        others (``source_file``) take theirs from each partition's rows.
    """
    from dask.dataframe.utils import clear_known_categories

    meta = table.iloc[:0].copy()
    learned = [
        column
        for column in meta.columns
        if isinstance(meta[column].dtype, pd.CategoricalDtype)
        and not (
            declared is not None
            and column in declared
            and isinstance(declared[column].dtype, pd.CategoricalDtype)
            and len(declared[column].cat.categories)
            and declared[column].dtype == meta[column].dtype
        )
    ]
    return clear_known_categories(meta, cols=learned)


def _categories_as_text(column: pd.Series) -> pd.Series:
    """A categorical with no category yet (an empty partition's) gets text categories.

    Every categorical column of the kit holds text; without this, an empty
    partition's categories would be of dtype object, and Dask could not join
    them with the other partitions'.
    """
    categories = column.cat.categories
    if len(categories) or categories.dtype == "str":
        return column
    return column.astype(pd.CategoricalDtype(pd.Index([], dtype="str")))


def _same_dtype(left, right) -> bool:
    if isinstance(left, pd.CategoricalDtype) and isinstance(right, pd.CategoricalDtype):
        return True
    return left == right


def _widened(column: pd.Series, dtype, name: str, where: Where) -> pd.Series:
    """``column`` as the in-memory engine would type it, were ``dtype`` its type over all rows."""
    present = column.notna()
    if not present.any():
        if dtype is object or dtype == np.dtype(object):
            return pd.Series([None] * len(column), index=column.index, dtype=object)
        return pd.Series([None] * len(column), index=column.index, dtype=dtype)
    source = column.dtype
    if dtype == np.dtype(object):
        values = column.astype(object)
        return values.where(present, None)
    if str(dtype) == "Float64" and str(source) == "Int64":
        return column.astype("Float64")
    raise SampleError(
        where.source_file,
        where.source_line,
        f"{where.text}: the key {name!r} holds values of type {source} here, but the head of "
        f"the files read to learn the columns gave it type {dtype}",
        field=name,
        advice=SAMPLE_ADVICE,
    )


def _signature(frame: pd.DataFrame) -> tuple:
    """The columns and dtypes (categories included) that decide how a table is conformed."""
    return tuple((column, repr(dtype)) for column, dtype in frame.dtypes.items())


#: Per process: an empty table conformed, by its name and its and the meta's signatures.
_EMPTY: dict[tuple, pd.DataFrame] = {}


def conform(
    table: pd.DataFrame,
    meta: pd.DataFrame,
    *,
    name: str,
    offsets: Mapping[str, int],
    where: Where,
    references: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """``table`` (one partition's, rows labelled from 0) with ``meta``'s columns and global labels.

    Parameters
    ----------
    table : DataFrame
        The partition's table as its kind built it.
    meta : DataFrame
        The lazy table's meta.
    name : str
        The table's name (``"exposed"``).
    offsets : mapping
        Per table: rows in the partitions before this one.
    where : Where
        The partition (file and lines), for an error: an :class:`~explicit_audit.InputError`
        naming the file and the line of the first row that does not fit the meta.
    references : mapping, optional
        ``{column: table}``: the table's columns holding a row label of another table.
    """
    start = offsets.get(name, 0)
    if not len(table):
        key = (name, _signature(table), _signature(meta))
        fitted = _EMPTY.get(key)
        if fitted is None:
            fitted = _EMPTY[key] = _conformed(table, meta, name=name, where=where)
        fitted = fitted.copy(deep=False)
        fitted.index = pd.RangeIndex(start, start)
        return fitted
    result = _conformed(table, meta, name=name, where=where)
    result.index = pd.RangeIndex(start, start + len(result))
    for column, target in (references or {}).items():
        if column in result and offsets.get(target, 0):
            result[column] = result[column] + offsets[target]
    return result


#: In a meta's ``attrs``, when the heads held more extra keys than ``max_extra_columns``:
#: ``(file rank, line)`` where the last key made a column first held a value there, and
#: the files' ranks. A key that is not a column holds values only after it, or the
#: in-memory engine could have made it a column (see :func:`_overflowed`).
EXTRA_JSON_AFTER = "extra_json_after"
FILE_RANKS = "file_ranks"


def _overflowed(table: pd.DataFrame, meta: pd.DataFrame, where: Where) -> pd.DataFrame:
    """A partition's extra keys placed as the meta places them: its columns, or ``extra_json``.

    The heads held more extra keys than ``max_extra_columns``: the meta's
    extra columns are the first of them, over every row, provided every other
    key first holds a value after the last of those did (``EXTRA_JSON_AFTER``);
    a key that holds one earlier is an :class:`~explicit_audit.InputError`
    naming the file, its line and the key, as a key the heads did not show.
    """
    unknown = [column for column in table.columns if column not in meta.columns]
    lifted = table[EXTRA_JSON].dropna().map(json.loads) if EXTRA_JSON in table else None
    if not unknown and (lifted is None or not len(lifted)):
        return table
    after = tuple(meta.attrs.get(EXTRA_JSON_AFTER, (-1, 0)))
    ranks = meta.attrs.get(FILE_RANKS, {})
    lines = table["source_line"].to_numpy() if "source_line" in table.columns else None
    # A partition may hold several whole files (a pack): each row is placed by its own file.
    files = (
        table["source_file"].astype("str").to_numpy() if "source_file" in table.columns else None
    )

    def place(row: int) -> tuple[int, int, str]:
        file = where.source_file if files is None else str(files[row])
        return ranks.get(file, -1), int(lines[row]), file

    firsts: dict[str, tuple[int, int, str]] = {}
    for column in unknown:
        held = table[column].notna().to_numpy()
        if held.any() and lines is not None:
            firsts[str(column)] = place(int(held.argmax()))
    if lifted is not None:
        for label, keys in lifted.items():
            for key in keys:
                if key not in meta.columns and key not in firsts and lines is not None:
                    firsts[key] = place(table.index.get_loc(label))
    for key, (rank, line, file) in firsts.items():
        if (rank, line) <= after:
            raise SampleError(
                file,
                line,
                f"{where.text}: the key {key!r} beside the records holds a value before the "
                f"last of the first max_extra_columns keys the head of the files showed; it "
                "might be one of them",
                field=key,
                advice=SAMPLE_ADVICE,
            )
    lifts = {key for keys in (lifted if lifted is not None else []) for key in keys}
    shared = [c for c in table.columns if c in meta.columns and c in lifts and c != EXTRA_JSON]
    frame = table[unknown + shared].copy()
    frame[OVERFLOW] = (
        pd.Series(None, index=table.index, dtype=object)
        if lifted is None
        else lifted.reindex(table.index)
        .astype(object)
        .where(lifted.reindex(table.index).notna(), None)
    )
    placed = limit_placed(frame, {c for c in meta.columns if c != EXTRA_JSON})
    rest = table.drop(columns=[*unknown, *shared, *([EXTRA_JSON] if EXTRA_JSON in table else [])])
    return pd.concat([rest, placed], axis=1)


def _conformed(table: pd.DataFrame, meta: pd.DataFrame, *, name: str, where: Where) -> pd.DataFrame:
    """``table``'s columns fitted to ``meta``'s, its row labels unchanged."""
    # A time column is typed where the meta types it, over every row: here too.
    times = [c for c in meta.columns if isinstance(meta[c].dtype, pd.DatetimeTZDtype)]
    table = typed_times(table, only=times)
    if EXTRA_JSON in meta.columns:
        table = _overflowed(table, meta, where)
    unknown = [column for column in table.columns if column not in meta.columns]
    if unknown:
        place = _first_place(table, unknown[0], where)
        raise SampleError(
            place.source_file,
            place.source_line,
            f"{where.text}: the {name} table has the key(s) {unknown} beside its records, which "
            "the head of the files read to learn the columns did not show",
            field=str(unknown[0]),
            advice=SAMPLE_ADVICE,
        )
    columns = {}
    for column in meta.columns:
        dtype = meta[column].dtype
        if column not in table.columns:
            columns[column] = _widened(
                pd.Series([None] * len(table), index=table.index, dtype=object),
                dtype,
                column,
                where,
            )
        elif _same_dtype(table[column].dtype, dtype):
            columns[column] = table[column]
            if isinstance(dtype, pd.CategoricalDtype):
                columns[column] = _categories_as_text(table[column])
        else:
            place = _first_place(table, column, where)
            columns[column] = _widened(table[column], dtype, column, place)
    return pd.DataFrame(columns, index=table.index)
