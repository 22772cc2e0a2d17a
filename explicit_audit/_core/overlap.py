"""Two independent steps at once: one in the calling thread, the other in a second one.

A replay takes a million-row table apart and builds its answer in steps of
which some share no array (the list columns and the numeric ones, the risk
flags and the reasons). NumPy's passes over large arrays and pyarrow's
kernels release the interpreter's lock, so two such steps overlap on two
cores. :func:`both` runs them so; with one thread (``OMP_NUM_THREADS=1``, or
one core: :data:`THREADS`) it runs them one after the other in the calling
thread. The results are the same either way, and so is the exception: the
first step's, else the second's, as the plain sequence would raise.

The second thread is started per call and joined before the call returns:
no thread outlives a replay.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["THREADS", "both", "each"]

A = TypeVar("A")
B = TypeVar("B")


def _default_threads() -> int:
    """2, or 1 where ``OMP_NUM_THREADS`` asks for one thread or there is one core."""
    if os.environ.get("OMP_NUM_THREADS", "").strip() == "1" or (os.cpu_count() or 1) < 2:
        return 1
    return 2


#: Threads a replay (and a read, ``Limits.max_threads``) computes with by default: 2,
#: or 1 where ``OMP_NUM_THREADS`` is 1 or the machine has one core.
THREADS = _default_threads()


def both(first: Callable[[], A], second: Callable[[], B], threads: int = THREADS) -> tuple[A, B]:
    """``(first(), second())``, the two computed at once when ``threads`` is 2 or more.

    Parameters
    ----------
    first, second : callable
        Steps that share nothing they write. ``first`` runs in the calling
        thread; ``second`` in a second thread when there are several.
    threads : int
        1: ``first()`` then ``second()``, in the calling thread.

    Returns
    -------
    tuple
        Both results.

    Raises
    ------
    BaseException
        What ``first`` raised, else what ``second`` raised (as the sequence
        would: ``second`` may run all the same, its result is dropped).
    """
    if threads < 2:
        return first(), second()
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, second()))
        except BaseException as error:  # raised again in the caller, below
            outcome.append((False, error))

    worker = threading.Thread(target=run, name="explicit-audit-overlap", daemon=True)
    worker.start()
    try:
        result = first()
    finally:
        # Waited for even when first raised, so that nothing runs past the call.
        worker.join()
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return result, value


def each(work: Callable[[A], B], items: Sequence[A], threads: int = THREADS) -> list[B]:
    """``[work(item) for item in items]``, in a pool of ``threads`` when there are several.

    Parameters
    ----------
    work : callable
        A step whose calls share nothing they write; its NumPy and pyarrow
        passes release the interpreter's lock, so calls overlap on two cores.
    items : sequence
        What each call gets.
    threads : int
        1: every call in the calling thread, in order.

    Returns
    -------
    list
        The results in the order of ``items``, whatever the order of the calls.

    Raises
    ------
    BaseException
        What the first failing call in the order of ``items`` raised. The pool
        is joined before the call returns or raises.
    """
    if threads > 1 and len(items) > 1:
        with ThreadPoolExecutor(threads, thread_name_prefix="explicit-audit-each") as pool:
            return list(pool.map(work, items))
    return list(map(work, items))
