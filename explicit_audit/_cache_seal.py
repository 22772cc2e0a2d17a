"""The load cache's seals: what lets a cached load prove that it serves what it wrote.

Every entry of the cache holds ``seal.json``: the entry's key (the SHA-256 of
the sources' names, sizes and digests and of the load's options,
:func:`explicit_audit.cache.cache_key`) and the size and SHA-256 of each file
of the entry, signed with an HMAC-SHA256. ``digests.json`` (the remembered
digests of the sources) is signed the same way. The signing key is a secret
of the user's own, never kept in the cache folder:

- the file named by ``$EXPLICIT_AUDIT_CACHE_SECRET``, or else
  ``$XDG_CONFIG_HOME/explicit_audit/cache-secret`` (``~/.config/...``);
- created on first use with 32 random bytes, readable by its owner only
  (``0600``, in a ``0700`` folder), and refused when anyone else may read or
  write it, when it is owned by another user, or when it lies inside the
  cache folder (which would give it to whoever can read the cache).

So a file of an entry changed (a byte flipped), swapped with a file of
another entry, an entry renamed to another key, or a seal or digests list
rewritten to match, is told apart from what this user's loads wrote: only
a holder of the secret can sign. A cache folder shared by several users
needs them to share the secret (``$EXPLICIT_AUDIT_CACHE_SECRET`` naming one
file each can read): whoever holds it is trusted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import stat
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .errors import AuditError
from .small_files import MAX_SMALL_FILE_BYTES, read_small_bytes, read_small_json

__all__ = [
    "SEAL",
    "SECRET_ENV",
    "TamperedCacheWarning",
    "cache_secret",
    "drop_entry",
    "seal_entry",
    "sealed_contents",
    "secret_path",
    "signed",
    "unsigned",
]

#: The environment variable that names the file holding the cache's secret.
SECRET_ENV = "EXPLICIT_AUDIT_CACHE_SECRET"
#: The file of an entry that seals it.
SEAL = "seal.json"
_FORMAT = "explicit_audit.cache-seal/1"
_SECRET_BYTES = 32


class TamperedCacheWarning(UserWarning):
    """A cache entry or ``digests.json`` did not match its seal: dropped, and read again."""


def secret_path() -> Path:
    """Where the cache's secret is kept: ``$EXPLICIT_AUDIT_CACHE_SECRET``, or the config folder."""
    given = os.environ.get(SECRET_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "explicit_audit" / "cache-secret"


def _create(path: Path) -> None:
    """Write a new secret, whole, unless one is there (another load may create it too)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as out:
            out.write(secrets.token_hex(_SECRET_BYTES) + "\n")
        os.link(partial, path)  # fails when another load created it first: that one is kept
    except FileExistsError:
        pass
    finally:
        partial.unlink(missing_ok=True)


def cache_secret(folder: str | os.PathLike) -> bytes:
    """The secret that signs the seals of the cache ``folder``, created on first use.

    Raises
    ------
    AuditError
        When it cannot be created or read, lies inside ``folder``, or another
        user may read or write it (naming the file and what to do).
    """
    path = secret_path()
    fix = f"set {SECRET_ENV} to a file of your own, outside the cache folder"
    if Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
        raise AuditError(f"{path}: the cache's secret lies inside the cache folder {folder}; {fix}")
    try:
        if not os.path.lexists(path):
            _create(path)
        found = os.stat(path)
        mine = not hasattr(os, "getuid") or found.st_uid == os.getuid()
        if not mine or found.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise AuditError(
                f"{path}: the cache's secret may be read or written by another user; run "
                f"chmod 600 {path} (as its owner), or {fix}"
            )
        secret = read_small_bytes(path, max_bytes=4096).strip()
    except OSError as exc:
        raise AuditError(
            f"{path}: cannot read or create the cache's secret ({exc}); {fix}"
        ) from None
    if len(secret) < _SECRET_BYTES:
        raise AuditError(f"{path}: the cache's secret is shorter than {_SECRET_BYTES} bytes; {fix}")
    return secret


def _mac(folder: Path, purpose: str, value: Any) -> str:
    text = json.dumps([_FORMAT, purpose, value], sort_keys=True, ensure_ascii=True)
    return hmac.new(cache_secret(folder), text.encode("ascii"), hashlib.sha256).hexdigest()


def signed(folder: Path, purpose: str, value: Any) -> dict[str, Any]:
    """``value`` with its signature, as kept in the cache ``folder`` for ``purpose``."""
    return {"format": _FORMAT, "value": value, "mac": _mac(folder, purpose, value)}


def unsigned(folder: Path, path: Path, purpose: str) -> tuple[Any, str | None]:
    """The value signed in ``path`` and None, or None and why it is not to be trusted."""
    try:
        document = read_small_json(path, max_bytes=MAX_SMALL_FILE_BYTES["digests"])
    except (OSError, ValueError) as exc:
        return None, f"cannot be read ({exc})"
    if not isinstance(document, dict) or document.get("format") != _FORMAT:
        return None, "not signed by this kit"
    expected = _mac(folder, purpose, document.get("value"))
    if not hmac.compare_digest(str(document.get("mac")), expected):
        return None, "its signature does not hold (written without this user's secret)"
    return document["value"], None


def seal_entry(entry: Path, key: str) -> None:
    """Write ``entry``'s seal: its key, and the size and SHA-256 of each of its files."""
    files = {}
    for path in sorted(entry.iterdir()):
        data = path.read_bytes()
        files[path.name] = [len(data), hashlib.sha256(data).hexdigest()]
    sealed = signed(entry.parent, "entry", {"key": key, "files": files})
    (entry / SEAL).write_text(json.dumps(sealed), encoding="utf-8")


def sealed_contents(entry: Path, key: str) -> tuple[dict[str, bytes], list[str]]:
    """Each file of ``entry`` read once, and what does not match its seal (empty when all does).

    The bytes returned are those whose digests were checked: parse them, never
    the files again.
    """
    if os.path.islink(entry) or not entry.is_dir():
        return {}, ["not a folder the cache wrote (a link, or a file)"]
    value, problem = unsigned(entry.parent, entry / SEAL, "entry")
    if problem is not None:
        return {}, [f"{SEAL} {problem}"]
    if value.get("key") != key:
        return {}, [f"sealed for another load (key {str(value.get('key'))[:16]}...)"]
    sealed = value.get("files", {})
    present = {path.name for path in entry.iterdir()} - {SEAL}
    problems = [f"{name} is not sealed" for name in sorted(present - set(sealed))]
    contents = {}
    # Read and hashed in threads, the largest first: reading from the page cache and
    # hashing both let go of the interpreter's lock, so two files go at once.
    names = sorted(sealed, key=lambda name: (-int(sealed[name][0]), name))
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        found = pool.map(lambda name: _read_hashed(entry, name, sealed), names)
        read = dict(zip(names, found, strict=True))
    for name in sorted(sealed):
        data, found = read[name]
        if isinstance(found, OSError):
            problems.append(f"{name} is not the file sealed ({found.strerror or found})")
            continue
        sha256 = sealed[name][1]
        if found != sha256:
            problems.append(f"{name} has SHA-256 {found[:16]}..., sealed {sha256[:16]}...")
        contents[name] = data
    return contents, problems


def _read_hashed(entry: Path, name: str, sealed: dict) -> tuple[bytes | None, str | OSError]:
    """A sealed file's bytes (at most its sealed size) and their SHA-256, or the error."""
    try:
        data = read_small_bytes(entry / name, max_bytes=int(sealed[name][0]))
    except OSError as exc:
        return None, exc
    return data, hashlib.sha256(data).hexdigest()


def drop_entry(entry: Path) -> None:
    """Remove an entry that failed its seal (a link is removed, never followed)."""
    if os.path.islink(entry) or not entry.is_dir():
        entry.unlink(missing_ok=True)
        return
    # Moved aside first, so that a load at the same time never reads it half removed.
    aside = entry.with_name(f".{entry.name}.{uuid.uuid4().hex}.dropped")
    try:
        os.replace(entry, aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)
