"""Memory a read has freed, handed back to the system after a piece.

A piece's bytes, Arrow's parse of them and the arrays that look at them are
freed once the piece is read, but the allocators keep freed memory for
later: glibc's ``malloc`` in each thread's arena (pyarrow's system pool, the
pieces' bytes, NumPy), pyarrow's default pool in its own caches. Where a
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
import sys
from contextlib import AbstractContextManager

import pyarrow as pa

from .held import held_while

__all__ = ["PIECE_BYTES", "hand_back", "hand_back_pooled", "system_pool"]

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

    Cheaper than :func:`hand_back`, so it may follow each of many small
    steps: mimalloc, pyarrow's default pool on most systems, keeps the pages
    a kernel freed for the next one, and over runs of kernels on several
    threads they add up.
    """
    pa.default_memory_pool().release_unused()


def _to_system() -> pa.MemoryPool:
    was = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    return was


_on_system = held_while(_to_system, pa.set_memory_pool)


def system_pool() -> AbstractContextManager[None]:
    """Make the system allocator pyarrow's default pool for the block; restore it after.

    pyarrow's default pool (mimalloc on most systems) purges the pages it
    freed later, in its own time, and over the buffers a load decodes,
    joins and takes on several threads that made the kernel's work several
    times longer at random: the same re-audit took 1.0 s or 1.3 s. The system
    allocator hands pages back as they are freed, at a steady cost. Every
    buffer is freed by the pool that made it, whichever is the default then;
    loads in several threads share one switch, undone when the last ends.
    """
    return _on_system()
