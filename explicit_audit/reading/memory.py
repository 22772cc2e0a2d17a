"""Memory a read has freed, handed back to the system after a piece.

A piece's bytes, Arrow's parse of them and the arrays that look at them are
freed once the piece is read, but the allocators keep freed memory for
later: glibc's ``malloc`` in each thread's arena (pyarrow's system pool, the
kit's default, see :func:`use_system_pool`; the pieces' bytes, NumPy), or
another pool chosen in its own caches. Where a
kind's pass over the bytes runs beside Arrow's parse
(:class:`~explicit_audit.reading.columnar.ColumnarReader`), the two threads
keep what they freed in two arenas, and over the pieces of a large file
that adds up to more than the tables a load returns. :func:`hand_back` asks
the allocators to return what they keep unused; it changes no value, only
how much memory the process holds. It is not called after every piece:
memory handed back is faulted in again by the next piece, which costs time
where a load holds little anyway.
"""

from __future__ import annotations

import ctypes
import os
import sys

import pyarrow as pa

__all__ = ["PIECE_BYTES", "POOL_ENV", "hand_back", "hand_back_pooled", "use_system_pool"]

#: pyarrow's own setting of its default pool: where it is set, the kit leaves the pool as set.
POOL_ENV = "ARROW_DEFAULT_MEMORY_POOL"

#: Pieces at least this large are followed by :func:`hand_back`; smaller ones
#: free too little for the call to pay.
PIECE_BYTES = 1 << 22


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The symbols the process has loaded, the C library's among them: no search
        # for the library's file at import.
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def hand_back() -> None:
    """Return the memory the allocators hold unused to the system.

    glibc's ``malloc_trim(0)`` where the C library has it, and
    :meth:`pyarrow.MemoryPool.release_unused` of pyarrow's default pool.
    """
    if _TRIM is not None:
        _TRIM(0)
    hand_back_pooled()


def hand_back_pooled() -> None:
    """Return what pyarrow's default pool keeps unused (its compute kernels' buffers).

    It may follow each of many small steps: over runs of kernels on several
    threads, what they freed adds up. The system pool, the kit's default,
    trims glibc's heap (``malloc_trim``); mimalloc or jemalloc, when chosen
    (:data:`POOL_ENV`), return the pages they keep for the next kernel.
    """
    pa.default_memory_pool().release_unused()


def use_system_pool() -> None:
    """Make the system allocator pyarrow's default pool, unless :data:`POOL_ENV` names one.

    Called once, when the kit is imported. pyarrow's default pool otherwise
    (mimalloc on most systems) keeps pages freed for later and purges them in
    its own time. Over the buffers a load parses, decodes, joins and takes on
    several threads, that made the kernel's share of a re-audit from a state
    vary from 0.2 s to 0.8 s at random, and beside the buffers the kit already
    takes from the system allocator, two allocators each kept memory unused.
    With the system allocator alone, the kit's benchmarks ran as fast or
    faster, with lower peaks (``docs/reading.md`` gives the figures). Every
    buffer is freed by the pool that made it, so buffers made before the kit
    was imported are unaffected. A pool set in code before the import is
    replaced: set another after it.
    """
    if not os.environ.get(POOL_ENV):
        pa.set_memory_pool(pa.system_memory_pool())
