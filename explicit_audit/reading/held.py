"""A setting that loads in several threads switch for as long as any of them runs.

:func:`held_while` makes the block: the first thread to enter it switches the
setting, and the last to leave switches it back to what it was when the
first entered, whatever happens in the block. A load switches off Python's
cyclic collector (:mod:`.gc_pause`) and makes the system allocator pyarrow's
default pool (:func:`~.memory.system_pool`) this way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

__all__ = ["held_while"]


def held_while(
    switch: Callable[[], Any], restore: Callable[[Any], None]
) -> Callable[[], AbstractContextManager[None]]:
    """A block during which ``switch()`` holds, shared by the threads inside it.

    Parameters
    ----------
    switch : callable
        Called when the first thread enters; returns what ``restore`` is given.
    restore : callable
        Called with what ``switch`` returned when the last thread leaves.
    """
    lock = threading.Lock()
    holders = 0
    was: Any = None

    @contextmanager
    def block() -> Iterator[None]:
        nonlocal holders, was
        with lock:
            if holders == 0:
                was = switch()
            holders += 1
        try:
            yield
        finally:
            with lock:
                holders -= 1
                if holders == 0:
                    restore(was)

    return block
