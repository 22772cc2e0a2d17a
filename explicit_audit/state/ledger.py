"""Where a state folder's runs are counted outside it: an older ``state.json`` put back is told.

Every ``state.json`` is signed, so nobody without the secret can forge one;
but a copy of an earlier one, signed too, could be put back (a backup
restored over the folder, a folder copied aside and back). Its runs before
would then be read as the last audited, and an edit made since to a line only
the later runs audited would never be told. Each state counts its runs
(``run``) within its lineage (``lineage``, drawn when the folder's first
state is written); each run also records, beside the cache's secret (outside
the folder: ``states/`` in the secret's folder), the last run it wrote or
read in that folder. A state of the same lineage with an earlier run than the one
recorded is an older copy (:func:`older_than_recorded`). A folder shared by
several hosts or users counts its runs in the folder, so another writer's
later runs are never taken for a copy; a state of another lineage (a folder
started anew, or one copied in from elsewhere) cannot be told from the
records, and is read as it is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from pathlib import Path
from typing import Any

from .._cache_seal import secret_path

__all__ = ["new_lineage", "older_than_recorded", "record_run"]

_log = logging.getLogger(__name__)


def new_lineage() -> str:
    """A lineage for a folder's first state."""
    return uuid.uuid4().hex


def _record_path(folder: Path) -> Path:
    real = os.path.realpath(folder).encode("utf-8", "surrogateescape")
    return secret_path().parent / "states" / f"{hashlib.sha256(real).hexdigest()[:32]}.json"


def record_run(folder: Path, lineage: str, run: int) -> None:
    """Record that ``run`` of ``lineage`` was written to ``folder`` (whole, or not at all)."""
    path = _record_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = path.with_name(f".{path.name}.{uuid.uuid4().hex}.partial")
        value = {"folder": os.fsdecode(os.path.realpath(folder)), "lineage": lineage, "run": run}
        partial.write_text(json.dumps(value), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:  # a folder that cannot be written: no older copy can be told
        _log.info("the run of %s is not recorded (%s)", folder, exc)


def older_than_recorded(folder: Path, value: dict[str, Any]) -> str | None:
    """Why ``state.json`` (its signed ``value``) is older than the last run recorded, or None.

    A state that is not older is recorded as seen, where it is later than the
    run recorded (written by another host or user since) or of another
    lineage: a copy of it put back later is told too.
    """
    lineage, run = value.get("lineage"), value.get("run")
    if not isinstance(lineage, str) or not isinstance(run, int):
        return None  # written before states counted their runs
    try:
        recorded = json.loads(_record_path(folder).read_text(encoding="utf-8"))
        last = recorded["run"] if recorded["lineage"] == lineage else None
    except (OSError, ValueError, KeyError, TypeError):
        last = None  # no run recorded here (the first seen on this host)
    if isinstance(last, int) and run < last:
        return (
            f"it holds run {run} of this folder's audits, and run {last} was seen here "
            "since: an older copy of the state put back"
        )
    if last != run:
        record_run(folder, lineage, run)
    return None
