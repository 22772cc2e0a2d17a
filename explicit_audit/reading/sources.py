"""Files, folders and globs into the regular files to read.

Only regular files are read. Found in a folder, anything else (a FIFO, a
socket, a device, a symbolic link that points nowhere or at itself) becomes a
file-level rejection naming it, never an open that could hang or read without
end; so does a folder that cannot be listed. A path named on its own that is
not a regular file is an error.

Links to folders are followed, each real folder once: a link back to a
folder already walked (a loop) is listed as skipped, not walked again; so is
a link to a file already read (a file is read under its own name). What is
passed over for its name (a hidden file or folder, a suffix the kit does not
read) is listed too (:class:`Scan`), with the reason; a link that points
nowhere is named a dangling link, whatever its name. Rotated logs are
read by their base suffix: ``dec.jsonl.1`` as ``.jsonl``, ``dec.jsonl.2.gz``
as ``.jsonl.gz``.

File names are kept as given for reading; the name shown in tables
(:func:`display_name`) writes bytes that are not UTF-8 as ``\\xNN``, so that
any file name can be stored as text.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from urllib.parse import urlsplit

from .._core.records import Rejection
from ..errors import AuditError
from .names import display_name

__all__ = [
    "CANNOT_LIST",
    "CANNOT_READ",
    "DATA_SUFFIXES",
    "POLICY_SUFFIXES",
    "Scan",
    "is_gzip_name",
    "is_jsonl_name",
    "is_plain_jsonl_name",
    "is_policy_name",
    "scan_sources",
    "suffix_of",
    "unreadable_problems",
]

DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
POLICY_SUFFIXES = (".yaml", ".yml")
_ALL_SUFFIXES = (*DATA_SUFFIXES, *POLICY_SUFFIXES)
#: How a file-level rejection starts when the system would not let the kit
#: read a file, or list a folder: nothing in it was checked (exit 2).
CANNOT_READ = "cannot read: "
CANNOT_LIST = "cannot list the folder: "
# logrotate's names: a number after the suffix, then maybe its own ``.gz``.
_ROTATED = re.compile(r"^(?P<base>.+?)\.\d+(?P<gz>\.gz)?$")


def suffix_of(path: Path | str) -> str:
    """The suffix the kit reads a file by (``".jsonl.gz"``), or ``""`` for none.

    A rotated log is read by its base suffix.

    Examples
    --------
    >>> suffix_of("logs/dec.jsonl.2.gz"), suffix_of("dec.json.1"), suffix_of("notes.txt.1")
    ('.jsonl.gz', '.json', '')
    >>> suffix_of("https://host/x.json?X-Amz-Signature=1"), suffix_of("https://h/p.yaml#v")
    ('.json', '.yaml')
    """
    # A Path's name is at hand, as is a plain name's; any other path is made a Path.
    if isinstance(path, PurePath):
        name = path.name.lower()
    else:
        text = os.fsdecode(path)
        if "://" in text:  # a URL: its path names the file, not its query or fragment
            text = urlsplit(text).path
        name = (text if "/" not in text else Path(text).name).lower()
    found = next((suffix for suffix in _ALL_SUFFIXES if name.endswith(suffix)), "")
    if found:
        return found
    rotated = _ROTATED.match(name)
    if rotated is None:
        return ""
    base = rotated["base"] + (rotated["gz"] or "")
    # Only data logs rotate; a numbered policy file is not a policy.
    return next((suffix for suffix in DATA_SUFFIXES if base.endswith(suffix)), "")


def is_plain_jsonl_name(path: Path | str) -> bool:
    """Whether a file is read as JSON Lines and its name does not say gzip."""
    suffix = suffix_of(path)
    return suffix.startswith((".jsonl", ".ndjson")) and not suffix.endswith(".gz")


def is_jsonl_name(path: Path | str) -> bool:
    """Whether a file is read as JSON Lines (one value per line)."""
    return suffix_of(path).startswith((".jsonl", ".ndjson"))


def is_policy_name(path: Path | str) -> bool:
    """Whether a file is a routing policy (YAML), by its name; a rotated one is not."""
    return suffix_of(path) in POLICY_SUFFIXES


def is_gzip_name(path: Path | str) -> bool:
    """Whether a file's name says it is gzip-compressed."""
    return suffix_of(path).endswith(".gz")


