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

import threading
from collections.abc import Callable
from typing import TypeVar

from .limits import _DEFAULT_THREADS

__all__ = ["THREADS", "both"]

A = TypeVar("A")
B = TypeVar("B")

#: Threads a replay computes with by default: 2, or 1 where ``OMP_NUM_THREADS`` is 1
#: or the machine has one core (the reading limits' rule, ``max_threads``).
THREADS = _DEFAULT_THREADS


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
