"""An audit's tables written to a folder of Parquet files, and read back whole.

:func:`write_parquet` (``Audit.to_parquet(DIR)``) writes every table of an
audit to ``DIR/<table>.parquet`` (the record tables, ``rejected`` and
``sources``) and the rest of the audit (the files read, the documents such
as the routing policies, the kit's version) to ``DIR/audit.json``, written
last: a folder without it holds no audit. :func:`read_parquet` reads them
back (``ea.read_parquet(DIR)`` makes them an :class:`~explicit_audit.Audit`
whose checks give the same findings), reading the folder as untrusted
(:mod:`explicit_audit._parquet_checks`); :func:`read_sealed` reads the
bytes of a load cache's entry once they are checked against its seal.

Values the kit rebuilds hashes from (a plan as written, a request's payload,
a rendered view's record) are held in ``object`` columns of parsed JSON
values. Such a column is written as the JSON text of each value, beside the
typed columns read from it: ``top_k`` written ``"5"`` in one plan and ``5``
in another stays so in ``plan`` while the ``top_k`` column holds the
integers. The text is written by the standard library's ``json``, which
gives back every value the kit parses exactly (integers past 64 bits, the
shortest float that reads back the same, key order); text that is not
valid UTF-8 (a lone surrogate) is written with ``\\uXXXX`` escapes. An
``object`` column holding only text is written as text. Arrow list and
struct columns are kept, and the files carry pandas' metadata adjusted so
that ``pandas.read_parquet`` reads them too (those columns as ``object``);
polars and DuckDB read every file as it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ._core import registry
from ._core.i_json import loads_alike
from ._parquet_checks import check_bounds, check_dtypes, checked_bytes, checked_manifest, opened
from ._version import __version__
from .errors import AuditError
from .reading.digests import file_digest
from .reading.limits import DEFAULT_LIMITS, Limits
from .small_files import MAX_SMALL_FILE_BYTES, UnfitFileError, read_small_json

__all__ = [
    "ARROW_SUFFIX",
    "FORMAT",
    "MANIFEST",
    "PARQUET_SUFFIX",
    "read_parquet",
    "read_sealed",
    "write_parquet",
]

#: The suffix of the tables' files: Parquet, or Arrow's IPC file format (the cache's).
PARQUET_SUFFIX = ".parquet"
ARROW_SUFFIX = ".arrow"

#: The name of the file that describes the folder, written last.
MANIFEST = "audit.json"
#: What ``audit.json`` says the folder holds; read only when it says this.
FORMAT = "explicit_audit.parquet/1"
# Schema metadata of each file: how each object column was written.
_METADATA_KEY = b"explicit_audit"


def _json_text(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (parsed from a \\udXXX escape) is not UTF-8: escape it.
        text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _encoded(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` with its object columns as text, and how each was written."""
    encoded = {}
    out = frame.copy(deep=False)
    for name in frame.columns:
        if frame[name].dtype != object:
            continue
        values = frame[name].tolist()
        if all(_missing(v) or isinstance(v, str) for v in values):
            how = "text"
            texts = [None if _missing(v) else v for v in values]
        else:
            how = "json"
            texts = [None if v is None else _json_text(v) for v in values]
        out[name] = pd.Series(texts, index=frame.index, dtype=object)
        encoded[str(name)] = how
    return out, encoded