def _not_regular(path: Path) -> str | None:
    """Why a path found in a folder cannot be read as a file, or None when it can."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"{CANNOT_READ}{_broken_link(path, exc) or exc.strerror or exc}"
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


def _broken_link(path: Path, exc: OSError) -> str | None:
    """What a link that leads to no file is (dangling, or a loop), or None for another path."""
    try:
        target = os.readlink(path)
    except OSError:
        return None  # not a link: the system's own reason says it
    if exc.errno == errno.ENOENT:
        return f"a dangling link (its target {display_name(target)} does not exist)"
    if exc.errno == errno.ELOOP:
        return f"a link in a loop of links ({exc.strerror})"
    return None


@dataclass
class Scan:
    """What a source expands into, before any file is read.

    Attributes
    ----------
    files : list of Path
        Regular files to read, each once.
    problems : list of Rejection
        A file-level rejection (line 0) for each entry that is not a regular
        file, and for each folder that cannot be listed.
    skipped : list of (Path, str)
        What was passed over on purpose, with the reason: hidden files and
        folders, names without a suffix the kit reads, links to a folder
        already walked or to a file already read.
    strays : list of Path
        The entries of ``problems`` that exist but are not regular files (a
        FIFO, a socket, a device), as found.
    """

    files: list[Path] = field(default_factory=list)
    problems: list[Rejection] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    strays: list[Path] = field(default_factory=list)


def _skip_reason(path: Path) -> str | None:
    if path.name.startswith("."):
        return "a hidden file: not read"
    if not suffix_of(path):
        try:
            os.stat(path)
        except OSError as exc:  # said for what it is, whatever its name
            broken = _broken_link(path, exc)
            if broken is not None:
                return f"{broken}: not read"
        return f"no suffix the kit reads ({', '.join(_ALL_SUFFIXES)}): not read"
    return None


def _walk(folder: Path, scan: Scan) -> list[Path]:
    found = []
    walked = {_real(folder)}

    def cannot_list(exc: OSError) -> None:
        where = exc.filename if exc.filename is not None else folder
        scan.problems.append(
            Rejection(display_name(where), 0, "file", f"{CANNOT_LIST}{exc.strerror or exc}", "")
        )

    # Links to folders are followed; each real folder is walked once, so a
    # link loop cannot make the walk endless.
    for root, dirs, files in os.walk(folder, onerror=cannot_list, followlinks=True):
        kept = []
        # Folders themselves before links to them: a folder is read under its own name.
        for name in sorted(dirs, key=lambda d: (os.path.islink(os.path.join(root, d)), d)):
            path = Path(root, name)
            if name.startswith("."):
                scan.skipped.append((path, "a hidden folder: not read"))
                continue
            real = _real(path)
            if real in walked:
                what = "a link to a folder" if path.is_symlink() else "a folder"
                why = f"{what} already read ({display_name(real)}): not read again"
                scan.skipped.append((path, why))
                continue
            walked.add(real)
            kept.append(name)
        dirs[:] = sorted(kept)
        for name in files:
            path = Path(root, name)
            why = _skip_reason(path)
            if why is None:
                found.append(path)
            else:
                scan.skipped.append((path, why))
    # As Paths sort (part by part), with each key made once.
    return sorted(found, key=_parts)


def _parts(path: Path) -> tuple[str, ...]:
    return path.parts


def _real(path: Path, folders: dict[str, str] | None = None) -> str:
    """The real path of ``path``; ``folders`` keeps the real path of each folder met.

    A file that is not a link is its real folder's entry: its folder is
    resolved once for all of its files, not once per file.
    """
    try:
        if folders is not None and not os.path.islink(path):
            folder, name = os.path.split(os.fspath(path))
            if name not in ("", ".", ".."):
                real = folders.get(folder)
                if real is None:
                    real = folders[folder] = os.path.realpath(folder or ".")
                return os.path.join(real, name)
        return os.path.realpath(path)
    except (OSError, RuntimeError, ValueError):
        return os.path.abspath(path)


def scan_sources(source: str | os.PathLike | Iterable[str | os.PathLike]) -> Scan:
    """Expand a file, a folder, a glob or a list of them into files to read.

    Parameters
    ----------
    source : str, path-like, or an iterable of them
        A file; a folder (every file with a readable suffix below it,
        recursively, links to folders followed, hidden files and folders
        skipped); or a glob pattern (``**`` allowed).

    Returns
    -------
    Scan
        The regular files, each once (a file named twice is read once),
        folder by folder in sorted order; the file-level problems; what was
        skipped, and why.

    Raises
    ------
    AuditError
        When nothing matches, a named path is not a regular file, a named
        folder cannot be listed, or a named file has a suffix the kit cannot
        read.
    """
    sources = [source] if isinstance(source, str | bytes | os.PathLike) else list(source)
    if not sources:
        raise AuditError("no source given: name a file, a folder or a glob to load.")
    scan = Scan()
    files: list[Path] = []
    for item in sources:
        path = Path(os.fsdecode(item))
        try:
            os.stat(path)
        except FileNotFoundError:
            pass  # maybe a glob, or a dangling link: told apart below
        except OSError as exc:  # a name too long, a loop of links: not a source to read
            raise AuditError(f"{display_name(path)}: {exc.strerror or exc}") from None
        if path.is_dir():
            before = len(scan.problems)
            found = _walk(path, scan)
            if not found and len(scan.problems) == before:
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
            matched = sorted(Path(m) for m in glob.glob(os.fsdecode(item), recursive=True))
            matched = [m for m in matched if not os.path.isdir(m)]
            found = [m for m in matched if suffix_of(m)]
            if not found:
                raise AuditError(
                    f"{display_name(os.fsdecode(item))}: no such file or folder, and no "
                    "readable file matches it as a glob."
                )
            scan.skipped.extend((m, why) for m in matched if (why := _skip_reason(m)))
        for candidate in found:
            why = _not_regular(candidate)
            if why is None:
                files.append(candidate)
            else:
                scan.problems.append(Rejection(display_name(candidate), 0, "file", why, ""))
                if not why.startswith(CANNOT_READ):
                    scan.strays.append(candidate)
    _read_once(files, scan)
    return scan


def _read_once(files: list[Path], scan: Scan) -> None:
    """Each real file of ``files`` into ``scan.files`` once; the other names of it skipped.

    The same file named twice (a/x.jsonl and a/b/../x.jsonl, or a link to
    it) is read once, under its own name rather than a link's: each other
    name is listed as skipped, naming the one read (a name given twice as
    it is, only dropped).
    """
    folders: dict[str, str] = {}
    reals = [_real(path, folders) for path in files]
    read_as: dict[str, int] = {}
    for index, real in enumerate(reals):
        read_as.setdefault(real, index)
    if len(read_as) < len(files):
        # Files themselves before links to them (the order is kept otherwise).
        named = sorted(range(len(files)), key=lambda index: os.path.islink(files[index]))
        read_as = {}
        for index in named:
            read_as.setdefault(reals[index], index)
    for index, path in enumerate(files):
        first = read_as[reals[index]]
        if first == index:
            scan.files.append(path)
        elif path != files[first]:
            what = "a link to a file" if os.path.islink(path) else "the same file as one"
            why = f"{what} already read ({display_name(files[first])}): not read again"
            scan.skipped.append((path, why))


def unreadable_problems(rejections: Iterable[Rejection]) -> list[Rejection]:
    """The file-level rejections of what the system would not let the kit read or list.

    Parameters
    ----------
    rejections : iterable of Rejection

    Returns
    -------
    list of Rejection
        Those of kind ``"file"`` whose reason starts with :data:`CANNOT_READ`
        or :data:`CANNOT_LIST`: nothing in them was checked.
    """
    return [
        r
        for r in rejections
        if r.kind == "file" and r.reason.startswith((CANNOT_READ, CANNOT_LIST))
    ]
