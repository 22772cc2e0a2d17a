"""Shared plumbing of the receipt checks: list columns as Arrow arrays."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.lists import list_array

__all__ = ["list_column", "list_lengths", "pair_keys", "starts_of", "string_array"]


def list_column(frame: pd.DataFrame, name: str) -> pa.ListArray:
    """A list-of-strings column as one Arrow ListArray, a missing list kept as null."""
    return list_array(frame[name], name, nulls="keep")


def list_lengths(values: pa.ListArray) -> np.ndarray:
    """Lengths of each list as int64, a null list counting as empty."""
    return values.value_lengths().fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


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
