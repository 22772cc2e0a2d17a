"""Small JSON Lines files read in batches: the rows, lines and rejections of files read alone.

Folders of many small files are loaded with batches (the default) and with
every file read on its own (``SMALL_FILE_BYTES`` below any file), on real
files on disk, and must give the same tables, rejected rows and accounting.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from conftest import accounted, make_decision, make_receipt, quiet_load

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.reading import batches, collect
from explicit_audit.reading.limits import Limits
from explicit_audit.reading.names import display_name

DATA = Path(__file__).resolve().parent.parent / "data"


def _folder(tmp_path) -> dict[str, int]:
    """Small files of every sort a folder of logs holds; each file's values written."""
    written = {}

    def put(name: str, lines: list[str], *, ending: str = "\n", raw: bytes | None = None) -> None:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw if raw is not None else (ending.join(lines) + ending).encode())
        written[name] = sum(1 for line in lines if line.strip())

    for index in range(30):
        # Decisions (columnar) and receipts, alternating; some with a logger key.
        value = (
            make_decision(f"d{index}", ts="2026-01-01T00:00:00Z")
            if index % 3
            else make_decision(f"d{index}")
        )
        put(
            f"a/{index:03d}.jsonl", [json.dumps(value), json.dumps(make_receipt(query=f"q{index}"))]
        )
    # A decision missing a field with a default: read value by value, between columnar files.
    missing = make_decision("d100")
    del missing["decision"]["used_fallback"]
    put("a/015b.jsonl", [json.dumps(missing)])
    put("b/bad.jsonl", ["{not json", json.dumps(make_decision("d101")), "[1, 2]", "", "  "])
    put("b/no-newline.jsonl", [json.dumps(make_decision("d102"))], ending="")
    bom = b"\xef\xbb\xbf" + json.dumps(make_decision("d103")).encode() + b"\n"
    put("b/bom.jsonl", ["x"], raw=bom)
    put(
        "b/crlf.jsonl",
        [json.dumps(make_decision("d104")), json.dumps(make_decision("d105"))],
        ending="\r\n",
    )
    put("b/empty.jsonl", [], raw=b"")
    put(
        "b/digits.jsonl",
        ['{"run_id": "r", "n": ' + "9" * 4_301 + "}", json.dumps(make_decision("d106"))],
    )
    # gzip behind a plain name, and a .json log, read on their own between batches.
    zipped = gzip.compress((json.dumps(make_decision("d107")) + "\n").encode())
    put("b/zipped.jsonl", ["x"], raw=zipped)
    put("b/pretty.json", [json.dumps(make_decision("d108"), indent=2)])
    written["b/pretty.json"] = 1
    # Plans in both written shapes (read in bulk, a part of the plans kind's own), some
    # beside a decision, one with a likely typo of a record key (read value by value).
    plans = [
        line
        for name in ("arborist_runs.jsonl", "arborist_runs_flat.jsonl")
        for line in (DATA / "plans" / name).read_text("utf-8").splitlines()[:6]
    ]
    for index, line in enumerate(plans):
        beside = [json.dumps(make_decision(f"d{200 + index}"))] if index % 4 == 1 else []
        put(f"p/{index:03d}.jsonl", [line, *beside] if index % 2 else [*beside, line])
    typo = json.loads(plans[0])
    typo["retrieval_plan_hashh"] = typo.pop("retrieval_plan_hash")
    put("p/005b.jsonl", [plans[1], json.dumps(typo), plans[2]])
    return written


def _same(left: ea.Audit, right: ea.Audit) -> None:
    for name in left.tables:
        pd.testing.assert_frame_equal(left.tables[name], right.tables[name], obj=name)
    pd.testing.assert_frame_equal(left.rejected, right.rejected, obj="rejected")
    pd.testing.assert_frame_equal(left.sources, right.sources, obj="sources")
    pd.testing.assert_frame_equal(left.keys, right.keys, obj="keys")


