"""Time windows on a verification: the findings about the records of ``[since, until)``.

``explicit-audit verify DATA --since 2025-03-04 --until 2025-03-05`` runs
every check over all of DATA, as without a window, and then keeps the
findings about records dated inside the window. Checking everything first
keeps the checks that compare records with each other right at the window's
edges (two compile requests for one ``base_id``, one on each side of
midnight, still disagree).

Which time a record has
    The producers' records carry no time of their own, except engram's
    presentations (``generatedAt``); a logger that wraps a record adds one,
    under a name of its choosing, and it becomes a column. A table's time is
    its first column named in :data:`TIME_KEYS` (``timestamp``, ``ts``,
    ``time``, ``started_at``, ``sent_at``, ``generated_at``, ``created_at``,
    ``logged_at``), or the column ``--time-key`` names (for every table, or
    ``TABLE=COLUMN`` for one). Values are ISO 8601 strings or datetimes; a
    time without a zone is read as UTC. ``since`` is inside the window,
    ``until`` is not, so consecutive windows tile a day without overlap. A
    finding is placed by the time of the record it is about, in the table
    its check examines or, for a check over every kind (``record_keys``,
    ``record_duplicates``, ``record_times``), the table its ``kind`` names.

Records without a time
    A record whose table has no time column, whose time is missing, or whose
    time is not a time (``"yesterday"``, an epoch number) cannot be placed. A
    time past 2262 (``9999-12-31``), which no nanosecond column holds and the
    loader keeps as text, is placed by that text, as ``record_times`` reads it.
    By default its findings are kept, since an audit must not skip what it
    cannot place (``undated="check"``); ``undated="skip"`` leaves them out.
    Either way they are counted and the output says how many: nothing is
    dropped in silence. A rejected input has no time (it could not be
    read), so it is one of them.

Edits of audited bytes
    A finding of ``audited_bytes`` (bytes an audit state audited before were
    changed) is about a file, not a record: every window keeps it. Left out,
    it would be lost, since the run that finds an edit is the one that
    reports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core import engine, registry
from .._core.edit_findings import STATE_CHECK
from .._core.times import (
    TIME_KEYS,
    UNPARSED_SUFFIX,
    iso_utc,
    parse_time,
    time_parts,
)
from ..audit import Audit, with_heads_as_needed
from ..errors import AuditError
from ..verify import Verification

__all__ = [
    "TIME_KEYS",
    "UNDATED_CHOICES",
    "TableWindow",
    "Window",
    "WindowResult",
    "apply_window",
    "parse_time",
]


#: What becomes of findings about records that have no time: kept, or left out.
UNDATED_CHOICES = ("check", "skip")

# The place of a record relative to the window.
_INSIDE, _BEFORE, _AFTER, _UNDATED, _UNREADABLE = range(5)


@dataclass(frozen=True)
class Window:
    """A time window, and where each table's time is read.

    Attributes
    ----------
    since, until : Timestamp or None
        ``[since, until)``; a missing bound is open.
    time_key : str or None
        The column holding every table's time, instead of :data:`TIME_KEYS`.
    time_keys : mapping
        ``{table: column}`` for single tables, before ``time_key``.
    undated : {"check", "skip"}
        Whether findings about records that have no time are kept.
    """

    since: pd.Timestamp | None = None
    until: pd.Timestamp | None = None
    time_key: str | None = None
    time_keys: Mapping[str, str] = field(default_factory=dict)
    undated: str = "check"

    def __post_init__(self) -> None:
        if self.undated not in UNDATED_CHOICES:
            raise AuditError(
                f"undated must be one of {', '.join(UNDATED_CHOICES)}, not {self.undated!r}"
            )
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise AuditError(
                f"the window is empty: --since {iso_utc(self.since)} is not before "
                f"--until {iso_utc(self.until)}"
            )

    def column(self, table: str, columns) -> str | None:
        """The column holding ``table``'s time, among its ``columns``; None when it has none."""
        if table in self.time_keys:
            wanted = (self.time_keys[table],)
        elif self.time_key is not None:
            wanted = (self.time_key,)
        else:
            wanted = TIME_KEYS
        return next((name for name in wanted if name in columns), None)

    def describe(self) -> str:
        """``[2025-03-04T00:00:00Z, open)``."""
        since = iso_utc(self.since) if self.since is not None else "open"
        until = iso_utc(self.until) if self.until is not None else "open"
        return f"[{since}, {until})"


