"""The options of every loader, declared once: :class:`LoadOptions`.

``ea.load`` and every per-kind loader (``ea.load_plans``, ...) take these
keywords after the source, and nothing else; :func:`resolved` checks them
once and gives each its default, as one typed :class:`Options` the load
reads from then on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict

from .._core.engine import reads_lazily
from .._core.extras import require
from .._core.progress import wanted
from ..errors import AuditError
from .limits import DEFAULT_LIMITS, Limits, limits_from

__all__ = ["ENGINES", "LoadOptions", "Options", "resolved"]

#: The engines a load can run on.
ENGINES = ("pandas", "dask")


class LoadOptions(TypedDict, total=False):
    """The keywords every loader takes after ``source``; each may be left out.

    Attributes
    ----------
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded (for a bad policy file, a
        :class:`~explicit_audit.PolicyError`), instead of collecting it in
        ``Audit.rejected``.
    strict_keys : bool, default False
        Reject a record holding a key its kind does not declare (at any level
        of the objects it declares; at the top level of a line, a likely typo
        of a declared key): a rejected row naming file, line and every such
        key, instead of an ``unknown_key`` notice of the check
        ``record_keys``.
    progress : bool, optional
        Show a progress bar over the bytes read (tqdm), after half a second.
        By default on in a terminal and in Jupyter, off under CI or when
        standard error is not a terminal; ``EXPLICIT_AUDIT_PROGRESS=0/1``
        decides where the call does not (:mod:`explicit_audit._core.progress`).
    limits : Limits or dict, optional
        Reading limits (nesting depth, value size, decompressed size, rejected
        rows kept); a dict overrides the defaults of
        :mod:`explicit_audit.reading.limits`.
    engine : {"pandas", "dask"}, default "pandas"
        ``"dask"`` returns lazy ``dask.dataframe`` tables, read partition by
        partition when computed (see ``docs/howto/dask.md``).
    blocksize : int, optional
        With ``engine="dask"``: bytes per partition of a large JSON Lines
        file (default 64 MiB).
    sample_bytes : int, optional
        With ``engine="dask"``: bytes of each file's head read at once to
        learn the tables' columns (default 1 MiB).
    threads : int, optional
        Threads a load reads with: with 1, every file is read, split and
        parsed in the calling thread; with 2 or more (the default, unless
        ``OMP_NUM_THREADS=1`` or the machine has one core), the next piece of
        a file is read, decompressed, hashed and split in a second thread
        while the current one is parsed, and pyarrow parses in its own thread
        pool. The tables are the same either way. Shorthand for the limit
        ``max_threads``.
    cache : str or path-like, optional
        A folder where the tables of this load are kept, keyed by the kit's
        version and every file's SHA-256: a later load of unchanged files
        reads them back instead of parsing (:mod:`explicit_audit.cache`).
        The pandas engine, local files only.
    state : str or path-like, optional
        An audit state folder (:mod:`explicit_audit.state`, ``docs/state.md``):
        the bytes of each file audited before are hashed again, only the bytes
        appended since are read, and any edit of the audited bytes (a changed
        line, a file cut short, replaced or gone; a rotation, as a notice) is
        in ``Audit.changes``, a finding of ``verify_all``. ``ea.load``, local
        files only; with ``engine="dask"`` only the edits are found (every
        file is read whole).
    storage_options : dict, optional
        For URLs: passed to fsspec as the file system's options (credentials,
        ``client_kwargs``, request ``headers``, ...), e.g.
        ``{"key": ..., "secret": ...}`` for ``s3://``. The pandas engine: a
        Dask load's workers take theirs from their own environment, so that
        no credential travels in its task graph.
    """

    strict: bool
    strict_keys: bool
    progress: bool | None
    limits: Limits | dict | None
    engine: str
    blocksize: int | None
    sample_bytes: int | None
    cache: str | os.PathLike | None
    threads: int | None
    state: str | os.PathLike | None
    storage_options: dict | None


@dataclass(frozen=True)
class Options:
    """A load's options, checked, with every default filled in (:func:`resolved`).

    As :class:`LoadOptions` says of each, but for ``progress``, decided
    (:func:`~explicit_audit._core.progress.wanted`), and ``limits``, a
    :class:`~explicit_audit.reading.limits.Limits` that holds ``threads``
    as its ``max_threads``.
    """

    strict: bool = False
    strict_keys: bool = False
    progress: bool = False
    limits: Limits = DEFAULT_LIMITS
    engine: str = "pandas"
    blocksize: int | None = None
    sample_bytes: int | None = None
    cache: str | os.PathLike | None = None
    state: str | os.PathLike | None = None
    storage_options: dict | None = None
    #: ``{name: Origin}`` of files that are copies, for ``state``: each known to the state
    #: by the file it was copied from (a report's copy). Set by the kit, never a keyword.
    origins: Mapping[str, Any] | None = None
    #: For ``state``: the run is reported after the load (``verify --state``, ``report
    #: --state``), and the state keeps the edits found until it is. Set by the kit.
    reported_later: bool = False


def resolved(options: dict[str, Any], what: str = "load") -> Options:
    """The keywords a loader was given (``**options``) as one :class:`Options`.

    Raises
    ------
    TypeError
        For a keyword that is not a :class:`LoadOptions` key, as Python says it.
    AuditError
        For an engine that is not one of :data:`ENGINES`, or a ``cache=`` or
        ``state=`` that names a file (or lies under one).
    """
    unknown = sorted(set(options) - set(LoadOptions.__annotations__))
    if unknown:
        raise TypeError(f"{what}() got an unexpected keyword argument {unknown[0]!r}")
    given = {name: value for name, value in options.items() if name != "threads"}
    limits = limits_from(options.get("limits"))
    if options.get("threads") is not None:
        limits = replace(limits, max_threads=options["threads"])
    found = Options(**{**given, "progress": wanted(options.get("progress")), "limits": limits})
    if found.engine not in ENGINES:
        raise AuditError(f"unknown engine {found.engine!r}; choose one of {', '.join(ENGINES)}")
    if found.state is not None and found.cache is not None:
        raise AuditError("give state= or cache=, not both: a state keeps the rows it audited")
    for name in ("cache", "state"):
        _a_folder(name, getattr(found, name))
    if reads_lazily(found.engine):
        if found.cache is not None:
            raise AuditError(
                'cache= keeps in-memory tables: use it with engine="pandas" (a Dask load '
                "reads its partitions when computed)"
            )
        if found.storage_options is not None:
            raise AuditError(
                'storage_options= is for engine="pandas": a Dask load\'s workers open each URL '
                "with the credentials of their own environment (none travels in the task graph)"
            )
        require("dask", 'engine="dask"')
    return found


def _a_folder(option: str, value: str | os.PathLike | None) -> None:
    """Refuse a ``cache=`` or ``state=`` that names a file, or lies under one."""
    if value is None:
        return
    path = Path(value)
    for part in (path, *path.parents):
        if os.path.lexists(part):
            if not part.is_dir():
                raise AuditError(
                    f"{option}={os.fspath(value)!r}: {part} is not a folder; name a folder "
                    "of its own for it"
                )
            return
