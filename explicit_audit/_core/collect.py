"""Reading every file of a source once and sorting its values into record kinds.

Kind-agnostic: the caller passes the :class:`~explicit_audit._core.records.RecordKind`
objects to sort into. Whatever cannot be read, or is claimed by a kind but does not
fit it, ends up as a :class:`~explicit_audit._core.records.Rejection`; for every
file, loaded + rejected == values read.
"""

from __future__ import annotations

import gzip
import os
import warnings
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson
import pandas as pd

from ..errors import InputError, RejectedRowsWarning
from .columnar import ColumnarPart
from .describe import FORMATS_DOC, json_type
from .reader import POLICY_SUFFIXES, FileContent, parse_content, read_file, resolve_sources
from .records import KindTables, RawValue, RecordKind, Rejection, excerpt

__all__ = [
    "REJECTED_COLUMNS",
    "Reading",
    "Source",
    "build_kind",
    "read_all",
    "read_content",
    "rejected_frame",
    "sources_frame",
    "warn_or_raise",
]

Source = str | os.PathLike | Iterable[str | os.PathLike]

#: Columns of ``Audit.rejected``, one row per input that was not loaded.
REJECTED_COLUMNS = {
    "source_file": "file the input came from",
    "source_line": "1-based line where the value starts (0: the file as a whole)",
    "kind": "record kind it was meant for; 'unknown' when no kind claimed it; 'file' for a "
    "file-level problem",
    "reason": "what is wrong, naming the field",
    "raw": "excerpt of the raw text",
}


def rejected_frame(rejections: Sequence[Rejection]) -> pd.DataFrame:
    """The rejected rows as a DataFrame with the columns of :data:`REJECTED_COLUMNS`."""
    frame = pd.DataFrame(
        {
            "source_file": pd.Series([r.source_file for r in rejections], dtype="str"),
            "source_line": pd.Series([r.source_line for r in rejections], dtype="int64"),
            "kind": pd.Series([r.kind for r in rejections], dtype="category"),
            "reason": pd.Series([r.reason for r in rejections], dtype="str"),
            "raw": pd.Series([r.raw for r in rejections], dtype="str"),
        }
    )
    return frame


def _progress(items: list, enabled: bool, what: str):
    if not enabled or len(items) < 2:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=what, unit="file", leave=False)


def _sort_value(item: RawValue, kinds: Sequence[RecordKind]) -> RecordKind | Rejection:
    value = item.value
    if not isinstance(value, dict):
        return Rejection(
            item.source_file,
            item.source_line,
            "unknown",
            f"expected a JSON object (a record), got a JSON {json_type(value)}",
            excerpt(item.text),
        )
    for kind in kinds:
        if kind.matches(value):
            return kind
    keys = ", ".join(list(value)[:8])
    return Rejection(
        item.source_file,
        item.source_line,
        "unknown",
        f"not a record of any known kind (keys: {keys}); see {FORMATS_DOC} for the record shapes",
        excerpt(item.text),
    )


