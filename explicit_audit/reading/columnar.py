"""The columnar path's contract with the kinds: a parsed piece in, a part of rows out.

Clean spans parsed by pyarrow (:mod:`explicit_audit.reading.arrow_parse`)
come as a :class:`JsonlPiece`; each record kind's :class:`ColumnarReader`
converts it into its normal layout (a :class:`ColumnarPart`), refusing
(:attr:`Refused.NOT_CLEAN`) anything it is not sure of, so that a value is
loaded by this path only when the exact path would load it the same way.
A refusal is a value returned, never raised. The helpers a converter is
made of, and the join of a kind's parts in file order
(:func:`in_file_order`, :func:`frame_from_parts`), are here too.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "SCALAR_TYPES",
    "ColumnarPart",
    "ColumnarReader",
    "JsonlPiece",
    "NotClean",
    "Refused",
    "in_file_order",
    "key_order",
    "not_finite",
    "order_like",
    "refusing",
    "scalar_frame",
    "scalar_lists",
    "string_series",
]


class Refused(enum.Enum):
    """Why the columnar path did not take a group of spans: returned, never raised."""

    NOT_CLEAN = "not clean"
    """Not clean JSON of the expected shape: the group is halved, or read value by value."""
    TOO_MANY_FIELDS = "too many fields"
    """The values hold more extra fields than ``max_extra_columns``: the keys past
    the limit are set apart from the bytes and the rest parsed
    (:mod:`explicit_audit.reading.wide_keys`); where they cannot be, the values
    are read one by one, which keeps the fields past the limit as JSON text per row."""


class NotClean(Exception):
    """Raised by a check a kind's conversion makes (:func:`scalar_frame`, ...).

    Within a kind's ``convert`` only: the converter turns it into the
    :attr:`Refused.NOT_CLEAN` it returns.
    """


class ColumnarPart(NamedTuple):
    """What a kind's fast path makes of one file (see :func:`read_parts`)."""

    table: pa.Table
    """The rows in the kind's normal Arrow layout."""
    extras: pd.DataFrame
    """The extra (logger) columns, row-aligned with ``table``."""


@dataclass(frozen=True, slots=True)
class JsonlPiece:
    """Some whole lines of a JSON Lines file as an Arrow table.

    Row ``i`` of ``table`` starts on line ``lines[i]`` of ``source_file``.
    """

    source_file: str
    table: pa.Table
    lines: np.ndarray
    data: bytes | None = None
    """The bytes parsed, for a kind that must look at what Arrow cannot tell
    (a key written ``null`` and a key left out both read as null)."""
    starts: np.ndarray | None = None
    """Where each row's value starts in ``data``."""
    found_beside: Any = None
    """What the reader's ``beside`` step found in ``data`` while Arrow parsed it
    (see :class:`ColumnarReader`); None for a reader without one."""


def refusing(
    convert: Callable[[JsonlPiece], ColumnarPart],
) -> Callable[[JsonlPiece], ColumnarPart | Refused]:
    """A kind's ``convert`` whose checks raise :class:`NotClean`, returning the refusal instead.

    The contract of :attr:`ColumnarReader.convert`: a refused piece is a value.
    """

    def converted(piece: JsonlPiece) -> ColumnarPart | Refused:
        try:
            return convert(piece)
        except NotClean:
            return Refused.NOT_CLEAN

    return converted


class ColumnarReader(NamedTuple):
    """A kind's columnar path for values of one layout (``FastPath.columnar``).

    A plain ``(schema, convert)`` pair is one with no ``beside`` step.
    """

    schema: pa.Schema | None
    """The Arrow schema expected of a value."""
    convert: Callable[[JsonlPiece], ColumnarPart | Refused]
    """``convert(piece) -> ColumnarPart``, or :attr:`Refused.NOT_CLEAN` for a
    piece holding anything it is not sure of."""
    beside: Callable[[bytes, np.ndarray, int], Any] | None = None
    """``beside(data, starts, threads) -> found``: work on a piece's bytes alone
    (``starts``: where each value starts), run while Arrow parses them, each
    on one core where there are two; ``convert`` finds it in
    ``piece.found_beside``."""