def _arrow_table(frame: pd.DataFrame, encoded: dict[str, str]) -> pa.Table:
    table = pa.Table.from_pandas(frame, preserve_index=None)
    metadata = dict(table.schema.metadata or {})
    pandas_meta = json.loads(metadata[b"pandas"])
    for column in pandas_meta["columns"]:
        # pandas cannot rebuild "list<item: string>[pyarrow]" from this string: let it
        # read such a column as objects (read_parquet restores the Arrow dtype).
        if str(column.get("numpy_type", "")).endswith("[pyarrow]"):
            column["numpy_type"] = "object"
            column["pandas_type"] = "object"
    metadata[b"pandas"] = json.dumps(pandas_meta).encode()
    dtypes = {str(name): str(dtype) for name, dtype in frame.dtypes.items()}
    # A category column's categories and their dtype, which Arrow does not keep for a table
    # without rows (nor the dtype of none).
    categories = {
        str(name): [str(dtype.categories.dtype), list(dtype.categories)]
        for name, dtype in frame.dtypes.items()
        if isinstance(dtype, pd.CategoricalDtype)
        and str(dtype.categories.dtype) in ("str", "object")
        and all(isinstance(category, str) for category in dtype.categories)
    }
    mine = {"encoded": encoded, "dtypes": dtypes, "categories": categories}
    metadata[_METADATA_KEY] = json.dumps(mine).encode()
    return table.replace_schema_metadata(metadata)


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    frame, encoded = _encoded(frame)
    table = _arrow_table(frame, encoded)
    partial = path.with_name(path.name + ".partial")
    if path.suffix == ARROW_SUFFIX:
        # The cache's and the audit state's files: Arrow's own format, its buffers compressed
        # with LZ4 (about 3 times smaller for the kit's tables, and quicker to write, read
        # and hash than uncompressed, whose bytes are as many as the tables'), each column in
        # one piece: a table parsed piece by piece has a chunk per piece, and taking rows
        # from a column of many chunks copies them all first.
        options = pa.ipc.IpcWriteOptions(compression="lz4")
        with (
            pa.OSFile(str(partial), "wb") as sink,
            pa.ipc.new_file(sink, table.schema, options=options) as out,
        ):
            out.write_table(table.combine_chunks())
    else:
        # Lists keep Arrow's item name ("item", not Parquet's "element"), so that the
        # table reads back with the list dtype it was written with.
        pq.write_table(table, partial, use_compliant_nested_type=False)
    os.replace(partial, path)


def write_parquet(
    tables: dict[str, pd.DataFrame],
    *,
    rejected: pd.DataFrame,
    sources: pd.DataFrame,
    files: list[str],
    documents: dict[str, Any],
    directory: str | os.PathLike,
    digests: dict[str, tuple[int, str]] | None = None,
    suffix: str = PARQUET_SUFFIX,
    keys: pd.DataFrame | None = None,
) -> Path:
    """Write an audit's tables to ``directory``, one Parquet file per table.

    Parameters
    ----------
    tables : dict of str to DataFrame
        The record tables, in memory.
    rejected, sources : DataFrame
    files : list of str
    documents : dict
        The documents by name (``policies``); those whose kind can dump them
        are written.
    directory : str or path-like
        Created when missing. Files of the same names are replaced; other
        files are left alone.
    digests : dict, optional
        Size and SHA-256 of the files read as streams (``Audit.digests``).
    keys : DataFrame, optional
        ``Audit.keys``: the notes of the records' keys, written as ``keys`` beside
        ``rejected``.
    suffix : {".parquet", ".arrow"}
        Parquet, or Arrow's IPC file format (LZ4-compressed buffers, quicker
        to read back: the load cache's and the audit state's).

    Returns
    -------
    pathlib.Path
        The folder.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    frames = {**tables, "rejected": rejected, "sources": sources}
    if keys is not None:
        frames["keys"] = keys
    written = {}
    for name, frame in frames.items():
        _write_table(frame, folder / f"{name}{suffix}")
        written[f"{name}{suffix}"] = list(file_digest(folder / f"{name}{suffix}"))
    dumped = {}
    for declared in registry.documents():
        if declared.dump is not None and declared.name in documents:
            dumped[declared.name] = declared.dump(documents[declared.name])
    manifest = {
        "format": FORMAT,
        "version": __version__,
        "tables": list(tables),
        "suffix": suffix,
        "keys": keys is not None,
        "files": list(files),
        "documents": dumped,
        "digests": {name: list(found) for name, found in (digests or {}).items()},
        "written": written,
    }
    partial = folder / (MANIFEST + ".partial")
    partial.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, folder / MANIFEST)
    return folder


def _arrow_dtype(arrow_type: pa.DataType) -> Any:
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return pd.ArrowDtype(arrow_type)
    if pa.types.is_struct(arrow_type):
        return pd.ArrowDtype(arrow_type)
    return None


def _decoded(values: list, column: str, loads: Callable[[str], Any]) -> list:
    """A column's JSON texts read by ``loads``; an error names the column and the row."""
    out = []
    for row, value in enumerate(values):
        try:
            # A missing cell: Arrow's null, which pandas' text columns give back as NaN.
            out.append(None if _missing(value) else loads(value))
        except json.JSONDecodeError as exc:
            where = f"column {column!r}, row {row}: {exc.msg}"
            raise json.JSONDecodeError(where, exc.doc, exc.pos) from None
    return out


