"""Progress that tells the truth: bytes read of the bytes to read, shown only when wanted.

Whether progress is shown, first match wins:

1. the caller's own choice: ``progress=True/False`` (``ea.load``), or
   ``--progress/--no-progress`` (the command line, for everything it runs);
2. ``EXPLICIT_AUDIT_PROGRESS=1`` or ``=0`` in the environment;
3. off under CI (``CI`` set to anything but ``""``, ``0`` or ``false``);
4. on in a Jupyter kernel (for a load) and when standard error is a
   terminal; off otherwise (a log file, a pipe).

A load's bar (tqdm's, on standard error; its widget in Jupyter) counts the
bytes of its files as they are read (a gzip file's compressed bytes; a stream
of unknown size leaves the total open), so one large file moves the bar as
much as many small ones; a second bar then counts the record kinds whose
tables are built, its clock moving while one is. A bar appears only once it
has run :data:`DELAY_SECONDS` (tqdm's ``delay``;
``EXPLICIT_AUDIT_PROGRESS_DELAY=SECONDS`` sets another), so a quick load
prints nothing. Dask
computes on a local scheduler show Dask's own bar under the same rule (a
distributed cluster has its dashboard).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
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
    "step_progress",
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


def _size(item: Any) -> int | None:
    try:
        return os.stat(item).st_size
    except (OSError, TypeError, ValueError):
        return None


def _bar(**options: Any):
    """A tqdm bar on standard error, shown once it has run :func:`delay` seconds.

    In a Jupyter kernel it is tqdm's widget (``tqdm.auto``); elsewhere tqdm's
    text bar. tqdm is imported here, when a bar is wanted: a quick load with
    no bar pays nothing for it.
    """
    if in_jupyter():
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    return tqdm(
        file=sys.stderr,
        delay=delay(),
        mininterval=_REFRESH_SECONDS,
        dynamic_ncols=True,
        **options,
    )


class _Bytes:
    """Counts bytes read on a tqdm bar, shown once the load has run :func:`delay` seconds.

    A standard error that is closed or gone costs the bar, never the load.
    """

    def __init__(self, total: int | None, what: str) -> None:
        self.bar = _bar(total=total, desc=what, unit="B", unit_scale=True, unit_divisor=1024)

    def advance(self, n: int) -> None:
        if self.bar is None:
            return
        try:
            self.bar.update(n)
        except (OSError, ValueError):  # stderr closed: no bar rather than no load
            self.bar = None

    def close(self) -> None:
        if self.bar is None:
            return
        try:
            self.bar.close()  # its last line: every byte read, and how long it took
        except (OSError, ValueError):
            pass


class _Steps:
    """A tqdm bar over named steps (the kinds whose tables are built), its clock kept moving.

    A step may take seconds with no count to show (pandas building one large
    table): a thread redraws the bar every :data:`_REFRESH_SECONDS`, so its
    elapsed time and the step's name show that the work goes on.
    """

    def __init__(self, steps: int, what: str) -> None:
        # miniters=0: every update may redraw (tqdm would otherwise learn to skip the
        # clock's updates of nothing).
        self.bar = _bar(
            total=steps,
            desc=what,
            miniters=0,
            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} kinds [{elapsed}{postfix}]",
        )
        self.stop = threading.Event()
        self.started = False
        self.clock = threading.Thread(target=self._tick, name="progress clock", daemon=True)
        self.clock.start()

    def _tick(self) -> None:
        while not self.stop.wait(_REFRESH_SECONDS):
            try:
                # A count of none: tqdm redraws (once past its delay), the clock moved on.
                self.bar.update(0)
            except (OSError, ValueError):  # stderr closed: no bar rather than no load
                return

    def start(self, name: str | None) -> None:
        """The step ``name`` begins (the one before it is done); None: every step is done."""
        if name is None:
            self.close()
            return
        if self.started:
            self.bar.update(1)
        self.started = True
        self.bar.set_postfix_str(name, refresh=False)

    def close(self) -> None:
        if self.stop.is_set():
            return
        self.stop.set()
        self.clock.join()
        try:
            if self.started:
                self.bar.set_postfix_str("", refresh=False)
                self.bar.update(1)
            self.bar.close()
        except (OSError, ValueError):
            pass


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


@contextlib.contextmanager
def step_progress(
    steps: int, enabled: bool, what: str = "building tables"
) -> Iterator[Callable[[str | None], None] | None]:
    """A bar over ``steps`` named steps; yields ``start(name)`` to call as each begins.

    ``start(None)`` closes the bar before the block ends (before a warning is printed).

    Yields None when not ``enabled``. Shown, as a load's bar is, only once it
    has run :func:`delay` seconds; its elapsed time moves while a step runs.
    """
    if not enabled or steps < 1:
        yield None
        return
    counter = _Steps(steps, what)
    try:
        yield counter.start
    finally:
        counter.close()
