"""A file read the way the exact path reads every value it is given: the tests' reference.

:func:`read_exactly` reads each JSON Lines line on its own and each ``.json``
piece as values one after another (arrays split into their elements). Every
faster path of the reading engine is compared with it; loading
(``ea.load``) goes through :mod:`explicit_audit.reading.pipeline`, which must
give the same rows.
"""

from __future__ import annotations

import os
from pathlib import Path

from explicit_audit._core.records import RawValue, Rejection, excerpts_limited
from explicit_audit.reading.collect import blame_cut
from explicit_audit.reading.content import FileReader
from explicit_audit.reading.exact import iter_region, parse_line
from explicit_audit.reading.limits import Limits, limits_from
from explicit_audit.reading.spans import split_piece


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