def test_batched_files_load_as_files_read_one_by_one(tmp_path, monkeypatch):
    written = _folder(tmp_path)
    batched = quiet_load(tmp_path)
    accounted(batched)
    sources = batched.sources.set_index("source_file")
    for name, count in written.items():
        assert sources.loc[str(tmp_path / name), "values_read"] == count, name
    monkeypatch.setattr(collect, "SMALL_FILE_BYTES", -1)
    _same(batched, quiet_load(tmp_path))
    decisions = batched.decisions
    # Rows in file order, each on its own line of its own file.
    assert decisions.loc[decisions.decision_id == "d100", "source_file"].item() == str(
        tmp_path / "a/015b.jsonl"
    )
    assert decisions.loc[decisions.decision_id == "d101", "source_line"].item() == 2
    assert decisions.loc[decisions.decision_id == "d105", "source_line"].item() == 2
    order = list(decisions.source_file)
    assert order == sorted(order, key=lambda name: list(sources.index).index(name))
    rejected = batched.rejected
    bad = rejected[rejected.source_file == str(tmp_path / "b/bad.jsonl")]
    assert list(bad.source_line) == [1, 3]
    digits = rejected[rejected.source_file == str(tmp_path / "b/digits.jsonl")]
    assert list(digits.source_line) == [1]
    plans = batched.plans
    assert len(plans) == 14 and plans.plan_shape.nunique() == 2
    assert list(plans.source_file) == sorted(plans.source_file)
    mixed = plans[plans.source_file == str(tmp_path / "p/005b.jsonl")]
    assert list(mixed.source_line) == [1, 3]  # line 2 lacks its hash: a rejected row
    typo = rejected[rejected.source_file == str(tmp_path / "p/005b.jsonl")]
    assert list(typo.source_line) == [2] and "retrieval_plan_hash" in typo.reason.item()
    assert ea.plan_verdicts(plans).status.eq("match").all()


def test_batches_of_a_few_bytes_load_the_same(tmp_path, monkeypatch):
    _folder(tmp_path)
    whole = quiet_load(tmp_path)
    # A batch closed after every few files: the rows still come in file order.
    monkeypatch.setattr(collect, "BATCH_BYTES", 700)
    _same(whole, quiet_load(tmp_path))


def test_the_rejected_row_cap_holds_across_batched_files(tmp_path, monkeypatch):
    for index in range(40):
        (tmp_path / f"{index:03d}.jsonl").write_text("{bad\n[1]\n", "utf-8")
    limits = {"max_rejected_rows": 25}
    batched = quiet_load(tmp_path, limits=limits)
    monkeypatch.setattr(collect, "SMALL_FILE_BYTES", -1)
    _same(batched, quiet_load(tmp_path, limits=limits))
    assert int(batched.sources.rejected.sum()) == 80
    accounted(batched)


@pytest.mark.parametrize("name", [b"caf\xe9.jsonl", b"r\\xe9.jsonl"])
def test_a_batched_file_keeps_its_name_as_bytes(tmp_path, name):
    for stem in (b"a.jsonl", name, b"z.jsonl"):
        with open(os.path.join(os.fsencode(tmp_path), stem), "wb") as handle:
            handle.write((json.dumps(make_decision(f"d{len(stem)}")) + "\n{bad\n").encode())
    audit = quiet_load(tmp_path)
    shown = display_name(os.fsdecode(os.path.join(os.fsencode(tmp_path), name)))
    assert shown in set(audit.decisions.source_file)
    assert (audit.rejected.source_file == shown).sum() == 1
    assert audit.sources.set_index("source_file").loc[shown, "sha256"]


def test_one_batch_reads_each_file_at_its_lines(tmp_path):
    files = [
        batches.SmallFile("one", b"{bad\n"),
        batches.SmallFile("two", b""),
        batches.SmallFile("three", b"\n\n" + json.dumps(make_decision("d1")).encode()),
    ]
    segments, rejected = [], []
    counts = batches.read_batch(
        files,
        registry.kinds(),
        None,
        Limits(),
        lambda kind, segment: segments.append((kind, segment)),
        rejected.append,
    )
    assert counts == [1, 0, 1]
    assert [(r.source_file, r.source_line) for r in rejected] == [("one", 1)]
    ((kind, (what, part)),) = segments
    assert (kind, what) == ("decisions", "part")
    assert part.table.column("source_file").to_pylist() == ["three"]
    assert part.table.column("source_line").to_pylist() == [3]
