"""An audit state over gzip-compressed JSON Lines logs: only the members appended are read.

A gzip log grows by members (``gzip -c new.jsonl >> log.jsonl.gz``, or a
logger that compresses each batch). Each run from a state hashes the
compressed bytes audited again; when they are unchanged, the rows they gave
are kept and only the members after them are decompressed and parsed, their
lines numbered on. Every case is checked against a load of the same bytes
without a state: the same tables, rejected rows, sources and findings.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit._cache_seal import SECRET_ENV
from explicit_audit.reading.digests import READ_BYTES
from explicit_audit.reading.streams import _GZIP_INPUT as GZIP_INPUT

ROOT = Path(__file__).resolve().parents[1]
LINES = (ROOT / "data/decisions/2026-01_baseline.jsonl").read_bytes().splitlines(True)
BROKEN = b'{"decision_id": "broken", "tier":\n'


@pytest.fixture(autouse=True)
def secret(tmp_path_factory, monkeypatch) -> None:
    """The state's secret, kept outside the state folder (never the user's own)."""
    monkeypatch.setenv(SECRET_ENV, str(tmp_path_factory.mktemp("config") / "secret"))


@pytest.fixture
def logs(tmp_path) -> Path:
    folder = tmp_path / "logs"
    (folder / "policies").mkdir(parents=True)
    for policy in (ROOT / "data" / "policies").iterdir():
        (folder / "policies" / policy.name).write_bytes(policy.read_bytes())
    return folder


def _load(folder: Path, state: Path | None = None, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        kept = {} if state is None else {"state": state}
        return ea.load(folder, progress=False, **kept, **options)


def _findings(audit: ea.Audit) -> pd.DataFrame:
    found = ea.verify_all(audit).findings
    found = found[found["check"] != "audited_bytes"].reset_index(drop=True)
    return found.astype({"check": "str", "rule": "str", "kind": "str"})


def _assert_whole(audit: ea.Audit, folder: Path, **options) -> None:
    """``audit`` is what a load of ``folder`` without a state gives."""
    whole = _load(folder, **options)
    assert list(audit.tables) == list(whole.tables)
    for name, table in whole.tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], table, obj=name)
    for part in ("rejected", "sources", "keys"):
        pd.testing.assert_frame_equal(getattr(audit, part), getattr(whole, part), obj=part)
    pd.testing.assert_frame_equal(_findings(audit), _findings(whole))


def _pieces(state: Path, name: str) -> list[tuple[int, int]]:
    files = json.loads((state / "state.json").read_text(encoding="utf-8"))["value"]["files"]
    (found,) = [f for f in files if f["name"].endswith(name)]
    return [(first, last) for _, _, first, last in found["pieces"]], found["rows"]


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as out:  # appended, as a logger does
        out.write(data)


@pytest.mark.parametrize("split", [1, 17, 40])
def test_members_appended_are_read_alone_and_numbered_on(logs, tmp_path, split):
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    log.write_bytes(gzip.compress(b"".join(LINES[:split])))
    _assert_whole(_load(logs, state), logs)
    assert _pieces(state, "d.jsonl.gz") == ([(1, split)], True)
    # Unchanged: its rows kept, nothing read.
    _assert_whole(_load(logs, state), logs)
    # Two members appended, one with a broken line: read alone, lines numbered on.
    _append(log, gzip.compress(b"".join(LINES[split:50])))
    _append(log, gzip.compress(BROKEN + LINES[50]))
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    (broken,) = audit.rejected.itertuples(index=False)
    assert int(broken.source_line) == 51
    assert audit.changes.empty
    # The rows of the first run stay in its entry: a piece of lines 1 to split.
    pieces, rows = _pieces(state, "d.jsonl.gz")
    assert rows and pieces[0] == (1, split) and pieces[-1][1] == 52


def test_a_member_larger_than_a_read_is_followed_once_by_the_next(logs, tmp_path):
    # The file is one read of compressed bytes; its first member inflates to more than one
    # read's output, so it ends inside a later call. CPython left the bytes after it (the
    # next member) in unconsumed_tail and in unused_data both: read twice, 2,406 rows of
    # 2,403 lines.
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    first = b"".join(LINES) * 2
    log.write_bytes(gzip.compress(first) + gzip.compress(b"".join(LINES[:3])))
    assert len(first) > READ_BYTES and log.stat().st_size < GZIP_INPUT
    for audit in (_load(logs), _load(logs, state)):  # without a state, and its first run
        read = audit.sources.set_index("source_file")["values_read"]
        assert read[str(log)] == len(audit.decisions) == 2403
        assert audit.decisions["source_line"].tolist() == list(range(1, 2404))
    _append(log, gzip.compress(b"".join(LINES[3:6])))  # counted on from the audited members
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    assert audit.decisions["source_line"].tolist()[-3:] == [2404, 2405, 2406]


def test_a_member_that_ends_inside_a_line_is_read_whole_next_time(logs, tmp_path):
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    # Its last line lacks its newline: the next member may go on with that line.
    log.write_bytes(gzip.compress(b"".join(LINES[:10]) + LINES[10].rstrip(b"\n")))
    _load(logs, state)
    assert _pieces(state, "d.jsonl.gz")[1] is False
    _append(log, gzip.compress(b"\n" + b"".join(LINES[11:20])))
    _assert_whole(_load(logs, state), logs)
    assert _pieces(state, "d.jsonl.gz") == ([(1, 20)], True)


def test_bytes_after_the_members_that_are_not_gzip_are_read_as_a_whole_read_reads_them(
    logs, tmp_path
):
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    log.write_bytes(gzip.compress(b"".join(LINES[:10])))
    _load(logs, state)
    _append(log, b"not gzip\n")
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    reasons = audit.rejected["reason"].astype("str").tolist()
    assert any("not gzip" in reason for reason in reasons), reasons


@pytest.mark.parametrize("limit", ["max_file_bytes", "max_gzip_ratio"])
def test_members_appended_are_held_to_the_limits_with_those_audited(
    logs, tmp_path, monkeypatch, limit
):
    from explicit_audit.reading import streams

    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    first, later = b"".join(LINES[:600]), b"".join(LINES[600:900])
    if limit == "max_file_bytes":  # the file fits at first; with its appended member, not
        limits = {"max_file_bytes": len(first) + len(later) // 2}
    else:  # blank lines that take the whole file past the ratio, then records
        monkeypatch.setattr(streams, "GZIP_RATIO_FLOOR", 1 << 20)
        first, later = first + b"\n" * (2 << 20), b"\n" * (8 << 20) + later
        before = len(first) / len(gzip.compress(first))
        after = (len(first) + len(later)) / len(gzip.compress(first) + gzip.compress(later))
        assert after > 2 * before
        limits = {"max_gzip_ratio": int(1.5 * before)}
    log.write_bytes(gzip.compress(first))
    assert _load(logs, state, limits=limits).rejected.empty
    _append(log, gzip.compress(later))
    audit = _load(logs, state, limits=limits)
    _assert_whole(audit, logs, limits=limits)
    reasons = audit.rejected.loc[audit.rejected["source_line"] == 0, "reason"].astype("str")
    assert reasons.str.contains(limit).tolist() == [True]


def test_a_gzip_header_appended_without_a_member_is_named_as_a_whole_read_names_it(logs, tmp_path):
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    log.write_bytes(gzip.compress(b"".join(LINES[:10])))
    _load(logs, state)
    _append(log, gzip.compress(b"x")[:10] + b"\xff" * 20)  # a header, then no deflate data
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    (reason,) = audit.rejected["reason"].astype("str")
    assert reason.startswith("the bytes after the last gzip member are not gzip"), reason


def test_a_gzip_log_compressed_again_is_an_edit(logs, tmp_path):
    log, state = logs / "d.jsonl.gz", tmp_path / "state"
    log.write_bytes(gzip.compress(b"".join(LINES[:10]), mtime=0))
    _load(logs, state)
    # The same lines compressed at another level: other bytes, other SHA-256.
    with open(log, "r+b") as out:
        out.write(gzip.compress(b"".join(LINES[:10]), compresslevel=1, mtime=0))
        out.truncate()
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    assert audit.changes["rule"].tolist() == ["audited_bytes_changed"]


def test_a_gzip_log_named_as_plain_json_lines_is_read_whole_at_every_run(logs, tmp_path):
    # The loader reads it decompressed (by its first bytes): its compressed bytes are not
    # lines to read on from, so the state keeps no rows of it (not even when they end with
    # a newline byte, as a gzip trailer does for some sizes past 160 MB).
    log, state = logs / "d.jsonl", tmp_path / "state"
    log.write_bytes(gzip.compress(b"".join(LINES[:10]), mtime=0))
    _assert_whole(_load(logs, state), logs)
    assert _pieces(state, "d.jsonl")[1] is False
    _append(log, gzip.compress(b"".join(LINES[10:20]), mtime=0))
    audit = _load(logs, state)
    _assert_whole(audit, logs)
    assert audit.changes.empty and len(audit.decisions) == 20