def _frame(table: pa.Table, loads: Callable[[str], Any] = json.loads) -> pd.DataFrame:
    """A table as written: object columns decoded from their text, dtypes as they were.

    ``loads`` reads its JSON: :func:`~explicit_audit._core.i_json.loads_alike`
    for a table of a folder, which may have been written by another hand; the
    tables of a cache entry were checked against their seal.
    """
    mine = loads((table.schema.metadata or {}).get(_METADATA_KEY, b"{}").decode("utf-8"))
    frame = table.to_pandas(types_mapper=_arrow_dtype)
    dtypes = mine.get("dtypes", {})
    for name, how in mine.get("encoded", {}).items():
        values = frame[name].tolist()
        if how == "json":
            values = _decoded(values, name, loads)
        else:
            values = [None if _missing(v) else v for v in values]
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    for name in frame.columns:
        wanted = dtypes.get(str(name))
        if wanted is not None and str(frame[name].dtype) != wanted and wanted != "object":
            # Arrow gives back e.g. large strings where the table had "str": the written dtype.
            frame[name] = frame[name].astype(wanted)
        if wanted == "category":
            frame[name] = _with_categories(frame[name], mine.get("categories", {}).get(str(name)))
    return frame


def _with_categories(column: pd.Series, written: Any) -> pd.Series:
    """A category column with the categories it was written with, their dtype and order
    (Arrow gives back an empty dictionary's as objects, and none for a table without rows).
    Only categories that take in every value read are taken: none is lost."""
    now = column.cat.categories
    if not (
        isinstance(written, list)
        and len(written) == 2
        and written[0] in ("str", "object")
        and isinstance(written[1], list)
        and all(isinstance(category, str) for category in written[1])
        and set(now) <= set(written[1])
    ):
        return column  # written before the kit kept them, or by another hand
    wanted = pd.CategoricalDtype(pd.Index(written[1], dtype=written[0]))
    same = list(now) == written[1] and str(now.dtype) == written[0]
    return column if same else column.astype(wanted)


# What a table written by another hand can raise once read: named with the file.
_UNFIT = (ValueError, TypeError, KeyError, AttributeError, RecursionError, pa.ArrowException)


def _untrusted_table(folder: Path, name: str, limits: Limits, written: dict | None) -> pd.DataFrame:
    path = folder / f"{name}{PARQUET_SUFFIX}"
    handle, found = opened(folder, path.name)
    with handle:
        if written is not None:  # the bytes audit.json lists, parsed as they were hashed
            handle = pa.BufferReader(checked_bytes(path, handle, found.st_size, written, limits))
        try:
            parquet = pq.ParquetFile(handle)
        except (OSError, pa.ArrowException) as exc:
            raise AuditError(f"{path}: not a Parquet file this kit reads ({exc})") from None
        check_bounds(path, parquet, found.st_size, limits)
        try:
            frame = _frame(parquet.read(), loads_alike)
        except (OSError, json.JSONDecodeError, *_UNFIT) as exc:
            raise AuditError(
                f"{path}: cannot read this table ({type(exc).__name__}: {exc})"
            ) from None
    check_dtypes(path, frame)
    return frame


