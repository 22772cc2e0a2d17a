"""The reading core's limits: part of its contract, with documented defaults.

A hostile or broken file must never crash, hang or exhaust the machine that
audits it. Each limit turns what would be a crash into a rejected row (or a
file-level rejection) that names the file, the line and the limit, so that
nothing is lost silently and every input line stays accounted for.

==========================  ===========  ===================================================
limit                       default      what happens past it
==========================  ===========  ===================================================
``max_depth``               512          a value nested deeper is rejected; checked on the
                                         bytes before any C parser sees them
``max_value_bytes``         64 MiB       a single value larger than this is rejected; an
                                         array's elements are values each (an array
                                         larger than this, its elements each starting a
                                         line, is read element by element)
``max_file_bytes``          16 GiB       a file (after gzip decompression) is read up to
                                         this size; the rest is a file-level rejection
``max_rejected_rows``       100,000      rejected rows kept with their excerpt, per load;
                                         past it, each file's further rejections are
                                         counted in one summary row per file (values no
                                         kind claims without a row built for each)
``excerpt_chars``           300          characters of raw text kept per rejected row
``max_gzip_ratio``          200          a gzip stream that has expanded more than this many
                                         times its compressed size, past its first 64 MiB,
                                         is read no further; the rest is a file-level
                                         rejection naming the ratio
``max_extra_columns``       256          extra (logger) keys of one table that become a
                                         column each; the rest are kept, not dropped, in
                                         one ``extra_json`` text column (per row, the JSON
                                         object of its later keys), with an
                                         ``ExtraColumnsWarning``
``max_threads``             2            threads a load reads with: with 1, everything in
                                         the calling thread; with more, a file's next
                                         piece is read and split in a second thread while
                                         the current one is parsed (pyarrow in its thread
                                         pool). 1 by default where ``OMP_NUM_THREADS`` is
                                         1 or the machine has one core. The tables are the
                                         same either way
``max_partitions``          10,000       partitions one Dask load plans (each costs about
                                         0.2 MB of the client's and scheduler's memory);
                                         past it the load is refused before any graph is
                                         built, naming the file and the limit
``connect_timeout``         30           seconds to connect to an HTTP(S) server
``idle_timeout``            60           seconds an HTTP(S) server may send nothing
``total_timeout``           3600         seconds to read one file at a URL, whole
==========================  ===========  ===================================================

A file at a URL is read within the same limits as a local one (``max_file_bytes``
bounds the bytes taken from the server too, and a ``Content-Encoding: gzip`` body
is decompressed under ``max_gzip_ratio``); each timeout is named in the
rejection it causes (:mod:`explicit_audit.reading.remote_open`).

Only regular files are read from a folder (a FIFO, a socket or a device is
reported, never opened), and files are read with ``read()``, never
memory-mapped, so a file truncated while it is read yields a rejection of the
value it cut, not a signal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from .._core.overlap import THREADS
from ..errors import AuditError

__all__ = ["DEFAULT_LIMITS", "Limits", "limits_from", "shaping"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The reading limits in force for one load (see the module docstring).

    Examples
    --------
    >>> from explicit_audit.reading.limits import Limits
    >>> Limits().max_depth
    512
    >>> Limits(max_depth=64).max_value_bytes == Limits().max_value_bytes
    True
    """

    max_depth: int = 512
    max_value_bytes: int = 64 << 20
    max_file_bytes: int = 16 << 30
    max_rejected_rows: int = 100_000
    excerpt_chars: int = 300
    max_gzip_ratio: int = 200
    max_extra_columns: int = 256
    max_threads: int = THREADS
    max_partitions: int = 10_000
    connect_timeout: int = 30
    idle_timeout: int = 60
    total_timeout: int = 3600

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise AuditError(
                    f"limit {item.name} must be a positive integer, got {value!r}; see "
                    "explicit_audit.reading.limits for what each limit means"
                )


DEFAULT_LIMITS = Limits()


def limits_from(limits: Limits | dict[str, Any] | None) -> Limits:
    """A :class:`Limits` from ``None`` (the defaults), a Limits, or a mapping of overrides."""
    if limits is None:
        return DEFAULT_LIMITS
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, dict):
        known = {item.name for item in fields(Limits)}
        unknown = sorted(set(limits) - known)
        if unknown:
            raise AuditError(
                f"unknown reading limit(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return replace(DEFAULT_LIMITS, **limits)
    raise AuditError(f"limits must be a Limits, a dict or None, got {type(limits).__name__}")


#: Limits on how a load runs, never on what it holds: threads, and the partitions a load
#: may plan (past it, nothing is loaded at all).
_HOW_NOT_WHAT = ("max_threads", "max_partitions")


def shaping(limits: Limits) -> dict[str, int]:
    """The limits that shape what a load holds, by name: what a cache key or a state records.

    Every limit but ``max_threads`` and ``max_partitions``, which change how a load
    runs (or whether it runs), never the tables it gives.
    """
    return {name: value for name, value in asdict(limits).items() if name not in _HOW_NOT_WHAT}
