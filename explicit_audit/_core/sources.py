"""Files, folders and globs into the regular files to read.

Only regular files are read. Found in a folder, anything else (a FIFO, a
socket, a device, a symbolic link that points nowhere or at itself) becomes a
file-level rejection naming it, never an open that could hang or read without
end. A path named on its own that is not a regular file is an error.

File names are kept as given for reading; the name shown in tables
(:func:`display_name`) writes bytes that are not UTF-8 as ``\\xNN``, so that
any file name can be stored as text.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import AuditError
from .records import Rejection

__all__ = [
    "DATA_SUFFIXES",
    "POLICY_SUFFIXES",
    "display_name",
    "find_sources",
    "is_gzip_name",
    "is_jsonl_name",
    "resolve_sources",
    "suffix_of",
]

DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
POLICY_SUFFIXES = (".yaml", ".yml")
_ALL_SUFFIXES = (*DATA_SUFFIXES, *POLICY_SUFFIXES)


def suffix_of(path: Path | str) -> str:
    """The suffix the kit reads a file by (``".jsonl.gz"``), or ``""`` for none."""
    name = Path(path).name.lower()
    return next((suffix for suffix in _ALL_SUFFIXES if name.endswith(suffix)), "")


def is_jsonl_name(path: Path | str) -> bool:
    """Whether a file is read as JSON Lines (one value per line)."""
    return suffix_of(path).startswith((".jsonl", ".ndjson"))


def is_gzip_name(path: Path | str) -> bool:
    """Whether a file's name says it is gzip-compressed."""
    return suffix_of(path).endswith(".gz")


def display_name(path: Path | str) -> str:
    """The file's name as text: bytes that are not UTF-8 written as ``\\xNN``.

    Examples
    --------
    >>> import os
    >>> display_name(os.fsdecode(b"logs/caf\\xe9.jsonl"))
    'logs/caf\\\\xe9.jsonl'
    """
    name = os.fspath(path)
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        raw = name.encode("utf-8", errors="surrogateescape")
        return raw.decode("utf-8", errors="backslashreplace")


def _not_regular(path: Path) -> str | None:
    """Why a path found in a folder cannot be read as a file, or None when it can."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc} (a broken or looping link?)"
    if stat.S_ISREG(mode):
        return None
    what = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "not a regular file"
    )
    return f"{what}, not a regular file: not read"


def _walk(folder: Path) -> list[Path]:
    found = []
    # Links to folders are not followed: a link loop cannot make the walk endless.
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            Path(root, name) for name in files if not name.startswith(".") and suffix_of(name)
        )
    return sorted(found)


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, RuntimeError, ValueError):
        return os.path.abspath(path)


def find_sources(
    source: str | os.PathLike | Iterable[str | os.PathLike],
) -> tuple[list[Path], list[Rejection]]:
    """Expand a file, a folder, a glob or a list of them into files to read.

    Parameters
    ----------
    source : str, path-like, or an iterable of them
        A file; a folder (every file with a readable suffix below it,
        recursively, hidden files and folders skipped); or a glob pattern
        (``**`` allowed).

    Returns
    -------
    files : list of pathlib.Path
        Regular files, each once (a file named twice is read once), folder
        by folder in sorted order.
    problems : list of Rejection
        A file-level rejection (line 0) for each entry found in a folder or
        glob that is not a regular file.

    Raises
    ------
    AuditError
        When nothing matches, a named path is not a regular file, or a named
        file has a suffix the kit cannot read.
    """
    sources = [source] if isinstance(source, str | os.PathLike) else list(source)
    if not sources:
        raise AuditError("no source given: name a file, a folder or a glob to load.")
    files: list[Path] = []
    problems: list[Rejection] = []
    for item in sources:
        path = Path(item)
        if path.is_dir():
            found = _walk(path)
            if not found:
                raise AuditError(
                    f"{display_name(path)}: the folder holds no file to load (looked for "
                    f"{', '.join(_ALL_SUFFIXES)}). Point the loader at the folder that holds "
                    "the logs."
                )
        elif os.path.lexists(path):
            why = _not_regular(path)
            if why is not None:
                raise AuditError(f"{display_name(path)}: {why}")
            if not suffix_of(path):
                raise AuditError(
                    f"{display_name(path)}: cannot read this kind of file; expected one of "
                    f"{', '.join(_ALL_SUFFIXES)}."
                )
            found = [path]
        else:
            found = sorted(Path(m) for m in glob.glob(str(item), recursive=True))
            found = [m for m in found if suffix_of(m) and not os.path.isdir(m)]
            if not found:
                raise AuditError(
                    f"{item}: no such file or folder, and no readable file matches it as a glob."
                )
        for candidate in found:
            why = _not_regular(candidate)
            if why is None:
                files.append(candidate)
            else:
                problems.append(Rejection(display_name(candidate), 0, "file", why, ""))
    seen: set[str] = set()
    unique = []
    for path in files:
        # The same file named twice (a/x.jsonl and a/b/../x.jsonl) is read once.
        real = _real(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique, problems


def resolve_sources(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """The regular files :func:`find_sources` finds (what is not one is left out).

    Parameters
    ----------
    source : str, path-like, or an iterable of them

    Returns
    -------
    list of pathlib.Path
    """
    return find_sources(source)[0]
