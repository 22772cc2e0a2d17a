"""The parse: clean spans of JSON objects parsed by pyarrow, in bulk, into one Arrow table.

pyarrow's JSON reader parses objects into Arrow columns in C++, many times
faster than parsing value by value. :func:`parse_piece` takes the spans the
splitter (:mod:`explicit_audit.reading.spans`) found clean, with their lines,
and gives back their rows, one per span, or refuses them
(:class:`~explicit_audit.reading.columnar.Refused`): the caller then splits
the spans and tries again, down to groups too small to be worth a bulk
parse, which go to the exact path.
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from .columnar import SCALAR_TYPES, JsonlPiece, Refused

__all__ = ["parse_piece"]

_BLOCK_SIZE = 1 << 20
_SNIFF_BYTES = 1 << 18


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
    the kind's converter (:func:`~explicit_audit.reading.columnar.scalar_frame`),
    and those rows are read value by value. The sample is the ``windows``
    parsed for :func:`_many_fields` where there are such, else the first
    :data:`_SNIFF_BYTES` of the bytes. Of the windows, the fields holding a
    value in the first or in two or more are declared: a key seen in one
    later window only may be a key of its own per line, which
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
        if temporal or any(is_(field.type) for is_ in SCALAR_TYPES):
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
    parsed in one call (:func:`_windows_parsed`, passed as ``parsed`` where
    the caller has them, as :func:`parse_piece` does: the same call gives the
    sample :func:`_declared` declares fields from), others one call each.
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
        windows = (
            None
            if multiline or max_fields is None or len(data) <= _WINDOW_BYTES
            else _windows_parsed(_windows(data), schema)
        )
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
