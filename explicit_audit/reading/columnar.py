"""The columnar path: clean spans of JSON objects parsed by pyarrow, in bulk.

pyarrow's JSON reader parses objects into Arrow columns in C++, many times
faster than parsing value by value. The splitter
(:mod:`explicit_audit.reading.spans`) hands over the spans it found clean, with
their lines; the rows must come back one per span, or the caller splits the
spans and tries again, down to single spans, which go to the exact path.
Each record kind converts a parsed table into its normal layout, refusing
(:attr:`Refused.NOT_CLEAN`) anything it is not sure of, so that a value is
loaded by this path only when the exact path would load it the same way.
A refusal is a value returned, never raised.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

__all__ = [
    "ColumnarPart",
    "ColumnarReader",
    "JsonlPiece",
    "NotClean",
    "Refused",
    "in_file_order",
    "key_order",
    "not_finite",
    "order_like",
    "parse_piece",
    "refusing",
    "scalar_frame",
    "scalar_lists",
    "string_series",
]

_BLOCK_SIZE = 1 << 20
_SNIFF_BYTES = 1 << 18


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
    """A kind's columnar path for values of one layout (``RecordKind.columnar``).

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


def _parse(
    data: pa.Buffer, schema: pa.Schema | None, multiline: bool = False, threads: bool = True
) -> pa.Table:
    # Blocks of whole lines are parsed in parallel. Values that run over
    # several lines are parsed as one block: pyarrow then need not search for
    # value ends between them.
    block = max(_BLOCK_SIZE, data.size + 1) if multiline else _BLOCK_SIZE
    return pa_json.read_json(
        pa.BufferReader(data),
        read_options=pa_json.ReadOptions(block_size=block, use_threads=threads),
        parse_options=pa_json.ParseOptions(explicit_schema=schema, newlines_in_values=multiline),
        # The system allocator hands parse buffers back at once, so that peak
        # memory stays close to what the caller keeps.
        memory_pool=pa.system_memory_pool(),
    )


