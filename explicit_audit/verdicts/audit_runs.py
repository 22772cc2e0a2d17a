"""What each audit from one state found, and what is new since the last one.

An audit state (``verify --state DIR``, ``docs/state.md``) remembers the
bytes a run audited. Beside them it keeps the runs themselves, in
``DIR/runs.json``, signed as ``state.json`` is (the cache's secret):

- one row per run, oldest first (at most :data:`MAX_RUNS`): when it ran,
  what it read, its state, its findings and errors, per check, and how many
  were new and resolved since the run before (:func:`audit_runs`);
- the last run's findings, as ``verify --json`` lists them, so that the next
  run compares with them as with ``--baseline`` (:func:`last_audit`): "3 new
  findings since the last audit".

Nothing here is trusted that the signature does not cover: a ``runs.json``
whose signature does not hold is named in a ``TamperedCacheWarning`` and
dropped, and the run after it compares with nothing (it says so). A last run
whose findings would make the file larger than its bound
(:data:`MAX_RUNS_BYTES`) keeps its row but not its findings: the next run
says it has nothing to compare with, rather than a wrong count.
"""

from __future__ import annotations

import json
import os
import uuid
import warnings
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from .._cache_seal import TamperedCacheWarning, signed, unsigned
from .._core.findings import ERROR
from ..small_files import MAX_SMALL_FILE_BYTES
from ..state.store import RUNS_FILE, mark_reported
from .baseline import _NEEDED, Baseline, _bounds
from .verdict import Verdict

__all__ = [
    "MAX_RUNS",
    "MAX_RUNS_BYTES",
    "RUNS_FILE",
    "RUN_COLUMNS",
    "audit_runs",
    "last_audit",
    "record_audit",
    "since_text",
]

#: Runs kept, the latest: an older one is dropped when a new one is recorded.
MAX_RUNS = 1000
#: The bound of ``runs.json``, as the state's own files are bounded when read.
MAX_RUNS_BYTES = MAX_SMALL_FILE_BYTES["digests"]
_FORMAT = "explicit_audit.audit_runs/1"
_PURPOSE = "audit runs"
#: The columns of :func:`audit_runs`, before one column per check.
RUN_COLUMNS = ("at", "data", "state", "findings", "errors", "new", "resolved")


def _read(directory: str | os.PathLike) -> dict | None:
    """``runs.json`` of ``directory``, its signature checked; None when there is none to trust."""
    folder = Path(directory)
    path = folder / RUNS_FILE
    if not os.path.lexists(path):
        return None
    value, problem = unsigned(folder, path, _PURPOSE)
    if problem is None and not (isinstance(value, dict) and value.get("format") == _FORMAT):
        problem = "not a list of audit runs this kit wrote"
    if problem is not None:
        warnings.warn(
            f"{path}: {problem}; the runs it lists are dropped, and this run is compared "
            "with no earlier one",
            TamperedCacheWarning,
            stacklevel=3,
        )
        return None
    return value


def last_audit(directory: str | os.PathLike) -> Baseline | None:
    """The last run recorded in the state ``directory``, as a baseline to compare with.

    Parameters
    ----------
    directory : str or path-like
        An audit state folder.

    Returns
    -------
    Baseline or None
        Its findings, data, checks and window, its ``file`` naming the run
        ("the last audit (2026-12-05T10:00:00Z)"); None when no run was
        recorded, or its findings were not kept.

    Warns
    -----
    TamperedCacheWarning
        When ``runs.json``'s signature does not hold (it is then not used).
    """
    value = _read(directory)
    last = None if value is None else value.get("last")
    if not isinstance(last, dict) or not isinstance(last.get("findings"), list):
        return None
    return Baseline(
        file=f"the last audit ({last['at']})",
        findings=last["findings"],
        data=last.get("data"),
        checks=tuple(last.get("checks") or ()),
        window=last.get("window"),
    )


