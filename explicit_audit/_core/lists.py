"""List-of-strings columns as Arrow arrays: the one converter every check uses.

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
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from ..errors import AuditError

__all__ = ["LIST_OF_STRINGS", "list_array"]

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
