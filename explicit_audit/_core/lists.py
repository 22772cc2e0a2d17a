"""List-of-strings columns as Arrow arrays: the one converter every check uses, and their plumbing.

A list column (``record_ids``, ``risk_flags``, ...) is either Arrow-backed
(``pd.ArrowDtype(pa.list_(pa.string()))``, as the loaders make it) or plain
objects (lists, tuples or arrays per row, as a hand-made frame has it).
:func:`list_array` turns either into one ``pa.ListArray`` of strings whose
offsets start at 0, so that flattening, parent indices and offsets stay in step.

The null rule, in one place: a missing list (``None`` or ``pd.NA``) is kept as
a null list when ``nulls="keep"`` (a bare receipt has no ``error_codes``; a
null list counts as empty), and refused with an :class:`~explicit_audit.AuditError`
naming the column when ``nulls="refuse"`` (every decision field is a list,
empty if there is nothing in it). A string where a list belongs is always
refused: read as a list it would be its characters.

The receipt checks take such columns as Arrow arrays (:func:`list_column`,
:func:`list_lengths`, :func:`pair_keys`); the routing replay takes them apart
into offsets and flat values once (:class:`FlatList`), so that per-row
questions (is it empty, does it hold this string, are two rows equal) are
numpy operations over the flat values rather than a Python loop over rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import AuditError

__all__ = [
    "LIST_OF_STRINGS",
    "LIST_OF_STRINGS_DTYPE",
    "FlatList",
    "entries_used",
    "flat_list",
    "flat_tuples",
    "list_array",
    "list_column",
    "list_lengths",
    "lists_equal",
    "nonempty_rows",
    "pair_keys",
    "range_positions",
    "sets_equal",
    "starts_of",
    "string_array",
    "tuple_series",
]

#: The Arrow type of every list-of-strings column.
LIST_OF_STRINGS = pa.list_(pa.string())


def _from_objects(series: pd.Series, name: str) -> pa.Array:
    rows = []
    for value in series.to_numpy(dtype=object):
        if value is None or value is pd.NA:
            rows.append(None)
        elif isinstance(value, str | bytes | dict):
            raise AuditError(
                f"column {name!r}: expected lists of strings in every row, got "
                f"{type(value).__name__} {value!r:.60}"
            )
        else:
            try:
                rows.append(list(value))
            except TypeError:
                raise AuditError(
                    f"column {name!r}: expected lists of strings in every row, got "
                    f"{type(value).__name__} {value!r:.60}"
                ) from None
    try:
        return pa.array(rows, type=LIST_OF_STRINGS)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise AuditError(
            f"column {name!r}: expected lists of strings in every row ({exc})."
        ) from None


def list_array(series: pd.Series, name: str = "", *, nulls: str = "keep") -> pa.ListArray:
    """A list-of-strings column as one Arrow ListArray with offsets from 0.

    Parameters
    ----------
    series : Series
        Arrow-backed lists, or objects (list, tuple, array, None per row).
    name : str, optional
        The column's name, for an error message (``series.name`` by default).
    nulls : {"keep", "refuse"}
        What a missing list does: stay null, or raise (see the module docstring).

    Returns
    -------
    pyarrow.ListArray
        Of type ``list<string>``.

    Examples
    --------
    >>> list_array(pd.Series([["a"], None, ("b", "c")])).to_pylist()
    [['a'], None, ['b', 'c']]
    """
    name = name or str(series.name)
    if isinstance(series.dtype, pd.ArrowDtype):
        values = pa.array(series.array)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
    else:
        values = _from_objects(series, name)
    if not (pa.types.is_list(values.type) or pa.types.is_large_list(values.type)):
        raise AuditError(f"column {name!r}: expected lists of strings, got {values.type}.")
    if values.type != LIST_OF_STRINGS:
        values = values.cast(LIST_OF_STRINGS)
    if nulls == "refuse" and values.null_count:
        raise AuditError(
            f"column {name!r}: {values.null_count} row(s) hold no list (null); "
            "every row needs a list, empty if there is nothing in it."
        )
    return pa.concat_arrays([values]) if values.offset else values


def list_column(frame: pd.DataFrame, name: str) -> pa.ListArray:
    """A list-of-strings column as one Arrow ListArray, a missing list kept as null."""
    return list_array(frame[name], name, nulls="keep")


def list_lengths(values: pa.ListArray) -> np.ndarray:
    """Lengths of each list as int64, a null list counting as empty."""
    return values.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def range_positions(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every position of the ranges ``starts[i]`` (``lengths[i]`` long), in order, and each
    one's offset within its range: a pass over the ranges' positions only.

    Examples
    --------
    >>> positions, within = range_positions(np.array([10, 3]), np.array([2, 3]))
    >>> positions.tolist(), within.tolist()
    ([10, 11, 3, 4, 5], [0, 1, 0, 1, 2])
    """
    within = np.arange(int(lengths.sum()), dtype=np.int64)
    within -= np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + within, within


