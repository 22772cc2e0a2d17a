"""Provenance of an audit: what was read, what came of it, and with which software.

A report or a verification result is only as good as the account of what it
was computed from. :func:`provenance` gathers that account as data:

- every input file with its size and SHA-256 of the bytes as the loader read
  them, in the one pass that checked them (a ``.gz`` file hashed compressed,
  as it is stored), and the values read, loaded and rejected in it; a file
  that could not be read (a FIFO, a device, a permission) has no hash, and
  is never opened to get one;
- what the listing skipped for its name, and why;
- the row count of every table, and every rejected row;
- the versions of the kit and of the libraries that shaped the result;
- the canonical-JSON dialects: which one each recorded hash is rebuilt in,
  and which are only tried to explain a mismatch.

It holds no wall-clock time: the same inputs read with the same software give
the same provenance, so a report built on it is reproducible byte for byte.
"""

from __future__ import annotations

import os
import platform
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from .._core.jsonable import json_rows
from ..audit import Audit
from ..canonical import DIALECTS, PLAN_HASH_DIALECT, REQUEST_HASH_DIALECT
from ..errors import UnreadableFileError
from ..reading.digests import FileDigest
from ..reading.digests import file_digest as _digest_of
from ..reading.names import display_name
from ..reading.remote import is_url, url_digest
from .whole_text import WholeText

__all__ = [
    "LIBRARIES",
    "FileDigest",
    "Provenance",
    "UnreadableFileError",
    "file_digest",
    "file_sha256",
    "hash_dialects",
    "library_versions",
    "provenance",
]

#: Distributions whose versions a provenance records, the kit first.
LIBRARIES = (
    "explicit_audit",
    "pandas",
    "pyarrow",
    "numpy",
    "orjson",
    "PyYAML",
    "rfc8785",
    "matplotlib",
    "ipywidgets",
    "nbconvert",
    "nbclient",
)

#: Columns of :attr:`Provenance.files`.
FILE_COLUMNS = MappingProxyType(
    {
        "source_file": "the file, as the loader named it",
        "bytes": "how many bytes were read from it (its size on disk); null when not read",
        "sha256": "SHA-256 of the bytes read (compressed files as stored); null when not read",
        "values_read": "JSON values (or policy documents) read from it",
        "loaded": "rows it added to a table (1 for a policy file)",
        "rejected": "values rejected from it",
    }
)

#: Columns of :attr:`Provenance.dialects`.
DIALECT_COLUMNS = MappingProxyType(
    {
        "dialect": "name in explicit_audit.canonical.DIALECTS",
        "canonical": "whether it is a canonical form or a known non-canonical writer",
        "used_for": "the recorded hash rebuilt in it, or that it is tried to explain a mismatch",
        "description": "what the writer does",
    }
)


def file_digest(path: str | Path, *, chunk_size: int = 1 << 20) -> FileDigest:
    """Size and SHA-256 of a file's bytes, read once in chunks.

    Parameters
    ----------
    path : str or Path
    chunk_size : int, default 1 MiB

    Returns
    -------
    FileDigest
        ``bytes`` (how many were read) and ``sha256`` (64 lowercase hex characters).

    Raises
    ------
    InputError
        When the file cannot be opened or read (a permission, an I/O error),
        naming the file whatever the system's message says.

    Examples
    --------
    >>> file_digest("data/policies/baseline.yaml")  # doctest: +SKIP
    FileDigest(bytes=1288, sha256='3b1f...')
    """
    if is_url(path):
        try:
            return FileDigest(*url_digest(str(path)))
        except OSError as exc:
            raise unreadable(path, exc) from None
    try:
        return _digest_of(path)
    except OSError as exc:
        raise unreadable(path, exc) from None


def unreadable(path: str | Path, exc: OSError) -> UnreadableFileError:
    """The error for a file the system would not let the kit read, naming the file."""
    return UnreadableFileError(str(path), exc.strerror or str(exc) or type(exc).__name__)


