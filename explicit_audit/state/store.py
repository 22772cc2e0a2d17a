"""An audit state folder: what the last run audited, signed, and its rows, sealed.

``DIR/state.json`` lists, per file, its identity (name, real path, device,
inode, size, modification time), the bytes audited (a plain JSON Lines file:
up to the end of its last whole line; any other: all of it), their lines and
their SHA-256, signed with the load cache's secret (:mod:`explicit_audit._cache_seal`).
It names its entries, ``DIR/<key>/``, each written and sealed as a cache
entry is (:func:`explicit_audit.cache.store`): the tables, rejected rows,
key notes and findings of row checks (``_findings``) of audited lines of the
JSON Lines files (plain or gzip), and ``_lines``, where each audited line ends and the
hash of its bytes (:mod:`.lines`). Each run writes one entry, of the lines
it read; past :data:`MAX_ENTRIES`, one entry of every line kept.

A ``state.json`` whose signature does not hold, or an entry that does not
match its seal, is never used: the state is dropped, named in one
:class:`~explicit_audit._cache_seal.TamperedCacheWarning`, and the run reads every
file as a first run does (it cannot tell an edit of the logs then: it says so).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._cache_seal import TamperedCacheWarning, signed, unsigned
from .._core.caller import warn
from .._version import __version__
from ..cache import lookup, store
from .ledger import new_lineage, older_than_recorded, record_run
from .lines import LineIndex

__all__ = [
    "MAX_ENTRIES",
    "RUNS_FILE",
    "STATE_FILE",
    "Kept",
    "State",
    "lines_frame",
    "mark_reported",
    "new_entry_key",
    "read_state",
    "write_state",
]

#: The signed list of the files a state audited.
STATE_FILE = "state.json"
#: The file of a state folder in which ``verify --state`` records its runs
#: (:mod:`~explicit_audit.verdicts.audit_runs`).
RUNS_FILE = "runs.json"
_FORMAT = "explicit_audit.audit-state/1"
_LINES = "_lines"
_FINDINGS = "_findings"
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}")


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
        The bytes audited: a plain JSON Lines file's up to its last newline, any other's all
        (a gzip file's: its compressed bytes).
    lines : int
        The whole lines in them (a gzip file's: in their decompressed text).
    sha256 : str
        The SHA-256 of the bytes audited.
    rows : bool
        Whether the state holds the rows of its audited lines (a JSON Lines file, plain,
        or gzip whose members end at a line's end).
    pieces : list
        Where its lines are kept: ``[entry, name there, first line, last line]``, in line
        order, covering lines 1 to ``lines`` (the rows too, with ``rows``).
    counts : list
        ``[values_read, loaded, rejected]`` of its audited lines (``Audit.sources``).
    expanded : int
        A gzip file's audited bytes decompressed: the members appended later are
        held to ``max_file_bytes`` and ``max_gzip_ratio`` with them, as a whole
        read holds the file.
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
    pieces: list = field(default_factory=list)
    counts: list = field(default_factory=lambda: [0, 0, 0])
    expanded: int = 0
    index: LineIndex = field(default_factory=LineIndex, repr=False, compare=False)


@dataclass
class State:
    """A state folder as read: the files it audited, and the entries that hold their rows.

    ``entries`` is None when the rows cannot be used (written by another
    version of the kit, by other code, :func:`~explicit_audit._version.code_digest`,
    or for a load with other options): the files are
    then still compared with what was audited, and read whole. Each entry's
    parts are an audit's (``tables``, ``rejected``, ``keys``, ...), with
    ``findings``, the findings of the row checks of its rows.
    """

    kept: dict[str, Kept]
    entries: dict[str, dict[str, Any]] | None
    documents: str | None = None
    #: The edits earlier loads found that no run has reported yet (:func:`mark_reported`),
    #: each ``{source_file, source_line, rule, detail, found}``.
    unreported: list[dict[str, Any]] = field(default_factory=list)


#: The most entries a state holds: past it, the next run writes every row in one entry.
MAX_ENTRIES = 8


def read_state(
    directory: str | os.PathLike,
    asked: dict,
    on_files: Callable[[dict[str, Kept]], None] | None = None,
) -> State | None:
    """The state kept in ``directory``; None when there is none, or it cannot be trusted.

    Parameters
    ----------
    directory : str or path-like
    asked : dict
        The options that shape the tables: rows kept under other ones are not used.
    on_files : callable, optional
        Given the files the state audited once ``state.json``'s signature holds,
        before its entries are read and checked, so that the caller may begin
        comparing the files meanwhile: a state returned holds this same dict
        (:attr:`State.kept`), and it is called before any state is returned.

    Warns
    -----
    TamperedCacheWarning
        When ``state.json``'s signature does not hold, or an entry it names does
        not match its seal or is missing: the state is dropped.
    """
    folder = Path(directory)
    path = folder / STATE_FILE
    if not os.path.lexists(path):
        earlier = _earlier_runs(folder)
        if earlier:
            warn(
                f"{path} is missing, though {earlier}: every file is read as at a first run "
                "(an edit of the bytes audited before cannot be told this time)",
                TamperedCacheWarning,
            )
        return None
    value, problem = unsigned(folder, path, "state")
    if problem is None and not (isinstance(value, dict) and value.get("format") == _FORMAT):
        problem = "not an audit state this kit wrote"
    if problem is None:
        problem = older_than_recorded(folder, value)
    if problem is not None:
        _drop(folder, f"{path}: {problem}")
        return None
    kept = {record["name"]: Kept(**record) for record in value["files"]}
    if on_files is not None:
        on_files(kept)
    entries: dict[str, dict[str, Any]] = {}
    for key in value["entries"]:
        if not os.path.isdir(folder / key):
            _drop(folder, f"{path}: names the entry {key}, which is missing")
            return None
        # lookup warns itself (and drops the entry) when the entry does not match its seal.
        parts = lookup(folder, key)
        if parts is None:
            _drop(folder, None)
            return None
        parts["findings"] = parts["tables"].pop(_FINDINGS)
        parts["lines"] = parts["tables"].pop(_LINES)
        entries[key] = parts
    for record in kept.values():
        record.index = _index(record, entries)
    same = value.get("version") == __version__ and value.get("asked") == json.loads(
        json.dumps(asked, default=str)
    )
    unreported = value.get("unreported", [])
    if not (isinstance(unreported, list) and all(map(_is_change, unreported))):
        _drop(folder, f"{path}: its unreported edits are not a list of changes")
        return None
    return State(kept, entries if same else None, value.get("documents"), unreported)


def _earlier_runs(folder: Path) -> str | None:
    """What in a state folder without ``state.json`` shows that runs were audited into it."""
    if (folder / RUNS_FILE).is_file():
        return f"{RUNS_FILE} records earlier runs"
    try:
        entries = [p for p in folder.iterdir() if _ENTRY_NAME.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return None
    return f"the folder holds {len(entries)} entry(ies) of earlier runs" if entries else None


#: The keys of an unreported edit kept in ``state.json``, and their types.
_CHANGE_KEYS = {"source_file": str, "source_line": int, "rule": str, "detail": str, "found": str}


def _is_change(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.keys() == _CHANGE_KEYS.keys()
        and all(type(value[key]) is kind for key, kind in _CHANGE_KEYS.items())
    )


def _index(record: Kept, entries: dict[str, dict[str, Any]]) -> LineIndex:
    """A file's line index, gathered from the pieces that hold it."""
    ends, hashes = [], []
    for key, name, first, last in record.pieces:
        lines = entries[key]["lines"]
        at = (
            (lines["source_file"] == name) & (lines["line"] >= first) & (lines["line"] <= last)
        ).to_numpy()
        ends.append(lines["end"].to_numpy(dtype=np.int64)[at])
        hashes.append(lines["hash"].to_numpy(dtype=np.int64)[at])
    if not ends:
        return LineIndex()
    return LineIndex(np.concatenate(ends), np.concatenate(hashes))


