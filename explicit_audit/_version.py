"""The installed version of the kit, and the digest of the code that makes a load's rows."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import marshal
import os
import sys
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["__version__", "code_digest"]

try:
    __version__ = version("explicit_audit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

_PACKAGE = __name__.rpartition(".")[0]


def code_digest(kinds: Iterable[Any]) -> str:
    """The SHA-256 of the code that makes a load's rows and the findings kept with them.

    The kit's own modules, every byte of them, and each module a registered
    kind from outside the kit hands it a function of (``matches``, ``build``,
    its checks' ``run`` ...), by its file's bytes; a function defined where no
    file holds it (a notebook's cell) by its compiled code. A cache entry or
    an audit state's rows made by other code are not reused: a fix to the
    reading, or to a plug-in kind, is never hidden behind rows made before it,
    whatever the version number says.

    Parameters
    ----------
    kinds : iterable of RecordKind
        The registered kinds.

    Returns
    -------
    str
        64 lowercase hex characters.
    """
    digest = hashlib.sha256(_kit_digest().encode("ascii"))
    for part in sorted(_outside_code(kinds)):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


@functools.cache
def _kit_digest() -> str:
    """The SHA-256 of the kit's modules: each one's path in the package and its bytes."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(name), name, len(data)) + data)
    return digest.hexdigest()


def _outside_code(kinds: Iterable[Any]) -> set[bytes]:
    """What identifies the code of each function the kinds hold that is not the kit's."""
    found: set[bytes] = set()
    seen: set[int] = set()
    pending = list(kinds)
    while pending:
        value = pending.pop()
        if id(value) in seen or value is None or isinstance(value, str | bytes | int | float):
            continue
        seen.add(id(value))
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            pending.extend(getattr(value, field.name) for field in dataclasses.fields(value))
        elif isinstance(value, tuple | list | frozenset | set):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, functools.partial):
            pending.extend((value.func, value.args, value.keywords))
        elif callable(value):
            module = getattr(value, "__module__", None) or ""
            if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
                found.add(_code_of(value, module))
    return found


def _code_of(function: Any, module: str) -> bytes:
    """A function's module file (its path and bytes), else its compiled code, else its name.

    A function whose code is not in its module's file (one defined in a notebook's
    cell, whose module is the kernel's ``__main__``) is known by its code.
    """
    path = getattr(sys.modules.get(module), "__file__", None)
    code = getattr(function, "__code__", None)
    in_file = path and (
        code is None or os.path.realpath(code.co_filename) == os.path.realpath(path)
    )
    if in_file:
        try:
            return b"file:%s\0%s" % (os.fsencode(path), Path(path).read_bytes())
        except OSError:
            pass
    if code is not None:
        return b"code:" + marshal.dumps(code)
    return f"name:{module}.{getattr(function, '__qualname__', repr(function))}".encode()
