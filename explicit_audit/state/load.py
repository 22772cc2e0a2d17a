"""``ea.load(source, state=DIR)``: an audit that reads only the bytes appended since the last.

The files are compared with the state (:mod:`.compare`): each file whose
audited bytes hash as they did is read from where its audit ended
(:class:`~explicit_audit.reading.content.RangeReader`, numbered from the
line after; a gzip one's members after those audited,
:class:`~explicit_audit.reading.content.GzipTailReader`), and its rows
before are taken from the state; any other file is read whole. The rows are
joined as one load of every file gives them (:mod:`.join`), so that every
check across files (duplicates, withheld totals, a sweep) runs on whole
tables. The state is then written anew: the audited bytes of every file, and
the rows of the JSON Lines ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from .._core import registry
from .._core.findings import REJECTED_RULES
from .._core.records import Rejection
from .._version import code_digest
from ..audit import Audit, audit_of_reading
from ..errors import AuditError
from ..reading.collect import Reading, list_sources, read_files, read_with
from ..reading.content import GzipTailReader, RangeReader
from ..reading.gc_pause import cyclic_gc_paused
from ..reading.limits import Limits, shaping
from ..reading.names import display_name
from ..reading.options import Options
from ..reading.remote import has_remote, local_source
from ..reading.sources import is_gzip_name, is_plain_jsonl_name
from ..reading.tables import warn_extra_json, warn_or_raise, warn_unparsed_times
from .changes import changes_frame, describe_line, with_unreported
from .compare import (
    Begun,
    Plan,
    begin,
    continues_gzip,
    finish,
    hashing_pool,
    is_gzip_jsonl_name,
)
from .join import join_keys, join_parts, join_rejected, select_rows
from .lines import LineIndex, gzip_lines, scan
from .prechecks import joined_findings, row_findings
from .store import (
    MAX_ENTRIES,
    Kept,
    State,
    lines_frame,
    new_entry_key,
    read_state,
    write_state,
)

__all__ = ["compared", "load_with_state"]

_log = logging.getLogger(__name__)


def _asked(settings: Options) -> dict[str, Any]:
    return {
        "code": code_digest(registry.kinds()),
        "kinds": [kind.name for kind in registry.kinds()],
        "limits": shaping(settings.limits),
        "strict_keys": settings.strict_keys,
    }


def compared(source, settings: Options) -> tuple:
    """The state, the files of ``source`` and how each is read, and the edits found.

    Returns ``(asked, state, listing, plans, edits)``: the options that shape the
    tables, the state (None when there is none), the listing, a
    :class:`~.compare.Plan` per file (data files, then policies) and the edits.

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
    listing = list_sources(source)
    paths = [*listing.data_files, *listing.policy_files]
    # The files audited are hashed again in threads while the state's entries are read.
    with hashing_pool() as pool:
        begun: list[Begun] = []

        def on_files(kept: dict[str, Kept]) -> None:
            begun.append(begin(kept, paths, settings.origins, pool))

        state = read_state(settings.state, asked, on_files)
        if state is None:  # none, or one dropped: the hashing begun is cancelled where not started
            pool.shutdown(wait=False, cancel_futures=True)
            begun.append(begin({}, paths, settings.origins, pool))  # nothing audited: no hashing
        plans, edits = finish(begun[-1])
    return asked, state, listing, plans, edits


def load_with_state(source, settings: Options) -> Audit:
    """The audit of ``source``, reading only what the state ``settings.state`` has not audited.

    Raises
    ------
    AuditError
        For a source that is not local files (a URL, a file object, standard input).
    """
    asked, state, listing, every, edits = compared(source, settings)
    plans, policy_plans = every[: len(listing.data_files)], every[len(listing.data_files) :]
    entries = None if state is None else state.entries
    for plan in plans:
        if not entries or (
            plan.incremental and is_gzip_jsonl_name(plan.path) and not continues_gzip(plan)
        ):
            plan.kept = None  # no rows to continue: read whole
        elif plan.incremental and plan.stat.st_size > settings.limits.max_file_bytes:
            plan.kept = None  # grown past max_file_bytes: read whole, where the bound holds
    audit = joined = kept_rows = None
    with cyclic_gc_paused():
        if entries:
            found = _incremental(listing, plans, entries, settings)
            if found is not None:
                audit, joined, kept_rows = found
                _said_kept(settings.state, plans)
            else:
                _log.info(
                    "state %s: the rows kept and the rows read do not fit one load's tables "
                    "(a key or a type seen on one side only): every file read whole",
                    settings.state,
                )
        else:
            _log.info("state %s: no rows to read on from: every file read whole", settings.state)
        if audit is None:
            for plan in plans:
                plan.kept = None
            audit = _read(listing, plans, settings)
    audited = _audited([*plans, *policy_plans], audit.sources, audit.rejected, settings.limits)
    _finish(audit, settings.strict, settings.limits)
    unreported = compared_with(audit, edits, state, settings)
    documents = _documents_digest(audit, listing.policy_files)
    usable = kept_rows is not None and state.documents == documents
    order, ranges, names = kept_rows if kept_rows is not None else ([], [], [])
    audit.known_findings = row_findings(
        audit.tables,
        audit.documents,
        joined,
        [entries[key] for key in order] if usable else None,
        ranges,
        names,
    )
    key = new_entry_key()
    compact = len(order) + 1 > MAX_ENTRIES
    kept, parts = _new_entry(audit, audited, key, compact)
    write_state(settings.state, asked, kept, key, parts, documents=documents, unreported=unreported)
    return audit


