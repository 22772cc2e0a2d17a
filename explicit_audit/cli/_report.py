"""``report`` and ``notebooks``: the bundled notebooks run into pages, or copied to explore."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from .._core.extras import require
from ..errors import AuditError
from ..reading.remote import has_remote, local_source
from ..report.bundled import copy_notebooks, notebooks_folder
from ..verdicts import ExitStatus, Verdict
from ..verdicts.text import state_line
from ._input import shown
from ._parameters import parameters_given

__all__ = ["notebooks", "report"]

_log = logging.getLogger(__name__)


def report(args: argparse.Namespace) -> int:
    """``report``: one page per notebook; exits as ``verify`` does on the same data."""
    # The report machinery (nbconvert, a kernel) loads only for this command.
    require("report", "explicit-audit report")
    from ..report._files import withdraw_reports

    try:
        return _write_report(args)
    except AuditError:
        # Exit 2: the pages a run before this one wrote show a verdict on data
        # that this run could not read; they go (a user's renamed copy stays).
        for page in withdraw_reports(Path(args.out)):
            _log.warning("removed %s: its verdict is not of the data given", page)
        raise


def _write_report(args: argparse.Namespace) -> int:
    from ..report.writer import NotebookError, write_reports

    if has_remote(args.data):
        # The pages come from a copy of the files taken first: the copy is of local files.
        raise AuditError(
            f"{args.data}: report reads local files (it copies them before the notebooks run); "
            "copy the logs into a folder first, or use explicit-audit verify on the URL or stdin"
        )
    data = local_source(args.data)  # a file:// URL: the local path it names
    data = data[0] if isinstance(data, list) else data
    parameters = parameters_given(args)
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
            jobs=args.jobs,
            # -q: the pages' names are not printed as they are written.
            progress=None
            if getattr(args, "quiet", False)
            else lambda line: print(line, flush=True),
            engine=args.engine,
            scheduler=args.scheduler,
            persist=args.persist,
            parameters=parameters,
            verified=verifications.append,
            title=args.title,
            command=args.command_line,
            state=args.state,
        )
    except NotebookError as exc:
        print(f"explicit-audit report: {exc}", file=sys.stderr)
        return ExitStatus.FOUND
    print(f"{len(written)} report(s) in {args.out}")
    # As verify exits on the same data: a CI gate on report passes no tampered data.
    status = verifications[0].exit_status if verifications else ExitStatus.CLEAN
    if args.exit_zero and status == ExitStatus.FOUND:
        print("the checks found something (verify would exit 1); --exit-zero: exit 0")
        return ExitStatus.CLEAN
    if status in (ExitStatus.FOUND, ExitStatus.NOTHING_TO_CHECK):
        # Why, in verify's words: the pages are written, so stdout says nothing of it.
        said = state_line(Verdict.of(shown(args.data), verifications[0]))
        print(
            f"explicit-audit report: exit {status}, as verify exits on the same data: {said} "
            f"(`explicit-audit verify {shown(args.data)}` lists each)",
            file=sys.stderr,
        )
    return status


def notebooks(args: argparse.Namespace) -> int:
    """``notebooks``: the bundled notebooks copied into DIR, their outputs cleared."""
    data = args.notebook_data
    written = copy_notebooks(args.dir, data=data, overwrite=args.force)
    for path in written:
        print(f"wrote {path}")
    shown = data if data is not None else "../data (a data folder beside DIR)"
    print(f"\n{len(written)} notebook(s) in {args.dir}, reading DATA = {shown}; change it in each")
    print("notebook's parameters cell. To open them: pip install 'explicit_audit[notebooks]',")
    print(f"then jupyter lab {args.dir}")
    if data is not None and "://" not in data and not Path(data).exists():
        _log.warning("note: %s does not exist (yet)", data)
    return ExitStatus.CLEAN
