"""The command's standard output and error, every write taken whole.

Unbuffered (``python -u``, or ``PYTHONUNBUFFERED`` set, as many CI images and
containers set it), Python's ``sys.stdout`` and ``sys.stderr`` hand each text
to the file descriptor in one ``write(2)``. A write to a pipe that a signal
interrupts once part of it has gone (the process stopped and continued:
Ctrl-Z then ``fg``, a debugger or a profiler attaching) returns what it wrote,
and the text layer drops the rest in silence: ``verify --json`` would end
mid-document with its exit status unchanged. Here each such stream is written
through a raw stream that writes again until every byte is out, and still
hands each write on at once, as unbuffered streams do.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator

__all__ = ["WholeWrites", "whole_writes"]


class WholeWrites(io.RawIOBase):
    """A raw stream over another whose every write is written whole.

    Parameters
    ----------
    raw : io.RawIOBase
        The stream written to (standard output's file, as Python opened it).
    """

    def __init__(self, raw: io.RawIOBase) -> None:
        super().__init__()
        self._raw = raw

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def isatty(self) -> bool:
        return self._raw.isatty()

    def write(self, data) -> int:
        """Write all of ``data``, as many times as the stream takes part of it.

        Raises
        ------
        BlockingIOError
            When the file is non-blocking and full (nothing was written).
        """
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            written = self._raw.write(view[done:])
            if written is None:  # a non-blocking file that is full: said, not dropped
                raise BlockingIOError(0, "the output cannot take more now", done)
            done += written
        return done

    def close(self) -> None:
        """Close this stream only: the file it writes to stays open (it is Python's)."""
        super().close()


def _whole(stream):
    """``stream`` written whole: a new text stream when it writes raw, else ``stream``."""
    raw = getattr(stream, "buffer", None)
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(raw, io.RawIOBase):
        return stream  # buffered (its buffer writes whole already), or not a file at all
    stream.flush()
    return io.TextIOWrapper(
        WholeWrites(raw),
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


@contextlib.contextmanager
def whole_writes() -> Iterator[None]:
    """While the command runs: ``sys.stdout`` and ``sys.stderr`` write each text whole.

    A stream that is buffered (its buffer writes whole already) or is not a
    file (a test's capture) is left as it is; the streams are put back after.
    """
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _whole(sys.stdout), _whole(sys.stderr)
    try:
        yield
    finally:
        for stream, original in zip((sys.stdout, sys.stderr), before, strict=True):
            if stream is not original:
                with contextlib.suppress(BrokenPipeError):  # the reader has gone: nothing to say
                    stream.flush()
                stream.detach()  # the file stays open, as Python opened it
        sys.stdout, sys.stderr = before