def _said_kept(state, plans: list[Plan]) -> None:
    """Log what a run from a state paid for: the files read on, and read whole."""
    on = [plan for plan in plans if plan.incremental]
    _log.info(
        "state %s: %d file(s) read on from where their audit ended (%d new bytes, the rows of "
        "%d line(s) kept), %d read whole",
        state,
        len(on),
        sum(plan.stat.st_size - plan.start for plan in on),
        sum(plan.kept.lines for plan in on),
        len(plans) - len(on),
    )


def compared_with(audit: Audit, edits: list, state: State | None, settings: Options) -> list:
    """Give ``audit`` what comparing it with ``state`` found; what the new state keeps as
    unreported (:func:`~.changes.with_unreported`).

    ``Audit.changes``: ``edits`` and the edits no run reported yet.
    ``Audit.audited_before``: the lines ``state`` audited before, in every file it
    keeps, what the comparison examined (0 for no state, or one that audited nothing
    yet); a file whose audited bytes hold no line end (a ``.json`` log written
    without one) counts as one.
    """
    audit.changes, unreported = with_unreported(
        changes_frame(edits, lambda name, line: _before(state, name, line)),
        [] if state is None else state.unreported,
        settings.reported_later,
    )
    kept = [] if state is None else state.kept.values()
    audit.audited_before = sum(max(record.lines, int(record.audited > 0)) for record in kept)
    return unreported


def _before(state: State | None, name: str, line: int) -> str | None:
    """The record the state keeps at a file's line (None when it keeps none of that file)."""
    record = None if state is None or not state.entries else state.kept.get(name)
    if record is None or not record.rows:
        return None
    for key, there, first, last in record.pieces:
        if first <= line <= last:
            return describe_line(state.entries[key], there, line)
    return None


def _new_entry(
    audit: Audit, audited: list[tuple[Plan, Kept]], key: str, compact: bool
) -> tuple[list[Kept], dict[str, Any]]:
    """Each file's record with its pieces, and the new entry: the rows of the lines read.

    With ``compact``, the entry holds every line kept, and the pieces all point to it.
    """
    rows: dict[str, tuple[int, int]] = {}
    lines: dict[str, tuple[LineIndex, int]] = {}
    kept = []
    for plan, record in audited:
        before = plan.kept.lines if plan.incremental and not compact else 0
        if before:
            record.pieces = [list(piece) for piece in plan.kept.pieces]
        if record.lines > before:
            record.pieces.append([key, record.name, before + 1, record.lines])
            lines[record.name] = (record.index.tail(before), before + 1)
            if record.rows:
                rows[record.name] = (before + 1, record.lines)
        kept.append(record)
    same = {name: name for name in rows}
    known = (audit.known_findings or {}).values()
    findings = joined_findings(
        [_NO_FINDINGS, *(select_rows({"f": frame}, rows, {})["f"] for frame in known)]
    )
    sources = audit.sources
    parts = {
        "tables": select_rows(audit.tables, rows, same),
        "rejected": select_rows({"r": audit.rejected}, rows, same)["r"],
        "keys": select_rows({"k": audit.keys}, rows, same)["k"],
        "sources": sources[sources["source_file"].astype("str").isin(rows)].reset_index(drop=True),
        "files": [name for name in audit.files if name in rows],
        "documents": {},
        "findings": findings,
        "lines": lines_frame(lines),
    }
    return kept, parts


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
            # A gzip file's appended members are held to its limits with those audited.
            gzip = is_gzip_jsonl_name(plan.path)
            reader = (GzipTailReader if gzip else RangeReader)(
                plan.path,
                reading.limits,
                name=plan.name,
                first_line=plan.kept.lines + 1,
                start=plan.start,
                stop=plan.stat.st_size,
                **({"expanded": plan.kept.expanded} if gzip else {}),
            )
            read_with(reading, reader, kinds, None)
        elif plan.incremental:
            reading.values_read.setdefault(plan.name, 0)
    reading.count_policy_files()
    reading.held_policies = reading.hold_policy_files()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warned once, over the joined rows (_finish)
        return audit_of_reading(reading, kinds, strict=False, strict_keys=settings.strict_keys)


