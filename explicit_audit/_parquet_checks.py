"""What ``ea.read_parquet`` checks before it trusts a folder of tables it did not write.

A Parquet folder may come from anyone. Before a table is read:

- its manifest is a bounded read of a small JSON file (:mod:`~explicit_audit.small_files`)
  holding what :func:`~explicit_audit.parquet.write_parquet` writes: the format, a list of
  ``tables`` each the table of a registered record kind, the files read, the documents;
- each table's file lies inside the folder, its links resolved (no ``..``, no absolute
  name, no link out), and is a regular file (a FIFO would hang the reader);
- its row count, read from the Parquet footer, is bounded by the load limits: the
  table's least size in memory (8 bytes per value) may pass neither ``max_file_bytes``
  nor ``max_gzip_ratio`` times the file's size (past the first 64 MiB), the bound on
  a gzip stream, so a small file declaring a row group of 300 million rows is refused
  before any row is read; and its row groups add up to its rows;
- its columns are those the kind declares (:func:`declared_table`), and once read each
  declared column has its declared dtype.

Every refusal is an :class:`~explicit_audit.AuditError` naming the file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from ._core import registry
from ._core.key_table import keys_frame
from .errors import AuditError
from .reading.collect import Reading
from .reading.limits import Limits
from .reading.tables import rejected_frame, sources_frame

__all__ = ["GZIP_CHECK_BYTES", "check_dtypes", "checked_manifest", "declared_table", "opened"]

#: As for a gzip stream: the expansion ratio is checked past this many bytes in memory.
GZIP_CHECK_BYTES = 64 << 20
# The least size of a value in memory (an int64, a pointer, an offset and a validity bit).
_VALUE_BYTES = 8
_FRAMES = ("rejected", "sources", "keys")


# Each declared table by name, with the kind that declared it (a replaced kind builds anew).
_DECLARED: dict[str, tuple[Any, pd.DataFrame]] = {}


def declared_table(name: str) -> pd.DataFrame:
    """The empty table ``name`` as its kind (or the load) builds it: declared columns, dtypes.

    Raises
    ------
    StopIteration
        When no registered kind has a table of that name.
    """
    if name == "rejected":
        return rejected_frame([])
    if name == "keys":
        return keys_frame([])
    if name == "sources":
        return sources_frame(Reading([], []), {}, [], rejected_frame([]))
    owner = next(kind for kind in registry.kinds() if name in kind.table_names)
    held = _DECLARED.get(name)
    if held is None or held[0] is not owner:
        held = _DECLARED[name] = (owner, owner.build([]).tables[name])
    return held[1]


def _plain_name(name: Any) -> bool:
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and not any(c in name for c in "/\\\0")
        and not os.path.isabs(name)
    )


_SHA256 = re.compile(r"[0-9a-f]{64}")


def checked_manifest(path: Path, manifest: Any, formats: tuple[str, str]) -> dict[str, Any]:
    """``manifest`` when it holds what ``write_parquet`` writes, naming ``path`` otherwise.

    Parameters
    ----------
    path : Path
        The manifest file, for the messages.
    manifest : Any
        Its parsed JSON.
    formats : (str, str)
        The format it must name, and the only suffix a folder read as untrusted may use.
    """
    expected, suffix = formats
    if not isinstance(manifest, dict) or manifest.get("format") != expected:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise AuditError(
            f"{path}: not a folder this kit reads (format {found!r}, expected {expected!r})"
        )
    if manifest.get("suffix", suffix) != suffix:
        raise AuditError(
            f"{path}: tables in {manifest.get('suffix')!r} files, not {suffix!r}: the load "
            "cache's entries are read by ea.load(..., cache=DIR), which checks their seal"
        )
    tables = manifest.get("tables")
    if not isinstance(tables, list) or not all(_plain_name(name) for name in tables):
        raise AuditError(
            f"{path}: 'tables' must be a list of table names, got {tables!r:.200}; "
            "write the folder with audit.to_parquet(DIR)"
        )
    known = registry.tables()
    unknown = [name for name in tables if name not in known or name in _FRAMES]
    if unknown:
        raise AuditError(
            f"{path}: {', '.join(map(repr, unknown))} is no table of a registered record kind "
            f"(known: {', '.join(known)}); register the kind that writes it before reading"
        )
    wanted = {"files": list, "documents": dict, "digests": dict, "keys": bool}
    for key, kind in wanted.items():
        if key in manifest and not isinstance(manifest[key], kind):
            raise AuditError(
                f"{path}: {key!r} must be a {kind.__name__}, got {type(manifest[key]).__name__}"
            )
    if "files" not in manifest or not all(isinstance(f, str) for f in manifest["files"]):
        raise AuditError(f"{path}: 'files' must be a list of file names")
    digests = manifest.get("digests", {})
    for name, found in digests.items():
        if not (isinstance(found, list) and len(found) == 2 and isinstance(found[0], int)):
            raise AuditError(f"{path}: digests[{name!r}] must be [bytes, SHA-256]")
    missing = [name for name in known if name not in tables]
    if missing:
        raise AuditError(
            f"{path}: 'tables' leaves out {', '.join(map(repr, missing))} (of registered "
            "record kinds): a folder holds every table, empty ones too; write it with "
            "audit.to_parquet(DIR)"
        )
    if "written" in manifest:
        _check_written(path, manifest, suffix)
    return manifest


def _check_written(path: Path, manifest: dict[str, Any], suffix: str) -> None:
    """``written`` lists each table file the manifest reads, and no other, by size and SHA-256."""
    written = manifest["written"]
    if not isinstance(written, dict) or not all(
        isinstance(found, list)
        and len(found) == 2
        and type(found[0]) is int
        and isinstance(found[1], str)
        and _SHA256.fullmatch(found[1])
        for found in written.values()
    ):
        raise AuditError(f"{path}: 'written' must map each table file to [bytes, SHA-256]")
    read = [*manifest["tables"], "rejected", "sources", *(["keys"] if manifest.get("keys") else [])]
    files = {f"{name}{suffix}" for name in read}
    if set(written) != files:
        odd = sorted(set(written) ^ files)
        raise AuditError(
            f"{path}: 'written' and the tables it reads disagree about {', '.join(odd)}; a "
            "folder edited by hand (write it with audit.to_parquet(DIR))"
        )


def checked_bytes(
    path: Path, handle: Any, size: int, written: dict[str, list], limits: Limits
) -> bytes:
    """The bytes of a table file, refused unless they are those ``written`` lists for it."""
    expected_size, expected = written[path.name]
    if size > limits.max_file_bytes:
        raise AuditError(
            f"{path}: {size} bytes, past max_file_bytes ({limits.max_file_bytes}); refused "
            "before reading (raise the limit if the file is trusted)"
        )
    if size != expected_size:
        raise AuditError(
            f"{path}: {size} bytes, where audit.json lists {expected_size}; not the file "
            "written with this audit (another export's, or edited)"
        )
    data = handle.read(size + 1)
    if len(data) != expected_size or hashlib.sha256(data).hexdigest() != expected:
        raise AuditError(
            f"{path}: its SHA-256 is not the one audit.json lists; not the file written with "
            "this audit (another export's, or edited)"
        )
    return data


def opened(folder: Path, name: str) -> tuple[Any, os.stat_result]:
    """A binary file object of ``folder / name`` and its ``stat``, once it is found safe.

    Raises
    ------
    AuditError
        When the file lies outside ``folder`` (its links resolved), is not a
        regular file, or cannot be opened.
    """
    path = folder / name
    real, inside = os.path.realpath(path), os.path.realpath(folder)
    if not Path(real).is_relative_to(inside):
        raise AuditError(f"{path}: leads out of the folder (to {real}); refused")
    try:
        descriptor = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_NOCTTY)
    except OSError as exc:
        raise AuditError(f"{path}: cannot read this file ({exc.strerror or exc})") from None
    found = os.fstat(descriptor)
    if not stat.S_ISREG(found.st_mode):
        os.close(descriptor)
        raise AuditError(f"{path}: not a regular file (a FIFO, a device or a folder); refused")
    return open(descriptor, "rb"), found


def check_bounds(path: Path, parquet: pq.ParquetFile, size: int, limits: Limits) -> None:
    """Refuse, from its footer alone, a table whose rows would pass the load limits."""
    meta = parquet.metadata
    columns = max(1, meta.num_columns)
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if any(rows < 0 for rows in groups) or sum(groups) != meta.num_rows:
        raise AuditError(
            f"{path}: its row groups hold {sum(groups)} rows, its footer says {meta.num_rows}; "
            "a damaged or forged file"
        )
    least = meta.num_rows * columns * _VALUE_BYTES
    by_ratio = max(GZIP_CHECK_BYTES, size * limits.max_gzip_ratio)
    if least > min(limits.max_file_bytes, by_ratio):
        largest = max(groups, default=0)
        raise AuditError(
            f"{path}: {meta.num_rows} rows of {columns} columns (a row group of {largest}) "
            f"would take at least {least} bytes in memory, past "
            + (
                f"max_file_bytes ({limits.max_file_bytes})"
                if least > limits.max_file_bytes
                else f"max_gzip_ratio ({limits.max_gzip_ratio}) times its {size} bytes"
            )
            + "; refused before reading (raise the limit if the file is trusted)"
        )
    missing = [c for c in declared_table(path.stem).columns if c not in parquet.schema_arrow.names]
    if missing:
        raise AuditError(
            f"{path}: no column {', '.join(map(repr, missing))}, which table {path.stem!r} "
            "declares; write the folder with audit.to_parquet(DIR)"
        )


def _dtype_name(dtype: Any) -> str:
    return "category" if isinstance(dtype, pd.CategoricalDtype) else str(dtype)


def check_dtypes(path: Path, frame: pd.DataFrame) -> None:
    """Refuse a table read back whose declared columns have other dtypes than declared."""
    declared = declared_table(path.stem)
    wrong = []
    for name, dtype in declared.dtypes.items():
        found = frame[name].dtype
        # A declared text time is parsed into UTC datetimes when the load reads it.
        parsed_time = _dtype_name(dtype) == "str" and _dtype_name(found).startswith("datetime64")
        if _dtype_name(found) != _dtype_name(dtype) and not parsed_time:
            wrong.append(f"{name!r} is {_dtype_name(found)}, declared {_dtype_name(dtype)}")
    if wrong:
        raise AuditError(
            f"{path}: columns not of their declared dtypes ({'; '.join(wrong[:5])}); "
            "write the folder with audit.to_parquet(DIR), which keeps them"
        )