@dataclass(frozen=True)
class TableWindow:
    """Where the records of one table fall, against the window."""

    table: str
    column: str | None
    rows: int
    inside: int
    before: int
    after: int
    undated: int
    unreadable: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class WindowResult:
    """A verification narrowed to a window, and what was left out.

    Attributes
    ----------
    verification : Verification
        The same checks, with only the findings kept.
    window : Window
    tables : list of TableWindow
        Per table a check examines: its time column and where its rows fall.
    outside : int
        Findings about records dated outside the window, left out.
    undated_findings : int
        Findings about records that have no time (kept, or left out under
        ``undated="skip"``).
    """

    verification: Verification
    window: Window
    tables: list[TableWindow]
    outside: int
    undated_findings: int

    def to_dict(self) -> dict:
        """As plain JSON values."""
        return {
            "since": iso_utc(self.window.since) if self.window.since is not None else None,
            "until": iso_utc(self.window.until) if self.window.until is not None else None,
            "undated": self.window.undated,
            "tables": [table.to_dict() for table in self.tables],
            "findings_outside": self.outside,
            "findings_undated": self.undated_findings,
        }

    def lines(self) -> list[str]:
        """The window as ``verify`` prints it."""
        frame = pd.DataFrame([table.to_dict() for table in self.tables])
        if len(frame):
            frame["column"] = frame["column"].fillna("(none)")
        kept = "checked" if self.window.undated == "check" else "left out (--undated skip)"
        lines = [
            f"window {self.window.describe()}: since inclusive, until exclusive, in UTC",
            frame.to_string(index=False) if len(frame) else "(no table is examined)",
            f"{self.undated_findings} finding(s) about records without a time (no time column, "
            f"no value, or not a time; rejected inputs among them): {kept}",
            f"{self.outside} finding(s) about records outside the window: left out",
        ]
        return lines


def apply_window(verification: Verification, audit: Audit, window: Window) -> WindowResult:
    """Keep the findings about records inside ``window``, and count the rest.

    Parameters
    ----------
    verification : Verification
        What :func:`~explicit_audit.verify_all` found in ``audit``.
    audit : Audit
        The audit it checked (either engine); each table's time is read from it.
    window : Window

    Returns
    -------
    WindowResult

    Examples
    --------
    >>> audit = ea.load("data", progress=False)  # doctest: +SKIP
    >>> window = Window(since=parse_time("2025-03-04"))  # doctest: +SKIP
    >>> apply_window(ea.verify_all(audit), audit, window).verification.findings  # doctest: +SKIP
    """
    # A Dask load whose heads fell short of a key is planned again, as for its checks.
    return with_heads_as_needed(audit, lambda planned: _applied(verification, planned, window))


def _applied(verification: Verification, audit: Audit, window: Window) -> WindowResult:
    findings = verification.findings
    examined = {name: check.examines for name, check in registry.checks().items()}
    # A check over every kind (record_duplicates, record_times, record_keys) examines no one
    # table: a finding's kind names the table of the record it is about, as for trends.
    by_check = findings["check"].astype("object").map(examined)
    table_of = by_check.where(by_check.notna(), findings["kind"].astype("object"))
    places = np.full(len(findings), _UNDATED, dtype=np.int8)
    reports = []
    every = [*(t for t in examined.values() if t is not None), *table_of.dropna().unique()]
    for table in dict.fromkeys(every):
        frame = audit.tables.get(table)
        if frame is None:
            continue
        column = window.column(table, frame.columns)
        of_table = (table_of == table).to_numpy() & findings["row"].notna().to_numpy()
        labels = findings.loc[of_table, "row"].to_numpy(dtype=np.int64)
        counts, placed = engine.reduce(
            _placed_part,
            _combined,
            frame,
            what="verify --since/--until",
            column=column,
            since=window.since,
            until=window.until,
            labels=labels,
        )
        reports.append(TableWindow(table, column, **counts))
        if column is None and counts["rows"] and table in window.time_keys:
            raise AuditError(
                f"--time-key {table}={window.time_keys[table]}: the {table} table has no such "
                f"column (its columns: {', '.join(map(str, frame.columns))})"
            )
        if len(labels):
            places[of_table] = placed.reindex(labels).fillna(_UNDATED).to_numpy(dtype=np.int8)
    # An edit of bytes audited before is about a file, not a record: no window leaves it
    # out (left out, it would be lost: the run that finds an edit reports it, once).
    about_files = (findings["check"] == STATE_CHECK).to_numpy()
    named = window.time_key
    with_rows = [r for r in reports if r.rows]
    if named is not None and with_rows and not any(r.column == named for r in with_rows):
        raise AuditError(f"--time-key {named}: no table with records has such a column")
    undated = ((places == _UNDATED) | (places == _UNREADABLE)) & ~about_files
    keep = (places == _INSIDE) | (undated & (window.undated == "check")) | about_files
    kept = findings[keep].reset_index(drop=True)
    accounted = verification.accounting if verification.accounting is not None else audit
    checked = _checked_in(
        verification.checked, audit.tables, len(accounted.rejected), reports, window
    )
    return WindowResult(
        verification=dataclasses.replace(verification, findings=kept, checked=checked),
        window=window,
        tables=reports,
        outside=int(((places == _BEFORE) | (places == _AFTER)).sum()),
        undated_findings=int(undated.sum()),
    )