def _incremental(listing, plans: list[Plan], entries: dict[str, dict], settings: Options):
    """The audit of every file: the rows kept for the audited bytes, and the bytes after them.

    Returns ``(audit, joined, (entries used, lines kept per entry, names per entry))``;
    None when the rows do not fit together as one load's (the caller reads all).
    """
    order = list(entries)
    ranges: list[dict[str, tuple[int, int]]] = [{} for _ in order]
    names: list[dict[str, str]] = [{} for _ in order]
    for plan in plans:
        if plan.incremental:
            for key, there, first, last in plan.kept.pieces:
                ranges[order.index(key)][there] = (first, last)
                names[order.index(key)][there] = plan.name
    part = _read(listing, plans, settings)
    files = part.files

    def kept(name: str) -> list:
        return [
            select_rows({name: entries[key][name]}, ranges[side], names[side])[name]
            for side, key in enumerate(order)
        ]

    tables = [
        select_rows(entries[key]["tables"], ranges[side], names[side])
        for side, key in enumerate(order)
    ]
    joined = join_parts(tables, part.tables, files)
    rejected = join_rejected(kept("rejected"), part.rejected, files)
    if joined is None or rejected is None:
        return None
    if len(rejected) > settings.limits.max_rejected_rows:
        return None  # counted past the cap: as a whole load counts them
    sources = part.sources.copy()
    for plan in plans:
        if plan.incremental:
            at = sources["source_file"] == plan.name
            counted = zip(("values_read", "loaded", "rejected"), plan.kept.counts, strict=True)
            for column, count in counted:
                sources.loc[at, column] += int(count)
    audit = Audit(
        tables=joined.tables,
        documents=part.documents,
        rejected=rejected,
        files=files,
        sources=sources,
        digests=part.digests,
        keys=join_keys(kept("keys"), part.keys, files),
    )
    return audit, joined, (order, ranges, names)


def _finish(audit: Audit, strict: bool, limits) -> None:
    """The warnings (or, under ``strict``, the error) a whole load gives over its rows."""
    rejections = [
        Rejection(row.source_file, int(row.source_line), str(row.kind), row.reason, row.raw)
        for row in audit.rejected.itertuples(index=False)
    ]
    warn_or_raise(rejections, strict, registry.documents())
    warn_unparsed_times(audit.tables)
    warn_extra_json(audit.tables, limits)


def _audited(
    plans: list[Plan], sources: pd.DataFrame, rejected: pd.DataFrame, limits: Limits
) -> list[tuple[Plan, Kept]]:
    """What this run audited of each file: its identity, bytes, lines and their SHA-256.

    The size and SHA-256 of each file read on from where its audit ended are set
    in ``sources`` (the reading took none: it did not read the file whole).
    A file's rows are kept for the next run only where they are those of its
    lines audited: not when the reading met a problem with the file as a whole
    (a row of line 0, such as ``max_file_bytes``), nor when it read other bytes
    than those audited (the file was appended to while it was read).
    """
    found = []
    counts = sources.set_index(sources["source_file"].astype("str"))
    whole_file = set(rejected.loc[rejected["source_line"] == 0, "source_file"].astype("str"))
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
        if incremental:
            at = sources["source_file"] == plan.name
            sources.loc[at, "bytes"] = read.read
            sources.loc[at, "sha256"] = read.hasher.hexdigest()
        lines = plan.kept.index.joined(read.lines) if incremental else read.lines
        # A file named as plain JSON Lines that holds gzip is read decompressed: its
        # compressed bytes are not lines, so it is read whole at every run. (A file read
        # on from its last line was plain where it starts: those bytes are unchanged.)
        plain = is_plain_jsonl_name(plan.path) and not read.gzip
        rows = plain and (read.line_end or start) == read.read
        count, expanded = len(lines), 0
        if is_gzip_jsonl_name(plan.path):
            # Its members decompressed again to count their lines (no line index: a change
            # in compressed bytes names no line); kept when they end at a line's end.
            before = plan.kept.expanded if incremental else 0
            try:
                members = gzip_lines(plan.path, start, read.read, limits, before)
            except OSError:
                continue
            rows = members.whole
            count = (plan.kept.lines if incremental else 0) + members.lines
            expanded = members.expanded
        record = Kept(
            name=plan.name,
            real=plan.real or str(Path(plan.path).resolve()),
            device=plan.stat.st_dev,
            inode=plan.stat.st_ino,
            size=read.read,
            mtime_ns=plan.stat.st_mtime_ns,
            audited=(read.line_end or start) if plain else read.read,
            lines=count,
            sha256=(read.at_line if plain else read.hasher).hexdigest(),
            rows=rows,
            expanded=expanded,
            index=lines,
        )
        if plan.name in counts.index:
            row = counts.loc[plan.name]
            # A file read on was read up to its listed size, as scanned; one read whole, up
            # to its size when it was opened, which may be later.
            read_other = not incremental and (
                pd.isna(row["bytes"]) or int(row["bytes"]) != read.read
            )
            record.rows = record.rows and not read_other and plan.name not in whole_file
            if record.rows:
                record.counts = [int(row[name]) for name in ("values_read", "loaded", "rejected")]
        found.append((plan, record))
    return found
