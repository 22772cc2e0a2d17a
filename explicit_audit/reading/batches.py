"""Many small JSON Lines files read as one piece, each row kept with its own file and line.

A folder of thousands of one-line files would cost one pass of the whole
pipeline per file (a bulk parse, a conversion, a table to join). Small plain
JSON Lines files read whole without a problem are instead joined, in order,
into one buffer (a newline after each that lacks one) and read by the one
pipeline as a single piece; every row, value and rejection it gives is then
put back in its file, at its line. A file's values are read as they would be
alone: in JSON Lines every line is read on its own, so what comes before or
after a line in the buffer changes nothing of it.

Each kind's segments are handed on so that their files come in order (the
builders sort rows by file as first seen, then by line): the batch's
columnar parts of a kind are joined, and split again wherever a file of the
batch holds values read one by one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.records import RawValue, RecordKind, Rejection
from .columnar import ColumnarPart
from .digests import FileDigest
from .limits import Limits
from .pipeline import PieceReader
from .spans import split_piece

__all__ = ["BATCH_BYTES", "SMALL_FILE_BYTES", "SmallFile", "read_batch"]

#: A plain JSON Lines file up to this size is read in a batch with others.
SMALL_FILE_BYTES = 1 << 20

#: Bytes of small files joined into one batch.
BATCH_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class SmallFile:
    """A small JSON Lines file read whole: its name in tables, its bytes, their digest."""

    name: str
    data: bytes
    digest: FileDigest | None = None


def read_batch(
    files: Sequence[SmallFile],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits,
    emit: Callable[[str, tuple], None],
    reject: Callable[[Rejection], None],
) -> list[int]:
    """Read small JSON Lines files as one piece; rows, values and rejections per file.

    Parameters
    ----------
    files : sequence of SmallFile
        In file order, each the whole content of a JSON Lines file.
    kinds, keep, limits
        As for :class:`~explicit_audit.reading.pipeline.PieceReader`.
    emit, reject : callable
        Given each segment and rejection, named by its own file and line.

    Returns
    -------
    list of int
        Values read, per file.
    """
    if not files:
        return []
    chunks, first_lines = [], []
    line = 1
    for file in files:
        data = file.data
        if data and not data.endswith(b"\n"):
            data += b"\n"
        first_lines.append(line)
        chunks.append(data)
        line += data.count(b"\n")
    buffer = b"".join(chunks)
    starts = np.asarray(first_lines, dtype=np.int64)
    segments: list[tuple[str, tuple]] = []
    rejected: list[Rejection] = []
    reader = PieceReader("", True, kinds, keep, limits, _append_to(segments), rejected.append)
    spans = split_piece(buffer, 1, True, limits)  # split once: counted here, read below
    counts = np.bincount(_file_of(starts, spans.lines), minlength=len(files))
    reader.read(buffer, 1, spans)
    if int(counts.sum()) != reader.values_read or any(r.source_line < 1 for r in rejected):
        # Not one value per span as counted here: each file is read on its own instead.
        return [_read_alone(file, kinds, keep, limits, emit, reject) for file in files]
    names = [file.name for file in files]
    for rejection in rejected:
        index = int(np.searchsorted(starts, rejection.source_line, side="right")) - 1
        reject(
            Rejection(
                names[index],
                rejection.source_line - first_lines[index] + 1,
                rejection.kind,
                rejection.reason,
                rejection.raw,
            )
        )
    by_kind: dict[str, tuple[list, list]] = {}
    for kind_name, (what, segment) in segments:
        parts, values = by_kind.setdefault(kind_name, ([], []))
        (parts if what == "part" else values).append(segment)
    names_array = pa.array(names, pa.string())
    for kind_name, (parts, values) in by_kind.items():
        for segment in _in_file_runs(parts, values, starts, names, names_array):
            emit(kind_name, segment)
    return counts.tolist()


def _append_to(segments: list) -> Callable[[str, tuple], None]:
    def append(kind_name: str, segment: tuple) -> None:
        segments.append((kind_name, segment))

    return append


def _read_alone(file: SmallFile, kinds, keep, limits, emit, reject) -> int:
    reader = PieceReader(file.name, True, kinds, keep, limits, emit, reject)
    reader.read(file.data, 1)
    return reader.values_read


def _file_of(starts: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """The batch's file of each line of the joined buffer."""
    return np.searchsorted(starts, lines, side="right") - 1


