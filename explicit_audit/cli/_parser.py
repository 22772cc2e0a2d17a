"""The command line of ``explicit-audit``: every command, its options and its help.

The choices and help that depend on what is registered are read off the
registries: the checks and record kinds (:mod:`explicit_audit._core.registry`),
the output formats (:mod:`explicit_audit.verdicts.formats`) and the exit
statuses (:class:`~explicit_audit.verdicts.ExitStatus`).
"""

from __future__ import annotations

import argparse
import textwrap

from .._core import registry
from .._core.edit_findings import STATE_CHECK
from .._core.progress import ENV as PROGRESS_ENV
from .._core.shape import published
from .._version import __version__
from ..loading import ENGINES
from ..verdicts import output_formats
from ..verdicts.exits import exit_status_help
from ..verdicts.window import UNDATED_CHOICES
from ._logging import verbosity_options
from ._parameters import parameter_options

__all__ = ["UsageError", "parser"]


class UsageError(Exception):
    """A command line argparse refuses; raised instead of exiting, to answer in JSON too."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, without abbreviations: ``--fo sarif`` is refused, not read as
    ``--format sarif``, so that an output asked for is found in the raw arguments too,
    where a usage error leaves nothing else to read it from."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


def _data_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("data", metavar="DATA", help="file, folder or glob of audit records")
    verbosity_options(command)


def parser() -> argparse.ArgumentParser:
    """The parser of every command, built from what is registered now."""
    # The exit statuses close the help of every command that exits by a verdict.
    ending = {"epilog": exit_status_help(), "formatter_class": argparse.RawDescriptionHelpFormatter}
    top = _Parser(
        prog="explicit-audit",
        description=_wrapped(
            "Load, verify and report on the audit records of AI retrieval and routing systems."
        ),
        **ending,
    )
    top.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    report = commands.add_parser(
        "report",
        help="run every notebook on DATA and write one self-contained HTML report each",
        description=_wrapped(
            "Run every notebook on DATA and write one self-contained HTML report per notebook "
            "into DIR (readable offline: the verdict at the top, tables and plots embedded, code "
            "folded away, a provenance appendix at the end of each page)."
        ),
        **ending,
    )
    _data_argument(report)
    report.add_argument("--out", required=True, metavar="DIR", help="folder for the reports")
    report.add_argument(
        "--notebooks",
        metavar="DIR",
        help="folder of notebooks (*.ipynb) to run; default: the notebooks that ship with the kit",
    )
    parameter_options(report)
    report.add_argument(
        "--title",
        metavar="TEXT",
        help="the report's title, on the index and every page; default: the data path and the "
        "days its records cover (Audit of DATA, 2025-03-03 to 2025-03-11)",
    )
    report.add_argument(
        "--timeout",
        type=int,
        default=300,
        metavar="SECONDS",
        help="time a cell may run (default %(default)s)",
    )
    report.add_argument(
        "--jobs",
        type=_at_least_one("notebooks"),
        metavar="N",
        help="notebooks run at once, each in a kernel of its own (default: one per CPU this "
        "process may use); the pages are the same whatever N is",
    )
    report.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0, not 1, when the pages are written and the checks found something (every "
        "other status stands): to render reports of data known to hold findings; without it, "
        "report exits as verify does",
    )
    _engine_options(report)
    report.add_argument(
        "--persist",
        action="store_true",
        help="with --engine dask: keep the rows in the workers' memory after the first read, "
        "so every notebook cell after it is quick (only for data the cluster's memory holds)",
    )
    report.add_argument(
        "--state",
        metavar="DIR",
        help="an audit state folder, as verify --state takes it: the verdict reads only the "
        "bytes appended since its last audit and reports any edit of those it audited, every "
        "page says what is new since that audit, and this run is recorded in it "
        "(docs/state.md)",
    )

    verify = commands.add_parser(
        "verify",
        help="run every check on DATA; exit 1 when anything is found",
        description=_wrapped(
            f"Run every check on DATA ({', '.join(registry.checks())}; with --state, "
            f"{STATE_CHECK} too). Exit 1 when anything is found, 0 when clean."
        ),
        **ending,
    )
    _data_argument(verify)
    _output_options(verify)
    verify.add_argument(
        "--baseline",
        metavar="PREVIOUS.json",
        help="compare with a previous `verify --json` run: what is new, resolved and "
        "persisting (a finding is known by its check, rule, field and record id, or its "
        "detail when it names no record; never by its line)",
    )
    verify.add_argument(
        "--new-only",
        action="store_true",
        help="with --baseline, or --state after its first run: exit 1 only for errors that "
        "are new since that run",
    )
    verify.add_argument(
        "--since",
        metavar="TIME",
        help="only findings about records dated at or after TIME (ISO 8601; UTC unless a "
        "zone is given)",
    )
    verify.add_argument(
        "--until", metavar="TIME", help="only findings about records dated before TIME"
    )
    verify.add_argument(
        "--time-key",
        action="append",
        default=[],
        metavar="[TABLE=]COLUMN",
        help="the column holding the records' time, for every table or for TABLE (default: "
        "the first of timestamp, ts, time, started_at, sent_at, generated_at, created_at, "
        "logged_at a table has)",
    )
    verify.add_argument(
        "--undated",
        choices=UNDATED_CHOICES,
        default="check",
        help="with --since/--until: findings about records without a time are kept (check, "
        "the default) or left out (skip); either way they are counted",
    )
    verify.add_argument(
        "--now",
        metavar="TIME",
        help="the moment records' times are read against: a time later than it by more "
        "than 5 minutes is a future_time notice (default: when verify starts)",
    )
    verify.add_argument(
        "--earliest",
        metavar="TIME",
        help="a record's time earlier than TIME is a past_time notice (default: "
        "2020-01-01, before which none of the producers existed)",
    )
    _engine_options(verify)
    _sample_option(verify)
    _strict_keys_option(verify)
    verify.add_argument(
        "--state",
        metavar="DIR",
        help="an audit state folder: read only the bytes appended since the audit that wrote "
        "it, report any edit of the bytes it audited, and say which findings are new since "
        "that audit (unless --baseline is given); each run is recorded in it (docs/state.md)",
    )
    verify.add_argument(
        "--expect",
        metavar="KINDS",
        help="comma-separated record kinds, tables or documents DATA must hold "
        f"({', '.join(_expectable())}); exit 3 when one is absent or empty",
    )

    summary = commands.add_parser(
        "summary",
        help="rows per table and per file",
        description="Rows per table and per file, and what was skipped. Exit 0, or 1 with "
        "--strict-keys when a record holds a key its kind does not declare.",
    )
    _data_argument(summary)
    summary.add_argument(
        "--json",
        action="store_true",
        help="write the rows per table and per file as one strict JSON document to stdout",
    )
    _engine_options(summary)
    _sample_option(summary)
    _strict_keys_option(summary)

    notebooks = commands.add_parser(
        "notebooks",
        help="copy the kit's notebooks into DIR, to explore your own data",
        description="Copy the notebooks that ship with the kit into DIR, their outputs cleared "
        "(they showed the kit's sample data). Open them in JupyterLab "
        "(pip install 'explicit_audit[notebooks]').",
    )
    notebooks.add_argument("dir", metavar="DIR", help="folder to copy the notebooks into")
    verbosity_options(notebooks)
    notebooks.add_argument(
        "--data",
        dest="notebook_data",
        metavar="DATA",
        help="the data path to write into each notebook's parameters cell (a relative path "
        "is rewritten relative to DIR); default: the notebooks' own, ../data",
    )
    notebooks.add_argument(
        "--force", action="store_true", help="replace notebooks of the same name in DIR"
    )

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of a record kind, of presentations or of policies",
        description="Print the JSON Schema (draft 2020-12) of one record kind, of engram's "
        "presentation lines or of a routing policy, read off the declared shapes, for a "
        "producer to validate its records before it writes them.",
    )
    kinds = list(published(registry.kinds()))
    schema.add_argument("kind", metavar="KIND", choices=kinds, help=f"one of {', '.join(kinds)}")
    verbosity_options(schema)
    return top


def _wrapped(text: str) -> str:
    """A description as argparse would wrap it (the exit statuses' layout is kept as written)."""
    return textwrap.fill(text, 79)


def _output_options(verify: argparse.ArgumentParser) -> None:
    """``--format`` (its choices and help read off the registry of formats), ``--json``."""
    formats = output_formats()
    verify.add_argument(
        "--format",
        choices=list(formats),
        default=None,
        help="; ".join(f"{name}: {output.description}" for name, output in formats.items())
        + ". One document on stdout; when nothing could be checked (exit 2), a format with a "
        "document for it (all but text) writes one too, saying why",
    )
    verify.add_argument(
        "--json",
        action="store_true",
        help="write the result as one strict JSON document to stdout (errors included); "
        "the same as --format json",
    )
    verify.add_argument(
        "--max-findings",
        type=_at_least_one("findings", least=0),
        default=20,
        metavar="N",
        help="findings listed per check in the text output (default 20; --json lists all)",
    )


def _strict_keys_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--strict-keys",
        action="store_true",
        help="reject a record holding a key its kind does not declare (a rejected row naming "
        "file, line and key, so exit 1), instead of an unknown_key notice",
    )


