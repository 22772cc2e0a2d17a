"""The ``explicit-audit`` command: reports, verification for pipelines, a quick summary.

::

    explicit-audit report DATA --out DIR [--notebooks DIR] [-p NAME=VALUE ...] [--exit-zero]
                                          [--engine dask [--persist]]
    explicit-audit verify DATA [--json | --format text|json|junit|sarif] [--expect KINDS]
                               [--max-findings N] [--baseline PREVIOUS.json [--new-only]]
                               [--since TIME] [--until TIME] [--time-key [TABLE=]COLUMN]
                               [--undated check|skip] [--strict-keys]
                               [--engine dask [--sample-bytes N]]
    explicit-audit summary DATA [--strict-keys] [--engine dask [--sample-bytes N]]
    explicit-audit notebooks DIR [--data DATA] [--force]
    explicit-audit schema KIND

Every command takes ``--engine dask --scheduler ADDRESS|processes|threads``:
the same output and exit status, computed partition by partition.

Exit status, for use in a producer's CI (the same with and without ``--json``):

- ``0``: done; for ``verify`` and ``report``, nothing was found in what was
  checked (for ``verify --new-only``, nothing new since the baseline);
- ``1``: ``verify`` found something (a rejected row, a hash mismatch, a
  receipt finding, a policy breach), or a notebook failed in ``report``;
- ``2``: the kit could not read its input, or the command was used wrongly:
  a source that names or matches no readable file, a file the system would
  not let it read (a permission, an I/O error), a folder with no file to
  load, a malformed command line. Nothing was checked.
- ``3``: read, but nothing to check: no check looked at a record, or a kind
  named by ``verify --expect`` is absent or empty.
- ``130``, ``143``: interrupted (Ctrl-C) or terminated (SIGTERM); ``report``
  removes its copy of the data and any page it had begun.

``report`` exits as ``verify`` does on the same data (a notebook that fails
is exit 1); ``report --exit-zero`` exits 0, not 1, once the pages are
written and the checks found something. A check that looked at no record is "not run (no records)",
never clean.

What was read but does not parse or fit its kind (invalid JSON, a record
missing a field, a damaged gzip stream, a policy that does not validate) is
a *rejected row*: a finding, exit 1, listed with its file and line.

``verify --json`` always writes exactly one strict JSON document (RFC 8259:
no ``NaN``, ``null`` where a value is missing), an ``error`` object in it
when the input could not be read; ``--format junit`` and ``--format sarif``
write one JUnit XML or SARIF 2.1.0 document the same way
(:mod:`explicit_audit.verdicts`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ._core import registry
from ._core.extras import require
from ._core.progress import ENV as PROGRESS_ENV
from ._core.progress import choosing
from ._core.shape import json_schema, published
from ._version import __version__
from .audit import Audit
from .errors import AuditError, RejectedRowsWarning, UnparsedTimeWarning, UnreadableFileError
from .loading import ENGINES, load
from .partitioned.scheduler import use_scheduler
from .reading.remote import has_remote, is_url, local_source
from .reading.sources import CANNOT_LIST, CANNOT_READ, display_name
from .report.bundled import copy_notebooks, notebooks_folder
from .report.parameters import parse_value
from .report.provenance import Provenance, provenance
from .verdicts import Verdict, Window, apply_window, parse_time
from .verdicts.baseline import read_baseline
from .verdicts.outputs import FORMATS, error_output, json_text, write_verdict
from .verdicts.text import visible
from .verdicts.window import UNDATED_CHOICES
from .verify import verify_all

__all__ = ["main"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_NOTHING = 3
#: Interrupted (Ctrl-C, SIGINT) or terminated (SIGTERM), as a shell reports it: 128 + signal.
EXIT_INTERRUPTED = 128 + 2
EXIT_TERMINATED = 128 + 15

_EPILOG = (
    "Exit status (the same with --json): 0 done (verify: clean); 1 something found (rejected "
    "rows included) or a notebook failed; 2 the input could not be read at all (no readable "
    "file matches DATA, a file the system will not let the kit read) or the command was used "
    "wrongly; 3 nothing to check: no check looked at a record, or a kind named by --expect "
    "is absent or empty (report exits as verify does on the same data); 130 interrupted "
    "(Ctrl-C), 143 terminated (SIGTERM). verify --json always "
    'prints one strict JSON document, with an "error" object naming the file when the input '
    "could not be read."
)


class _UsageError(Exception):
    """A command line argparse refuses; raised instead of exiting, to answer in JSON too."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise _UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="explicit-audit",
        description="Load, verify and report on the audit records of AI retrieval and routing "
        "systems.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    report = commands.add_parser(
        "report",
        help="run every notebook on DATA and write one self-contained HTML report each",
        description="Run every notebook on DATA and write one self-contained HTML report per "
        "notebook into DIR (readable offline: tables and plots embedded, code folded away, "
        "a provenance block first).",
    )
    report.add_argument("data", metavar="DATA", help="file, folder or glob of audit records")
    report.add_argument("--out", required=True, metavar="DIR", help="folder for the reports")
    report.add_argument(
        "--notebooks",
        metavar="DIR",
        help="folder of notebooks (*.ipynb) to run; default: the notebooks that ship with the kit",
    )
    report.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a parameter the notebooks declare in their parameters cell, papermill-style "
        "(repeatable); VALUE is read as a Python literal (0.7, 12, True, None, 'text') when it "
        "is one, else as text",
    )
    report.add_argument(
        "--timeout", type=int, default=300, metavar="SECONDS", help="time a cell may run"
    )
    report.add_argument(
        "--exit-zero",
        action="store_true",
        help="exit 0, not 1, when the pages are written and the checks found something (a "
        "failed notebook is still 1, unreadable input 2, nothing to check 3): to render "
        "reports of data known to hold findings; without it, report exits as verify does",
    )
    _engine_options(report)
    report.add_argument(
        "--persist",
        action="store_true",
        help="with --engine dask: keep the rows in the workers' memory after the first read, "
        "so every notebook cell after it is quick (only for data the cluster's memory holds)",
    )

    verify = commands.add_parser(
        "verify",
        help="run every check on DATA; exit 1 when anything is found",
        description=f"Run every check on DATA ({', '.join(registry.checks())}). Exit 1 when "
        "anything is found, 0 when clean.",
        epilog=_EPILOG,
    )
    verify.add_argument("data", metavar="DATA", help="file, folder or glob of audit records")
    verify.add_argument(
        "--json",
        action="store_true",
        help="write the result as one strict JSON document to stdout (errors included); "
        "the same as --format json",
    )
    verify.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default), json, junit (JUnit XML, one test case per rule) or sarif "
        "(SARIF 2.1.0, one result per finding): one document on stdout, errors included",
    )
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
        help="with --baseline: exit 1 only for errors that are new since it",
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
    _engine_options(verify)
    _sample_option(verify)
    _strict_keys_option(verify)
    verify.add_argument(
        "--expect",
        metavar="KINDS",
        help="comma-separated record kinds, tables or documents DATA must hold "
        f"({', '.join(_expectable())}); exit 3 when one is absent or empty",
    )
    verify.add_argument(
        "--max-findings",
        type=int,
        default=20,
        metavar="N",
        help="findings listed per check in the text output (default 20; --json lists all)",
    )

    summary = commands.add_parser(
        "summary", help="rows per table and per file", description="Rows per table and per file."
    )
    summary.add_argument("data", metavar="DATA", help="file, folder or glob of audit records")
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
    return parser


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


