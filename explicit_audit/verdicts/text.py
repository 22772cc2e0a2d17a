"""A verdict as ``explicit-audit verify`` prints it: a summary line, the checks, the findings.

The first line says the verdict's state (:data:`~explicit_audit.verdicts.verdict.STATES`:
clean, clean on what was checked, findings, missing, nothing to check) and
how many checks were not run (:func:`state_line`); each check's status
(``not run (no records)`` for one that looked at no record) is a column.
The keys the records hold that their kinds do not declare, or leave to a
default, follow, counted per key (``Verification.key_counts()``).

With a window, what it kept and left out follows the checks; with a
baseline, the new and the resolved findings close the output, and the
findings listed per check are marked ``(new)`` or ``(persisting)``.
"""

from __future__ import annotations

import re

import pandas as pd

from .verdict import Verdict

__all__ = ["escape_char", "state_line", "verdict_text", "visible"]


def visible(text: object) -> str:
    """``text`` with every control character escaped (``\\x1b``, ``\\r``, ``\\n``, ...).

    A record id or a file name holding ESC or CR must not move the cursor or
    repaint the terminal line it is printed on; a lone surrogate (a byte
    that is not UTF-8) is escaped too, so the text can always be written.

    Examples
    --------
    >>> visible("id\\x1b[2K\\r\\x1b[32mALL CLEAN")
    'id\\\\x1b[2K\\\\r\\\\x1b[32mALL CLEAN'
    """
    text = str(text)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(escape_char, text)


_CONTROL = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_char(match: re.Match) -> str:
    """The escape of one character (``\\n``, ``\\x1b``, ``\\ufffe``); of a byte that is not
    UTF-8, as the system gave it in a name, ``\\xff``."""
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _finding_line(finding: dict, mark: str = "") -> str:
    record = f" [{visible(finding['record'])}]" if isinstance(finding.get("record"), str) else ""
    notice = " (notice)" if finding["severity"] == "notice" else ""
    return (
        f"  {visible(finding['source_file'])}:{finding['source_line']}: {finding['rule']}{notice}"
        f"{record}: {visible(finding['detail'])}{mark}"
    )


def verdict_text(verdict: Verdict, *, max_findings: int = 20) -> str:
    """The verdict as text, findings listed up to ``max_findings`` per check.

    Examples
    --------
    >>> print(verdict_text(verdict))  # doctest: +SKIP
    """
    limit = max(max_findings, 0)
    summary = verdict.verification.summary()
    lines = [f"explicit-audit verify {visible(verdict.data)}: {state_line(verdict, summary)}"]
    lines.extend(f"expected {name}: none found" for name in verdict.verification.missing)
    lines.append("")
    shown = summary.assign(status=summary["status"].astype(str).replace(_NOT_RUN, _NOT_RUN_TEXT))
    columns = ["check", "checked", "status", "findings", "notices", "covers"]
    lines.append(shown[columns].to_string(index=False))
    keys = verdict.verification.key_counts()
    if len(keys):
        # Per key, not per record: a producer's schema drift reads as one line.
        lines.append("\nkeys not as declared (record_keys, per key)")
        shown_keys = keys.head(limit).assign(suggestion=keys["suggestion"].fillna(""))
        if len(shown_keys):
            lines.append(shown_keys.to_string(index=False))
        if len(keys) > limit:
            lines.append(f"  ... and {len(keys) - limit} more key(s) (--json lists all)")
    if verdict.window is not None:
        lines.append("")
        lines.extend(verdict.window.lines())
    with_baseline = verdict.baseline is not None
    by_check: dict[str, list[int]] = {}
    for position, finding in enumerate(verdict.findings):
        by_check.setdefault(finding["check"], []).append(position)
    for check, positions in by_check.items():
        lines.append(f"\n{check} ({len(positions)})")
        for position in positions[:limit]:
            mark = ""
            if with_baseline:
                mark = " (new)" if verdict.is_new(position) else " (persisting)"
            lines.append(_finding_line(verdict.findings[position], mark))
        if len(positions) > limit:
            lines.append(f"  ... and {len(positions) - limit} more (--json lists all)")
    if verdict.baseline is not None:
        lines.extend(_baseline_lines(verdict, limit))
    return "\n".join(lines)


_NOT_RUN = "not run"
_NOT_RUN_TEXT = "not run (no records)"


def state_line(verdict: Verdict, summary: pd.DataFrame | None = None) -> str:
    """The verdict's state, what ran and what was not run: the first line of ``verify``.

    ``summary`` is the verification's summary, when already at hand.

    Examples
    --------
    >>> state_line(verdict)  # doctest: +SKIP
    'clean on what was checked (3 of 12 checks run, no error; 9 not run (no records))'
    """
    if summary is None:
        summary = verdict.verification.summary()
    n_notices = int(summary["notices"].sum())
    notes = f", {n_notices} notice(s)" if n_notices else ""
    not_run = summary.loc[summary["status"] == _NOT_RUN, "check"].tolist()
    ran = len(summary) - len(not_run)
    skipped = f"; {len(not_run)} not run (no records)" if not_run else ""
    state = verdict.state
    if state == "nothing to check":
        return f"nothing to check (no check looked at a record; {len(summary)} not run)"
    if state == "findings":
        found = summary[summary["findings"] > 0]
        return (
            f"{int(summary['findings'].sum())} finding(s) in {len(found)} of "
            f"{len(summary)} checks{notes}{skipped}"
        )
    coverage = f"{ran} of {len(summary)} checks run, no error{notes}{skipped}"
    if state == "missing":
        missing = ", ".join(verdict.verification.missing)
        return f"missing (expected but absent or empty: {missing}; {coverage})"
    return f"{state} ({coverage})"


def _baseline_lines(verdict: Verdict, limit: int) -> list[str]:
    comparison = verdict.baseline
    counts = comparison.counts()
    then = f" (data {comparison.baseline_data})" if comparison.baseline_data else ""
    lines = [
        "",
        f"since {comparison.baseline}{then}: {counts['new']} new, {counts['resolved']} resolved, "
        f"{counts['persisting']} persisting",
    ]
    if comparison.not_checked:
        lines.append(
            f"{counts['not_checked']} finding(s) of checks this run did not run: not checked, "
            "not resolved"
        )
    if comparison.windows_differ:
        lines.append(
            f"note: the baseline's window {_window(comparison.window_then)} is not this run's "
            f"{_window(comparison.window_now)}: a finding about a record outside this run's "
            "window shows as resolved"
        )
    if verdict.new_only:
        lines.append("--new-only: only new errors fail this run")
    for title, findings in (("new", comparison.new), ("resolved", comparison.resolved)):
        if not findings:
            continue
        lines.append(f"\n{title} ({len(findings)})")
        lines.extend(_finding_line(finding) for finding in findings[:limit])
        if len(findings) > limit:
            lines.append(f"  ... and {len(findings) - limit} more (--json lists all)")
    return lines


def _window(bounds: dict | None) -> str:
    bounds = bounds or {}
    return f"[{bounds.get('since') or 'open'}, {bounds.get('until') or 'open'})"
