"""One entry point, ``ea.load(source, **options)``, on either engine; and ``load_bytes``.

:func:`load` reads every file once, sorts each JSON value into its record
kind by its shape, and hands each registered kind its values to build that
kind's tables (:mod:`explicit_audit.audit`), or plans the same as lazy Dask
tables (:mod:`explicit_audit.partitioned`). Its options are declared once,
in :class:`~explicit_audit.LoadOptions`; every per-kind loader
(``ea.load_plans``, ...) takes the same ones, through :func:`load_tables`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from typing import Unpack

from ._core import registry
from ._core.engine import reads_lazily
from ._core.progress import step_progress
from ._core.records import RecordKind, Rejection
from ._version import code_digest
from .audit import Audit, audit_of_reading
from .cache import cache_key, file_digests, lookup, store
from .errors import AuditError
from .parquet import read_parquet as _read_parquet
from .reading.collect import Reading, Source, list_sources, read_all
from .reading.gc_pause import cyclic_gc_paused
from .reading.limits import Limits, limits_from, shaping
from .reading.options import ENGINES, LoadOptions, Options, resolved
from .reading.reader import read_bytes
from .reading.remote import has_remote, local_source, read_remote
from .reading.tables import warn_extra_json, warn_or_raise, warn_unparsed_times

__all__ = ["ENGINES", "LoadOptions", "load", "load_bytes", "load_tables", "read_parquet"]

_log = logging.getLogger(__name__)


def load(source: Source, **options: Unpack[LoadOptions]) -> Audit:
    """Load every audit record from files, folders or globs.

    Each JSON value is sorted into its record kind by its shape, so a folder
    of mixed logs just works. YAML files are read as routing policies.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        A file, a folder (read recursively), a glob, or a list of them.
    **options
        ``strict``, ``strict_keys``, ``progress``, ``limits``, ``engine``, ``blocksize``,
        ``sample_bytes``, ``cache``, ``state``, ``threads``: see
        :class:`~explicit_audit.LoadOptions`.

    Returns
    -------
    Audit

    Warns
    -----
    RejectedRowsWarning
        When some input was rejected: how many, and where to look.

    Examples
    --------
    >>> audit = ea.load("data/", progress=False)  # doctest: +SKIP
    >>> int(audit.receipts.withheld_count.sum()) > 0  # doctest: +SKIP
    True
    """
    return load_settled(source, resolved(options))


def load_settled(source: Source, settings: Options) -> Audit:
    """:func:`load` with its options already checked: one :class:`Options`."""
    kinds = registry.kinds()
    if reads_lazily(settings.engine) and settings.state is not None:
        from .state.lazy import with_state

        return with_state(source, settings, lambda: _lazy_audit(source, kinds, settings))
    if reads_lazily(settings.engine):
        return _lazy_audit(source, kinds, settings)
    if settings.state is not None:
        from .state.load import load_with_state

        return load_with_state(source, settings)
    return _in_memory(source, settings, None)


def _in_memory(source: Source, settings: Options, keep: str | None) -> Audit:
    """The pandas engine's load of every kind (``keep`` None) or of one kind's tables.

    With ``cache=``, read back from the cache when every file hashes as it did.
    """
    kinds = registry.kinds()
    limits = settings.limits

    def parsed() -> Audit:
        # No cyclic garbage collection while the values are read and built (see gc_pause).
        with cyclic_gc_paused():
            return _parsed()

    def _parsed() -> Audit:
        started = time.perf_counter()
        reading = _read(
            source,
            kinds,
            progress=settings.progress,
            keep=None if keep is None else {keep},
            limits=limits,
            storage_options=settings.storage_options,
        )
        read_at = time.perf_counter()
        _log.info(
            "read %d file(s), %s bytes, in %.2f s",
            len(reading.files),
            f"{sum(d.bytes for d in reading.digests.values()):,}",
            read_at - started,
        )
        building = kinds if keep is None else [registry.kind(keep)]
        with step_progress(len(building), settings.progress) as step:

            def on_kind(name: str | None) -> None:
                if name is not None:
                    _log.debug("building the %s tables", name)
                if step is not None:
                    step(name)

            audit = _built(reading, building, keep, settings, on_kind)
        if _log.isEnabledFor(logging.INFO):
            rows = ", ".join(f"{name}={count}" for name, count in audit.summary().values.tolist())
            _log.info("built the tables in %.2f s: %s", time.perf_counter() - read_at, rows)
        return audit

    if settings.cache is None:
        return parsed()
    return _cached(source, settings, keep, limits, parsed)


def _built(reading: Reading, building, keep: str | None, settings: Options, on_kind) -> Audit:
    """The audit of one reading: every kind's tables, or (``keep``) one kind's."""
    if keep is None:
        return audit_of_reading(
            reading,
            building,
            strict=settings.strict,
            strict_keys=settings.strict_keys,
            on_kind=on_kind,
        )
    # One kind's loader: values of other kinds are recognised, so only what no kind
    # claims (or a file-level problem) is its rejection; the policies are not its own.
    reading.rejections = [r for r in reading.rejections if r.kind in ("unknown", "file")]
    reading.policy_files = []
    return audit_of_reading(
        reading,
        building,
        strict=settings.strict,
        documents=False,
        strict_keys=settings.strict_keys,
        on_kind=on_kind,
    )


def _cached(source: Source, settings: Options, keep: str | None, limits, parsed) -> Audit:
    source = local_source(source)
    if has_remote(source):
        raise AuditError(
            "cache= keys each file by the SHA-256 of its bytes, read before it is parsed: it "
            "works on local files, not on URLs, file objects or standard input"
        )
    listing = list_sources(source)
    digests = file_digests([*listing.policy_files, *listing.data_files], settings.cache)
    if digests is None:
        return parsed()  # a file that cannot be read: the reading names it
    asked = {
        "code": code_digest(registry.kinds()),
        "keep": keep,
        "kinds": [kind.name for kind in registry.kinds()],
        "limits": shaping(limits),
        "strict_keys": settings.strict_keys,
        "problems": [[p.source_file, p.reason] for p in listing.problems],
        # What the listing passed over is a row of the sources too.
        "skipped": [[name, why] for name, why in listing.skipped],
    }
    key = cache_key(digests, asked)
    parts = lookup(settings.cache, key)
    _log.info("cache %s: %s", "hit" if parts is not None else "miss", key)
    if parts is not None:
        audit = Audit(**{**parts, "digests": {**parts["digests"], **digests}})
        rejections = [
            Rejection(row.source_file, int(row.source_line), str(row.kind), row.reason, row.raw)
            for row in audit.rejected.itertuples(index=False)
        ]
        # As when the files were parsed: the same warnings, or the same error under strict.
        declared = registry.documents() if keep is None else []
        warn_or_raise(rejections, settings.strict, declared)
        warn_unparsed_times(audit.tables)
        warn_extra_json(audit.tables, limits)
        return audit
    audit = parsed()
    changed = [n for n, digest in digests.items() if tuple(audit.digests.get(n, digest)) != digest]
    if changed:
        # Rewritten between its hash and its reading: its rows are of other bytes than
        # those the key names, and are not kept; the digests are those of the bytes read.
        _log.info("cache: not kept, %s changed while it was read", ", ".join(changed))
        return audit
    store(
        settings.cache,
        key,
        {
            "tables": audit.tables,
            "documents": audit.documents,
            "rejected": audit.rejected,
            "files": audit.files,
            "sources": audit.sources,
            "digests": audit.digests,
            "keys": audit.keys,
        },
    )
    audit.digests.update(digests)
    return audit


def _read(source: Source, kinds, storage_options=None, **options) -> Reading:
    """Every file of ``source`` read: local paths, or URLs, file objects and ``-`` among them."""
    source = local_source(source)
    if has_remote(source):
        return read_remote(source, kinds, storage_options=storage_options, **options)
    return read_all(source, kinds, **options)


def _partitioned(source: Source, kinds, keep: set[str] | None, settings: Options):
    # The Dask engine's modules are imported only for a Dask load.
    from .partitioned.load import load_partitioned

    return load_partitioned(
        source,
        kinds,
        keep=keep,
        strict=settings.strict,
        strict_keys=settings.strict_keys,
        limits=settings.limits,
        blocksize=settings.blocksize,
        sample_bytes=settings.sample_bytes,
    )


def _lazy_audit(source: Source, kinds, settings: Options) -> Audit:
    """The Dask audit of every kind, planned again with longer heads where they fall short."""
    from .partitioned.conform import SampleError
    from .partitioned.parts import DEFAULT_SAMPLE_BYTES

    planned = _partitioned(source, kinds, None, settings)
    sample = settings.sample_bytes or DEFAULT_SAMPLE_BYTES

    def retry(step):
        try:
            return step(audit)
        except SampleError as error:
            if error.needed is None or error.needed <= sample:
                raise
            wider = dataclasses.replace(settings, sample_bytes=max(error.needed, 2 * sample))
            return _lazy_audit(source, kinds, wider).retry(step)

    audit = Audit(
        tables=planned.tables,
        documents=planned.documents,
        rejected=planned.rejected,
        files=planned.files,
        sources=planned.sources,
        keys=planned.keys,
        retry=retry,
    )
    return audit


def load_tables(source: Source, kind: RecordKind, **options: Unpack[LoadOptions]) -> dict:
    """The tables of one record kind from ``source``: what every per-kind loader returns.

    Values of other kinds are recognised and skipped; values that no kind
    claims, or that this kind claims but that do not fit it, are rejected
    (announced by a :class:`~explicit_audit.RejectedRowsWarning`, or raised
    under ``strict``).

    Parameters
    ----------
    source : str, path-like, or iterable of them
    kind : RecordKind
    **options
        See :class:`~explicit_audit.LoadOptions`.

    Returns
    -------
    dict of str to DataFrame
        The kind's tables, by name.
    """
    settings = resolved(options, what=f"load_{kind.name}")
    if settings.state is not None:
        raise AuditError("state= is for ea.load, which audits every kind of the files")
    if reads_lazily(settings.engine):
        return _partitioned(source, registry.kinds(), {kind.name}, settings).tables
    return _in_memory(source, settings, kind.name).tables


def load_bytes(
    data: bytes,
    *,
    source_file: str,
    first_line: int = 1,
    lines: bool = True,
    strict: bool = False,
    limits: Limits | dict | None = None,
    strict_keys: bool = False,
) -> Audit:
    """Load the records held in bytes, as if read from ``source_file``.

    For records that do not come from a file the kit opens (the body of an
    HTTP response, a message from a queue) or a part of a file read on its
    own (a byte range of a large JSON Lines file): the rows carry
    ``source_file`` and the line numbers of the file they came from, and the
    same pipeline, limits and rejected rows as :func:`load` apply.

    Parameters
    ----------
    data : bytes
        The content, decompressed; for JSON Lines, whole lines.
    source_file : str
        The file the bytes come from, as rows and rejections name it.
    first_line : int, default 1
        The file line on which ``data`` starts.
    lines : bool, default True
        JSON Lines (one value per line); False for ``.json`` content (an
        array, a record, or values one after another).
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` at the first rejection.
    limits : Limits or dict, optional
        Reading limits, as for :func:`load`.
    strict_keys : bool, default False
        Reject a record holding a key its kind does not declare, as for :func:`load`.

    Returns
    -------
    Audit
        With one entry in ``files`` and ``sources``: ``source_file``.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(action="ignore"):
    ...     part = ea.load_bytes(b'{"not": "a record"}\\n', source_file="log.jsonl", first_line=41)
    >>> part.rejected[["source_file", "source_line", "kind"]].to_dict("records")
    [{'source_file': 'log.jsonl', 'source_line': 41, 'kind': 'unknown'}]
    """
    kinds = registry.kinds()
    with cyclic_gc_paused():
        reading = read_bytes(
            data,
            source_file,
            kinds,
            jsonl=lines,
            first_line=first_line,
            limits=limits_from(limits),
        )
        return audit_of_reading(reading, kinds, strict=strict, strict_keys=strict_keys)


def read_parquet(directory: str | os.PathLike) -> Audit:
    """The audit ``Audit.to_parquet`` wrote to ``directory``.

    Parameters
    ----------
    directory : str or path-like
        A folder written by :meth:`Audit.to_parquet <explicit_audit.Audit.to_parquet>`.

    Returns
    -------
    Audit
        The same tables (columns, dtypes, index labels and values), rejected
        rows, sources, files and documents (the routing policies); its checks
        give the same findings as the audit written.

    Raises
    ------
    AuditError
        When the folder holds no audit written by the kit, or a file of it
        is missing or unreadable.

    Examples
    --------
    >>> audit = ea.read_parquet("audit-2025-03/")  # doctest: +SKIP
    """
    return Audit(**_read_parquet(directory))
