"""An audit state folder: what the last run audited, signed, and its rows, sealed.

``DIR/state.json`` lists, per file, its identity (name, real path, device,
inode, size, modification time), the bytes audited (a plain JSON Lines file:
up to the end of its last whole line; any other: all of it), their lines and
their SHA-256, signed with the load cache's secret (:mod:`explicit_audit._cache_seal`).
It names one entry, ``DIR/<key>/``, written and sealed as a cache entry is
(:func:`explicit_audit.cache.store`): the tables, rejected rows and key notes
of the audited lines of the plain JSON Lines files, and ``_lines``, where
each audited line ends and the hash of its bytes (:mod:`.lines`).

A ``state.json`` whose signature does not hold, or an entry that does not
match its seal, is never used: the state is dropped, named in one
:class:`~explicit_audit.TamperedCacheWarning`, and the run reads every
file as a first run does (it cannot tell an edit of the logs then: it says so).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._cache_seal import TamperedCacheWarning, signed, unsigned
from .._core.caller import warn
from .._version import __version__
from ..cache import lookup, store
from .lines import LineIndex

__all__ = ["STATE_FILE", "Kept", "State", "read_state", "write_state"]

#: The signed list of the files a state audited.
STATE_FILE = "state.json"
_FORMAT = "explicit_audit.audit-state/1"
_LINES = "_lines"
_FINDINGS = "_findings"


@dataclass
class Kept:
    """One file as the last run audited it.

    Attributes
    ----------
    name : str
        As tables name it (``source_file``).
    real : str
        Its real path.
    device, inode, size, mtime_ns : int
        Its identity and size when it was read.
    audited : int
        The bytes audited: a plain JSON Lines file's up to its last newline, any other's all.
    lines : int
        The whole lines in them.
    sha256 : str
        The SHA-256 of the bytes audited.
    rows : bool
        Whether the state holds the rows of its audited lines (a plain JSON Lines file).
    """

    name: str
    real: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    audited: int
    lines: int
    sha256: str
    rows: bool
    index: LineIndex = field(default_factory=LineIndex, repr=False, compare=False)


@dataclass
class State:
    """A state folder as read: the files it audited, and the parts it holds for them.

    ``parts`` is None when the rows cannot be used (written by another version
    of the kit, or for a load with other options): the files are then still
    compared with what was audited, and read whole.
    """

    kept: dict[str, Kept]
    parts: dict[str, Any] | None
    #: The findings of the row checks of the rows kept, when the documents are as they were.
    findings: pd.DataFrame | None = None
    documents: str | None = None


def _entry_key(files: list[dict], asked: dict) -> str:
    text = json.dumps([__version__, asked, files], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_state(directory: str | os.PathLike, asked: dict) -> State | None:
    """The state kept in ``directory``; None when there is none, or it cannot be trusted.

    Parameters
    ----------
    directory : str or path-like
    asked : dict
        The options that shape the tables: rows kept under other ones are not used.

    Warns
    -----
    TamperedCacheWarning
        When ``state.json``'s signature does not hold, or its entry does not
        match its seal: the state is dropped.
    """
    folder = Path(directory)
    path = folder / STATE_FILE
    if not os.path.lexists(path):
        return None
    value, problem = unsigned(folder, path, "state")
    if problem is None and not (isinstance(value, dict) and value.get("format") == _FORMAT):
        problem = "not an audit state this kit wrote"
    if problem is not None:
        _drop(folder, f"{path}: {problem}")
        return None
    parts = None
    if value.get("version") == __version__ and value.get("asked") == json.loads(
        json.dumps(asked, default=str)
    ):
        # lookup warns itself (and drops the entry) when the entry does not match its seal.
        parts = lookup(folder, value["entry"])
        if parts is None:
            _drop(folder, None)
            return None
    kept = {record["name"]: Kept(**record) for record in value["files"]}
    findings = None
    if parts is not None:
        findings = parts["tables"].pop(_FINDINGS)
        lines = parts["tables"].pop(_LINES)
        for name, group in lines.groupby("source_file", sort=False, observed=True):
            if name in kept:
                kept[name].index = LineIndex(
                    group["end"].to_numpy(dtype=np.int64), group["hash"].to_numpy(dtype=np.int64)
                )
    return State(kept, parts, findings, value.get("documents"))


def _drop(folder: Path, problem: str | None) -> None:
    """Remove the state's files; warn when ``problem`` says why (lookup warned otherwise)."""
    (folder / STATE_FILE).unlink(missing_ok=True)
    if problem is not None:
        warn(
            f"{problem}: the audit state is dropped, and every file read as at a first run "
            "(an edit of the bytes it audited cannot be told this time). A state folder must be "
            "writable by its owner only",
            TamperedCacheWarning,
        )


def _lines_frame(kept: list[Kept]) -> pd.DataFrame:
    names = [record.name for record in kept for _ in range(len(record.index))]
    return pd.DataFrame(
        {
            "source_file": pd.Series(names, dtype="str"),
            "end": np.concatenate([r.index.ends for r in kept] or [np.zeros(0, np.int64)]),
            "hash": np.concatenate([r.index.hashes for r in kept] or [np.zeros(0, np.int64)]),
        }
    )


def write_state(
    directory: str | os.PathLike,
    asked: dict,
    kept: list[Kept],
    parts: dict[str, Any],
    *,
    findings: pd.DataFrame,
    documents: str,
) -> None:
    """Write the state of this run to ``directory``, replacing the one there.

    The entry is written and sealed first, then ``state.json`` naming it is
    replaced whole; the entry it named before is removed.

    Parameters
    ----------
    directory : str or path-like
    asked : dict
        The options that shape the tables.
    kept : list of Kept
        Every file audited, with its line index.
    parts : dict
        ``tables``, ``rejected``, ``keys``, ``sources``, ``files``, ``documents``
        of the rows to keep (the audited lines of the plain JSON Lines files).
    findings : DataFrame
        The findings of the row checks of those rows.
    documents : str
        The SHA-256 of the documents (policies) those findings were found with.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    records = [{k: v for k, v in asdict(r).items() if k != "index"} for r in kept]
    asked = json.loads(json.dumps(asked, default=str))
    key = _entry_key([records, documents], asked)
    tables = {**parts["tables"], _LINES: _lines_frame(kept), _FINDINGS: findings}
    store(folder, key, {**parts, "tables": tables, "digests": {}})
    before = None
    path = folder / STATE_FILE
    if os.path.lexists(path):
        value, problem = unsigned(folder, path, "state")
        before = value.get("entry") if problem is None and isinstance(value, dict) else None
    document = {
        "format": _FORMAT,
        "version": __version__,
        "asked": asked,
        "entry": key,
        "files": records,
        "documents": documents,
    }
    partial = folder / f".{STATE_FILE}.{uuid.uuid4().hex}.partial"
    partial.write_text(json.dumps(signed(folder, "state", document)), encoding="utf-8")
    os.replace(partial, path)
    if before and before != key and os.path.isdir(folder / before):
        shutil.rmtree(folder / before, ignore_errors=True)