def starts_of(lengths: np.ndarray) -> np.ndarray:
    """Where each list starts in the flattened values, given the lengths."""
    starts = np.zeros(len(lengths), dtype=np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def string_array(series: pd.Series) -> pa.Array:
    """A string column as one Arrow string array, nulls kept."""
    try:
        values = pa.array(series.array)
    except (TypeError, pa.ArrowInvalid):
        values = pa.array(series.to_numpy(dtype=object, na_value=None), type=pa.string())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values if values.type == pa.string() else values.cast(pa.string())


def pair_keys(*pairs: tuple[np.ndarray, pa.Array]) -> list[np.ndarray]:
    """One int64 key per (owner, string) pair, comparable across all ``pairs``.

    Each pair is (owner positions, strings of the same length). Two pairs get
    the same key exactly when owner and string are equal; a null string gets a
    key of its own per owner.
    """
    vocabulary = pc.unique(pa.concat_arrays([values for _, values in pairs]))
    width = len(vocabulary) + 1
    keys = []
    for owners, values in pairs:
        codes = pc.index_in(values, value_set=vocabulary).fill_null(width - 1)
        codes = codes.to_numpy(zero_copy_only=False).astype(np.int64)
        keys.append(np.asarray(owners, dtype=np.int64) * width + codes)
    return keys


#: The pandas dtype of every list-of-strings column.
LIST_OF_STRINGS_DTYPE = pd.ArrowDtype(LIST_OF_STRINGS)


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

    @functools.cached_property
    def lengths(self) -> np.ndarray:
        """The number of values in each row (computed once: several steps ask)."""
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


def _refused_nulls(series: pd.Series, name: str) -> tuple[pa.ListArray, pa.Array]:
    """The column as one ListArray and its flat values; no null list nor null string."""
    array = list_array(series, name, nulls="refuse")
    values = array.flatten()
    if values.null_count:
        raise AuditError(f"column {name or series.name!r}: a list holds a null string.")
    return array, values


def flat_list(series: pd.Series, name: str = "") -> FlatList:
    """Take a list-of-strings column apart (see :class:`FlatList`)."""
    array, values = _refused_nulls(series, name)
    offsets = np.asarray(array.offsets)
    # Shifted in Arrow's own type, then widened in one copy: a million rows'
    # int64 copy is a fresh 8 MB the allocator often has to fault in.
    if offsets[0]:
        offsets = offsets - offsets[0]
    return FlatList(offsets.astype(np.int64), values)


def nonempty_rows(series: pd.Series, name: str = "") -> np.ndarray:
    """Whether each row of a list-of-strings column holds a value.

    The column is refused as :func:`flat_list` refuses it. Read from Arrow's
    own offsets: a :class:`FlatList` would widen them, a fresh array eight
    times the size of the answer.
    """
    array, _ = _refused_nulls(series, name)
    offsets = np.asarray(array.offsets)
    return offsets[1:] > offsets[:-1]


def tuple_series(
    table: list[tuple[str, ...]],
    index_into: np.ndarray,
    index: pd.Index,
    used: np.ndarray | None = None,
    *,
    through: np.ndarray | None = None,
) -> pd.Series:
    """``table[i]`` for each ``i`` of ``index_into``, as a categorical of tuples.

    A routing table holds few distinct lists, so each row stores a small code
    and the tuples are stored once; ``series.iloc[i]`` is a tuple, as in a
    ``RoutingDecision``, and ``series.value_counts()`` counts the combinations.
    ``used`` (whether each entry of ``table`` is indexed, :func:`entries_used`)
    may be given when several tables share ``index_into``. With ``through``,
    each value ``k`` of ``index_into`` stands for the entry ``through[k]``
    (``used`` is then required, and still says which entries of ``table``).
    """
    # Converted to numpy's index type once: counting and gathering would each
    # convert a smaller type into a fresh array.
    index_into = np.asarray(index_into, dtype=np.intp)
    if used is None:
        used = entries_used(index_into, len(table))
    category_of: dict[tuple[str, ...], int] = {}
    code_of_entry = np.full(len(table), -1, dtype=np.int64)
    for entry in np.flatnonzero(used):
        code_of_entry[entry] = category_of.setdefault(table[entry], len(category_of))
    categories = pd.Index(list(category_of), dtype=object, tupleize_cols=False)
    # Gathered in the code type the categorical keeps (int8 for up to 127
    # categories), so that pandas need not convert a million codes after.
    count = len(categories)
    code_type = np.int8 if count < 128 else np.int16 if count < 32768 else np.int32
    lookup = code_of_entry if through is None else code_of_entry[through]
    codes = np.take(lookup.astype(code_type), index_into)
    # Every code was made above from the categories' own positions.
    categorical = pd.Categorical.from_codes(codes, categories=categories, validate=False)
    return pd.Series(categorical, index=index)


def entries_used(index_into: np.ndarray, entries: int) -> np.ndarray:
    """Whether each of ``entries`` positions occurs in ``index_into`` (see :func:`tuple_series`)."""
    return np.bincount(index_into, minlength=entries) > 0


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
    positions, _ = range_positions(flat.offsets[rows], lengths)
    return flat.values.take(pa.array(positions)), np.repeat(np.arange(len(rows)), lengths)


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