def _positive_bytes(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bytes") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} bytes: give at least 1")
    return value


def _sample_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--sample-bytes",
        type=_positive_bytes,
        default=None,
        metavar="N",
        help="with --engine dask: the bytes of each file's head read to learn the tables' "
        "columns (default 1 MiB); more when a key first appears later in a file",
    )


@contextlib.contextmanager
def _engine(args: argparse.Namespace):
    """Run the command's computing on the scheduler ``--scheduler`` names.

    ``report`` chooses it itself, as the notebooks' kernels must too.
    """
    if getattr(args, "engine", "pandas") != "dask" or args.command == "report":
        yield
        return
    with use_scheduler(args.scheduler):
        yield


def _version() -> str:
    return __version__


def _load(
    data: str,
    engine: str = "pandas",
    *,
    strict_keys: bool = False,
    sample_bytes: int | None = None,
) -> tuple[Audit, Provenance | None]:
    """The audit of ``data`` and its provenance, from the one pass that read the files.

    For Dask tables the provenance is None: it is gathered after the checks,
    from the accounting their one pass computes (``Verification.accounting``).

    A file the system will not let the kit read, or a folder it cannot list,
    raises an :class:`~explicit_audit.InputError` naming it (exit 2).
    """
    with warnings.catch_warnings():
        # Every command reports rejected rows itself, and --since/--until counts the
        # records whose time is not one (unreadable).
        warnings.simplefilter("ignore", RejectedRowsWarning)
        warnings.simplefilter("ignore", UnparsedTimeWarning)
        options = {"sample_bytes": sample_bytes} if sample_bytes is not None else {}
        # progress: as --progress/--no-progress chose (the command runs within that choice).
        audit = load(data, engine=engine, strict_keys=strict_keys, **options)
    if audit.engine == "dask":
        # Read once: the accounting the provenance needs comes with the checks.
        return audit, None
    _refuse_unreadable(audit.rejected)
    return audit, provenance(audit, data)