def _drop(folder: Path, problem: str | None) -> None:
    """Remove the state's files; warn when ``problem`` says why (lookup warned otherwise)."""
    path = folder / STATE_FILE
    if path.is_dir() and not path.is_symlink():  # a folder in its place: not the kit's
        shutil.rmtree(path, ignore_errors=True)
    path.unlink(missing_ok=True)
    if problem is not None:
        warn(
            f"{problem}: the audit state is dropped, and every file read as at a first run "
            "(an edit of the bytes it audited cannot be told this time). A state folder must be "
            "writable by its owner only",
            TamperedCacheWarning,
        )


def lines_frame(lines: dict[str, tuple[LineIndex, int]]) -> pd.DataFrame:
    """The ``_lines`` table of an entry: ``{file: (index, number of its first line)}``."""
    numbers, ends, hashes = [], [], []
    for index, first in lines.values():
        numbers.append(np.arange(first, first + len(index), dtype=np.int64))
        ends.append(index.ends)
        hashes.append(index.hashes)
    # A file's name once, not once per line: the table is read back at every run.
    files = pd.Categorical.from_codes(
        np.repeat(np.arange(len(lines)), [len(n) for n in numbers]),
        pd.Index(list(lines), dtype="str"),
    )
    empty = [np.zeros(0, np.int64)]
    return pd.DataFrame(
        {
            "source_file": files,
            "line": np.concatenate(numbers or empty),
            "end": np.concatenate(ends or empty),
            "hash": np.concatenate(hashes or empty),
        }
    )