def _first_line(path: Path) -> bytes:
    """A JSON Lines file's first line (at most 1 MiB of it), read without the rest."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rb") as stream:
            return stream.readline(1 << 20).strip()
    except (OSError, EOFError, zlib.error):
        return b""


def _fast_path_kind(path: Path, kinds: Sequence[RecordKind]) -> tuple[RecordKind, bytes] | None:
    """The kind whose columnar fast path should read this file, if any."""
    if not path.name.lower().endswith((".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")):
        return None
    first = _first_line(path)
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    kind = next((kind for kind in kinds if kind.matches(value)), None)
    if kind is None or kind.arrow_build is None:
        return None
    return kind, first


@dataclass
class Reading:
    """What one pass over the files found, before the kinds build their tables."""

    files: list[str]
    policy_files: list[Path]
    values: dict[str, list[RawValue]] = field(default_factory=lambda: defaultdict(list))
    columnar: dict[str, list[tuple[int, ColumnarPart]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    rejections: list[Rejection] = field(default_factory=list)
    values_read: dict[str, int] = field(default_factory=dict)


def read_all(
    source: Source,
    kinds: Sequence[RecordKind],
    *,
    progress: bool,
    keep: set[str] | None = None,
) -> Reading:
    """Read every file of ``source`` and sort its values into ``kinds``.

    Parameters
    ----------
    source : str, path-like, or iterable of them
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    progress : bool
        Show a progress bar over files.
    keep : set of str, optional
        The kinds whose values are kept (all by default). A value of another
        kind is recognised, so not rejected, but not kept or built.

    Returns
    -------
    Reading
    """
    files = resolve_sources(source)
    policy_files = [path for path in files if path.name.lower().endswith(POLICY_SUFFIXES)]
    reading = Reading([str(f) for f in files], policy_files)
    for path in _progress([p for p in files if p not in policy_files], progress, "reading"):
        fast = _fast_path_kind(path, kinds)
        if fast is not None and (keep is None or fast[0].name in keep):
            kind, first = fast
            part = kind.arrow_build(path, first)
            if part is not None:
                position = len(reading.values[kind.name])
                reading.columnar[kind.name].append((position, part))
                reading.values_read[str(path)] = part.table.num_rows
                continue
        read_content(reading, read_file(path), kinds, keep=keep)
    for path in policy_files:
        reading.values_read[str(path)] = 1
    return reading


def read_content(
    reading: Reading,
    content: FileContent,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None = None,
    first_line: int = 1,
) -> None:
    """Read one file's content value by value into ``reading``.

    ``first_line`` is the file line on which ``content`` starts (a byte range
    of a JSON Lines file read on its own starts on a later line).
    """
    count = 0
    shift = first_line - 1
    for item in parse_content(content):
        if shift and item.source_line > 0:
            item = replace(item, source_line=item.source_line + shift)
        # A file-level problem (line 0) is not a value that was read.
        count += isinstance(item, RawValue) or item.source_line > 0
        if isinstance(item, Rejection):
            reading.rejections.append(item)
            continue
        sorted_into = _sort_value(item, kinds)
        if isinstance(sorted_into, Rejection):
            reading.rejections.append(sorted_into)
        elif keep is None or sorted_into.name in keep:
            reading.values[sorted_into.name].append(item)
    reading.values_read[content.path] = reading.values_read.get(content.path, 0) + count


def build_kind(
    kind: RecordKind, values: list[RawValue], columnar: list[tuple[int, ColumnarPart]]
) -> KindTables:
    """Build one kind's tables from its values and its columnar parts."""
    if columnar:
        return kind.build(values, columnar=columnar)
    return kind.build(values)


def warn_or_raise(rejections: list[Rejection], strict: bool) -> None:
    if not rejections:
        return
    first = rejections[0]
    if strict:
        raise InputError(first.source_file, first.source_line or None, first.reason)
    files = sorted({r.source_file for r in rejections})
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    warnings.warn(
        f"{len(rejections)} input value(s) could not be loaded, in {where} "
        f"(first: {first.source_file}:{first.source_line}: {first.reason}). "
        "They are kept in `audit.rejected` (ea.load(...).rejected).",
        RejectedRowsWarning,
        stacklevel=3,
    )


def sources_frame(
    reading: Reading,
    main_tables: list[pd.DataFrame],
    policy_files_loaded: Sequence[str],
    rejected: pd.DataFrame,
) -> pd.DataFrame:
    """Per input file: values read, rows loaded into any table, rows rejected."""
    loaded = pd.Series(0, index=pd.Index(reading.files, dtype="str"), dtype="int64")
    for frame in main_tables:
        if len(frame):
            counts = frame["source_file"].astype("str").value_counts()
            loaded = loaded.add(counts, fill_value=0).astype("int64")
    for policy_file in policy_files_loaded:
        if policy_file in loaded.index:
            loaded[policy_file] += 1
    rejected_counts = dict(
        rejected.loc[rejected["source_line"] > 0, "source_file"].value_counts().items()
    )
    # A policy file is one value: rejected once, whether its problem has a line or not.
    for policy_file in map(str, reading.policy_files):
        if (rejected["source_file"] == policy_file).any():
            rejected_counts[policy_file] = 1
    frame = pd.DataFrame(
        {
            "source_file": pd.Series(reading.files, dtype="str"),
            "values_read": [reading.values_read.get(f, 0) for f in reading.files],
            "loaded": [int(loaded.get(f, 0)) for f in reading.files],
            "rejected": [int(rejected_counts.get(f, 0)) for f in reading.files],
        }
    )
    return frame.astype({"values_read": "int64", "loaded": "int64", "rejected": "int64"})
