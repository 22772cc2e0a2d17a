"""The columnar fast path: one clean JSON Lines file read by pyarrow.

pyarrow's JSON reader parses a whole file into Arrow columns in C++, many
times faster than parsing value by value. It gives no line numbers, so they
are recovered from the bytes: the n-th row is the n-th non-blank line. Any
doubt (a parse error, a row count that does not match the lines) sends the
file back to the value-by-value path, which says exactly what is wrong where.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.json as pa_json

__all__ = ["JsonlTable", "read_jsonl_table"]

_CHUNK = 1 << 24
_BLOCK_SIZE = 1 << 24
_SNIFF_BYTES = 1 << 18


@dataclass(frozen=True, slots=True)
class JsonlTable:
    """One JSON Lines file as an Arrow table, row ``i`` starting on ``lines[i]``."""

    source_file: str
    table: pa.Table
    lines: np.ndarray


def _value_lines(data: pa.Buffer) -> np.ndarray | None:
    """1-based numbers of the non-empty lines, chunk by chunk to bound memory.

    None when a line starts with white space (an indented or CRLF-blank
    line): such a file is not clean JSON Lines for this path.
    """
    found = []
    line_count = 0
    pending_start = True
    whole = np.frombuffer(data, dtype=np.uint8)
    for offset in range(0, len(whole), _CHUNK):
        buffer = whole[offset : offset + _CHUNK]
        starts = np.flatnonzero(buffer == 10) + 1
        starts = starts[starts < len(buffer)]
        if pending_start:
            starts = np.concatenate(([0], starts))
        first = buffer[starts]
        if np.isin(first, (9, 13, 32)).any():
            return None
        numbers = np.arange(line_count + 1, line_count + 1 + len(starts), dtype=np.int64)
        found.append(numbers[first != 10])
        line_count += len(starts)
        pending_start = buffer[-1] == 10
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _content(path: Path) -> pa.Buffer:
    """The file's bytes: memory-mapped, or decompressed when it is gzip."""
    if path.name.lower().endswith(".gz"):
        with pa.input_stream(str(path), compression="gzip") as stream:
            return stream.read_buffer()
    with pa.memory_map(str(path)) as mapped:
        return mapped.read_buffer()


def _read(data: pa.Buffer, schema: pa.Schema | None) -> pa.Table:
    return pa_json.read_json(
        pa.BufferReader(data),
        read_options=pa_json.ReadOptions(block_size=_BLOCK_SIZE),
        parse_options=pa_json.ParseOptions(explicit_schema=schema),
        # The system allocator hands parse buffers back at once, so that peak
        # memory stays close to the file and the table.
        memory_pool=pa.system_memory_pool(),
    )


def _with_temporal_as_strings(data: pa.Buffer, schema: pa.Schema | None) -> pa.Schema | None:
    """Add the top-level fields pyarrow would read as timestamps, as strings.

    pyarrow turns ISO-looking strings into timestamps; an audit keeps them
    as written. The first lines are enough to find such fields.
    """
    head = data.slice(0, min(_SNIFF_BYTES, data.size))
    if head.size < data.size:
        cut = head.to_pybytes().rfind(b"\n")
        head = head.slice(0, cut if cut > 0 else head.size)
    sample = _read(head, schema)
    temporal = [f.name for f in sample.schema if pa.types.is_temporal(f.type)]
    if not temporal:
        return schema
    fields = list(schema) if schema is not None else []
    return pa.schema(fields + [pa.field(name, pa.string()) for name in temporal])


def read_jsonl_table(path: Path, schema: pa.Schema | None = None) -> JsonlTable | None:
    """Read a JSON Lines file (gzip or not) with pyarrow, or None when it is not clean.

    Parameters
    ----------
    path : pathlib.Path
    schema : pyarrow.Schema, optional
        Types of the fields the caller knows; other fields are inferred.

    Returns
    -------
    JsonlTable or None
        None when pyarrow cannot read the file, its values do not fit
        ``schema``, or its rows do not line up with its non-blank lines; the
        caller then reads it value by value.
    """
    try:
        data = _content(path)
        lines = _value_lines(data)
        if lines is None or not len(lines):
            return None
        schema = _with_temporal_as_strings(data, schema)
        table = _read(data, schema)
        table.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OSError):
        return None
    if table.num_rows != len(lines):
        return None
    return JsonlTable(str(path), table, lines)
