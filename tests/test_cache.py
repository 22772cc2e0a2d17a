"""ea.load(..., cache=DIR): a second load of unchanged files reads the tables back."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_receipt

import explicit_audit as ea
from explicit_audit._cache_seal import SECRET_ENV

DATA = Path(__file__).resolve().parents[1] / "data"


def _quiet_load(source, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture(autouse=True)
def secret(tmp_path, monkeypatch) -> Path:
    """The cache's secret, kept outside the cache folder (never the user's own)."""
    path = tmp_path / "config" / "cache-secret"
    monkeypatch.setenv(SECRET_ENV, str(path))
    return path


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs"
    shutil.copytree(DATA, folder)
    return folder


def test_a_second_load_of_unchanged_files_equals_the_first(logs, tmp_path):
    cache = tmp_path / "cache"
    first = _quiet_load(logs, cache=cache)
    assert len(_entries(cache)) == 1
    second = _quiet_load(logs, cache=cache)
    plain = _quiet_load(logs)
    for audit in (first, second):
        for name, frame in plain.tables.items():
            pd.testing.assert_frame_equal(audit.tables[name], frame, obj=name)
        pd.testing.assert_frame_equal(audit.rejected, plain.rejected)
        pd.testing.assert_frame_equal(audit.sources, plain.sources)
        pd.testing.assert_frame_equal(audit.keys, plain.keys)
        assert audit.policies == plain.policies and audit.files == plain.files
    pd.testing.assert_frame_equal(ea.verify_all(second).findings, ea.verify_all(plain).findings)
    assert len(_entries(cache)) == 1


def test_the_second_load_reads_the_cache_not_the_files(logs, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = _quiet_load(logs, cache=cache)

    def no_reading(*args, **kwargs):
        raise AssertionError("the files were parsed again")

    monkeypatch.setattr("explicit_audit.loading.read_all", no_reading)
    pd.testing.assert_frame_equal(_quiet_load(logs, cache=cache).plans, first.plans)


def test_a_changed_file_is_parsed_again(logs, tmp_path):
    cache = tmp_path / "cache"
    before = _quiet_load(logs, cache=cache)
    path = logs / "receipts" / "operator_receipts.jsonl"
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(make_receipt(query="one more")) + "\n")
    after = _quiet_load(logs, cache=cache)
    assert len(after.receipts) == len(before.receipts) + 1
    assert "one more" in set(after.receipts["query"].dropna())
    assert len(_entries(cache)) == 2
    # The same bytes, renamed: another key too (the tables name the file).
    path.rename(path.with_name("renamed.jsonl"))
    renamed = _quiet_load(logs, cache=cache)
    assert any(name.endswith("renamed.jsonl") for name in renamed.files)
    assert len(_entries(cache)) == 3


def test_other_limits_make_another_entry(logs, tmp_path):
    cache = tmp_path / "cache"
    _quiet_load(logs, cache=cache)
    _quiet_load(logs, cache=cache, limits={"max_rejected_rows": 1})
    assert len(_entries(cache)) == 2


def test_a_cached_load_warns_and_raises_as_a_parsed_one(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(make_receipt()) + "\n{not json\n", encoding="utf-8")
    cache = tmp_path / "cache"
    for _ in range(2):  # parsed, then cached
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            line = inspect.currentframe().f_lineno + 1
            audit = ea.load(path, progress=False, cache=cache)
        found = [w for w in caught if issubclass(w.category, ea.RejectedRowsWarning)]
        assert len(found) == 1 and (found[0].filename, found[0].lineno) == (__file__, line)
        assert len(audit.rejected) == 1
        with pytest.raises(ea.InputError) as raised:
            ea.load(path, progress=False, cache=cache, strict=True)
        assert raised.value.source_line == 2
    assert len(_entries(cache)) == 1


def test_a_per_kind_loader_uses_the_cache_too(logs, tmp_path):
    cache = tmp_path / "cache"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        first = ea.load_plans(logs, progress=False, cache=cache)
        second = ea.load_plans(logs, progress=False, cache=cache)
        plain = ea.load_plans(logs, progress=False)
    pd.testing.assert_frame_equal(first, second)
    pd.testing.assert_frame_equal(second, plain)


def test_the_cache_is_refused_where_it_cannot_key_the_bytes(tmp_path):
    with open(DATA / "plans" / "arborist_runs.jsonl", "rb") as handle:
        with pytest.raises(ea.AuditError, match="local files"):
            ea.load(handle, cache=tmp_path)
    pytest.importorskip("dask")
    with pytest.raises(ea.AuditError, match="engine"):
        ea.load(DATA, engine="dask", cache=tmp_path)


def test_a_remembered_digest_is_not_fooled_by_a_restored_mtime(logs, tmp_path):
    cache = tmp_path / "cache"
    path = logs / "plans" / "arborist_runs.jsonl"
    hour_ago = path.stat().st_mtime_ns - 3600 * 10**9
    for file in logs.rglob("*.*"):
        os.utime(file, ns=(hour_ago, hour_ago))
    first = _quiet_load(logs, cache=cache)
    remembered = json.loads((cache / "digests.json").read_text(encoding="utf-8"))["value"]
    assert os.path.realpath(path) in remembered  # settled files: their digest is kept
    assert len(_entries(cache)) == 1
    # The same size, other bytes, and the modification time set back as it was.
    data = path.read_bytes()
    changed = data.replace(b'"top_k": 10', b'"top_k": 11', 1)
    assert len(changed) == len(data) and changed != data
    path.write_bytes(changed)
    os.utime(path, ns=(hour_ago, hour_ago))
    again = _quiet_load(logs, cache=cache)
    assert len(_entries(cache)) == 2  # hashed again: its change time moved
    assert again.plans["top_k"].tolist() != first.plans["top_k"].tolist()
    assert _quiet_load(logs, cache=cache).plans["top_k"].tolist() == again.plans["top_k"].tolist()
