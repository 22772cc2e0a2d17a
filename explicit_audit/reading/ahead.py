"""Work on an iteration's next items in a second thread while the caller uses the current one.

A file is read in pieces (:mod:`explicit_audit.reading.content`): each is
read, decompressed, hashed and split into spans (:mod:`.spans`) before the
columnar parser and the tables' builders take it. :func:`read_ahead` does
the first part for the next piece in a thread of its own while the calling
thread does the second part for the current one. Reading, decompressing,
hashing, NumPy's passes over the bytes and pyarrow's parse release the
interpreter's lock, so the two overlap on two cores.

The caller sees exactly what a plain loop would give: the same items, in
order, each with the result of ``work(item)``; an exception raised by the
iteration or by ``work`` is raised in the caller where the plain loop would
have raised it, after every item before it. At most ``depth`` items wait
ready, so memory stays bounded. When the caller stops early (an exception,
a ``break``, Ctrl-C), the thread is told to stop and is waited for before
the generator returns, so nothing reads a file after its load has ended.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = ["Relay", "read_ahead", "relayed"]

T = TypeVar("T")
R = TypeVar("R")

_END = object()
#: How often (seconds) a thread waiting to hand over an item checks whether to stop.
_POLL = 0.05


class _Failed:
    """An exception raised in the thread, to raise again in the caller."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(
    items: Iterable[T], work: Callable[[T], R], *, depth: int = 1, threads: int = 2
) -> Iterator[tuple[T, R]]:
    """Each item with ``work(item)``, both done ahead in a second thread.

    Parameters
    ----------
    items : iterable
        Iterated in the second thread only (a file reader's pieces).
    work : callable
        ``work(item)``, called in the second thread for each item in turn.
    depth : int, default 1
        Items kept ready beyond the one the caller holds.
    threads : int, default 2
        With 1, everything runs in the calling thread, as a plain loop.

    Yields
    ------
    (item, result)
        In the order of ``items``.

    Examples
    --------
    >>> from explicit_audit.reading.ahead import read_ahead
    >>> [(item, result) for item, result in read_ahead(range(3), lambda x: x * x)]
    [(0, 0), (1, 1), (2, 4)]
    """
    if threads <= 1:
        for item in items:
            yield item, work(item)
        return
    ready: queue.Queue = queue.Queue(maxsize=max(depth, 1))
    stop = threading.Event()

    def hand_over(entry) -> bool:
        while not stop.is_set():
            try:
                ready.put(entry, timeout=_POLL)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        iterator = iter(items)
        try:
            for item in iterator:
                if not hand_over((item, work(item))):
                    return
        except BaseException as exc:  # handed to the caller, who raises it
            hand_over(_Failed(exc))
            return
        finally:
            close = getattr(iterator, "close", None)
            if close is not None and stop.is_set():
                close()
        hand_over(_END)

    thread = threading.Thread(target=produce, name="explicit-audit-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            entry = ready.get()
            if entry is _END:
                break
            if isinstance(entry, _Failed):
                raise entry.error
            yield entry
    finally:
        stop.set()
        while thread.is_alive():
            try:  # make room, so that a thread waiting to hand over sees the stop
                ready.get(timeout=_POLL)
            except queue.Empty:
                pass
        thread.join()


class Relay:
    """Calls of ``target(n)`` made in the second thread, made in the caller's thread instead.

    A progress bar is drawn by the thread that reads the bytes; in Jupyter
    that is a widget, which belongs in the caller's cell. The reading thread
    calls the relay, which only counts; the caller calls :meth:`flush` as it
    takes each piece, and once at the end, and ``target`` gets the sum.

    Examples
    --------
    >>> from explicit_audit.reading.ahead import Relay
    >>> seen = []
    >>> relay = Relay(seen.append)
    >>> relay(3); relay(4); relay.flush(); relay.flush()
    >>> seen
    [7]
    """

    def __init__(self, target: Callable[[int], None]) -> None:
        self.target = target
        self._counts: deque[int] = deque()

    def __call__(self, count: int) -> None:
        self._counts.append(count)  # deque appends and pops are thread-safe

    def flush(self) -> None:
        """Hand ``target`` the sum of the counts made since the last flush, if any."""
        total = 0
        while self._counts:
            total += self._counts.popleft()
        if total:
            self.target(total)


def relayed(on_bytes: Callable[[int], None] | None, limits) -> Callable[[int], None] | None:
    """``on_bytes`` as a file reader takes it: a :class:`Relay` where a second thread reads.

    The bytes read ahead in the second thread (:func:`read_ahead`, with
    ``limits.max_threads`` of 2 or more) move the progress bar from the
    caller's thread (a widget in Jupyter), as
    :func:`~explicit_audit.reading.collect.read_with` flushes the relay.
    """
    if on_bytes is None or limits.max_threads < 2 or isinstance(on_bytes, Relay):
        return on_bytes
    return Relay(on_bytes)