def file_sha256(path: str | Path, *, chunk_size: int = 1 << 20) -> str:
    """SHA-256 hex digest of a file's bytes: the ``sha256`` of :func:`file_digest`.

    Parameters
    ----------
    path, chunk_size
        As for :func:`file_digest`.

    Returns
    -------
    str
        The digest as 64 lowercase hex characters.

    Raises
    ------
    InputError
        When the file cannot be read, naming it.

    Examples
    --------
    >>> file_sha256("data/policies/baseline.yaml")  # doctest: +SKIP
    '3b1f...'
    """
    return file_digest(path, chunk_size=chunk_size).sha256


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str]:
    """Installed versions of the kit, its libraries and Python.

    Parameters
    ----------
    names : tuple of str, default :data:`LIBRARIES`
        Distribution names.

    Returns
    -------
    dict
        ``{name: version}`` in the order given, then ``python``; a library
        that is not installed shows ``"not installed"``.

    Examples
    --------
    >>> library_versions(("pandas",))  # doctest: +SKIP
    {'pandas': '3.1.1', 'python': '3.11.2'}
    """
    found = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    found["python"] = platform.python_version()
    return found


def hash_dialects() -> pd.DataFrame:
    """The canonical-JSON dialects, and what each is used for in verification.

    ``retrieval_plan_hash`` is rebuilt in the seed's dialect and
    ``request_sha256`` in :func:`~explicit_audit.verify_requests`' default
    dialect; every other dialect is only tried to say which writer produced
    a hash that does not match.

    Returns
    -------
    DataFrame
        One row per dialect of :data:`~explicit_audit.DIALECTS`, columns of
        :data:`DIALECT_COLUMNS`.

    Examples
    --------
    >>> hash_dialects().set_index("dialect").loc["python-ascii", "used_for"]
    'retrieval_plan_hash'
    """
    rebuilt = {PLAN_HASH_DIALECT: ["retrieval_plan_hash"]}
    rebuilt.setdefault(REQUEST_HASH_DIALECT, []).append("request_sha256")
    rows = []
    for name, dialect in DIALECTS.items():
        used = ", ".join(rebuilt[name]) if name in rebuilt else "explaining a mismatch"
        rows.append((name, dialect.canonical, used, dialect.description))
    return pd.DataFrame(rows, columns=list(DIALECT_COLUMNS)).astype(
        {"dialect": "str", "canonical": "bool", "used_for": "str", "description": "str"}
    )


