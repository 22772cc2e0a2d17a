"""The columnar fast path: one clean JSON Lines file read by pyarrow.

pyarrow's JSON reader parses lines into Arrow columns in C++, many times
faster than parsing value by value. The file is read in pieces of whole
lines, so that a caller can keep only the columns it needs from each piece
and peak memory stays well under the file's size plus its table.

pyarrow gives no line numbers; they are recovered from the bytes: the n-th
row is the n-th non-empty line. Any doubt (a parse error, a line that starts
with white space, a row count that does not match the lines) makes the whole
file go back to the value-by-value path, which says exactly what is wrong where.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json

from ._reader import has_long_integer

__all__ = ["JsonlPiece", "NotClean", "iter_jsonl_pieces", "read_parts", "string_series"]

_PIECE_BYTES = 1 << 24
_BLOCK_SIZE = 1 << 20
_SNIFF_BYTES = 1 << 18


class NotClean(Exception):
    """The file is not clean JSON Lines of the expected shape: read it value by value."""


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


def _with_temporal_as_strings(piece: memoryview, schema: pa.Schema | None) -> pa.Schema | None:
    """Add the top-level fields pyarrow would read as timestamps, as strings.

    pyarrow turns ISO-looking strings into timestamps; an audit keeps them
    as written. The first lines are enough to find such fields.
    """
    head = bytes(piece[: _SNIFF_BYTES + 1])
    if len(head) > _SNIFF_BYTES:
        head = head[: head.rfind(b"\n", 0, _SNIFF_BYTES) + 1 or len(head)]
    sample = _parse(pa.py_buffer(head), schema)
    temporal = [f.name for f in sample.schema if pa.types.is_temporal(f.type)]
    if not temporal:
        return schema
    fields = list(schema) if schema is not None else []
    return pa.schema(fields + [pa.field(name, pa.string()) for name in temporal])


def _pieces(path: Path) -> Iterator[memoryview]:
    """The file's content (decompressed) in pieces that end at a line end."""
    compression = "gzip" if path.name.lower().endswith(".gz") else None
    carry = b""
    with pa.input_stream(str(path), compression=compression) as stream:
        while chunk := stream.read(_PIECE_BYTES):
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            carry = data[cut:]
            # A view, not a copy: the piece is only read, and then let go.
            yield memoryview(data)[:cut]
    if carry:
        yield memoryview(carry)


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
        whole file value by value.
    """
    next_line = 1
    try:
        for number, piece in enumerate(_pieces(path)):
            if number == 0:
                if bytes(piece[:3]) == b"\xef\xbb\xbf":
                    raise NotClean
                schema = _with_temporal_as_strings(piece, schema)
            if has_long_integer(piece):
                # Maybe an integer beyond 64 bits, which Arrow would read as a
                # float: only the exact path keeps it exact.
                raise NotClean
            lines, line_ends = _value_lines(np.frombuffer(piece, dtype=np.uint8), next_line)
            next_line += line_ends
            table = _parse(pa.py_buffer(piece), schema)
            del piece
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
) -> tuple[pa.Table, pd.DataFrame] | None:
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
    tuple of (pyarrow.Table, DataFrame) or None
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
    return pa.concat_tables(normals), pd.concat(extras, ignore_index=True)


_STR = pd.StringDtype("pyarrow", na_value=np.nan)


def string_series(array: pa.ChunkedArray | pa.Array) -> pd.Series:
    """A pandas ``str`` column over Arrow strings, without making Python objects."""
    return pd.Series(_STR.__from_arrow__(array), dtype=_STR)