def _in_file_runs(
    parts: list[ColumnarPart],
    values: list[list[RawValue]],
    starts: np.ndarray,
    names: list[str],
    names_array: pa.Array,
) -> list[tuple]:
    """One kind's segments of a batch, put back in their files, files in order.

    The columnar rows are joined into one part in file and line order; a run
    of files without values read one by one is one slice of it, and a file
    that holds both has its slice and its values next to each other.
    """
    part_files = np.zeros(0, dtype=np.int64)
    if parts and not isinstance(parts[0], ColumnarPart):
        # A kind's own bulk part (plans): it joins its rows and names them itself.
        part, part_files = type(parts[0]).batched(parts, names, starts)
        cut = part.slice
    elif parts:
        joined = _joined(parts, starts, names_array)
        part_files = joined[2]
        cut = functools.partial(_slice, joined)
    items = [item for segment in values for item in segment]
    if not items:
        return [("part", cut(0, len(part_files)))]
    files = _file_of(starts, np.fromiter((v.source_line for v in items), np.int64, len(items)))
    moved = [
        RawValue(names[index], item.source_line - int(starts[index]) + 1, item.value, item.text)
        for index, item in zip(files.tolist(), items, strict=True)
    ]
    order = np.argsort(files, kind="stable")
    files = files[order]
    moved = [moved[index] for index in order.tolist()]
    if not parts:
        return [("values", moved)]
    segments: list[tuple] = []
    row = 0
    value = 0
    total_rows = len(part_files)
    while row < total_rows or value < len(moved):
        if value == len(moved):
            segments.append(("part", cut(row, total_rows)))
            break
        file = int(files[value])
        # The rows of files before this value's file, as one slice.
        until = int(np.searchsorted(part_files, file, side="right"))
        if until > row:
            segments.append(("part", cut(row, until)))
            row = until
        last = int(np.searchsorted(files, file, side="right"))
        segments.append(("values", moved[value:last]))
        value = last
    return segments


def _joined(
    parts: list[ColumnarPart], starts: np.ndarray, names_array: pa.Array
) -> tuple[pa.Table, pd.DataFrame, np.ndarray]:
    """The parts as one, rows in file and line order, each named by its file and line.

    Returns the table, its extra columns and each row's file in the batch.
    """
    if len(parts) == 1:
        table, extras = parts[0]
    else:
        table = pa.concat_tables([part.table for part in parts])
        extras = pd.concat([part.extras for part in parts], ignore_index=True)
    lines = table.column("source_line").to_numpy()
    order = np.argsort(lines, kind="stable")
    if len(order) and (np.diff(lines) < 0).any():
        table = table.take(pa.array(order))
        extras = extras.take(order).reset_index(drop=True)
        lines = lines[order]
    files = _file_of(starts, lines)
    file_column = table.schema.get_field_index("source_file")
    line_column = table.schema.get_field_index("source_line")
    table = table.set_column(
        file_column, table.schema.field(file_column), names_array.take(pa.array(files))
    )
    table = table.set_column(
        line_column,
        table.schema.field(line_column),
        pa.array(lines - starts[files] + 1, table.schema.field(line_column).type),
    )
    return table, extras, files


def _slice(part: tuple, start: int, stop: int) -> ColumnarPart:
    table, extras, _ = part
    if start == 0 and stop == table.num_rows:
        return ColumnarPart(table, extras)
    return ColumnarPart(
        table.slice(start, stop - start), extras.iloc[start:stop].reset_index(drop=True)
    )
