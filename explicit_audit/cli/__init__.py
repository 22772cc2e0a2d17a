"""The ``explicit-audit`` command: reports, verification for pipelines, a quick summary.

::

    explicit-audit report DATA --out DIR [--notebooks DIR] [-p NAME VALUE ...] [-r NAME VALUE ...]
                                          [-f FILE.yaml ...] [--exit-zero]
                                          [--engine dask [--persist]]
    explicit-audit verify DATA [--json | --format FORMAT] [--expect KINDS]
                               [--max-findings N] [--baseline PREVIOUS.json [--new-only]]
                               [--since TIME] [--until TIME] [--time-key [TABLE=]COLUMN]
                               [--undated check|skip] [--strict-keys]
                               [--engine dask [--sample-bytes N]]
    explicit-audit summary DATA [--json] [--strict-keys] [--engine dask [--sample-bytes N]]
    explicit-audit notebooks DIR [--data DATA] [--force]
    explicit-audit schema KIND

Every command that reads DATA takes ``--engine dask --scheduler
ADDRESS|processes|threads``: the same output and exit status, computed
partition by partition. Every command takes ``-q`` (errors only) and ``-v``
(repeatable: what the kit does, from its loggers; ``_logging``).
``python -m explicit_audit`` is the same command.

The exit statuses, for use in a producer's CI, are
:class:`~explicit_audit.verdicts.ExitStatus`, the same in every output
format; ``--help`` lists them. ``report`` exits as ``verify`` does on the
same data. ``verify --format`` offers every registered output format
(:mod:`explicit_audit.verdicts.formats`: text, json, junit, sarif and any
format a plug-in registers); each writes one document, and all but text
write one when the input could not be read too.

The command is cut along its seams: the command line (``_parser``), the
reading of DATA (``_input``), ``verify`` and ``summary`` (``_verify``),
``report`` and ``notebooks`` (``_report``), how a command ends when it
cannot finish (``_exit``), and its standard streams, every write taken whole
(``_streams``).
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from collections.abc import Sequence

from .._core import registry
from .._core.progress import choosing
from .._core.shape import json_schema, published
from ..errors import AuditError
from ..reading.remote import has_remote, is_url
from ..verdicts import ExitStatus
from ..verdicts.outputs import json_text
from ._exit import asked_format, fail, failed, interrupted, parsed_format, signals
from ._input import engine, not_there, shown
from ._logging import logging_to_stderr, verbosity
from ._parameters import papermill_pairs
from ._parser import UsageError, parser
from ._report import notebooks, report
from ._streams import whole_writes
from ._verify import summary, verify

__all__ = ["main"]


def _schema(args: argparse.Namespace) -> int:
    shapes = published(registry.kinds())[args.kind]
    sys.stdout.write(json_text(json_schema(args.kind, shapes)))
    sys.stdout.flush()
    return ExitStatus.CLEAN


_COMMANDS = {
    "report": report,
    "verify": verify,
    "summary": summary,
    "notebooks": notebooks,
    "schema": _schema,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``explicit-audit`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        The exit status: one of :class:`~explicit_audit.verdicts.ExitStatus`,
        where each is explained.

    Examples
    --------
    >>> main(["verify", "data", "--json"])  # doctest: +SKIP
    1
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    with whole_writes():  # unbuffered, a signal could cut a document short (``_streams``)
        return _main(argv)


def _main(argv: list[str]) -> int:
    try:
        args = parser().parse_args(papermill_pairs(argv))
    except SystemExit as exc:  # argparse: --help or --version
        return int(exc.code or 0)
    except UsageError as exc:
        return fail("", None, exc, "UsageError", output=asked_format(argv))
    except AuditError as exc:  # a record kind plug-in that cannot be imported
        return fail("", None, exc, type(exc).__name__, output=asked_format(argv))
    args.command_line = shlex.join(["explicit-audit", *argv])  # shown on the report's pages
    output = parsed_format(args)
    data = getattr(args, "data", None)
    local = data is not None and not has_remote(data)  # not "-" (stdin) nor a URL
    checked = local and not is_url(data) and not any(ch in data for ch in "*?[")
    why = not_there(data) if checked else None
    if why is not None:
        missing = AuditError(f"{shown(data)}: {why}")
        missing.source_file = shown(data)
        return fail(args.command, data, missing, "InputError", output=output)
    signalled: list[int] = []
    level = verbosity(args)
    progress = getattr(args, "progress", None)
    try:
        with (
            logging_to_stderr(level),
            engine(args),
            choosing(False if progress is None and level < 0 else progress),
            signals(args.command, signalled),
        ):
            status = _COMMANDS[args.command](args)
    except BaseException as exc:
        # Whatever a signal surfaced as (a library cleaning up after it may
        # raise something else), the signal is what happened; every ``with``
        # block has run, so the snapshot and any partial page are gone.
        if signalled or isinstance(exc, KeyboardInterrupt):
            return interrupted(args.command, signalled[0] if signalled else signal.SIGINT)
        return failed(args.command, data, exc, output)
    if signalled:
        return interrupted(args.command, signalled[0])
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
