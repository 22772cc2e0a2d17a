"""The ``explicit-audit`` command: reports, verification for pipelines, a quick summary.

::

    explicit-audit report DATA --out DIR [--notebooks DIR] [--engine dask [--persist]]
    explicit-audit verify DATA [--json] [--expect KINDS] [--max-findings N] [--engine dask]
    explicit-audit summary DATA [--engine dask]
    explicit-audit schema KIND

Every command takes ``--engine dask --scheduler ADDRESS|processes|threads``:
the same output and exit status, computed partition by partition.

Exit status, for use in a producer's CI (the same with and without ``--json``):

- ``0``: done; for ``verify`` and ``report``, nothing was found in what was checked;
- ``1``: ``verify`` found something (a rejected row, a hash mismatch, a
  receipt finding, a policy breach), or a notebook failed in ``report``;
- ``2``: the kit could not read its input, or the command was used wrongly:
  a source that names or matches no readable file, a file the system would
  not let it read (a permission, an I/O error), a folder with no file to
  load, a malformed command line. Nothing was checked.
- ``3``: read, but nothing to check: no check looked at a record, or a kind
  named by ``verify --expect`` is absent or empty.

``report`` exits as ``verify`` does on the same data (a notebook that fails
is exit 1). A check that looked at no record is "not run (no records)",
never clean.

What was read but does not parse or fit its kind (invalid JSON, a record
missing a field, a damaged gzip stream, a policy that does not validate) is
a *rejected row*: a finding, exit 1, listed with its file and line.

``verify --json`` always writes exactly one strict JSON document (RFC 8259:
no ``NaN``, ``null`` where a value is missing), an ``error`` object in it
when the input could not be read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ._core import registry
from ._core.shape import json_schema
from ._version import __version__
from .audit import Audit
from .errors import AuditError, RejectedRowsWarning
from .loading import ENGINES, load
from .partitioned.scheduler import use_scheduler
from .report.provenance import Provenance, provenance
from .verify import verify_all

__all__ = ["main"]

EXIT_OK = 0
EXIT_FOUND = 1
EXIT_USAGE = 2
EXIT_NOTHING = 3

_EPILOG = (
    "Exit status (the same with --json): 0 done (verify: clean); 1 something found (rejected "
    "rows included) or a notebook failed; 2 the input could not be read at all (no readable "
    "file matches DATA, a file the system will not let the kit read) or the command was used "
    "wrongly; 3 nothing to check: no check looked at a record, or a kind named by --expect "
    "is absent or empty (report exits as verify does on the same data). verify --json always "
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
        help="folder of notebooks (*.ipynb) to run; default: ./notebooks",
    )
    report.add_argument(
        "--timeout", type=int, default=300, metavar="SECONDS", help="time a cell may run"
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
        help="write the result as one strict JSON document to stdout (errors included)",
    )
    _engine_options(verify)
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

    schema = commands.add_parser(
        "schema",
        help="print the JSON Schema of a record kind",
        description="Print the JSON Schema (draft 2020-12) of one record kind, read off the "
        "kind's declared shapes, for a producer to validate its records before it writes them.",
    )
    kinds = [kind.name for kind in registry.kinds() if kind.shapes]
    schema.add_argument("kind", metavar="KIND", choices=kinds, help=f"one of {', '.join(kinds)}")
    return parser


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


def _load(data: str, engine: str = "pandas") -> tuple[Audit, Provenance | None]:
    """The audit of ``data`` and its provenance; every file is read once more to hash it.

    For Dask tables the provenance is None: it is gathered after the checks,
    from the accounting their one pass computes (``Verification.accounting``).

    Hashing is also how a file the system will not let the kit read is told
    apart from content that does not parse: it raises an
    :class:`~explicit_audit.InputError` naming the file (exit 2).
    """
    with warnings.catch_warnings():
        # Every command reports rejected rows itself.
        warnings.simplefilter("ignore", RejectedRowsWarning)
        audit = load(data, progress=sys.stderr.isatty(), engine=engine)
    if audit.engine == "dask":
        # Read once: the accounting the provenance needs comes with the checks.
        return audit, None
    return audit, provenance(audit, data)


def _text_table(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False)


def _summary(args: argparse.Namespace) -> int:
    audit, facts = _load(args.data, args.engine)
    audit = audit.accounting()
    if facts is None:
        provenance(audit, args.data)  # hashing names a file that cannot be read (exit 2)
    print(f"explicit-audit summary {args.data}: {len(audit.files)} files\n")
    print(_text_table(audit.summary()))
    print()
    print(_text_table(audit.sources))
    if len(audit.rejected):
        print(
            f"\n{len(audit.rejected)} value(s) could not be loaded; "
            f"`explicit-audit verify {args.data}` lists them."
        )
    return EXIT_OK


def _write_json(document: dict) -> None:
    # allow_nan=False: a NaN that slipped through is a bug to see, never output to parse.
    json.dump(document, sys.stdout, ensure_ascii=False, indent=2, allow_nan=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


def _error_document(data: str | None, exc: Exception, kind: str) -> dict:
    """The one JSON document of a run that could not check anything (exit 2)."""
    error = {
        "type": kind,
        "file": getattr(exc, "source_file", None),
        "line": getattr(exc, "source_line", None),
        "field": getattr(exc, "field", None),
        "message": str(exc),
    }
    return {"data": data, "exit_status": EXIT_USAGE, "clean": None, "error": error}


def _verify(args: argparse.Namespace) -> int:
    audit, facts = _load(args.data, args.engine)
    result = verify_all(audit, expect=args.expect)
    if facts is None:
        facts = provenance(result.accounting, args.data)
    status = result.exit_status
    if args.json:
        shown = facts.to_dict()
        shown.pop("rejected")  # every rejected row is a finding below
        _write_json(
            {"data": str(args.data), "exit_status": status, **result.to_dict(), "provenance": shown}
        )
        return status
    summary = result.summary()
    print(f"explicit-audit verify {args.data}: {_verdict_line(result, summary)}")
    for name in result.missing:
        print(f"expected {name}: none found")
    print()
    shown = summary.assign(status=summary["status"].astype(str).replace(_NOT_RUN, _NOT_RUN_TEXT))
    print(_text_table(shown[["check", "checked", "status", "findings", "notices", "covers"]]))
    for check, rows in result.findings.groupby("check", observed=True, sort=False):
        print(f"\n{check} ({len(rows)})")
        for row in rows.head(max(args.max_findings, 0)).itertuples(index=False):
            record = f" [{row.record}]" if isinstance(row.record, str) else ""
            notice = " (notice)" if row.severity == "notice" else ""
            print(
                f"  {row.source_file}:{row.source_line}: {row.rule}{notice}{record}: {row.detail}"
            )
        if len(rows) > args.max_findings:
            print(f"  ... and {len(rows) - args.max_findings} more (--json lists all)")
    return status


_NOT_RUN = "not run"
_NOT_RUN_TEXT = "not run (no records)"


def _expectable() -> list[str]:
    names = [kind.name for kind in registry.kinds()]
    names += [name for name in registry.tables() if name not in names]
    return names + [docs.name for docs in registry.documents()]


def _verdict_line(result, summary: pd.DataFrame) -> str:
    """The first line of ``verify``: the state, what ran, and what was not run."""
    n_notices = int(summary["notices"].sum())
    notes = f", {n_notices} notice(s)" if n_notices else ""
    not_run = summary.loc[summary["status"] == _NOT_RUN, "check"].tolist()
    ran = len(summary) - len(not_run)
    skipped = f"; {len(not_run)} not run (no records)" if not_run else ""
    if result.state == "nothing to check":
        return f"nothing to check (no check looked at a record; {len(summary)} not run)"
    if result.state == "findings":
        found = summary[summary["findings"] > 0]
        return (
            f"{int(summary['findings'].sum())} finding(s) in {len(found)} of "
            f"{len(summary)} checks{notes}{skipped}"
        )
    missing = f"; expected but absent or empty: {', '.join(result.missing)}"
    return (
        f"clean on what was checked ({ran} of {len(summary)} checks run, no error{notes}"
        f"{skipped}){missing if result.missing else ''}"
    )


def _default_notebooks() -> Path | None:
    here = Path("notebooks")
    if here.is_dir():
        return here
    source_tree = Path(__file__).resolve().parent.parent / "notebooks"
    return source_tree if source_tree.is_dir() else None


def _report(args: argparse.Namespace) -> int:
    # The report machinery (nbconvert, a kernel) loads only for this command.
    from .report.writer import NotebookError, write_reports

    notebooks = Path(args.notebooks) if args.notebooks else _default_notebooks()
    if notebooks is None or not notebooks.exists():
        where = args.notebooks or "./notebooks"
        print(
            f"explicit-audit report: {where}: no such folder; pass --notebooks DIR", file=sys.stderr
        )
        return EXIT_USAGE
    verdicts = []
    try:
        written = write_reports(
            args.data,
            args.out,
            notebooks,
            timeout=args.timeout,
            progress=lambda line: print(line, flush=True),
            engine=args.engine,
            scheduler=args.scheduler,
            persist=args.persist,
            verified=verdicts.append,
        )
    except NotebookError as exc:
        print(f"explicit-audit report: {exc}", file=sys.stderr)
        return EXIT_FOUND
    print(f"{len(written)} report(s) in {args.out}")
    # As verify exits on the same data: a CI gate on report passes no tampered data.
    return verdicts[0].exit_status if verdicts else EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    kind = registry.kind(args.kind)
    _write_json(json_schema(kind.name, kind.shapes))
    return EXIT_OK


_COMMANDS = {"report": _report, "verify": _verify, "summary": _summary}


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
        return _fail("", None, exc, "UsageError", as_json="--json" in argv)
    except AuditError as exc:  # a record kind plug-in that cannot be imported
        return _fail("", None, exc, type(exc).__name__, as_json="--json" in argv)
    as_json = bool(getattr(args, "json", False))
    if args.command == "schema":
        return _schema(args)
    if not Path(args.data).exists() and not any(ch in args.data for ch in "*?["):
        missing = AuditError(f"{args.data}: no such file or folder")
        missing.source_file = args.data
        return _fail(args.command, args.data, missing, "InputError", as_json=as_json)
    try:
        with _engine(args):
            return _COMMANDS[args.command](args)
    except AuditError as exc:
        return _fail(args.command, args.data, exc, type(exc).__name__, as_json=as_json)
    except BrokenPipeError:  # the reader (``| head``) stopped reading: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:  # e.g. --out names a file, or a folder that cannot be written
        return _fail(args.command, args.data, exc, "OSError", as_json=as_json)


def _fail(command: str, data: str | None, exc: Exception, kind: str, *, as_json: bool) -> int:
    """Say why nothing could be checked, on stderr (and as the JSON document); exit 2."""
    message = str(exc)
    prefix = f"explicit-audit {command}: " if command else ""
    print(f"{prefix}{message}", file=sys.stderr)
    if as_json:
        _write_json(_error_document(data, exc, kind))
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
