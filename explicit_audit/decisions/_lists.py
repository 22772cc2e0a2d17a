"""Arrow list-of-string columns as flat arrays, for vectorised routing work.

The decisions table keeps lists (keyword hits, flags, reasons, directives) as
``pd.ArrowDtype(pa.list_(pa.string()))``. These helpers take such a column
apart into offsets and flat values once, so that per-row questions (is it
empty, does it hold this string, are two rows equal) are numpy operations over
the flat values rather than a Python loop over rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.lists import LIST_OF_STRINGS as ARROW_LIST_OF_STRINGS
from .._core.lists import list_array
from ..errors import AuditError

__all__ = [
    "LIST_OF_STRINGS",
    "FlatList",
    "flat_list",
    "flat_tuples",
    "lists_equal",
    "sets_equal",
    "tuple_series",
]

LIST_OF_STRINGS = pd.ArrowDtype(ARROW_LIST_OF_STRINGS)


@dataclass(frozen=True)
class FlatList:
    """A list column taken apart.

    Attributes
    ----------
    offsets : ndarray of int64, length n + 1
        Row ``i`` holds ``values[offsets[i]:offsets[i + 1]]``.
    values : pyarrow.StringArray
        Every element, row after row.
    """

    offsets: np.ndarray
    values: pa.Array

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def parents(self) -> np.ndarray:
        """The row of every flat value."""
        return np.repeat(np.arange(len(self.offsets) - 1), self.lengths)

    def codes(self) -> tuple[np.ndarray, list[str]]:
        """Each flat value as a code into the list of distinct values."""
        encoded = pc.dictionary_encode(self.values)
        return (
            np.asarray(encoded.indices, dtype=np.int64),
            encoded.dictionary.to_pylist(),
        )

    def row(self, index: int) -> list[str]:
        return self.values[self.offsets[index] : self.offsets[index + 1]].to_pylist()

    def contains(self, value: str) -> np.ndarray:
        """Whether each row holds ``value``."""
        hit = np.asarray(pc.equal(self.values, value).fill_null(False), dtype=bool)
        found = np.zeros(len(self.offsets) - 1, dtype=bool)
        found[self.parents[hit]] = True
        return found


def flat_list(series: pd.Series, name: str = "") -> FlatList:
    """Take a list-of-strings column apart (see :class:`FlatList`)."""
    array = list_array(series, name, nulls="refuse")
    offsets = np.asarray(array.offsets, dtype=np.int64)
    values = array.flatten()
    if values.null_count:
        raise AuditError(f"column {name or series.name!r}: a list holds a null string.")
    return FlatList(offsets - offsets[0], values)


def tuple_series(
    table: list[tuple[str, ...]], index_into: np.ndarray, index: pd.Index
) -> pd.Series:
    """``table[i]`` for each ``i`` of ``index_into``, as a categorical of tuples.

    A routing table holds few distinct lists, so each row stores a small code
    and the tuples are stored once; ``series.iloc[i]`` is a tuple, as in a
    ``RoutingDecision``, and ``series.value_counts()`` counts the combinations.
    """
    used = np.bincount(index_into, minlength=len(table)) > 0
    category_of: dict[tuple[str, ...], int] = {}
    code_of_entry = np.full(len(table), -1, dtype=np.int64)
    for entry in np.flatnonzero(used):
        code_of_entry[entry] = category_of.setdefault(table[entry], len(category_of))
    categories = pd.Index(list(category_of), dtype=object, tupleize_cols=False)
    codes = code_of_entry[index_into]
    return pd.Series(pd.Categorical.from_codes(codes, categories=categories), index=index)


def lists_equal(left: FlatList, right: FlatList) -> np.ndarray:
    """Whether each row holds the same strings in the same order in both columns."""
    same = left.lengths == right.lengths
    rows = np.flatnonzero(same)
    if len(rows) == 0:
        return same
    take_left = _gather(left, rows)
    take_right = _gather(right, rows)
    differ = ~np.asarray(pc.equal(take_left[0], take_right[0]), dtype=bool)
    same[rows[take_left[1][differ]]] = False
    return same


def _gather(flat: FlatList, rows: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The flat values of the given rows, with the position in ``rows`` each came from."""
    lengths = flat.lengths[rows]
    starts = flat.offsets[rows]
    owner = np.repeat(np.arange(len(rows)), lengths)
    within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return flat.values.take(pa.array(starts[owner] + within)), owner


def sets_equal(left: FlatList, right: FlatList) -> np.ndarray:
    """Whether each row holds the same set of strings in both columns."""
    n = len(left.offsets) - 1
    both = pa.chunked_array([left.values, right.values]).combine_chunks()
    codes = np.asarray(pc.dictionary_encode(both).indices, dtype=np.int64)
    width = int(codes.max()) + 1 if len(codes) else 1
    split = len(left.values)
    left_keys = np.unique(left.parents * width + codes[:split])
    right_keys = np.unique(right.parents * width + codes[split:])
    equal = np.ones(n, dtype=bool)
    equal[np.setxor1d(left_keys, right_keys) // width] = False
    return equal


def flat_tuples(series: pd.Series) -> FlatList:
    """A categorical of tuples (as :func:`tuple_series` makes) taken apart like a list column."""
    categories = pa.array([list(c) for c in series.cat.categories], type=pa.list_(pa.string()))
    taken = pc.take(categories, pa.array(series.cat.codes.to_numpy(dtype=np.int64)))
    offsets = np.asarray(taken.offsets, dtype=np.int64)
    return FlatList(offsets - offsets[0], taken.flatten())
