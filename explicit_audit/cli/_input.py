"""What every command does with DATA before it checks anything: read it, or say why not."""

from __future__ import annotations

import argparse
import contextlib
import os
import warnings
from dataclasses import replace

import pandas as pd

from .._core.engine import reads_lazily
from .._core.extras import require
from ..audit import Audit
from ..errors import RejectedRowsWarning, UnparsedTimeWarning, UnreadableFileError
from ..loading import load_settled
from ..partitioned.scheduler import use_scheduler
from ..reading.names import display_name
from ..reading.options import resolved
from ..reading.sources import CANNOT_LIST, CANNOT_READ
from ..report.provenance import Provenance, provenance

__all__ = ["engine", "load_data", "not_there", "refuse_unreadable", "shown", "skipped_note"]


@contextlib.contextmanager
def engine(args: argparse.Namespace):
    """Run the command's computing on the scheduler ``--scheduler`` names.

    ``report`` chooses it itself, as the notebooks' kernels must too.
    """
    lazy = reads_lazily(getattr(args, "engine", "pandas"))
    if lazy:
        # Named as the user asked for it, with the pip install that adds it.
        require("dask", f"--engine {args.engine}")
    if not lazy or args.command == "report":
        yield
        return
    with use_scheduler(args.scheduler):
        yield


def load_data(
    data: str,
    engine: str = "pandas",
    *,
    strict_keys: bool = False,
    sample_bytes: int | None = None,
    state: str | None = None,
) -> tuple[Audit, Provenance | None]:
    """The audit of ``data`` and its provenance, from the one pass that read the files.

    For Dask tables the provenance is None: it is gathered after the checks,
    from the accounting their one pass computes (``Verification.accounting``).

    With ``state``, an audit state folder (``ea.load(..., state=)``). A file
    the system will not let the kit read, or a folder it cannot list, raises
    an :class:`~explicit_audit.InputError` naming it (exit 2).
    """
    with warnings.catch_warnings():
        # Every command reports rejected rows itself, and --since/--until counts the
        # records whose time is not one (unreadable).
        warnings.simplefilter("ignore", RejectedRowsWarning)
        warnings.simplefilter("ignore", UnparsedTimeWarning)
        options = {"sample_bytes": sample_bytes} if sample_bytes is not None else {}
        if state is not None:
            options["state"] = state
        # progress: as --progress/--no-progress chose (the command runs within that choice).
        settings = resolved({"engine": engine, "strict_keys": strict_keys, **options})
        # The run is recorded once its verdict is out: until then the state keeps its edits.
        audit = load_settled(data, replace(settings, reported_later=state is not None))
    if audit.lazy:
        # Read once: the accounting the provenance needs comes with the checks.
        return audit, None
    refuse_unreadable(audit.rejected)
    return audit, provenance(audit, data)


def refuse_unreadable(rejected: pd.DataFrame) -> None:
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


def skipped_note(audit: Audit) -> str | None:
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


def shown(data: str) -> str:
    """The data path as output shows it: a byte that is not UTF-8 as ``\\xNN``."""
    return display_name(data)


def not_there(data: str) -> str | None:
    """Why DATA names nothing (no such file, a name too long), or None when it exists."""
    try:
        os.stat(data)
    except FileNotFoundError:
        return "no such file or folder"
    except OSError as exc:  # a name too long, a loop of links, a file used as a folder
        return exc.strerror or str(exc)
    return None
