"""One file's front doors: what it holds read value by value, or loaded as a source's files are.

:func:`read_file`, :func:`read_bytes` and :func:`read_lines_range` read one
file, its bytes, or a range of its lines, as :func:`~.collect.read_all`
reads each file of a source (a Dask partition is read so).
:func:`read_exactly` reads a file the way the exact path reads every value
it is given: each JSON Lines line on its own, each ``.json`` piece as values
one after another (arrays split into their elements). It is the reference
every faster path is compared with, and the way to look at a file's values
with their lines. Loading (``ea.load``) goes through
:mod:`explicit_audit.reading.pipeline`, which gives the same rows faster.

What it reads (see ``docs/formats.md``):

- ``.jsonl`` / ``.ndjson``: one JSON value per line, blank lines allowed;
- ``.json``: one array of records, one record, or several JSON values one
  after another (pretty-printed CLI outputs appended to one log included);
- either of them gzip-compressed (``.gz``), several gzip members included;
- ``.yaml`` / ``.yml`` files are routing policies, handed to the policy loader.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from .._core.records import RawValue, RecordKind, Rejection, excerpts_limited
from .collect import Reading, blame_cut, read_with
from .content import BytesReader, FileReader, RangeReader
from .exact import has_long_integer, iter_region, parse_line
from .limits import Limits, limits_from
from .sources import DATA_SUFFIXES, POLICY_SUFFIXES, display_name, resolve_sources
from .spans import split_piece

__all__ = [
    "DATA_SUFFIXES",
    "POLICY_SUFFIXES",
    "has_long_integer",
    "read_bytes",
    "read_exactly",
    "read_file",
    "read_lines_range",
    "resolve_sources",
]


def read_exactly(
    path: str | os.PathLike, limits: Limits | dict | None = None
) -> list[RawValue | Rejection]:
    """Every JSON value of one file, or a Rejection where one cannot be read.

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` (``.ndjson``) or ``.json`` file, possibly gzip-compressed.
    limits : Limits or dict, optional

    Returns
    -------
    list of RawValue or Rejection
        In file order. A file-level problem (a truncated gzip stream) comes
        last, after the values read before it: with line 0 when no value was
        cut, or else as the rejection of the value it cut.
    """
    reader = FileReader(Path(path), limits_from(limits))
    with excerpts_limited(reader.limits.excerpt_chars):
        items = _values(reader)
    problems = list(reader.problems)
    if reader.cut and items and isinstance(items[-1], Rejection):
        items[-1] = blame_cut(items[-1], problems)
    return items + problems


def _values(reader: FileReader) -> list[RawValue | Rejection]:
    items: list[RawValue | Rejection] = []
    for piece in reader:
        if reader.jsonl:
            spans = split_piece(piece.data, piece.first_line, True, reader.limits)
            for start, end, line in zip(spans.starts, spans.ends, spans.lines, strict=True):
                items.append(
                    parse_line(reader.name, piece.data[start:end], int(line), reader.limits)
                )
        else:
            items.extend(iter_region(reader.name, piece.data, piece.first_line, reader.limits))
    return items


def read_file(
    path: Path,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None = None,
    limits: Limits | None = None,
    name: str | None = None,
) -> Reading:
    """Read one regular file, as :func:`read_all` reads each of its files.

    ``name`` is the file's name in the tables (``source_file``), its path
    as given by default.
    """
    shown = name or display_name(path)
    return _read_one(
        shown,
        lambda limits: FileReader(path, limits, name=shown),
        kinds,
        keep,
        limits,
    )


def _read_one(
    name: str,
    reader_for: Callable[[Limits], FileReader],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits | None,
) -> Reading:
    """A reading of the one file ``name``, by the reader ``reader_for(limits)`` gives."""
    reading = Reading([name], [], limits or Limits())
    read_with(reading, reader_for(reading.limits), kinds, keep)
    return reading


def read_bytes(
    data: bytes,
    name: str,
    kinds: Sequence[RecordKind],
    *,
    jsonl: bool,
    first_line: int = 1,
    keep: set[str] | None = None,
    limits: Limits | None = None,
    file_start: bool = True,
) -> Reading:
    """Read bytes as the content of file ``name`` from line ``first_line`` on.

    ``file_start`` says whether the bytes begin the file: only there is a
    UTF-8 byte order mark dropped, as when the whole file is read.
    """
    return _read_one(
        name,
        lambda limits: BytesReader(
            None,
            limits,
            name=name,
            jsonl=jsonl,
            first_line=first_line,
            strip_bom=file_start,
            data=data,
        ),
        kinds,
        keep,
        limits,
    )


def read_lines_range(
    path: Path,
    start: int,
    stop: int,
    name: str,
    kinds: Sequence[RecordKind],
    *,
    first_line: int,
    keep: set[str] | None = None,
    limits: Limits | None = None,
) -> Reading:
    """Read the whole lines of a JSON Lines file that start in ``[start, stop)``.

    Numbered from ``first_line``, as :func:`read_bytes` reads them, but
    streamed from the file (:class:`~explicit_audit.reading.content.RangeReader`):
    a line longer than ``max_value_bytes`` is rejected without being held.
    """
    return _read_one(
        name,
        lambda limits: RangeReader(
            path, limits, name=name, first_line=first_line, start=start, stop=stop
        ),
        kinds,
        keep,
        limits,
    )
