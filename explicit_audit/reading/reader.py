"""One file's front doors: a file, its bytes or a range of its lines, read as a load reads them.

:func:`read_file`, :func:`read_bytes` and :func:`read_lines_range` read one
file, its bytes, or a range of its lines, as :func:`~.collect.read_all`
reads each file of a source (a Dask partition is read so).

What it reads (see ``docs/formats.md``):

- ``.jsonl`` / ``.ndjson``: one JSON value per line, blank lines allowed;
- ``.json``: one array of records, one record, or several JSON values one
  after another (pretty-printed CLI outputs appended to one log included);
- either of them gzip-compressed (``.gz``), several gzip members included;
- ``.yaml`` / ``.yml`` files are routing policies, handed to the policy loader.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .._core.records import RecordKind
from .collect import Reading, read_with
from .content import BytesReader, FileReader, RangeReader
from .limits import Limits
from .names import display_name

__all__ = ["read_bytes", "read_file", "read_lines_range"]


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
