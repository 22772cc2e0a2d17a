"""The columnar fast path: one clean JSON Lines file read by pyarrow.

pyarrow's JSON reader parses lines into Arrow columns in C++, many times
faster than parsing value by value. The file is read in pieces of whole
lines, so that a caller can keep only the columns it needs from each piece
and peak memory stays well under the file's size plus its table.

The fast path reads the fields a kind keeps; the literals NaN and Infinity
(not JSON, refused by the exact path) are looked for in those, so one inside
a part of a line no kind reads (a CLI line's full ``records``) goes unseen.

pyarrow gives no line numbers; they are recovered from the bytes: the n-th
row is the n-th non-empty line. Any doubt (a parse error, a line that starts
with white space, a row count that does not match the lines) makes the whole
file go back to the value-by-value path, which says exactly what is wrong where.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

__all__ = [
    "ColumnarPart",
    "JsonlPiece",
    "NotClean",
    "iter_jsonl_pieces",
    "key_order",
    "not_finite",
    "order_like",
    "read_parts",
    "scalar_frame",
    "scalar_lists",
    "string_series",
]

_PIECE_BYTES = 1 << 24
_BLOCK_SIZE = 1 << 20
_SNIFF_BYTES = 1 << 18


class NotClean(Exception):
    """The file is not clean JSON Lines of the expected shape: read it value by value."""


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


def _value_lines(buffer: np.ndarray, first_line: int) -> tuple[np.ndarray, int]:
    """Numbers of the non-empty lines of a piece that starts on ``first_line``.

    Returns those numbers and how many line ends the piece holds.
    """
    ends = np.flatnonzero(buffer == 10)
    starts = ends + 1
    starts = np.concatenate(([0], starts[starts < len(buffer)]))
    first = buffer[starts]
    if np.isin(first, (9, 13, 32)).any():
        # An indented or white-space line: not plain JSON Lines.
        raise NotClean
    return (np.flatnonzero(first != 10) + first_line).astype(np.int64), len(ends)


def _parse(data: pa.Buffer, schema: pa.Schema | None) -> pa.Table:
    return pa_json.read_json(
        pa.BufferReader(data),
        read_options=pa_json.ReadOptions(block_size=_BLOCK_SIZE),
        parse_options=pa_json.ParseOptions(explicit_schema=schema),
        # The system allocator hands parse buffers back at once, so that peak
        # memory stays close to what the caller keeps.
        memory_pool=pa.system_memory_pool(),
    )


def _declared(piece: memoryview, schema: pa.Schema | None) -> pa.Schema | None:
    """The caller's schema, plus the other top-level fields the first lines show.

    Declaring them saves pyarrow from guessing every string's type in every
    block (it tries each as a timestamp), and keeps ISO-looking strings as
    written instead of as timestamps: an audit reads them as written. Only
    plain fields of the file's first line are declared, so that the extra
    columns keep the order the keys were first written in; a timestamp-looking
    field that first appears later sends the file to the exact path.
    """
    head = bytes(piece[: _SNIFF_BYTES + 1])
    if len(head) > _SNIFF_BYTES:
        head = head[: head.rfind(b"\n", 0, _SNIFF_BYTES) + 1 or len(head)]
    sample = _parse(pa.py_buffer(head), schema)
    first = orjson.loads(head[: head.find(b"\n") if b"\n" in head else len(head)])
    known = set(schema.names) if schema is not None else set()
    added = []
    for field in sample.schema:
        if field.name in known:
            continue
        temporal = pa.types.is_temporal(field.type)
        if temporal and field.name not in first:
            raise NotClean
        if field.name in first and (temporal or any(is_(field.type) for is_ in _SCALAR)):
            added.append(pa.field(field.name, pa.string() if temporal else field.type))
    if not added:
        return schema
    return pa.schema([*(schema or []), *added])


def _pieces(path: Path) -> Iterator[tuple[bytes | mmap.mmap, int, int]]:
    """The file's content (decompressed) in pieces that end at a line end.

    Yields ``(data, start, end)``: the piece is ``data[start:end]``, handed over
    without a copy. A plain file is memory-mapped, and the pages of a piece
    are let go once it has been read.
    """
    if path.name.lower().endswith(".gz"):
        yield from _stream_pieces(path)
        return
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    start = 0
    while start < size:
        end = min(start + _PIECE_BYTES, size)
        if end < size:
            cut = mapped.rfind(b"\n", start, end) + 1
            end = cut if cut > start else (mapped.find(b"\n", end) + 1 or size)
        yield mapped, start, end
        aligned = start - start % mmap.PAGESIZE
        mapped.madvise(mmap.MADV_DONTNEED, aligned, end - aligned)
        start = end


def _stream_pieces(path: Path) -> Iterator[tuple[bytes, int, int]]:
    carry = b""
    with pa.input_stream(str(path), compression="gzip") as stream:
        while chunk := stream.read(_PIECE_BYTES):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            carry = data[cut:]
            yield data, 0, cut
    if carry:
        yield carry, 0, len(carry)


def not_finite(column: pa.ChunkedArray | pa.Array) -> bool:
    """Whether a float column holds NaN or an infinity.

    Arrow reads the literals ``NaN`` and ``Infinity``, which JSON does not
    allow and the exact path refuses: a kind checks every float column it
    keeps with this, and sends a file that has one to the exact path.
    """
    return not pc.all(pc.is_finite(column), min_count=0).as_py()


def iter_jsonl_pieces(path: Path, schema: pa.Schema | None = None) -> Iterator[JsonlPiece]:
    """Read a JSON Lines file (gzip or not) with pyarrow, piece by piece.

    Parameters
    ----------
    path : pathlib.Path
    schema : pyarrow.Schema, optional
        Types of the fields the caller knows; other fields are inferred.

    Yields
    ------
    JsonlPiece

    Raises
    ------
    NotClean
        When pyarrow cannot read a piece, its values do not fit ``schema``,
        or its rows do not line up with its lines: the caller then reads the
        whole file value by value. (NaN and Infinity, which Arrow reads, are
        the caller's to refuse in the columns it keeps: :func:`not_finite`.)
    """
    next_line = 1
    try:
        for number, (data, start, end) in enumerate(_pieces(path)):
            piece = memoryview(data)[start:end]
            if number == 0:
                if bytes(piece[:3]) == b"\xef\xbb\xbf":
                    raise NotClean
                schema = _declared(piece, schema)
            lines, line_ends = _value_lines(np.frombuffer(piece, dtype=np.uint8), next_line)
            next_line += line_ends
            buffer = pa.py_buffer(piece)
            table = _parse(buffer, schema)
            # Let go of the piece's bytes (a mapped file's pages) before going on.
            del buffer, piece, data
            table.validate(full=True)
            if table.num_rows != len(lines):
                raise NotClean
            yield JsonlPiece(str(path), table, lines)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError) as exc:
        raise NotClean from exc


def read_parts(
    path: Path,
    schema: pa.Schema,
    convert: Callable[[JsonlPiece], tuple[pa.Table, pd.DataFrame]],
) -> ColumnarPart | None:
    """A record kind's fast path over one file: each piece converted, then joined.

    Parameters
    ----------
    path : pathlib.Path
    schema : pyarrow.Schema
        What the kind expects of a line (see :func:`iter_jsonl_pieces`).
    convert : callable
        ``convert(piece) -> (normal table, extra columns)``; raises
        :class:`NotClean` when a piece is not plainly valid.

    Returns
    -------
    ColumnarPart or None
        None when any piece is not clean: the file is then read value by value.
    """
    normals, extras = [], []
    try:
        for piece in iter_jsonl_pieces(path, schema):
            normal, extra = convert(piece)
            normals.append(normal)
            extras.append(extra)
    except (NotClean, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, KeyError):
        return None
    if not normals:
        return None
    return ColumnarPart(pa.concat_tables(normals), pd.concat(extras, ignore_index=True))


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
    ``boolean`` (see :func:`~explicit_audit._frame_columns.typed_columns`); a
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
