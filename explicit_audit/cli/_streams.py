"""The command's standard output and error, every write taken whole.

A write to a pipe can take only part of what it is given, and Python's
standard streams do not always write the rest:

- unbuffered (``python -u``, or ``PYTHONUNBUFFERED`` set, as many CI images
  and containers set it), ``sys.stdout`` hands each text to the file in one
  ``write(2)``. One that a signal interrupts once part of it has gone (the
  process stopped and continued: Ctrl-Z then ``fg``, a debugger or a
  profiler attaching) returns what it wrote, and the rest was dropped in
  silence: ``verify --json`` ended mid-document, its exit status unchanged;
- a pipe that another process sharing it has made non-blocking refuses a
  write while it is full: unbuffered, the rest was dropped in silence too;
  buffered, the stream raised ``BlockingIOError`` half-way through the
  document.

While a command runs, each standard stream that writes to a file is written
through :class:`WholeWrites`, which writes again until every byte is out,
waiting while a non-blocking file is full; a stream keeps its buffering (an
unbuffered one still hands each write on at once).
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
from collections.abc import Iterator

__all__ = ["WholeWrites", "quiet", "whole_writes"]


class WholeWrites(io.RawIOBase):
    """A raw stream over a file whose every write is written whole.

    Parameters
    ----------
    raw : io.FileIO
        The file written to (a standard stream's, as Python opened it); it is
        never closed here.
    """

    def __init__(self, raw: io.FileIO) -> None:
        super().__init__()
        self._raw = raw

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def isatty(self) -> bool:
        return self._raw.isatty()

    def write(self, data) -> int:
        """Write all of ``data``, as many times as the file takes part of it.

        A non-blocking file that is full is waited on until it takes more, as
        a blocking file would be.
        """
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            written = self._raw.write(view[done:])
            if written is None:  # non-blocking and full: wait until the reader takes some
                select.select([], [self._raw], [])
                continue
            done += written
        return done


def _whole(stream):
    """``stream`` written through :class:`WholeWrites`, or ``stream`` when it writes no file
    (a test's capture, None)."""
    if not isinstance(stream, io.TextIOWrapper):
        return stream
    buffer = stream.buffer
    if isinstance(buffer, io.BufferedWriter) and isinstance(buffer.raw, io.FileIO):
        target = io.BufferedWriter(WholeWrites(buffer.raw))
    elif isinstance(buffer, io.FileIO):  # unbuffered
        target = WholeWrites(buffer)
    else:
        return stream
    stream.flush()
    return io.TextIOWrapper(
        target,
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )


def quiet(stream) -> None:
    """After a broken pipe: what is left of ``stream`` goes nowhere, not to a traceback at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _flush(stream: io.TextIOWrapper) -> None:
    """Flush ``stream``; what a reader that has gone (a broken pipe) did not take goes nowhere.

    The stream stays open, and so does its file: whatever took it while the command
    ran (a library's log handler) may still write through it, whole.
    """
    try:
        stream.flush()
    except BrokenPipeError:
        quiet(stream)
        stream.flush()


@contextlib.contextmanager
def whole_writes() -> Iterator[None]:
    """While the command runs: ``sys.stdout`` and ``sys.stderr`` write each text whole.

    A stream that writes no file (a test's capture) is left as it is; the
    streams are flushed and put back after (closing the one made here closes
    no file).
    """
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = wrapped = _whole(sys.stdout), _whole(sys.stderr)
    try:
        yield
    finally:
        for stream, original in zip(wrapped, before, strict=True):
            if stream is not original:
                _flush(stream)
        sys.stdout, sys.stderr = before