def _refuse_unreadable(rejected: pd.DataFrame) -> None:
    """Exit 2, naming them, when a file could not be read or a folder listed."""
    if not len(rejected):
        return
    reasons = rejected["reason"].astype("str")
    found = rejected.loc[
        (rejected["kind"] == "file")
        & (rejected["source_line"] == 0)
        & reasons.str.startswith((CANNOT_READ, CANNOT_LIST))
    ]
    if not len(found):
        return
    first = found.iloc[0]
    reason = str(first["reason"])
    folder = reason.startswith(CANNOT_LIST)
    raise UnreadableFileError(
        str(first["source_file"]),
        reason.removeprefix(CANNOT_LIST if folder else CANNOT_READ),
        what="folder" if folder else "file",
        also=list(dict.fromkeys(found["source_file"].astype("str").iloc[1:])),
    )


def _skipped_note(audit: Audit) -> str | None:
    """How many entries the listing skipped for their name, or None."""
    sources = audit.sources
    if "skipped" not in sources:
        return None
    count = int(sources["skipped"].notna().sum())
    if not count:
        return None
    return (
        f"{count} file(s) or folder(s) skipped for their name (hidden, or no suffix the kit "
        "reads); `explicit-audit summary` lists them"
    )


def _text_table(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False)


def _summary(args: argparse.Namespace) -> int:
    audit, _ = _load(
        args.data, args.engine, strict_keys=args.strict_keys, sample_bytes=args.sample_bytes
    )
    audit = audit.accounting()
    _refuse_unreadable(audit.rejected)
    print(f"explicit-audit summary {_shown(args.data)}: {len(audit.files)} files\n")
    print(_text_table(audit.summary()))
    print()
    # The digests are in verify --json's provenance; here, what was read and skipped.
    print(_text_table(audit.sources.drop(columns=["sha256"], errors="ignore")))
    if len(audit.rejected):
        print(
            f"\n{len(audit.rejected)} value(s) could not be loaded; "
            f"`explicit-audit verify {_shown(args.data)}` lists them."
        )
    if len(audit.keys):
        print(
            f"\n{len(audit.keys)} key(s) not as declared (unknown keys, fields left to a "
            f"default); `explicit-audit verify {args.data}` counts them per key."
        )
    return EXIT_OK


def _expectable() -> list[str]:
    """What ``verify --expect`` may name: record kinds, then tables, then documents."""
    names = [kind.name for kind in registry.kinds()]
    names += [name for name in registry.tables() if name not in names]
    return names + [docs.name for docs in registry.documents()]


def _output_format(args: argparse.Namespace) -> str:
    if getattr(args, "json", False):
        if args.format not in (None, "json"):
            raise AuditError(f"--json and --format {args.format} ask for two outputs; give one")
        return "json"
    return getattr(args, "format", None) or "text"


def _window(args: argparse.Namespace) -> Window | None:
    """The ``--since/--until`` window, or None; usage errors before anything is read."""
    if args.since is None and args.until is None:
        if args.time_key or args.undated != "check":
            raise AuditError("--time-key and --undated go with --since or --until")
        return None
    time_key, time_keys = None, {}
    for given in args.time_key:
        table, sep, column = given.rpartition("=")
        if not column or (sep and not table):
            raise AuditError(f"--time-key {given!r}: write COLUMN, or TABLE=COLUMN")
        if sep:
            time_keys[table] = column
        else:
            time_key = column
    return Window(
        since=None if args.since is None else parse_time(args.since, what="--since"),
        until=None if args.until is None else parse_time(args.until, what="--until"),
        time_key=time_key,
        time_keys=time_keys,
        undated=args.undated,
    )


