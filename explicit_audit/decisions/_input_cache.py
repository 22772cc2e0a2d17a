"""A decisions table's encoded inputs, kept while the table lives and its inputs do not change.

A panel replays and sweeps the same table at every move of a control; taking
its input columns apart (:func:`~._encoded.encode_inputs`) each time costs as
much as the sweep itself. :func:`encoded_inputs` keeps the encoding of the
last few tables and gives it back only when every input column still holds
what it held when encoded:

- a column backed by Arrow (the list columns, a string column) by the identity
  of its Arrow array, which nothing can change in place: pandas writes a new
  one when a value is set, and the entry holds the old one, so its identity
  is never reused;
- any other column by its dtype and its values, compared with a copy taken
  when it was encoded (a numpy column may be written in place);
- the index by identity (an index is immutable).

A table with an input column of another kind (a column of Python lists) is
encoded anew every time. An entry goes when its table is collected.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._core.overlap import THREADS, both
from ._encoded import INPUT_COLUMNS, EncodedInputs, encode_inputs

__all__ = ["encoded_inputs"]

#: How many tables' encodings are kept (a panel uses one; a notebook a few).
CACHED_TABLES = 4

_LOCK = threading.Lock()
_ENTRIES: OrderedDict[int, _Entry] = OrderedDict()


@dataclass(frozen=True)
class _Entry:
    table: weakref.ref
    index: pd.Index
    stamps: tuple[Any, ...]
    encoded: EncodedInputs


def _stamp(column: pd.Series) -> Any:
    """What tells whether ``column`` still holds its values; None when nothing cheap does."""
    values = column.array
    if isinstance(values, pd.arrays.ArrowExtensionArray):  # an Arrow string array is one too
        return ("arrow", column.dtype, values.__arrow_array__())
    if isinstance(column.dtype, pd.CategoricalDtype):
        return ("categorical", column.dtype, column.cat.codes.to_numpy(copy=True))
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biuf":
        return ("numpy", column.dtype, column.to_numpy(copy=True))
    return None


def _unchanged(stamp: Any, column: pd.Series) -> bool:
    kind, dtype, held = stamp
    if column.dtype != dtype:
        return False
    if kind == "arrow":
        return column.array.__arrow_array__() is held
    now = column.cat.codes.to_numpy() if kind == "categorical" else column.to_numpy()
    return np.array_equal(now, held)


def _forget(key: int) -> None:
    with _LOCK:
        _ENTRIES.pop(key, None)


def encoded_inputs(decisions: pd.DataFrame, threads: int = THREADS) -> EncodedInputs:
    """:func:`~._encoded.encode_inputs` of ``decisions``, from the cache when still exact.

    Parameters
    ----------
    decisions : DataFrame
        An in-memory decisions table (or one partition of a Dask one).
    threads : int
        Threads a new encoding may use (:func:`~._encoded.encode_inputs`).

    Returns
    -------
    EncodedInputs
        The very object encoded before when the table's index and every
        input column are unchanged since; else a new encoding, kept.
    """
    key = id(decisions)
    with _LOCK:
        entry = _ENTRIES.get(key)
    if (
        entry is not None
        and entry.table() is decisions
        and entry.index is decisions.index
        and all(name in decisions.columns for name in INPUT_COLUMNS)
        and all(
            _unchanged(stamp, decisions[name])
            for name, stamp in zip(INPUT_COLUMNS, entry.stamps, strict=True)
        )
    ):
        with _LOCK:
            if key in _ENTRIES:
                _ENTRIES.move_to_end(key)
        return entry.encoded
    if not all(name in decisions.columns for name in INPUT_COLUMNS):
        return encode_inputs(decisions, threads)  # raises, naming the columns it lacks
    columns = [decisions[name] for name in INPUT_COLUMNS]
    # The copies a stamp takes are made while the list columns are taken apart.
    encoded, stamps = both(
        lambda: encode_inputs(decisions, threads),
        lambda: tuple(_stamp(column) for column in columns),
        threads,
    )
    if any(stamp is None for stamp in stamps):
        return encoded
    try:
        table = weakref.ref(decisions, lambda _, key=key: _forget(key))
    except TypeError:  # a frame that takes no weak reference: not kept
        return encoded
    with _LOCK:
        _ENTRIES[key] = _Entry(table, decisions.index, stamps, encoded)
        _ENTRIES.move_to_end(key)
        while len(_ENTRIES) > CACHED_TABLES:
            _ENTRIES.popitem(last=False)
    return encoded
