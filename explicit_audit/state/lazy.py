"""``ea.load(source, engine="dask", state=DIR)``: the state applied at the client.

The Dask engine reads its partitions when computed, on workers: there are no
rows in memory to keep or join, so the state cannot spare the parsing. What
it can do, at the client before the tables are planned, is what needs no
parsing: hash again the bytes each file held when it was audited, and find
the edits of them (:mod:`.compare`), the same as on the pandas engine. The
lazy audit then carries ``Audit.changes``, ``verify_all`` reports them as
the check ``audited_bytes``, and the state is written anew (identities,
SHA-256 and line index of every file; no rows: a later pandas run from it
reads each file whole once, then incrementally). The client reads every
byte once for this (at the disk's speed), which is what proving the old
bytes unchanged costs on any engine.
"""

from __future__ import annotations

import pandas as pd

from .._core.findings import REJECTED_RULES
from .._core.key_table import keys_frame
from ..audit import Audit
from ..reading.tables import rejected_frame
from .load import _audited, compared, compared_with
from .store import lines_frame, new_entry_key, write_state

__all__ = ["with_state"]


def with_state(source, settings, lazy_audit) -> Audit:
    """``lazy_audit()`` (the Dask audit of ``source``) with the edits the state finds.

    Raises
    ------
    AuditError
        For a source that is not local files.
    """
    asked, state, _, plans, edits = compared(source, settings)
    for plan in plans:
        plan.kept = None  # every file is read whole by the engine
    audit = lazy_audit()
    no_sources = pd.DataFrame({"source_file": pd.Series([], dtype="str")})
    audited = _audited(plans, no_sources, rejected_frame([]), settings.limits)
    unreported = compared_with(audit, edits, state, settings)
    key = new_entry_key()
    kept = []
    lines = {}
    for _, record in audited:
        record.rows = False
        record.pieces = [[key, record.name, 1, record.lines]] if record.lines else []
        lines[record.name] = (record.index, 1)
        kept.append(record)
    parts = {
        "tables": {},
        "rejected": rejected_frame([]),
        "keys": keys_frame([]),
        "sources": pd.DataFrame({"source_file": pd.Series([], dtype="str")}),
        "files": [],
        "documents": {},
        "findings": REJECTED_RULES.empty_findings().astype(
            {"check": "str", "rule": "str", "kind": "str"}
        ),
        "lines": lines_frame(lines),
    }
    write_state(settings.state, asked, kept, key, parts, documents="", unreported=unreported)
    return audit