def not_finite(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether a float column holds NaN or an infinity.

    Arrow reads the literals ``NaN`` and ``Infinity``, which JSON does not
    allow and the exact path refuses: a kind checks every float column it
    keeps with this, and sends a file that has one to the exact path.
    """
    return not pc.all(pc.is_finite(column), min_count=0).as_py()


_STR = pd.StringDtype("pyarrow", na_value=np.nan)


def string_series(array: pa.ChunkedArray | pa.Array) -> pd.Series:
    """A pandas ``str`` column over Arrow strings, without making Python objects."""
    return pd.Series(_STR.__from_arrow__(array), dtype=_STR)


def key_order(first_line: bytes) -> dict:
    """The keys of a file's first line, nested objects' keys under their key.

    A value read value by value keeps its keys in written order, and the extra
    columns follow it; the fast path orders its extra columns the same way.
    """

    def keys(value):
        return {k: keys(v) for k, v in value.items()} if isinstance(value, dict) else {}

    return keys(orjson.loads(first_line))


def order_like(names: list[str], first_keys: dict) -> list[str]:
    """``names`` in the order of the first line's keys; names it lacks last, as found."""
    position = {name: index for index, name in enumerate(first_keys)}
    return sorted(names, key=lambda name: position.get(name, len(position)))


#: The Arrow types of a scalar column, as tests of a type.
SCALAR_TYPES = (pa.types.is_string, pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)


def _check_scalar(column: pa.ChunkedArray) -> None:
    """Refuse a column the fast path cannot give back exactly as written.

    A column of objects or arrays: Arrow unifies their shapes across lines (a
    key one line lacks becomes null). A column of timestamps or dates: Arrow
    read ISO-looking strings as such. A float column holding NaN or an
    infinity (not JSON), or a float beyond the 64-bit integers (maybe an
    integer literal Arrow read as a float). Each raises :class:`NotClean`.
    """
    type_ = column.type
    if not (pa.types.is_null(type_) or any(is_(type_) for is_ in SCALAR_TYPES)):
        raise NotClean
    if pa.types.is_floating(type_) and (not_finite(column) or _maybe_long_integer(column)):
        raise NotClean


def scalar_lists(columns: dict[str, pa.ChunkedArray]) -> dict[str, list]:
    """Columns of scalars as Python lists (None where absent); see :func:`_check_scalar`."""
    lists = {}
    for name, column in columns.items():
        _check_scalar(column)
        lists[name] = column.to_pylist()
    return lists


def _maybe_long_integer(column: pa.ChunkedArray) -> bool:
    """Whether a float column may hold an integer beyond 64 bits, read as a float.

    Arrow infers a float column for such an integer; the exact path keeps it
    an integer (a float written as ``1e19`` stays a float there too).
    """
    big = pc.greater_equal(pc.abs(column), 2.0**63)
    return bool(pc.any(big, min_count=0).as_py())


_PANDAS_TYPES = {
    pa.int64(): pd.Int64Dtype(),
    pa.float64(): pd.Float64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
}


def scalar_frame(columns: dict[str, pa.ChunkedArray], n: int) -> pd.DataFrame:
    """Columns of scalars with the dtypes the exact path gives the same values.

    Text becomes ``str``, integers ``Int64``, numbers ``Float64``, booleans
    ``boolean`` (see :func:`~explicit_audit._core.columns.typed_columns`); a
    column that is null throughout holds None objects.
    """
    frame = {}
    for name, column in columns.items():
        _check_scalar(column)
        if pa.types.is_null(column.type):
            frame[name] = pd.Series([None] * len(column), dtype=object)
        elif pa.types.is_string(column.type):
            frame[name] = string_series(column)
        else:
            frame[name] = column.to_pandas(types_mapper=_PANDAS_TYPES.get)
    return pd.DataFrame(frame, index=pd.RangeIndex(n))


def frame_from_parts(parts: list, dtypes: dict, *, taken: str) -> pd.DataFrame:
    """A kind's DataFrame from its parts, in file order, with the given column dtypes.

    Parameters
    ----------
    parts : list of (pyarrow.Table, DataFrame)
        As for :func:`in_file_order`.
    dtypes : dict
        Each column of the kind's normal table, and its pandas dtype.
    taken : str
        The prefix an extra column takes when its name is a column already
        (``"record."``: ``record.top_k``).
    """
    from .._core.columns import beside

    table, extra = in_file_order(parts)
    frame = pd.DataFrame(
        {name: typed_series(table.column(name), dtype) for name, dtype in dtypes.items()}
    )
    return beside(frame, extra, taken)


def typed_series(column: pa.ChunkedArray, dtype) -> pd.Series:
    """An Arrow column as a pandas column of ``dtype``, text without Python objects."""
    if dtype == "str":
        return string_series(column)
    if dtype == "category" or isinstance(dtype, pd.CategoricalDtype):
        return string_series(column).astype(dtype)
    if isinstance(dtype, pd.ArrowDtype):
        return pd.Series(pd.arrays.ArrowExtensionArray(column))
    if dtype in ("Int64", "boolean"):  # nullable: a missing value stays <NA>
        return column.to_pandas(types_mapper=_PANDAS_TYPES.get)
    return pd.Series(column.to_numpy(), dtype=dtype)


def in_file_order(parts: list) -> tuple[pa.Table, pd.DataFrame]:
    """Parts' rows joined and put in file order, with their extra columns.

    The parts come file by file, the rows of one file in any order; rows go
    in order of file (as first seen), then of ``source_line`` (stable, so two
    values that start on one line keep their order). Extra columns go in the
    order their first non-missing value appears in that row order, then by
    name: a key present with null and an absent key cannot be told apart in
    Arrow, nor the order of the keys within one row, so the order depends on
    no path that read a row.

    Parameters
    ----------
    parts : list of (pyarrow.Table, DataFrame)
        Normal tables, with ``source_file`` and ``source_line``, and their
        row-aligned extra columns. Object columns joined from parts of
        different types get the dtype one column of their values gets (see
        :func:`~explicit_audit._core.columns.typed_columns`).
    """
    from .._core.columns import EXTRA_JSON, limit_extra

    table = pa.concat_tables([part[0] for part in parts])
    order = None
    if table.num_rows > 1:
        files = pc.dictionary_encode(table.column("source_file")).combine_chunks().indices
        keys = pa.table({"file": files, "line": table.column("source_line")})
        order = pc.sort_indices(keys, sort_keys=[("file", "ascending"), ("line", "ascending")])
        order = order.to_numpy()
        if (order == np.arange(len(order))).all():
            order = None
    # Where each part's rows stand once in order: the limit on extra columns ranks keys there.
    at = np.arange(table.num_rows, dtype=np.int64)
    if order is not None:
        at[order] = np.arange(len(order), dtype=np.int64)
    # Joined first, then limited once: a key made a column is built at the joined
    # length, not once per part and then copied again into the join.
    joined = pd.concat([part[1] for part in parts], ignore_index=True)
    extras = _retyped(limit_extra(joined, at))
    if order is not None:
        table = table.take(pa.array(order))
        extras = extras.take(order).reset_index(drop=True)
    if len(extras.columns) > 1:
        first_seen = {name: _first_present(extras[name]) for name in extras.columns}
        last = len(extras) + 1
        extras = extras[
            sorted(
                extras.columns,
                key=lambda name: (last if name == EXTRA_JSON else first_seen[name], name),
            )
        ]
    return table, extras


def _first_present(column: pd.Series) -> int:
    present = np.flatnonzero(column.notna().to_numpy(dtype=bool))
    return int(present[0]) if len(present) else len(column)


def _retyped(extras: pd.DataFrame) -> pd.DataFrame:
    """Object columns made of parts of different types, typed as one column would be.

    A column that is null throughout one part and text in another joins as
    objects; the values read one by one would make it text.
    """
    from .._core.columns import typed_columns

    mixed = [name for name in extras.columns if extras[name].dtype == object]
    if not mixed:
        return extras
    values = {
        name: [None if _missing(value) else value for value in extras[name].tolist()]
        for name in mixed
    }
    typed = typed_columns(values, extras.index)
    extras = extras.copy()
    for name in mixed:
        extras[name] = typed[name]
    return extras


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)