def _verify(args: argparse.Namespace) -> int:
    output_format = _output_format(args)
    if args.new_only and not args.baseline:
        raise AuditError("--new-only needs --baseline PREVIOUS.json: new since which run?")
    window = _window(args)
    previous = read_baseline(args.baseline) if args.baseline else None
    audit, facts = _load(
        args.data, args.engine, strict_keys=args.strict_keys, sample_bytes=args.sample_bytes
    )
    result = verify_all(audit, expect=args.expect)
    if facts is None:
        _refuse_unreadable(result.accounting.rejected)
        facts = provenance(result.accounting, args.data)
    windowed = None if window is None else apply_window(result, audit, window)
    verdict = Verdict.of(
        _shown(args.data), result, window=windowed, previous=previous, new_only=args.new_only
    )
    shown = facts.to_dict()
    shown.pop("rejected")  # every rejected row is a finding
    try:
        write_verdict(
            verdict, output_format, sys.stdout, provenance=shown, max_findings=args.max_findings
        )
        note = _skipped_note(result.accounting)
        if note is not None and output_format == "text":
            print(note, flush=True)
    except BrokenPipeError:
        # The reader (``| head -1``) stopped reading: the verdict stands all the same.
        _quiet_stdout()
    return verdict.status


def _shown(data: str) -> str:
    """The data path as output shows it: a byte that is not UTF-8 as ``\\xNN``."""
    return display_name(data)


def _parameters(given: Sequence[str]) -> dict[str, object]:
    """``-p NAME=VALUE`` options as ``{NAME: value}``."""
    values: dict[str, object] = {}
    for item in given:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise AuditError(f"-p {item!r}: write NAME=VALUE, NAME a Python name")
        values[name] = parse_value(text)
    return values


def _report(args: argparse.Namespace) -> int:
    # The report machinery (nbconvert, a kernel) loads only for this command.
    require("report", "explicit-audit report")
    from .report._files import withdraw_reports

    try:
        return _write_report(args)
    except AuditError:
        # Exit 2: the pages a run before this one wrote show a verdict on data
        # that this run could not read; they go (a user's renamed copy stays).
        for page in withdraw_reports(Path(args.out)):
            print(f"removed {page}: its verdict is not of the data given", file=sys.stderr)
        raise


def _write_report(args: argparse.Namespace) -> int:
    from .report.writer import NotebookError, write_reports

    if has_remote(args.data):
        # The pages come from a copy of the files taken first: the copy is of local files.
        raise AuditError(
            f"{args.data}: report reads local files (it copies them before the notebooks run); "
            "copy the logs into a folder first, or use explicit-audit verify on the URL or stdin"
        )
    data = local_source(args.data)  # a file:// URL: the local path it names
    data = data[0] if isinstance(data, list) else data
    parameters = _parameters(args.parameter)
    notebooks = Path(args.notebooks) if args.notebooks else notebooks_folder()
    if not notebooks.exists():
        raise AuditError(
            f"{args.notebooks}: no such folder; pass --notebooks DIR, or leave it out for the "
            "notebooks that ship with the kit"
        )
    verifications = []
    try:
        written = write_reports(
            data,
            args.out,
            notebooks,
            timeout=args.timeout,
            progress=lambda line: print(line, flush=True),
            engine=args.engine,
            scheduler=args.scheduler,
            persist=args.persist,
            parameters=parameters,
            verified=verifications.append,
        )
    except NotebookError as exc:
        print(f"explicit-audit report: {exc}", file=sys.stderr)
        return EXIT_FOUND
    print(f"{len(written)} report(s) in {args.out}")
    # As verify exits on the same data: a CI gate on report passes no tampered data.
    status = verifications[0].exit_status if verifications else EXIT_OK
    if args.exit_zero and status == EXIT_FOUND:
        print("the checks found something (verify would exit 1); --exit-zero: exit 0")
        return EXIT_OK
    return status


def _schema(args: argparse.Namespace) -> int:
    shapes = published(registry.kinds())[args.kind]
    sys.stdout.write(json_text(json_schema(args.kind, shapes)))
    sys.stdout.flush()
    return EXIT_OK


def _notebooks(args: argparse.Namespace) -> int:
    data = args.notebook_data
    written = copy_notebooks(args.dir, data=data, overwrite=args.force)
    for path in written:
        print(f"wrote {path}")
    shown = data if data is not None else "../data (a data folder beside DIR)"
    print(f"\n{len(written)} notebook(s) in {args.dir}, reading DATA = {shown}; change it in each")
    print("notebook's parameters cell. To open them: pip install 'explicit_audit[notebooks]',")
    print(f"then jupyter lab {args.dir}")
    if data is not None and "://" not in data and not Path(data).exists():
        print(f"note: {data} does not exist (yet)", file=sys.stderr)
    return EXIT_OK


