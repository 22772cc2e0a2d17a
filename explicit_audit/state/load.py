"""``ea.load(source, state=DIR)``: an audit that reads only the bytes appended since the last.

The files are compared with the state (:mod:`.compare`): each file whose
audited bytes hash as they did is read from where its audit ended
(:class:`~explicit_audit.reading.content.RangeReader`, numbered from the
line after), and its rows before are taken from the state; any other file
is read whole. The rows are joined as one load of every file gives them
(:mod:`.join`), so that every check across files (duplicates, withheld
totals, a sweep) runs on whole tables. The state is then written anew: the
audited bytes of every file, and the rows of the plain JSON Lines ones.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from .._core import registry
from .._core.findings import REJECTED_RULES
from .._core.records import Rejection
from ..audit import Audit, audit_of_reading, raise_or_warn
from ..errors import AuditError
from ..reading.collect import Reading, list_sources, read_files, read_with
from ..reading.content import RangeReader
from ..reading.gc_pause import cyclic_gc_paused
from ..reading.options import Options
from ..reading.remote import has_remote, local_source
from ..reading.sources import display_name, is_gzip_name, is_plain_jsonl_name
from ..reading.tables import warn_extra_json, warn_unparsed_times
from .changes import changes_frame
from .compare import Plan, compare
from .join import Joined, join_keys, join_parts, join_rejected, select_rows
from .lines import scan
from .prechecks import as_text, row_findings
from .store import Kept, read_state, write_state

__all__ = ["load_with_state"]


def _asked(settings: Options) -> dict[str, Any]:
    limits = dataclasses.asdict(settings.limits)
    limits.pop("max_threads", None)  # how fast, never what
    return {
        "kinds": [kind.name for kind in registry.kinds()],
        "limits": limits,
        "strict_keys": settings.strict_keys,
    }


def load_with_state(source, settings: Options) -> Audit:
    """The audit of ``source``, reading only what the state ``settings.state`` has not audited.

    Raises
    ------
    AuditError
        For a source that is not local files (a URL, a file object, standard input).
    """
    source = local_source(source)
    if has_remote(source):
        raise AuditError(
            "state= re-hashes the bytes each file held when it was audited: it works on local "
            "files, not on URLs, file objects or standard input"
        )
    asked = _asked(settings)
    state = read_state(settings.state, asked)
    listing = list_sources(source)
    every, edits = compare(
        {} if state is None else state.kept, [*listing.data_files, *listing.policy_files]
    )
    plans, policy_plans = every[: len(listing.data_files)], every[len(listing.data_files) :]
    stored = None if state is None else state.parts
    if stored is None:
        for plan in plans:
            plan.kept = None  # no rows to continue: read whole
    audit = joined = None
    with cyclic_gc_paused():
        if stored is not None:
            audit, joined = _incremental(listing, plans, stored, settings) or (None, None)
        if audit is None:
            for plan in plans:
                plan.kept = None
            audit = _read(listing, plans, settings)
    names = {plan.kept.name: plan.name for plan in plans if plan.incremental}
    lines = {plan.kept.name: plan.kept.lines for plan in plans if plan.incremental}
    kept, digests = _audited([*plans, *policy_plans])
    sources = audit.sources
    for plan in plans:
        if plan.incremental and plan.name in digests:
            at = sources["source_file"] == plan.name
            sources.loc[at, "bytes"] = digests[plan.name][0]
            sources.loc[at, "sha256"] = digests[plan.name][1]
    _finish(audit, settings.strict, settings.limits)
    audit.changes = changes_frame(edits, None if state is None else state.parts)
    documents = _documents_digest(audit, listing.policy_files)
    usable = state is not None and state.documents == documents
    audit.known_findings = row_findings(
        audit.tables,
        audit.documents,
        joined,
        state.findings if usable else None,
        lines,
        names,
    )
    parts = _stored_parts(audit, kept)
    found = [frame for frame in audit.known_findings.values() if len(frame)]
    findings = pd.concat(found, ignore_index=True) if found else _NO_FINDINGS
    stored_lines = {record.name: record.lines for record in kept if record.rows}
    findings = select_rows({"f": findings}, stored_lines, {})["f"].reset_index(drop=True)
    write_state(settings.state, asked, kept, parts, findings=as_text(findings), documents=documents)
    return audit


_NO_FINDINGS = REJECTED_RULES.empty_findings()


def _documents_digest(audit: Audit, policy_files: list[Path]) -> str:
    """The SHA-256 of the documents' files (the routing policies), as read."""
    names = {display_name(path) for path in policy_files}
    sources = audit.sources[audit.sources["source_file"].astype("str").isin(names)]
    text = json.dumps(sorted(map(str, sources["sha256"].astype("str"))))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(listing, plans: list[Plan], settings: Options) -> Audit:
    """The audit of the bytes each plan reads (whole, or after the audited bytes)."""
    kinds = registry.kinds()
    reading = Reading(listing.names, listing.policy_files, settings.limits)
    reading.skipped = list(listing.skipped)
    for problem in listing.problems:
        reading.reject(problem)
    read_files(reading, [plan.path for plan in plans if not plan.incremental], kinds, None)
    for plan in plans:
        if plan.incremental and plan.stat.st_size > plan.start:
            reader = RangeReader(
                plan.path,
                reading.limits,
                name=plan.name,
                first_line=plan.kept.lines + 1,
                start=plan.start,
                stop=plan.stat.st_size,
            )
            read_with(reading, reader, kinds, None)
        elif plan.incremental:
            reading.values_read.setdefault(plan.name, 0)
    reading.count_policy_files()
    reading.held_policies = reading.hold_policy_files()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warned once, over the joined rows (_finish)
        return audit_of_reading(reading, kinds, strict=False, strict_keys=settings.strict_keys)


