"""``verify`` and ``summary``: the checks' verdict in the format asked for, and rows per table."""

from __future__ import annotations

import argparse
import sys

from .._core.key_table import STRICT_KEYS_REASON
from ..errors import AuditError
from ..reading.collect import values_rejected
from ..report.provenance import provenance
from ..verdicts import ExitStatus, Verdict, Window, apply_window, parse_time
from ..verdicts.audit_runs import last_audit, record_audit
from ..verdicts.baseline import read_baseline
from ..verdicts.outputs import json_text, write_verdict
from ..verify import verify_all
from ._exit import parsed_format
from ._input import load_data, refuse_unreadable, shown, skipped_note
from ._streams import quiet

__all__ = ["summary", "verify"]


def _output_format(args: argparse.Namespace) -> str:
    if getattr(args, "json", False) and args.format not in (None, "json"):
        raise AuditError(f"--json and --format {args.format} ask for two outputs; give one")
    return parsed_format(args)


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


def verify(args: argparse.Namespace) -> int:
    """``verify``: every check, one document in the format asked for; the verdict's status."""
    output_format = _output_format(args)
    window = _window(args)
    clock = {
        name: parse_time(text, what=f"--{name}")
        for name, text in (("now", args.now), ("earliest", args.earliest))
        if text is not None
    }
    previous = read_baseline(args.baseline) if args.baseline else None
    if previous is None and args.state:
        # The last run from this state, as a baseline: what is new since the last audit.
        previous = last_audit(args.state)
    if args.new_only and previous is None:
        raise AuditError(
            "--new-only needs --baseline PREVIOUS.json, or a --state DIR that recorded an "
            "earlier run: new since which run?"
        )
    audit, facts = load_data(
        args.data,
        args.engine,
        strict_keys=args.strict_keys,
        sample_bytes=args.sample_bytes,
        state=args.state,
    )
    result = verify_all(audit, expect=args.expect, **clock)
    if facts is None:
        refuse_unreadable(result.accounting.rejected)
        facts = provenance(result.accounting, args.data)
    windowed = None if window is None else apply_window(result, audit, window)
    verdict = Verdict.of(
        shown(args.data), result, window=windowed, previous=previous, new_only=args.new_only
    )
    facts_shown = facts.to_dict()
    facts_shown.pop("rejected")  # every rejected row is a finding
    note = skipped_note(result.accounting)
    try:
        write_verdict(
            verdict,
            output_format,
            sys.stdout,
            provenance=facts_shown,
            max_findings=args.max_findings,
            notes=() if note is None else (note,),
        )
    except BrokenPipeError:
        # The reader (``| head -1``) stopped reading: the verdict stands all the same.
        quiet(sys.stdout)
    if args.state:
        record_audit(args.state, verdict)
    return verdict.status


def summary(args: argparse.Namespace) -> int:
    """``summary``: rows per table and per file, what was skipped and what was not loaded.

    Exit 0; with ``--strict-keys``, 1 when a record was rejected for a key its
    kind does not declare (as ``verify --strict-keys`` exits).
    """
    audit, _ = load_data(
        args.data, args.engine, strict_keys=args.strict_keys, sample_bytes=args.sample_bytes
    )
    audit = audit.accounting()
    refuse_unreadable(audit.rejected)
    reasons = audit.rejected["reason"].astype("str")
    refused_keys = int(reasons.str.startswith(STRICT_KEYS_REASON).sum())
    status = ExitStatus.FOUND if args.strict_keys and refused_keys else ExitStatus.CLEAN
    # The digests are in verify --json's provenance; here, what was read and skipped.
    sources = audit.sources.drop(columns=["sha256"], errors="ignore")
    try:
        if args.json:
            _summary_json(args, audit, sources, refused_keys, status)
        else:
            _summary_text(args, audit, sources)
    except BrokenPipeError:
        quiet(sys.stdout)
    if status == ExitStatus.FOUND:
        print(
            f"explicit-audit summary: exit 1: {refused_keys} record(s) rejected for a key their "
            f"kind does not declare (--strict-keys); `explicit-audit verify {shown(args.data)} "
            "--strict-keys` names file, line and key",
            file=sys.stderr,
        )
    return status


def _summary_text(args: argparse.Namespace, audit, sources) -> None:
    files = len(audit.files)
    print(f"explicit-audit summary {shown(args.data)}: {files} file{'' if files == 1 else 's'}\n")
    print(audit.summary().to_string(index=False))
    print()
    if not sources["skipped"].notna().any():
        sources = sources.drop(columns=["skipped"])  # nothing skipped: no column of blanks
    # A value that is missing (the bytes of a file skipped, why a file read was not) is blank.
    print(sources.astype(object).where(sources.notna(), "").to_string(index=False))
    if len(audit.rejected):
        rows = zip(audit.rejected["kind"], audit.rejected["reason"], strict=True)
        print(
            f"\n{values_rejected(rows)} value(s) could not be loaded; "
            f"`explicit-audit verify {shown(args.data)}` lists them."
        )
    if len(audit.keys):
        print(
            f"\n{len(audit.keys)} key(s) not as declared (unknown keys, fields left to a "
            f"default); `explicit-audit verify {shown(args.data)}` counts them per key."
        )


def _summary_json(args: argparse.Namespace, audit, sources, refused_keys: int, status) -> None:
    """The summary as one JSON document: what the text shows, missing values as null."""
    rows = sources.astype(object).where(sources.notna(), None)
    document = {
        "data": shown(args.data),
        "exit_status": int(status),
        "files": len(audit.files),
        "tables": {name: int(count) for name, count in audit.summary().values.tolist()},
        "sources": rows.to_dict("records"),
        "rejected": len(audit.rejected),
        "rejected_for_keys": refused_keys,
        "keys_not_as_declared": len(audit.keys),
    }
    sys.stdout.write(json_text(document))
    sys.stdout.flush()
