"""No cyclic garbage collection while a load builds its tables.

A load makes millions of small containers that all live on (the values read,
their rows, the plan column's dicts). Each full pass of Python's cyclic
collector walks every one of them, and passes come more often the more there
are, so a large load spent close to half its time in the collector while
finding nothing to free. The collector is paused for the load and restored
after it, whatever happens; loads in several threads share one pause, which
ends when the last of them does. Reference counting frees memory as usual
meanwhile: only cycles wait for the next pass.

While the collector is paused, every container made stays in its youngest
generation, so the first young pass after the pause would walk them all. When
the pause ends, they are moved to the oldest generation instead
(``gc.freeze()`` then ``gc.unfreeze()``): a full pass still finds their
cycles, when full passes come due.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cyclic_gc_paused"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block; restore its state after it.

    The collector is re-enabled when the last block that paused it ends, and
    only if it was enabled when the first began (a caller that disabled it
    keeps it disabled).
    """
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                # What the block made is aged into the oldest generation (frozen, then
                # thawed there): the next young pass would walk all of it at once.
                gc.freeze()
                gc.unfreeze()
                gc.enable()