_COMMANDS = {
    "report": _report,
    "verify": _verify,
    "summary": _summary,
    "notebooks": _notebooks,
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
        The exit status: 0 done (``verify``: clean), 1 something found or a
        notebook failed, 2 the input could not be read at all, or a usage error
        (see the module docstring).

    Examples
    --------
    >>> main(["verify", "data", "--json"])  # doctest: +SKIP
    1
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help or --version
        return int(exc.code or 0)
    except _UsageError as exc:
        return _fail("", None, exc, "UsageError", output=_asked_format(argv))
    except AuditError as exc:  # a record kind plug-in that cannot be imported
        return _fail("", None, exc, type(exc).__name__, output=_asked_format(argv))
    output = _asked_format(argv) if args.command == "verify" else "text"
    data = getattr(args, "data", None)
    local = data is not None and not has_remote(data)  # not "-" (stdin) nor a URL
    checked = local and not is_url(data) and not any(ch in data for ch in "*?[")
    why = _not_there(data) if checked else None
    if why is not None:
        missing = AuditError(f"{_shown(data)}: {why}")
        missing.source_file = _shown(data)
        return _fail(args.command, data, missing, "InputError", output=output)
    signalled: list[int] = []
    try:
        with (
            _engine(args),
            choosing(getattr(args, "progress", None)),
            _signals(args.command, signalled),
        ):
            status = _COMMANDS[args.command](args)
    except BaseException as exc:
        # Whatever a signal surfaced as (a library cleaning up after it may
        # raise something else), the signal is what happened; every ``with``
        # block has run, so the snapshot and any partial page are gone.
        if signalled or isinstance(exc, KeyboardInterrupt):
            return _interrupted(args.command, signalled[0] if signalled else signal.SIGINT)
        return _failed(args.command, data, exc, output)
    if signalled:
        return _interrupted(args.command, signalled[0])
    return status


def _not_there(data: str) -> str | None:
    """Why DATA names nothing (no such file, a name too long), or None when it exists."""
    try:
        os.stat(data)
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as exc:  # a name too long, a loop of links, a file used as a folder
        return exc.strerror or str(exc)
    return None


def _interrupted(command: str, signum: int) -> int:
    """Ctrl-C (SIGINT) exits 130, SIGTERM 143, with one line on stderr and no traceback."""
    what = "interrupted" if signum == signal.SIGINT else "terminated"
    print(f"explicit-audit {command}: {what}", file=sys.stderr)
    return EXIT_INTERRUPTED if signum == signal.SIGINT else EXIT_TERMINATED


def _failed(command: str, data: str | None, exc: BaseException, output: str) -> int:
    """The exit status of a command that raised ``exc``; re-raises what is not ours to map."""
    if isinstance(exc, AuditError):
        return _fail(command, data, exc, type(exc).__name__, output=output)
    if isinstance(exc, BrokenPipeError):  # the reader (``| head``) stopped: not an error of ours
        _quiet_stdout()
        return EXIT_OK
    if isinstance(exc, OSError):  # e.g. --out names a file, or a folder that cannot be written
        return _fail(command, data, exc, "OSError", output=output)
    raise exc


class _Terminated(BaseException):
    """SIGTERM, raised where the program is, so that every ``with`` block cleans up.

    A BaseException, as KeyboardInterrupt is: no ``except Exception`` swallows it.
    """


@contextlib.contextmanager
def _signals(command: str, signalled: list[int]):
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


def _quiet_stdout() -> None:
    """After a broken pipe: what is left to flush goes nowhere, not to a traceback at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _asked_format(argv: Sequence[str]) -> str:
    """The output ``verify`` was asked for, read from the raw arguments (for usage errors too)."""
    if "--json" in argv:
        return "json"
    for position, item in enumerate(argv):
        if item == "--format" and position + 1 < len(argv) and argv[position + 1] in FORMATS:
            return argv[position + 1]
        if item.startswith("--format=") and item.split("=", 1)[1] in FORMATS:
            return item.split("=", 1)[1]
    return "text"


def _fail(command: str, data: str | None, exc: Exception, kind: str, *, output: str) -> int:
    """Say why nothing could be checked, on stderr (and as the document asked for); exit 2."""
    message = visible(str(exc))
    prefix = f"explicit-audit {command}: " if command else ""
    print(f"{prefix}{message}", file=sys.stderr)
    shown = None if data is None else _shown(data)
    document = error_output(output, shown, exc, kind, version=__version__, status=EXIT_USAGE)
    if document is not None:
        sys.stdout.write(document)
        sys.stdout.flush()
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