def record_audit(
    directory: str | os.PathLike,
    verdict: Verdict,
    *,
    at: datetime | None = None,
    max_bytes: int = MAX_RUNS_BYTES,
) -> dict:
    """Add ``verdict``'s run to the state ``directory``'s runs; keep its findings for the next.

    Parameters
    ----------
    directory : str or path-like
        The audit state folder the run was loaded with.
    verdict : Verdict
        The run, compared with :func:`last_audit` (or a baseline) where there was one.
    at : datetime, optional
        When it ran (default: now, UTC).
    max_bytes : int
        The bound of ``runs.json``: past it, the run's findings are not kept.

    Returns
    -------
    dict
        The row recorded (as :func:`audit_runs` lists it).
    """
    folder = Path(directory)
    value = _read(folder) or {"format": _FORMAT, "runs": []}
    moment = (at or datetime.now(UTC)).astimezone(UTC).isoformat().replace("+00:00", "Z")
    findings = verdict.findings
    counts = verdict.baseline.counts() if verdict.baseline is not None else {}
    row = {
        "at": moment,
        "data": verdict.data,
        "state": verdict.state,
        "findings": len(findings),
        "errors": sum(finding["severity"] == ERROR for finding in findings),
        "new": counts.get("new"),
        "resolved": counts.get("resolved"),
        "checks": {check: 0 for check in verdict.verification.checked},
    }
    for finding in findings:
        row["checks"][finding["check"]] = row["checks"].get(finding["check"], 0) + 1
    last = {
        "at": moment,
        "data": verdict.data,
        "checks": list(verdict.verification.checked),
        "window": None if verdict.window is None else _bounds(verdict.window.to_dict()),
        "findings": [{key: finding.get(key) for key in _NEEDED} for finding in findings],
    }
    document = {"format": _FORMAT, "runs": [*value["runs"], row][-MAX_RUNS:], "last": last}
    text = json.dumps(signed(folder, _PURPOSE, document), ensure_ascii=False)
    if len(text.encode("utf-8")) > max_bytes:
        # Too many findings to keep: the row stays, the next run compares with nothing.
        document["last"] = {**last, "findings": None}
        text = json.dumps(signed(folder, _PURPOSE, document), ensure_ascii=False)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f".{RUNS_FILE}.{uuid.uuid4().hex}.partial"
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, folder / RUNS_FILE)
    # Recorded, the run has reported the edits its load found: the state lets them go.
    mark_reported(folder)
    return row


def audit_runs(directory: str | os.PathLike) -> pd.DataFrame:
    """Every run recorded in the state ``directory``, oldest first: a trend over audits.

    Parameters
    ----------
    directory : str or path-like
        An audit state folder (``verify --state DIR`` records each run in it).

    Returns
    -------
    DataFrame
        One row per run: ``at`` (UTC), ``data``, ``state``, ``findings``,
        ``errors``, ``new`` and ``resolved`` (since the run it was compared
        with; missing for the first), then one column per check: its
        findings. Empty, with those first columns, when none was recorded.

    Examples
    --------
    >>> ea.audit_runs("audit-state/")[["at", "findings", "new"]]  # doctest: +SKIP
                             at  findings  new
    0 2026-12-05 10:00:00+00:00       172  <NA>
    1 2026-12-06 10:00:00+00:00       175     3
    """
    value = _read(directory)
    rows = [] if value is None else value["runs"]
    checks = list(dict.fromkeys(check for row in rows for check in row["checks"]))
    frame = pd.DataFrame(
        [{**{k: row[k] for k in RUN_COLUMNS}, **row["checks"]} for row in rows],
        columns=[*RUN_COLUMNS, *checks],
    )
    frame["at"] = pd.to_datetime(frame["at"], utc=True)
    for column in ("findings", "errors", "new", "resolved", *checks):
        frame[column] = frame[column].astype("Int64")
    for column in ("data", "state"):
        frame[column] = frame[column].astype("str")
    return frame


def since_text(verdict: Verdict, directory: str | os.PathLike) -> str:
    """What ``verdict`` says against the last audit of the state ``directory``, in words.

    Examples
    --------
    >>> since_text(verdict, "audit-state")  # doctest: +SKIP
    '3 new findings since the last audit (2026-12-05T10:00:03Z), 0 resolved, 172 persisting'
    """
    comparison = verdict.baseline
    if comparison is None:
        return f"none recorded in {os.fspath(directory)}: this is the first"
    counts = comparison.counts()
    new = f"{counts['new']:,} new finding{'' if counts['new'] == 1 else 's'}"
    return (
        f"{new} since {comparison.baseline}, {counts['resolved']:,} resolved, "
        f"{counts['persisting']:,} persisting"
    )
