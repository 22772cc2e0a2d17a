"""The reading core's front door: what a file holds, read value by value.

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
from pathlib import Path

from .._core.records import RawValue, Rejection, blame_cut
from .content import FileReader
from .exact import has_long_integer, iter_region, parse_line
from .limits import Limits, limits_from
from .sources import DATA_SUFFIXES, POLICY_SUFFIXES, resolve_sources
from .spans import split_piece

__all__ = [
    "DATA_SUFFIXES",
    "POLICY_SUFFIXES",
    "has_long_integer",
    "read_exactly",
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
    problems = list(reader.problems)
    if reader.cut and items and isinstance(items[-1], Rejection):
        items[-1] = blame_cut(items[-1], problems)
    return items + problems
