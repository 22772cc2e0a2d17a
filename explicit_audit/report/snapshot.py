"""A private copy of the input files, hashed as it is made: one audit per report run.

Logs grow while a report is written. If every notebook read the live files,
a line appended between two notebooks would make one page's tables disagree
with another's, and with the SHA-256 its provenance block names. So a report
run first copies every input file once into a temporary folder, hashing the
bytes as they are copied; provenance is computed from those hashes, and every
notebook runs on the copy.

The copy keeps the path the data was given by: files land at the same path
relative to a working folder inside the copy, and the notebooks run there,
so ``data/receipts/x.jsonl`` reads ``data/receipts/x.jsonl`` in every table.
An absolute data path is given to the notebooks relative to the current
folder (``../../srv/logs`` for ``/srv/logs`` read from ``/home/me/audit``),
which names the same files.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UnreadableFileError
from ..reading.sources import CANNOT_LIST, CANNOT_READ, scan_sources, unreadable_problems
from ..state.compare import Origin
from .provenance import FileDigest, unreadable

__all__ = ["Snapshot", "take_snapshot"]

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Snapshot:
    """Where the copy of a report's input files is, and how to read it.

    Attributes
    ----------
    cwd : Path
        The working folder inside the copy: ``data`` read from it names the
        copied files as the original ones were named.
    data : str
        The data path to load from ``cwd``: the one given, or, when that was
        absolute, the same place relative to the current folder.
    digests : dict
        ``{file name as the loader gives it: FileDigest}`` of the bytes copied.
    origins : dict
        ``{file name as the loader gives it: Origin}``: the file each copy was
        made from, as an audit state knows it (``report --state``).
    """

    cwd: Path
    data: str
    digests: dict[str, FileDigest]
    origins: dict[str, Origin] = field(default_factory=dict)

    def path_of(self, source_file: str) -> Path | None:
        """Where the copy of one file is, by the name the loader gave it (None: not copied)."""
        name = os.path.normpath(source_file)
        return Path(os.path.normpath(self.cwd / name)) if name in self.digests else None


def _relative(path: str | os.PathLike) -> str:
    text = os.fspath(path)
    return os.path.relpath(text) if os.path.isabs(text) else text


def _depth(relative: str) -> int:
    """How many leading ``..`` a normalised relative path climbs."""
    parts = Path(os.path.normpath(relative)).parts
    depth = 0
    while depth < len(parts) and parts[depth] == "..":
        depth += 1
    return depth


def _copy(source: Path, target: Path) -> tuple[FileDigest, Origin]:
    digest = hashlib.sha256()
    size = 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        reader = open(source, "rb")
    except OSError as exc:
        raise unreadable(source, exc) from None
    origin = Origin.of(reader.fileno(), source)
    with reader, open(target, "wb") as writer:
        while True:
            try:
                chunk = reader.read(_CHUNK)
            except OSError as exc:
                raise unreadable(source, exc) from None
            if not chunk:
                break
            digest.update(chunk)
            size += len(chunk)
            writer.write(chunk)
    return FileDigest(size, digest.hexdigest()), origin


def take_snapshot(data: str | os.PathLike, folder: str | os.PathLike) -> Snapshot:
    """Copy every file ``data`` names into ``folder``, hashing each as it is copied.

    Parameters
    ----------
    data : str or path
        A file, folder or glob, as :func:`explicit_audit.load` takes it.
    folder : str or path
        An empty folder for the copy (a temporary one; the caller removes it).

    Returns
    -------
    Snapshot

    Raises
    ------
    AuditError
        When ``data`` names or matches no file to read.
    InputError
        When a file cannot be read, naming it.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     copy = take_snapshot("data", folder)  # doctest: +SKIP
    """
    scan = scan_sources(data)
    files = scan.files
    unreadable = unreadable_problems(scan.problems)
    if unreadable:
        # What the system will not let the kit open or list is an input error, as in verify.
        first = unreadable[0]
        folder_level = first.reason.startswith(CANNOT_LIST)
        raise UnreadableFileError(
            first.source_file,
            first.reason.removeprefix(CANNOT_LIST if folder_level else CANNOT_READ),
            what="folder" if folder_level else "file",
            also=[problem.source_file for problem in unreadable[1:]],
        )
    shown = _relative(data)
    strays = scan.strays
    relatives = [_relative(path) for path in files]
    depth = max([_depth(shown), *(_depth(r) for r in relatives + [_relative(p) for p in strays])])
    # Deep enough that every ``..`` of the paths stays inside the copy.
    cwd = Path(folder, "cwd", *(["up"] * depth))
    cwd.mkdir(parents=True)
    digests, origins = {}, {}
    for source, relative in zip(files, relatives, strict=True):
        target = Path(os.path.normpath(cwd / relative))
        name = os.path.normpath(relative)
        digests[name], origins[name] = _copy(source, target)
    for stray in strays:
        # A FIFO, a socket or a device: a link to it in the copy, so that the
        # pages reject it as verify does, by the same name; it is never opened.
        target = Path(os.path.normpath(cwd / _relative(stray)))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.path.realpath(stray))
    return Snapshot(cwd=cwd, data=shown, digests=digests, origins=origins)