def _checked_in(
    checked: dict[str, int],
    tables: dict,
    rejected: int,
    reports: list[TableWindow],
    window: Window,
) -> dict[str, int]:
    """Each check's records examined; none for a check whose tables hold no record in the window.

    Every check runs over all of the data (so that the checks across records
    are right at the window's edges), and says how many records it examined;
    but a check none of whose records falls inside the window (nor among the
    undated ones ``undated="check"`` keeps) looked at nothing the window
    asks about: it is *not run*, and a window that holds no record at all is
    *nothing to check* (exit 3), never clean on the records outside it. A
    check of every value read has the ``rejected`` inputs too (they have no
    time). An edit of audited bytes is about a file, which every window keeps.
    """
    undated = window.undated == "check"
    held = {r.table: r.inside + ((r.undated + r.unreadable) if undated else 0) for r in reports}
    out = dict(checked)
    for checker in registry.checkers(state=True):
        for check in checker.checks:
            if check.name not in out or check.name == STATE_CHECK:
                continue
            names = registry.examined(checker, check, tables)
            if names is None:  # every value read: a rejected input has no time
                if not sum(held.values()) and not (undated and rejected):
                    out[check.name] = 0
                continue
            names = [name for name in names if name in held]
            if names and not any(held[name] for name in names):
                out[check.name] = 0
    return out


def _placed_part(
    frame: pd.DataFrame, *, column: str | None, since, until, labels: np.ndarray
) -> tuple[dict, pd.Series]:
    """One table (or partition): how many rows fall where, and where the ``labels`` fall."""
    places = _places(frame, column, since, until)
    counted = np.bincount(places, minlength=5)
    counts = {
        "rows": len(frame),
        "inside": int(counted[_INSIDE]),
        "before": int(counted[_BEFORE]),
        "after": int(counted[_AFTER]),
        "undated": int(counted[_UNDATED]),
        "unreadable": int(counted[_UNREADABLE]),
    }
    at = pd.Series(places, index=frame.index)
    wanted = at.index.isin(labels)
    return counts, at[wanted]


def _combined(parts: list) -> tuple[dict, pd.Series]:
    counts = {key: sum(part[0][key] for part in parts) for key in parts[0][0]}
    placed = pd.concat([part[1] for part in parts]) if parts else pd.Series(dtype=np.int8)
    return counts, placed[~placed.index.duplicated()]


def _places(frame: pd.DataFrame, column: str | None, since, until) -> np.ndarray:
    """Each row's place: inside, before, after, undated (no time) or unreadable."""
    places = np.full(len(frame), _UNDATED, dtype=np.int8)
    if column is None or not len(frame):
        return places
    present = frame[column].notna().to_numpy()
    if column + UNPARSED_SUFFIX in frame.columns:
        # A time the loader could not read is missing in the typed column: its text says so.
        present = present | frame[column + UNPARSED_SUFFIX].notna().to_numpy()
    # A time no nanosecond column holds (9999-12-31) is kept as text beside: a time still.
    every = time_parts(frame, column)
    readable = np.logical_or.reduce([times.notna().to_numpy() for times in every])
    places[present & ~readable] = _UNREADABLE
    # pandas compares times of any unit exactly; numpy would bring a bound past 2262
    # (kept in seconds) to nanoseconds, and overflow.
    inside = readable.copy()
    if since is not None:
        before = np.logical_or.reduce([(times < since).to_numpy() for times in every])
        places[before] = _BEFORE
        inside &= ~before
    if until is not None:
        after = np.logical_or.reduce([(times >= until).to_numpy() for times in every])
        places[after] = _AFTER
        inside &= ~after
    places[inside] = _INSIDE
    return places
