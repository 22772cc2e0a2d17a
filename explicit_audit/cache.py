"""The opt-in load cache: ``ea.load(source, cache=DIR)``.

A load's tables are kept in ``DIR`` (as ``Audit.to_parquet`` writes them,
:mod:`explicit_audit.parquet`, in Arrow's IPC format, its buffers
compressed with LZ4: read back with no parsing, about 3 times smaller than
the tables) under a key made of the code that makes them (the kit's
modules and those of plug-in kinds, :func:`~explicit_audit._version.code_digest`),
what was asked (the kinds kept, the limits) and every file of the source:
its name as tables show it, its size and the SHA-256 of its bytes. A later
load whose files hash the same reads the tables back instead of parsing the
files; a file changed, added, removed or renamed, other code (another version
of the kit, a plug-in kind edited), or other limits make another key, and the files are
parsed again (the entry of the old key stays: delete the folder to empty
the cache, at any time).

Hashing a file costs a read of it. ``DIR/digests.json`` remembers each
file's digest with its size, inode, and modification and change times
(``st_ctime`` changes on every write and cannot be set back): a file whose
``stat`` is as it was is not hashed again, unless it was modified less than
:data:`SETTLE_SECONDS` before it was hashed (a write within the clock's
granularity could leave the times as they were: such a file is hashed
again, as git treats a "racily clean" file).

An entry is written to a temporary folder beside it and moved into place
whole: a load interrupted while writing leaves no entry that could be read.

What a cached load trusts (:mod:`explicit_audit._cache_seal`): each entry
holds ``seal.json``, the size and SHA-256 of each of its files and the
entry's key, signed with an HMAC-SHA256 under a secret of the user's own
kept outside the cache folder; ``digests.json`` is signed the same way. A
load reads an entry's files into memory, checks every digest, the key and
the signature, and parses those same bytes; an entry with a file changed,
swapped from another entry, missing or added, or sealed for another key
(another load), and a ``digests.json`` whose signature does not hold, are
dropped, named in one warning, and the tables read from the sources again.
Without the secret, nobody can write an entry or a digest that a load
accepts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa

from ._cache_seal import (
    TamperedCacheWarning,
    drop_entry,
    seal_entry,
    sealed_contents,
    signed,
    unsigned,
)
from ._core.caller import warn
from ._version import __version__
from .errors import AuditError
from .parquet import ARROW_SUFFIX, read_sealed, write_parquet
from .reading.digests import file_digest
from .reading.names import display_name

__all__ = [
    "SETTLE_SECONDS",
    "TamperedCacheWarning",
    "cache_key",
    "file_digests",
    "lookup",
    "store",
]

_DIGESTS = "digests.json"
#: A file modified less than this before it was hashed is hashed again at the next load.
SETTLE_SECONDS = 2


def _stat_key(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]


# Why a cache folder's digests.json was dropped, until the load's one warning names it
# (with the entry's problems, when its entry is dropped too).
_DROPPED: dict[str, str] = {}


def _remembered(directory: Path) -> dict:
    """The digests remembered in ``digests.json``; none when its signature does not hold."""
    path = directory / _DIGESTS
    if not os.path.lexists(path):
        return {}
    found, problem = unsigned(directory, path, "digests")
    if problem is None:
        return found
    path.unlink(missing_ok=True)
    _DROPPED[os.path.realpath(directory)] = f"{path}: {problem}: dropped, every file hashed again"
    return {}


def _warn_tampered(directory: Path, entry_problem: str | None) -> None:
    """The one warning of a load that dropped what did not match its seal, if it did."""
    found = [_DROPPED.pop(os.path.realpath(directory), None), entry_problem]
    found = [problem for problem in found if problem is not None]
    if found:
        warn(
            f"{'; and '.join(found)}. A cache folder must be writable by its owner only",
            TamperedCacheWarning,
        )


def file_digests(
    paths: list[Path], directory: str | os.PathLike | None = None
) -> dict[str, tuple[int, str]] | None:
    """``{name: (bytes, SHA-256)}`` of every file, or None when one cannot be read.

    An unreadable file is left to the reading, which names it; the load is
    then not cached. With ``directory`` (the cache), a digest remembered for
    a file whose ``stat`` is unchanged is used instead of hashing it again,
    when ``digests.json`` holds its signature.
    """
    folder = None if directory is None else Path(directory)
    remembered = {} if folder is None else _remembered(folder)
    changed = False
    found: dict[str, tuple[int, str]] = {}
    for path in paths:
        try:
            stat = os.stat(path)
            real = os.path.realpath(path)
            known = remembered.get(real)
            if isinstance(known, dict) and known.get("stat") == _stat_key(stat):
                found[display_name(path)] = (known["bytes"], known["sha256"])
                continue
            hashed_at = time.time_ns()
            size, sha256 = file_digest(path)  # as the load hashes it: up to its size at open
        except OSError:
            if folder is not None:
                _warn_tampered(folder, None)  # no lookup follows: say it now
            return None
        found[display_name(path)] = (size, sha256)
        after = os.stat(path)
        settled = hashed_at - after.st_mtime_ns > SETTLE_SECONDS * 10**9
        if folder is not None and settled and _stat_key(after) == _stat_key(stat):
            remembered[real] = {"stat": _stat_key(stat), "bytes": size, "sha256": sha256}
            changed = True
    if changed:
        _write_json(folder, _DIGESTS, signed(folder, "digests", remembered))
    return found


def _write_json(folder: Path, name: str, value: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{name}.{uuid.uuid4().hex}.partial"
    try:
        partial.write_text(json.dumps(value), encoding="utf-8")
        os.replace(partial, folder / name)
    except OSError:
        # A cache that cannot remember a digest hashes the file again next time.
        partial.unlink(missing_ok=True)


def cache_key(digests: dict[str, tuple[int, str]], asked: dict[str, Any]) -> str:
    """The entry's name: the SHA-256 of the kit's version, ``asked`` and every file's digest.

    Parameters
    ----------
    digests : dict
        ``{name: (bytes, SHA-256)}`` of every file, in the order read.
    asked : dict
        What else shapes the tables (the code that makes them,
        :func:`~explicit_audit._version.code_digest`; kinds kept, limits, other
        entries found), as JSON values.
    """
    described = {
        "version": __version__,
        "asked": asked,
        "files": [[name, *found] for name, found in digests.items()],
    }
    text = json.dumps(described, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lookup(directory: str | os.PathLike, key: str) -> dict[str, Any] | None:
    """The parts of the audit cached under ``key``, or None when there is none.

    The entry's files are read once, checked against its seal, and parsed as
    read. An entry that does not match its seal (or is sealed for another key)
    is dropped and named in one :class:`TamperedCacheWarning`; None is
    returned, so that the load reads the sources and writes the entry anew.
    """
    entry = Path(directory) / key
    if not os.path.lexists(entry):
        _warn_tampered(Path(directory), None)
        return None
    contents, problems = sealed_contents(entry, key)
    if not problems:
        try:
            parts = read_sealed(contents, entry)
        except (AuditError, ValueError, TypeError, KeyError, pa.ArrowException) as exc:
            problems = [f"sealed, yet unreadable ({exc})"]
        else:
            _warn_tampered(Path(directory), None)
            return parts
    drop_entry(entry)
    _warn_tampered(
        Path(directory),
        f"{entry}: the cache entry does not match its seal ({'; '.join(problems)}): dropped, "
        "and the tables read from the sources again",
    )
    return None


def store(directory: str | os.PathLike, key: str, parts: dict[str, Any]) -> None:
    """Cache an audit's parts (the keywords of ``Audit``) under ``key``, sealed.

    Written beside the entry and moved into place; when another load wrote
    the same entry meanwhile, that one is kept.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    entry = folder / key
    if os.path.lexists(entry):
        return
    partial = folder / f".{key}.{uuid.uuid4().hex}.partial"
    try:
        write_parquet(
            parts["tables"],
            rejected=parts["rejected"],
            sources=parts["sources"],
            files=parts["files"],
            documents=parts["documents"],
            directory=partial,
            digests=parts.get("digests"),
            suffix=ARROW_SUFFIX,
            keys=parts.get("keys"),
        )
        seal_entry(partial, key)
        os.replace(partial, entry)
    except OSError:
        # Another load moved the same entry into place first: keep that one.
        if not entry.exists():
            raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
