"""Progress that tells the truth: bytes read of the bytes to read, shown only when wanted.

Whether progress is shown, first match wins:

1. the caller's own choice: ``progress=True/False`` (``ea.load``), or
   ``--progress/--no-progress`` (the command line, for everything it runs);
2. ``EXPLICIT_AUDIT_PROGRESS=1`` or ``=0`` in the environment;
3. off under CI (``CI`` set to anything but ``""``, ``0`` or ``false``);
4. on in a Jupyter kernel (for a load) and when standard error is a
   terminal; off otherwise (a log file, a pipe).

A load's bar counts the bytes of its files as they are read (a gzip file's
compressed bytes; a stream of unknown size leaves the total open), so one
large file moves the bar as much as many small ones; it appears only once the
load has run :data:`DELAY_SECONDS` (``EXPLICIT_AUDIT_PROGRESS_DELAY=SECONDS``
sets another), so a quick load prints nothing. Dask
computes on a local scheduler show Dask's own bar under the same rule (a
distributed cluster has its dashboard).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = [
    "DELAY_ENV",
    "DELAY_SECONDS",
    "ENV",
    "byte_progress",
    "choosing",
    "delay",
    "in_jupyter",
    "wanted",
]

#: The environment variable that turns progress on (``1``) or off (``0``).
ENV = "EXPLICIT_AUDIT_PROGRESS"
#: A bar appears only after this long: a quick load prints nothing.
DELAY_SECONDS = 0.5
#: The environment variable that sets another delay, in seconds.
DELAY_ENV = "EXPLICIT_AUDIT_PROGRESS_DELAY"
_REFRESH_SECONDS = 0.25

_CHOSEN: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "explicit_audit_progress", default=None
)


def in_jupyter() -> bool:
    """Whether the code runs in a Jupyter kernel (where tqdm draws a widget)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        return type(shell.get_ipython()).__name__ == "ZMQInteractiveShell"
    except Exception:  # an IPython that is half there is not a notebook
        return False


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def wanted(asked: bool | None = None, *, jupyter: bool = True) -> bool:
    """Whether to show progress (the rule of the module docstring).

    Parameters
    ----------
    asked : bool or None
        The caller's own choice; None leaves it to the environment.
    jupyter : bool, default True
        Whether a Jupyter kernel shows it by default.
    """
    if asked is not None:
        return bool(asked)
    chosen = _CHOSEN.get()
    if chosen is not None:
        return chosen
    env = os.environ.get(ENV, "").strip()
    if env in ("0", "1"):
        return env == "1"
    if _under_ci():
        return False
    if jupyter and in_jupyter():
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # stderr replaced or closed
        return False


@contextlib.contextmanager
def choosing(asked: bool | None) -> Iterator[None]:
    """Within the block, ``asked`` is the choice where no call makes its own (the CLI's)."""
    token = _CHOSEN.set(asked)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def delay() -> float:
    """Seconds a load or compute runs before its bar shows: ``$EXPLICIT_AUDIT_PROGRESS_DELAY``,
    else :data:`DELAY_SECONDS` (a value that is not a number of seconds is ignored)."""
    try:
        seconds = float(os.environ.get(DELAY_ENV, DELAY_SECONDS))
    except ValueError:
        return DELAY_SECONDS
    return seconds if seconds >= 0 else DELAY_SECONDS


def _interval(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


def _size(item: Any) -> int | None:
    try:
        return os.stat(item).st_size
    except (OSError, TypeError, ValueError):
        return None


def _sizeof(count: float) -> str:
    """Bytes in three significant digits, powers of 1024 (as tqdm writes them: ``62.4M``)."""
    for unit in ("", "k", "M", "G", "T"):
        if abs(count) < 999.5:
            if abs(count) < 99.95:
                return f"{count:1.2f}{unit}" if abs(count) < 9.995 else f"{count:2.1f}{unit}"
            return f"{count:3.0f}{unit}"
        count /= 1024
    return f"{count:3.1f}P"


class _Bytes:
    """Counts bytes read; shows them once the load has run :data:`DELAY_SECONDS`.

    In a terminal the line is written here, refreshed at most every
    :data:`_REFRESH_SECONDS`; in Jupyter it is tqdm's widget, imported only
    then. A quick load pays nothing for its bar.
    """

    def __init__(self, total: int | None, what: str) -> None:
        self.total = total
        self.what = what
        self.count = 0
        self.start = time.monotonic()
        self.shown_at = 0.0
        self.widget = None
        self.drawn = False
        self.delay = delay()

    def advance(self, n: int) -> None:
        self.count += n
        if self.widget is not None:
            self.widget.update(n)
            return
        now = time.monotonic()
        if now - self.start < self.delay or now - self.shown_at < _REFRESH_SECONDS:
            return
        self.shown_at = now
        if in_jupyter():
            from tqdm.auto import tqdm

            self.widget = tqdm(
                total=self.total,
                initial=self.count,
                desc=self.what,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
            )
            return
        self._draw(now, "\r")

    def _draw(self, now: float, start: str, end: str = "") -> None:
        rate = self.count / max(now - self.start, 1e-9)
        line = f"{self.what}: "
        if self.total:
            line += f"{100 * self.count / self.total:3.0f}% {_sizeof(self.count)}/"
            line += f"{_sizeof(self.total)}"
        else:
            line += _sizeof(self.count)
        line += f" [{_interval(now - self.start)}, {_sizeof(rate)}B/s"
        if self.total and rate > 0:
            line += f", {_interval(max(self.total - self.count, 0) / rate)} left"
        try:
            sys.stderr.write(f"{start}{line}]\x1b[K{end}")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed: no bar rather than no load
            return
        self.drawn = True

    def close(self) -> None:
        if self.widget is not None:
            self.widget.close()
        elif self.drawn:
            # The last line says where it ended: every byte read, and how long it took.
            self._draw(time.monotonic(), "\r", "\n")


@contextlib.contextmanager
def byte_progress(
    files: Iterable[Any], enabled: bool, what: str = "reading"
) -> Iterator[Callable[[int], None] | None]:
    """A bar over the bytes of ``files``; yields ``advance(n)`` to call per ``n`` bytes read.

    Yields None when not ``enabled``: the reader then counts nothing. The
    total is the files' sizes on disk (a gzip file's compressed size), or
    open when one of them has no size to tell (a stream).
    """
    if not enabled:
        yield None
        return
    sizes = [_size(item) for item in files]
    counter = _Bytes(None if any(size is None for size in sizes) else sum(sizes), what)
    try:
        yield counter.advance
    finally:
        counter.close()