def _declared(
    first_value: bytes, sample: bytes, schema: pa.Schema | None, windows: _Windows | None = None
) -> pa.Schema | None:
    """The caller's schema, plus the plain top-level fields a sample of the values shows.

    Declaring them saves pyarrow from guessing every string's type in every
    block (it tries each as a timestamp), and keeps ISO-looking strings as
    written instead of as timestamps: an audit reads them as written. A
    field first seen after the sample and read as a timestamp is refused by
    :func:`_check_scalar`, and those rows are read value by value. The sample
    is the ``windows`` parsed for :func:`_many_fields` where there are such,
    else the first :data:`_SNIFF_BYTES` of the bytes. Of the windows, the
    fields holding a value in the first or in two or more are declared: a key
    seen in one later window only may be a key of its own per line, which
    :func:`_many_fields` must still count.
    """
    if windows is not None:
        seen = Counter(name for names, _ in windows.names for name in names)
        chosen = windows.names[0][0].union(name for name, count in seen.items() if count > 1)
        sample_fields = [field for field in windows.table.schema if field.name in chosen]
    else:
        head = sample[: _SNIFF_BYTES + 1]
        if len(head) > _SNIFF_BYTES:
            head = head[: head.rfind(b"\n", 0, _SNIFF_BYTES) + 1] or first_value
        try:
            sample_table = _parse(pa.py_buffer(head), schema, multiline=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            sample_table = _parse(pa.py_buffer(first_value), schema, multiline=True)
        sample_fields = list(sample_table.schema)
    known = set(schema.names) if schema is not None else set()
    added = []
    for field in sample_fields:
        if field.name in known:
            continue
        temporal = pa.types.is_temporal(field.type)
        if temporal or any(is_(field.type) for is_ in _SCALAR):
            added.append(pa.field(field.name, pa.string() if temporal else field.type))
    if not added:
        return schema
    return pa.schema([*(schema or []), *added])


#: Windows of a piece parsed to judge how many fields it holds (see _many_fields).
_WINDOWS = 4
_WINDOW_BYTES = 1 << 16


def _many_fields(
    data: bytes,
    schema: pa.Schema | None,
    limit: int,
    multiline: bool = True,
    parsed: _Windows | None = None,
) -> bool:
    """Whether the spans seem to hold more than ``limit`` top-level fields ``schema`` lacks.

    A few windows spread over the bytes are parsed. A field seen in one
    window only is counted as a field that grows with the bytes (lines each
    with a key of their own): scaled by the bytes not looked at. Arrow parses
    N lines of N fields into N columns of N rows each, which takes minutes
    and gigabytes; refused, the fields past ``max_extra_columns`` are set
    apart from the bytes and kept as one column of JSON text
    (:mod:`explicit_audit.reading.wide_keys`), or the values read one by one.
    The windows of JSON Lines (``multiline`` false: one object per line) are
    parsed in one call (:func:`_windows_of`, passed as ``parsed`` where
    the caller has them), others one call each.
    """
    if len(data) <= _WINDOW_BYTES:
        return False  # Arrow's table of so few bytes is small, whatever their fields
    windows = _windows(data) if parsed is None else parsed.windows
    known = set(schema.names) if schema is not None else set()
    if parsed is None and not multiline:
        parsed = _windows_parsed(windows, None)
    found = None if parsed is None else parsed.names
    if found is None:
        found = []
        for window in windows:
            try:
                names = _parse(pa.py_buffer(window), None, multiline=True).schema.names
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                continue  # the whole parse says what is wrong
            found.append((set(names), len(window)))
    seen: dict[str, int] = {}
    looked = 0
    for names, size in found:
        looked += size
        for name in names - known:
            seen[name] = seen.get(name, 0) + 1
    if not looked:
        return False
    once = sum(1 for count in seen.values() if count == 1)
    grown = once * max(1.0, len(data) / looked) if len(windows) > 1 else once
    return (len(seen) - once) + grown > limit


def _windows(data: bytes) -> list[bytes]:
    """The windows of whole lines :func:`_many_fields` parses: the bytes, or a few spread over."""
    if len(data) <= _WINDOW_BYTES * (_WINDOWS + 1):
        return [data]
    step = len(data) // _WINDOWS
    windows = []
    for index in range(_WINDOWS):
        start = data.find(b"\n", index * step) + 1 if index else 0
        end = data.rfind(b"\n", start, start + _WINDOW_BYTES) + 1
        if start and end > start:
            windows.append(data[start:end])
        elif not index:
            windows.append(data[: data.rfind(b"\n", 0, _WINDOW_BYTES) + 1] or data)
    return windows


class _Windows(NamedTuple):
    """Windows of whole lines of JSON Lines (see :func:`_windows`), parsed in one call."""

    windows: list[bytes]
    table: pa.Table
    names: list[tuple[set[str], int]]
    """Per window, the fields holding a value there, and its size (:func:`_names_per_window`)."""


def _windows_of(data: bytes, schema: pa.Schema | None) -> _Windows | None:
    """The windows :func:`_many_fields` looks at in JSON Lines, parsed together in one call.

    One call (each costs about a millisecond however few its bytes) gives
    both what :func:`_many_fields` counts and the sample :func:`_declared`
    declares fields from. None when the bytes are too few for windows (see
    :func:`_windows_parsed` for the others).
    """
    return None if len(data) <= _WINDOW_BYTES else _windows_parsed(_windows(data), schema)


def _windows_parsed(windows: list[bytes], schema: pa.Schema | None) -> _Windows | None:
    """Windows of whole lines, one object each, parsed in one call.

    None when there is one window, or the parse fails or gives other rows
    than lines (each window is then parsed alone, and the sample is the
    first bytes).
    """
    if len(windows) < 2 or not all(window.endswith(b"\n") for window in windows):
        return None
    rows = [window.count(b"\n") for window in windows]
    try:
        table = _parse(pa.py_buffer(b"".join(windows)), schema, multiline=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if table.num_rows != sum(rows) or not all(rows):
        return None
    return _Windows(windows, table, _names_per_window(windows, rows, table))


def _names_per_window(
    windows: list[bytes], rows: list[int], table: pa.Table
) -> list[tuple[set[str], int]]:
    """Per window, one object per line, the fields holding a value there; its size.

    Each field is placed in the windows whose rows hold a value of it (Arrow
    does not tell a null from a missing key: a field written null is seen in
    fewer windows, which counts it as growing with the bytes, as
    :func:`_many_fields` counts a field seen once). ``rows``: each window's lines.
    """
    firsts = np.cumsum([0, *rows[:-1]])
    names: list[set[str]] = [set() for _ in windows]
    for name, column in zip(table.column_names, table.columns, strict=True):
        held = pc.is_valid(column).to_numpy(zero_copy_only=False)
        # A field that is null wherever it is written (a key of its own per line, null)
        # counts as seen in one window: the most it may grow by, never less.
        windows_held = np.flatnonzero(np.add.reduceat(held, firsts)).tolist() or [0]
        for index in windows_held:
            names[index].add(name)
    return [(found, len(window)) for found, window in zip(names, windows, strict=True)]


def not_finite(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether a float column holds NaN or an infinity.

    Arrow reads the literals ``NaN`` and ``Infinity``, which JSON does not
    allow and the exact path refuses: a kind checks every float column it
    keeps with this, and sends a file that has one to the exact path.
    """
    return not pc.all(pc.is_finite(column), min_count=0).as_py()


def parse_piece(
    data: bytes,
    lines: np.ndarray,
    source_file: str,
    schema: pa.Schema | None,
    first_value: bytes,
    *,
    multiline: bool,
    max_fields: int | None = None,
    threads: bool = True,
    starts: np.ndarray | None = None,
) -> JsonlPiece | Refused:
    """Parse JSON objects, one per span, into an Arrow table with their lines.

    Parameters
    ----------
    data : bytes
        The spans' bytes, one after another (white space between them).
    lines : ndarray of int64
        The file line each span starts on; one row is expected per span.
    source_file : str
    schema : pyarrow.Schema, optional
        Types of the fields the caller knows; other fields are inferred.
    first_value : bytes
        The first span, whose plain top-level fields are declared too
        (see :func:`_declared`).
    multiline : bool
        Whether values may span lines (pretty-printed ``.json``).
    max_fields : int, optional
        Refuse, before parsing, spans that look like they hold more top-level
        fields than ``schema`` declares plus this many (``max_extra_columns``;
        see :func:`_many_fields`): Arrow's table would be as wide as they are.
    threads : bool, default True
        Whether pyarrow parses blocks of lines in its thread pool.
    starts : ndarray of int64, optional
        Where each span starts in ``data``, kept in the piece with ``data``.

    Returns
    -------
    JsonlPiece or Refused
        :attr:`Refused.TOO_MANY_FIELDS` as ``max_fields`` says;
        :attr:`Refused.NOT_CLEAN` when pyarrow cannot read the bytes, the
        values do not fit ``schema``, or the rows are not one per span: the
        caller then splits the spans or reads them value by value. (NaN and
        Infinity never reach here: the splitter sends any span holding them
        to the exact path.)
    """
    try:
        # JSON Lines windows parsed once: the sample fields are declared from, and
        # what the count of fields looks at.
        windows = None if multiline or max_fields is None else _windows_of(data, schema)
        declared = _declared(first_value, data, schema, windows)
        if max_fields is not None and _many_fields(data, declared, max_fields, multiline, windows):
            return Refused.TOO_MANY_FIELDS
        table = _parse(pa.py_buffer(data), declared, multiline, threads)
        # Structure only: pyarrow does not check the UTF-8 of what it parses, and
        # clean spans hold only UTF-8 (:mod:`explicit_audit.reading.spans` checks it).
        table.validate()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError):
        return Refused.NOT_CLEAN
    if table.num_rows != len(lines):
        return Refused.NOT_CLEAN
    return JsonlPiece(source_file, table, lines, data, starts)


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


_SCALAR = (pa.types.is_string, pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean)


def _check_scalar(column: pa.ChunkedArray) -> None:
    """Refuse a column the fast path cannot give back exactly as written.

    A column of objects or arrays: Arrow unifies their shapes across lines (a
    key one line lacks becomes null). A column of timestamps or dates: Arrow
    read ISO-looking strings as such. A float column holding NaN or an
    infinity (not JSON), or a float beyond the 64-bit integers (maybe an
    integer literal Arrow read as a float). Each raises :class:`NotClean`.
    """
    type_ = column.type
    if not (pa.types.is_null(type_) or any(is_(type_) for is_ in _SCALAR)):
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


def in_file_order(parts: list, *, retype: bool = True) -> tuple[pa.Table, pd.DataFrame]:
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
        row-aligned extra columns.
    retype : bool, default True
        Give object columns joined from parts of different types the dtype
        one column of their values gets (see
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
    extras = limit_extra(joined, at)
    if retype:
        extras = _retyped(extras)
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