def _parts(manifest: dict, where: Path, read_table: Callable[[str], pd.DataFrame]) -> dict:
    """An audit's parts from its manifest, each table read by ``read_table(name)``."""
    tables = {name: read_table(name) for name in manifest["tables"]}
    documents = {}
    for declared in registry.documents():
        dumped = manifest.get("documents", {}).get(declared.name)
        if dumped is not None and declared.restore is not None:
            try:
                documents[declared.name] = declared.restore(dumped)
            except (AuditError, *_UNFIT) as exc:
                raise AuditError(
                    f"{where}: its {declared.name} cannot be restored ({exc})"
                ) from None
    return {
        "tables": tables,
        "documents": documents,
        "rejected": read_table("rejected"),
        "files": list(manifest["files"]),
        "sources": read_table("sources"),
        **({"keys": read_table("keys")} if manifest.get("keys") else {}),
        "digests": {name: tuple(found) for name, found in manifest.get("digests", {}).items()},
    }


def read_parquet(directory: str | os.PathLike, *, limits: Limits | None = None) -> dict[str, Any]:
    """What :func:`write_parquet` wrote to ``directory``: an audit's parts, read as untrusted.

    The folder may come from anyone (:mod:`explicit_audit._parquet_checks`):
    its manifest is a bounded read, every table file lies inside the folder,
    each table's rows are bounded from its footer by ``limits`` before it is
    read, and its columns and dtypes are those its kind declares.

    Parameters
    ----------
    directory : str or path-like
    limits : Limits, optional
        The load limits that bound each table (``max_file_bytes``,
        ``max_gzip_ratio``); the defaults when not given.

    Returns
    -------
    dict
        ``tables``, ``documents``, ``rejected``, ``files``, ``sources``, ``digests``
        and ``keys`` (where written),
        the keywords of :class:`~explicit_audit.Audit`.

    Raises
    ------
    AuditError
        Naming the file, when the folder holds no audit written by the kit, or
        a file of it is missing, unreadable, outside the folder, past the
        limits, or not of its declared columns and dtypes.
    """
    folder = Path(directory)
    limits = limits or DEFAULT_LIMITS
    path = folder / MANIFEST
    try:
        if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
            raise UnfitFileError(os.fspath(path), "leads out of the folder; refused")
        found = read_small_json(path, max_bytes=MAX_SMALL_FILE_BYTES["manifest"])
    except (OSError, ValueError) as exc:  # a JSONDecodeError is a ValueError
        raise AuditError(
            f"{folder}: no audit written by Audit.to_parquet here ({MANIFEST} cannot be read: "
            f"{exc}); write one with audit.to_parquet(DIR)"
        ) from None
    manifest = checked_manifest(path, found, (FORMAT, PARQUET_SUFFIX))
    written = manifest.get("written")  # None: written before the kit listed its files
    return _parts(manifest, path, lambda name: _untrusted_table(folder, name, limits, written))


def read_sealed(contents: Mapping[str, bytes], where: Path) -> dict[str, Any]:
    """An audit's parts from the bytes of a cache entry's files, already checked against its seal.

    Parameters
    ----------
    contents : mapping of str to bytes
        Each file of the entry by name (``audit.json``, ``<table>.arrow``): the
        bytes whose digests were checked, parsed as they are (never read again).
    where : Path
        The entry, for the messages.
    """
    manifest = json.loads(contents[MANIFEST])

    def read_table(name: str) -> pd.DataFrame:
        file_name = f"{name}{ARROW_SUFFIX}"
        if file_name not in contents:
            raise AuditError(f"{where / file_name}: missing from the entry")
        return _frame(pa.ipc.open_file(pa.py_buffer(contents[file_name])).read_all())

    return _parts(manifest, where / MANIFEST, read_table)