def _incremental(
    listing, plans: list[Plan], stored: dict, settings: Options
) -> tuple[Audit, Joined] | None:
    """The audit of every file: the rows kept for the audited bytes, and the bytes after them.

    None when the rows do not fit together as one load's (the caller reads all).
    """
    names = {plan.kept.name: plan.name for plan in plans if plan.incremental}
    lines = {plan.kept.name: plan.kept.lines for plan in plans if plan.incremental}
    part = _read(listing, plans, settings)
    files = part.files
    kept_tables = select_rows(stored["tables"], lines, names)
    joined = join_parts(kept_tables, part.tables, files)
    kept_rejected = select_rows({"rejected": stored["rejected"]}, lines, names)["rejected"]
    rejected = join_rejected(kept_rejected, part.rejected, files)
    if joined is None or rejected is None:
        return None
    if len(rejected) > settings.limits.max_rejected_rows:
        return None  # counted past the cap: as a whole load counts them
    kept_keys = select_rows({"keys": stored["keys"]}, lines, names)["keys"]
    sources = part.sources.copy()
    before = stored["sources"].set_index(stored["sources"]["source_file"].astype("str"))
    for old, new in names.items():
        if old in before.index:
            at = sources["source_file"] == new
            for column in ("values_read", "loaded", "rejected"):
                sources.loc[at, column] += int(before.at[old, column])
    audit = Audit(
        tables=joined.tables,
        documents=part.documents,
        rejected=rejected,
        files=files,
        sources=sources,
        digests=part.digests,
        keys=join_keys(kept_keys, part.keys, files),
    )
    return audit, joined


def _finish(audit: Audit, strict: bool, limits) -> None:
    """The warnings (or, under ``strict``, the error) a whole load gives over its rows."""
    rejections = [
        Rejection(row.source_file, int(row.source_line), str(row.kind), row.reason, row.raw)
        for row in audit.rejected.itertuples(index=False)
    ]
    raise_or_warn(rejections, strict, registry.documents())
    warn_unparsed_times(audit.tables)
    warn_extra_json(audit.tables, limits)


def _audited(plans: list[Plan]) -> tuple[list[Kept], dict[str, tuple[int, str]]]:
    """What this run audited of each file: its identity, bytes, lines and their SHA-256;
    and the size and SHA-256 of each whole file."""
    found = []
    digests = {}
    for plan in plans:
        if plan.stat is None:
            continue
        incremental = plan.incremental
        start = plan.start if incremental else 0
        try:
            read = scan(
                plan.path,
                start,
                plan.stat.st_size,
                hasher=plan.hasher if incremental else None,
                index=not is_gzip_name(plan.path),
            )
        except OSError:
            continue
        lines = plan.kept.index.joined(read.lines) if incremental else read.lines
        plain = is_plain_jsonl_name(plan.path)
        whole_lines = plain and (read.line_end or start) == read.read
        audited = read.read if not plain else (read.line_end or start)
        digest = (read.at_line if plain else read.hasher).hexdigest()
        found.append(
            Kept(
                name=plan.name,
                real=str(Path(plan.path).resolve()),
                device=plan.stat.st_dev,
                inode=plan.stat.st_ino,
                size=read.read,
                mtime_ns=plan.stat.st_mtime_ns,
                audited=audited,
                lines=len(lines),
                sha256=digest,
                rows=whole_lines,
                index=lines,
            )
        )
        digests[plan.name] = (read.read, read.hasher.hexdigest())
    return found, digests


def _stored_parts(audit: Audit, kept: list[Kept]) -> dict[str, Any]:
    """The rows of the files whose rows the state keeps: the audited lines of plain JSON Lines."""
    lines = {record.name: record.lines for record in kept if record.rows}
    same = {name: name for name in lines}
    files = [name for name in audit.files if name in lines]
    sources = audit.sources
    return {
        "tables": select_rows(audit.tables, lines, same),
        "rejected": select_rows({"r": audit.rejected}, lines, same)["r"],
        "keys": select_rows({"k": audit.keys}, lines, same)["k"],
        "sources": sources[sources["source_file"].astype("str").isin(lines)].reset_index(drop=True),
        "files": files,
        "documents": {},
    }