@dataclass(frozen=True)
class Provenance:
    """What an audit was computed from, as tables.

    Attributes
    ----------
    source : str
        The data path as given to the loader.
    files : DataFrame
        One row per input file, columns of :data:`FILE_COLUMNS`.
    tables : DataFrame
        Row count of every table (``Audit.summary()``): ``table``, ``rows``.
    rejected : DataFrame
        Every rejected input (``Audit.rejected``).
    skipped : DataFrame
        What the listing passed over for its name: ``source_file``, ``reason``.
    versions : dict
        ``{distribution: version}``, see :func:`library_versions`.
    dialects : DataFrame
        See :func:`hash_dialects`.
    whole_texts : mapping
        ``{position in rejected: WholeText}``: the whole text of each
        rejected value whose excerpt was cut, where it was read back from the
        bytes the audit was loaded from (``whole_texts`` of
        :mod:`explicit_audit.report.whole_text`); a page shows it one click
        from the excerpt.
    """

    source: str
    files: pd.DataFrame
    tables: pd.DataFrame
    rejected: pd.DataFrame
    versions: dict[str, str]
    dialects: pd.DataFrame
    skipped: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(
            {"source_file": pd.Series(dtype="str"), "reason": pd.Series(dtype="str")}
        )
    )
    whole_texts: Mapping[int, WholeText] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The provenance as plain JSON-ready values.

        Returns
        -------
        dict
            Keys ``source``, ``files``, ``tables``, ``rejected``, ``skipped``
            (lists of row objects), ``versions``, ``dialects``.

        Examples
        --------
        >>> provenance(ea.load("data/")).to_dict()["versions"]["pandas"]  # doctest: +SKIP
        '3.1.1'
        """
        return {
            "source": self.source,
            "files": json_rows(self.files),
            "tables": json_rows(self.tables),
            "rejected": json_rows(self.rejected),
            "skipped": json_rows(self.skipped),
            "versions": dict(self.versions),
            "dialects": json_rows(self.dialects),
        }


def provenance(
    audit: Audit,
    source: str | Path | None = None,
    *,
    digests: Mapping[str, FileDigest] | None = None,
) -> Provenance:
    """Gather the provenance of a loaded audit.

    Parameters
    ----------
    audit : Audit
        What :func:`explicit_audit.load` returned.
    source : str or Path, optional
        The data path it was loaded from, as the user gave it; recorded as is.
    digests : mapping, optional
        ``{source_file: FileDigest}`` of the bytes the audit was loaded from,
        when they were hashed as they were read (see
        :mod:`explicit_audit.report.snapshot`); a file not in it is hashed now.

    Returns
    -------
    Provenance

    Raises
    ------
    InputError
        When a file to hash cannot be read, naming it.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> facts = ea.provenance(ea.load("data/"), "data/")  # doctest: +SKIP
    >>> facts.files[["source_file", "sha256"]]  # doctest: +SKIP
    """
    sources = audit.sources
    # A file read as a stream (a URL, stdin) was hashed as read: it may not be readable again.
    known = {name: FileDigest(*found) for name, found in getattr(audit, "digests", {}).items()}
    known.update({} if digests is None else dict(digests))
    skipped = sources["skipped"].notna() if "skipped" in sources else None
    if skipped is not None:
        passed = sources.loc[skipped, ["source_file", "skipped"]].rename(
            columns={"skipped": "reason"}
        )
        sources = sources.loc[~skipped]
    else:
        passed = pd.DataFrame(columns=["source_file", "reason"])
    if len(sources):
        unread = _not_read(audit.rejected)
        files = sources[["source_file"]].copy()
        found = [
            known.get(name) or _read_digest(row, unread)
            for name, row in zip(sources["source_file"], sources.to_dict("records"), strict=True)
        ]
        files["bytes"] = pd.Series(
            [None if d is None else d.bytes for d in found], index=sources.index, dtype="Int64"
        )
        files["sha256"] = pd.Series(
            [None if d is None else d.sha256 for d in found], index=sources.index, dtype="str"
        )
        for name in ("values_read", "loaded", "rejected"):
            files[name] = sources[name]
    else:
        files = pd.DataFrame({name: pd.Series(dtype="str") for name in FILE_COLUMNS})
    return Provenance(
        source="" if source is None else display_name(source),
        files=files.reset_index(drop=True),
        tables=audit.summary(),
        rejected=audit.rejected.reset_index(drop=True),
        versions=library_versions(),
        dialects=hash_dialects(),
        skipped=passed.astype("str").reset_index(drop=True),
    )


def _not_read(rejected: pd.DataFrame) -> set[str]:
    """The files with a file-level rejection: not a regular file, or not readable."""
    if not len(rejected):
        return set()
    files = rejected.loc[(rejected["kind"] == "file") & (rejected["source_line"] == 0)]
    return set(files["source_file"].astype("str"))


def _read_digest(row: dict, unread: set[str]) -> FileDigest | None:
    """The digest the loader took as it read the file.

    Without one (a Dask byte range of a large file, read in parts), a regular
    file is read once more to hash it; a file the loader could not read, or
    that is not a regular file (a FIFO, a device), is never opened to get
    one: an open could hang or read without end.
    """
    sha = row.get("sha256")
    if sha is not None and not pd.isna(sha):
        return FileDigest(int(row["bytes"]), str(sha))
    name = row["source_file"]
    if name in unread or not _regular(name):
        return None
    return file_digest(name)


def _regular(name: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except OSError:
        return False