def _engine_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--engine",
        choices=ENGINES,
        default="pandas",
        help="pandas (default): every table in memory; dask: partition by partition, for "
        "logs larger than memory (same output and exit status)",
    )
    command.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS|processes|threads",
        help="with --engine dask: where the partitions run; a distributed scheduler's "
        "address (tcp://host:8786), or processes or threads on this machine (default threads)",
    )
    command.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on standard error over the bytes read (and the Dask computes); "
        f"by default on in a terminal, off under CI or in a pipe ({PROGRESS_ENV}=0/1 decides "
        "when neither is given)",
    )


def _at_least_one(unit: str, least: int = 1):
    """An option's type: a whole number of ``unit``, ``least`` or more."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {unit}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} {unit}: give at least {least}")
        return value

    return parse


def _sample_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--sample-bytes",
        type=_at_least_one("bytes"),
        default=None,
        metavar="N",
        help="with --engine dask: the bytes of each file's head read to learn the tables' "
        "columns (default 1 MiB); more when a key first appears later in a file",
    )


def _expectable() -> list[str]:
    """What ``verify --expect`` may name: record kinds, then tables, then documents."""
    names = [kind.name for kind in registry.kinds()]
    names += [name for name in registry.tables() if name not in names]
    return names + [docs.name for docs in registry.documents()]
