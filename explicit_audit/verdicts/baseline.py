"""Audits over time: what is new, resolved and persisting since a previous ``verify --json`` run.

A team runs ``explicit-audit verify DATA --json > today.json`` every day and
compares each run with the one before (``verify DATA --baseline yesterday.json``).
For that, a finding must keep its identity from one run to the next although
the files grow, lines shift and files are re-ordered or renamed.

A finding's identity (:func:`finding_identity`) is what it is about, never
where it sits:

- its ``check``, its record ``kind``, its ``rule`` and its ``field``;
- the record's id (``record``: a ``run_id``, a ``decision_id``, a logger's
  ``request_id``) when the finding names one; otherwise (a rejected input, a
  record without an id) its ``detail``, which names the offending values.

Line numbers, row labels, the order of files and the file's name are left
out, so a line shift, a re-ordered or a renamed file turns no finding into
"new + resolved". The severity is left out too: it is the rule's own. Two
findings may share one identity (the same bad line logged twice): findings
are matched by count, first within the same file, then across files, and
the earliest of a group (by file and line) are the ones that persist, as a
log grows at its end.

The identity is written as a short digest, :func:`fingerprint` (SARIF's
``partialFingerprints``), but a previous run is compared by the fields
themselves, so any ``verify --json`` document can serve as a baseline.

A previous finding counts as resolved only where this run looked again: the
findings of a check this run did not run (a record kind whose plug-in is not
installed now) are listed apart, as not checked. A window is compared as
given: when this run's ``--since/--until`` differ from the baseline's, the
comparison says so, since a finding about a record outside this run's window
shows as resolved.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .._core.findings import SEVERITIES
from ..errors import InputError
from ..small_files import MAX_SMALL_FILE_BYTES, read_small_json

__all__ = [
    "IDENTITY_FIELDS",
    "Baseline",
    "BaselineComparison",
    "compare_findings",
    "finding_identity",
    "fingerprint",
    "new_errors",
    "read_baseline",
]

#: The fields of a finding that its identity is made of, beside its subject
#: (``record`` when it has one, else ``detail``).
IDENTITY_FIELDS = ("check", "kind", "rule", "field")

#: Keys every finding of a ``verify --json`` document has (those a baseline needs).
_NEEDED = (*IDENTITY_FIELDS, "record", "detail", "source_file", "source_line", "severity")


def _text_or_none(value) -> bool:
    return value is None or isinstance(value, str)


def _line_or_none(value) -> bool:
    return value is None or (type(value) is int and value >= 0)


#: What each key of a finding holds, as ``verify --json`` writes it: a baseline
#: whose values are of other types (a line ``true``, a rule ``5``) is refused,
#: not written on into a SARIF log or a comparison.
_FIELD_TYPES = (
    ("check", lambda value: isinstance(value, str), "a check's name"),
    ("rule", lambda value: isinstance(value, str), "a rule's name"),
    ("severity", lambda value: value in SEVERITIES, " or ".join(map(repr, SEVERITIES))),
    ("kind", _text_or_none, "text or null"),
    ("field", _text_or_none, "text or null"),
    ("record", _text_or_none, "text or null"),
    ("detail", _text_or_none, "text or null"),
    ("source_file", _text_or_none, "text or null"),
    ("source_line", _line_or_none, "a line number (0 or more) or null"),
    ("row", lambda value: value is None or type(value) is int, "a row label or null"),
)


def finding_identity(finding: Mapping) -> tuple:
    """What a finding is about, the same from one run to the next.

    Parameters
    ----------
    finding : mapping
        One finding as ``verify --json`` writes it (or a row of
        ``Verification.findings`` as a dict).

    Returns
    -------
    tuple
        ``(check, kind, rule, field, "record", id)`` for a finding that names
        its record, else ``(check, kind, rule, field, "detail", detail)``.

    Examples
    --------
    >>> finding = {"check": "plan_hashes", "kind": "plans", "rule": "no_known_variant",
    ...            "field": "retrieval_plan_hash", "record": "r-000163", "detail": "...",
    ...            "source_file": "a.jsonl", "source_line": 163}
    >>> finding_identity(finding)
    ('plan_hashes', 'plans', 'no_known_variant', 'retrieval_plan_hash', 'record', 'r-000163')
    >>> finding_identity(finding | {"source_line": 170}) == finding_identity(finding)
    True
    """
    base = tuple(_text(finding.get(name)) for name in IDENTITY_FIELDS)
    record = _text(finding.get("record"))
    if record is not None:
        return (*base, "record", record)
    return (*base, "detail", _text(finding.get("detail")))


def fingerprint(finding: Mapping) -> str:
    """A finding's identity (:func:`finding_identity`) as 32 hex digits of its SHA-256.

    Examples
    --------
    >>> len(fingerprint({"check": "c", "kind": "k", "rule": "r", "detail": "d"}))
    32
    """
    identity = json.dumps(finding_identity(finding), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


def _text(value) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class BaselineComparison:
    """The findings of this run against those of a previous run.

    Attributes
    ----------
    new : list of dict
        This run's findings that the previous run did not have.
    resolved : list of dict
        The previous run's findings that this run no longer has (as the
        previous run wrote them: their file and line are then's).
    persisting : list of dict
        This run's findings that the previous run had too.
    new_at : tuple of int
        The positions of the new findings among this run's.
    baseline : str
        The previous run's file, as given.
    baseline_data : str or None
        What the previous run read (its ``data``).
    not_checked : list of dict
        The previous run's findings of checks this run did not run.
    window_then, window_now : dict or None
        The previous run's window and this one's (``since``, ``until``), when
        they differ; None when they are the same.
    """

    new: list[dict]
    resolved: list[dict]
    persisting: list[dict]
    new_at: tuple[int, ...]
    baseline: str
    baseline_data: str | None = None
    not_checked: list[dict] = field(default_factory=list)
    window_then: dict | None = None
    window_now: dict | None = None

    @property
    def windows_differ(self) -> bool:
        """Whether this run's window is not the baseline's."""
        return self.window_then is not None or self.window_now is not None

    def counts(self) -> dict[str, int]:
        """``{"new": n, "resolved": n, "persisting": n, "not_checked": n}``."""
        return {
            "new": len(self.new),
            "resolved": len(self.resolved),
            "persisting": len(self.persisting),
            "not_checked": len(self.not_checked),
        }

    def to_dict(self) -> dict:
        """As plain JSON values: the file, the counts, the new and the resolved findings.

        Each finding listed carries its ``fingerprint``.
        """
        document = {
            "file": self.baseline,
            "data": self.baseline_data,
            **self.counts(),
            "new_findings": [_with_fingerprint(finding) for finding in self.new],
            "resolved_findings": [_with_fingerprint(finding) for finding in self.resolved],
            "not_checked_findings": [_with_fingerprint(f) for f in self.not_checked],
        }
        if self.windows_differ:
            document["window_then"] = self.window_then
            document["window_now"] = self.window_now
        return document


def _with_fingerprint(finding: Mapping) -> dict:
    return {**finding, "fingerprint": fingerprint(finding)}


def _place(finding: Mapping) -> tuple:
    line = finding.get("source_line")
    return (str(finding.get("source_file") or ""), line if isinstance(line, int) else -1)


def compare_findings(
    previous: Sequence[Mapping],
    current: Sequence[Mapping],
    *,
    baseline: str = "",
    baseline_data: str | None = None,
    checks_now: Sequence[str] | None = None,
    window_then: Mapping | None = None,
    window_now: Mapping | None = None,
) -> BaselineComparison:
    """Sort this run's findings into new and persisting, and find the resolved ones.

    Parameters
    ----------
    previous : sequence of mapping
        The previous run's findings (``verify --json``'s ``findings``).
    current : sequence of mapping
        This run's, in the same shape.
    baseline, baseline_data : str
        The previous run's file and data, to name them.
    checks_now : sequence of str, optional
        The checks this run ran; a previous finding of another check is not
        checked, rather than resolved.
    window_then, window_now : mapping, optional
        The ``since`` and ``until`` of each run, compared and reported when
        they differ.

    Returns
    -------
    BaselineComparison
        Every finding of ``current`` is in ``new`` or ``persisting``, every
        finding of ``previous`` in ``persisting`` (matched) or ``resolved``.

    Examples
    --------
    >>> old = [{"check": "c", "kind": "k", "rule": "r", "record": "a", "source_line": 3}]
    >>> now = [{"check": "c", "kind": "k", "rule": "r", "record": "a", "source_line": 9},
    ...        {"check": "c", "kind": "k", "rule": "r", "record": "b", "source_line": 10}]
    >>> compare_findings(old, now).counts()
    {'new': 1, 'resolved': 0, 'persisting': 1, 'not_checked': 0}
    """
    not_checked = []
    if checks_now is not None:
        ran = set(checks_now)
        not_checked = [dict(f) for f in previous if f.get("check") not in ran]
        previous = [f for f in previous if f.get("check") in ran]
    then = _grouped(previous)
    now = _grouped(current)
    persisting_at: list[int] = []
    resolved_at: list[int] = []
    for identity, now_positions in now.items():
        then_positions = then.pop(identity, [])
        kept, gone = _matched(previous, then_positions, current, now_positions)
        persisting_at.extend(kept)
        resolved_at.extend(gone)
    for then_positions in then.values():
        resolved_at.extend(then_positions)
    persisting = set(persisting_at)
    new_at = tuple(i for i in range(len(current)) if i not in persisting)
    return BaselineComparison(
        new=[dict(current[i]) for i in new_at],
        resolved=[dict(previous[i]) for i in sorted(resolved_at)],
        persisting=[dict(current[i]) for i in sorted(persisting)],
        new_at=new_at,
        baseline=baseline,
        baseline_data=baseline_data,
        not_checked=not_checked,
        **_differing(_bounds(window_then), _bounds(window_now)),
    )


def _differing(then: dict | None, now: dict | None) -> dict:
    if then == now:
        return {}
    empty = {"since": None, "until": None}
    return {"window_then": then or empty, "window_now": now or empty}


def _grouped(findings: Sequence[Mapping]) -> dict[tuple, list[int]]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for position, finding in enumerate(findings):
        groups[finding_identity(finding)].append(position)
    return groups


def _matched(
    previous: Sequence[Mapping],
    then_positions: list[int],
    current: Sequence[Mapping],
    now_positions: list[int],
) -> tuple[list[int], list[int]]:
    """Pair findings of one identity: first within a file, then across files, earliest first.

    Returns the positions in ``current`` that persist and those in
    ``previous`` that were resolved.
    """
    then_left = sorted(then_positions, key=lambda i: _place(previous[i]))
    now_left = sorted(now_positions, key=lambda i: _place(current[i]))
    kept: list[int] = []
    by_file: dict[str, list[int]] = defaultdict(list)
    for position in then_left:
        by_file[_place(previous[position])[0]].append(position)
    unmatched_now = []
    for position in now_left:
        same_file = by_file.get(_place(current[position])[0])
        if same_file:
            same_file.pop(0)
            kept.append(position)
        else:
            unmatched_now.append(position)
    then_rest = sorted(
        (p for positions in by_file.values() for p in positions),
        key=lambda i: _place(previous[i]),
    )
    pairs = min(len(then_rest), len(unmatched_now))
    kept.extend(unmatched_now[:pairs])
    return kept, then_rest[pairs:]


@dataclass(frozen=True)
class Baseline:
    """A previous ``verify --json`` run, as a comparison needs it.

    Attributes
    ----------
    file : str
        The file it was read from, as given.
    findings : list of dict
    data : str or None
        What it read.
    checks : tuple of str or None
        The checks it ran (its ``summary``), when the document lists them.
    window : dict or None
        Its ``since`` and ``until``, when it had a window.
    """

    file: str
    findings: list[dict]
    data: str | None = None
    checks: tuple[str, ...] | None = None
    window: dict | None = None


def _unfit(name: str, reason: str, line: int | None = None, field: str | None = None):
    """The error for a baseline that is not what ``verify --json`` writes."""
    advice = "Pass a file that `explicit-audit verify DATA --json` wrote."
    return InputError(name, line, reason, field, advice=advice)


def read_baseline(path: str | os.PathLike) -> Baseline:
    """A previous ``verify --json`` run: its findings, data, checks and window.

    Parameters
    ----------
    path : str or path
        A file ``explicit-audit verify DATA --json`` wrote.

    Returns
    -------
    Baseline

    Raises
    ------
    InputError
        When the file cannot be read, is not JSON, is not a ``verify --json``
        document, or records a run that could not check anything (exit 2).
    """
    name = os.fspath(path)
    try:
        # Bounded: a FIFO, a device, an oversized or too deeply nested file is refused.
        document = read_small_json(path, max_bytes=MAX_SMALL_FILE_BYTES["baseline"])
    except FileNotFoundError:
        raise _unfit(name, "no such baseline file") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise _unfit(name, f"the baseline cannot be read ({reason})") from None
    except json.JSONDecodeError as error:
        raise _unfit(name, f"the baseline is not JSON ({error.msg})", error.lineno) from None
    if not isinstance(document, dict) or not isinstance(document.get("findings"), list):
        error = document.get("error") if isinstance(document, dict) else None
        if isinstance(error, dict):  # as verify --json writes a run that checked nothing
            raise InputError(
                name,
                None,
                "the baseline records a run that could not check anything "
                f"({error.get('message')})",
                advice="Pass the last run that did.",
            )
        raise _unfit(name, "the baseline has no list of findings")
    findings = document["findings"]
    for position, finding in enumerate(findings):
        missing = [key for key in _NEEDED if not isinstance(finding, dict) or key not in finding]
        if missing:
            raise _unfit(
                name,
                f"finding {position} lacks {', '.join(missing)}",
                field=f"findings[{position}]",
            )
        for key, fits, wanted in _FIELD_TYPES:
            if key in finding and not fits(finding[key]):
                raise _unfit(
                    name,
                    f"finding {position}'s {key} is {json.dumps(finding[key])[:80]}, not {wanted}",
                    field=f"findings[{position}].{key}",
                )
    data, window, summary = document.get("data"), document.get("window"), document.get("summary")
    fits = window is None or (
        isinstance(window, dict) and all(_text_or_none(window.get(b)) for b in ("since", "until"))
    )
    if not _text_or_none(data) or not fits:
        which = "data" if not _text_or_none(data) else "window"
        value = json.dumps(document[which])[:80]
        raise _unfit(name, f"its {which} is {value}, not as verify --json writes it", field=which)
    checks = None
    if isinstance(summary, list):
        checks = tuple(str(row.get("check")) for row in summary if isinstance(row, dict))
    return Baseline(file=name, findings=findings, data=data, checks=checks, window=_bounds(window))


def _bounds(window: Mapping | None) -> dict | None:
    """A window's ``since`` and ``until`` (None for no window, or an open one)."""
    if not window or (window.get("since") is None and window.get("until") is None):
        return None
    return {"since": window.get("since"), "until": window.get("until")}


def new_errors(comparison: BaselineComparison) -> list[dict]:
    """The new findings that are errors (a notice never fails a run)."""
    return [finding for finding in comparison.new if finding.get("severity") == "error"]