def new_entry_key() -> str:
    """The name of a new entry (an entry is never written twice)."""
    return uuid.uuid4().hex


def write_state(
    directory: str | os.PathLike,
    asked: dict,
    kept: list[Kept],
    key: str,
    parts: dict[str, Any],
    *,
    documents: str,
    unreported: list[dict[str, Any]] = (),
) -> None:
    """Write the state of this run to ``directory``, replacing the one there.

    The new entry is written and sealed first, then ``state.json`` naming
    every entry its files' pieces refer to is replaced whole; the entries no
    piece refers to any more are removed.

    Parameters
    ----------
    directory : str or path-like
    asked : dict
        The options that shape the tables.
    kept : list of Kept
        Every file audited, with its pieces.
    key : str
        The new entry's name (:func:`new_entry_key`).
    parts : dict
        The new entry: ``tables``, ``rejected``, ``keys``, ``sources``, ``files``,
        ``documents`` of the rows it keeps, ``findings`` (of the row checks of
        those rows) and ``lines`` (:func:`lines_frame`).
    documents : str
        The SHA-256 of the documents (policies) the findings were found with.
    unreported : list of dict
        The edits found that no run has reported yet (:attr:`State.unreported`).
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    records = [{k: v for k, v in asdict(r).items() if k != "index"} for r in kept]
    asked = json.loads(json.dumps(asked, default=str))
    tables = {**parts["tables"], _LINES: parts["lines"], _FINDINGS: parts["findings"]}
    rest = {k: v for k, v in parts.items() if k not in ("lines", "findings")}
    store(folder, key, {**rest, "tables": tables, "digests": {}})
    referred = list(dict.fromkeys(piece[0] for r in kept for piece in r.pieces))
    before: list[str] = []
    lineage, run = new_lineage(), 1
    path = folder / STATE_FILE
    if os.path.lexists(path):
        value, problem = unsigned(folder, path, "state")
        if problem is None and isinstance(value, dict):
            before = list(value.get("entries", []))
            if isinstance(value.get("lineage"), str) and isinstance(value.get("run"), int):
                lineage, run = value["lineage"], value["run"] + 1
    document = {
        "format": _FORMAT,
        "lineage": lineage,
        "run": run,
        "version": __version__,
        "asked": asked,
        "entries": referred,
        "files": records,
        "documents": documents,
        "unreported": list(unreported),
    }
    _replace(folder, document)
    record_run(folder, lineage, run)
    # Every entry no piece refers to: those of the state before, and any left by a state
    # dropped (entries are named by 32 hexadecimal digits).
    for old in {*before, key, *(p.name for p in folder.iterdir() if _ENTRY_NAME.fullmatch(p.name))}:
        if old not in referred and os.path.isdir(folder / old):
            shutil.rmtree(folder / old, ignore_errors=True)


def _replace(folder: Path, document: dict[str, Any]) -> None:
    """Sign ``document`` and put it in place of ``state.json``, whole."""
    partial = folder / f".{STATE_FILE}.{uuid.uuid4().hex}.partial"
    partial.write_text(json.dumps(signed(folder, "state", document)), encoding="utf-8")
    os.replace(partial, folder / STATE_FILE)


def mark_reported(directory: str | os.PathLike) -> None:
    """Mark the edits the state keeps as unreported as reported: a run's verdict is out.

    A load that will be reported later (``verify --state``, ``report --state``)
    keeps the edits it found in ``state.json`` until its run is recorded; a run
    stopped before that leaves them there, and the next load reports them again.
    A ``state.json`` whose signature does not hold is left as it is (the next
    load drops it, and says so).
    """
    folder = Path(directory)
    path = folder / STATE_FILE
    if not os.path.lexists(path):
        return
    value, problem = unsigned(folder, path, "state")
    if problem is None and isinstance(value, dict) and value.get("unreported"):
        _replace(folder, {**value, "unreported": []})
