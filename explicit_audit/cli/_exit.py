"""How a command ends when it cannot finish: a usage error, unreadable input, a signal, a bug.

Each says why on stderr, in one line and without a traceback (an unexpected
error, a bug, prints its traceback before that line), and exits with its
:class:`~explicit_audit.verdicts.ExitStatus`; ``verify`` in a format
that has a document for it (JSON, JUnit, SARIF) writes that document too.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import traceback
from collections.abc import Sequence

from ..errors import AuditError
from ..verdicts import ExitStatus, Failure, output_formats
from ..verdicts.outputs import error_output
from ..verdicts.text import visible
from ._input import shown
from ._streams import quiet

__all__ = ["asked_format", "fail", "failed", "interrupted", "signals"]


def interrupted(command: str, signum: int) -> int:
    """Ctrl-C (SIGINT) exits 130, SIGTERM 143, with one line on stderr and no traceback."""
    what = "interrupted" if signum == signal.SIGINT else "terminated"
    print(f"explicit-audit {command}: {what}", file=sys.stderr)
    if signum == signal.SIGINT:
        return ExitStatus.INTERRUPTED
    return ExitStatus.TERMINATED


def failed(command: str, data: str | None, exc: BaseException, output: str) -> int:
    """The exit status of a command that raised ``exc``; re-raises what is not ours to map."""
    if isinstance(exc, AuditError):
        return fail(command, data, exc, type(exc).__name__, output=output)
    if isinstance(exc, BrokenPipeError):  # the reader (``| head``) stopped: not an error of ours
        quiet(sys.stdout)
        return ExitStatus.CLEAN
    if isinstance(exc, OSError):  # e.g. --out names a file, or a folder that cannot be written
        return fail(command, data, exc, "OSError", output=output)
    if not isinstance(exc, Exception):  # SystemExit and the like: not an error to map
        raise exc
    # A bug (the kit's or a plug-in's) or a failure under the kit: never "something was
    # found" (exit 1), which is a verdict. Its traceback is what a report of it needs.
    traceback.print_exception(exc, file=sys.stderr)
    kind = type(exc).__name__
    said = RuntimeError(
        f"stopped by an unexpected {kind}{f': {exc}' if str(exc) else ''}; nothing was decided"
    )
    return fail(command, data, said, kind, output=output, status=ExitStatus.UNEXPECTED)


class _Terminated(BaseException):
    """SIGTERM, raised where the program is, so that every ``with`` block cleans up.

    A BaseException, as KeyboardInterrupt is: no ``except Exception`` swallows it.
    """


@contextlib.contextmanager
def signals(command: str, signalled: list[int]):
    """During ``report``: SIGINT and SIGTERM unwind the program where it is, so that the
    snapshot and any partial page are removed, instead of ending the process there.

    The first signal raises (KeyboardInterrupt, :class:`_Terminated`); one more
    while the cleanup runs is only noted, so that it cannot cut the cleanup short.
    """
    if command != "report" or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(signum, frame):
        signalled.append(signum)
        if len(signalled) == 1:
            raise KeyboardInterrupt() if signum == signal.SIGINT else _Terminated()

    previous = {signum: signal.signal(signum, handle) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def asked_format(argv: Sequence[str]) -> str:
    """The output asked for, read from the raw arguments, where a usage error left no other.

    Only ``verify`` writes documents of other formats (the last ``--format``
    given wins, as argparse takes it), and ``verify`` and ``summary`` JSON.
    """
    command = next((item for item in argv if not item.startswith("-")), None)
    if command not in ("verify", "summary"):
        return "text"
    if "--json" in argv:
        return "json"
    asked = "text"
    if command == "verify":
        names = output_formats()
        for position, item in enumerate(argv):
            given = argv[position + 1] if item == "--format" and position + 1 < len(argv) else None
            if item.startswith("--format="):
                given = item.split("=", 1)[1]
            if given in names:
                asked = given
    return asked


def parsed_format(args) -> str:
    """The output a parsed command line asks for: ``--json``, else ``--format``, else text."""
    if getattr(args, "json", False):
        return "json"
    return getattr(args, "format", None) or "text"


def fail(
    command: str,
    data: str | None,
    exc: Exception,
    kind: str,
    *,
    output: str,
    status: ExitStatus = ExitStatus.UNREADABLE,
) -> int:
    """Say why nothing could be checked, on stderr (and as the document asked for); exit
    ``status`` (2 unless told)."""
    failure = Failure.of(exc, kind, None if data is None else shown(data), int(status))
    if kind == "UsageError":  # argparse's usage lines, then its error: each line shown as such
        message = "\n".join(visible(line) for line in failure.message.splitlines())
    else:
        message = visible(failure.message)
    prefix = f"explicit-audit {command}: " if command else ""
    print(f"{prefix}{message}", file=sys.stderr)
    document = error_output(output, failure)
    if document is not None:
        sys.stdout.write(document)
        sys.stdout.flush()
    return status
