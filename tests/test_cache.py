"""ea.load(..., cache=DIR): a second load of unchanged files reads the tables back; each
tampering of an entry or of digests.json, on real files, is dropped, read from the sources
again and named in one warning."""

from __future__ import annotations

import hashlib
import hmac
import inspect
import json
import os
import shutil
import stat
import warnings
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_notebook

import explicit_audit as ea
from explicit_audit._cache_seal import SEAL, SECRET_ENV, TamperedCacheWarning, cache_secret
from explicit_audit.cli import main

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


def test_a_file_that_changes_while_it_is_read_is_not_kept(tmp_path):
    # The key named the bytes hashed first, the entry held the rows of the bytes parsed after:
    # a file rewritten between the two was served as its old rows, silently, later on.
    # /proc/self/io changes at every read of it (it counts the bytes the process read).
    if not Path("/proc/self/io").is_file():
        pytest.skip("no /proc/self/io here")
    logs, cache = tmp_path / "logs", tmp_path / "cache"
    logs.mkdir()
    (logs / "changing.jsonl").symlink_to("/proc/self/io")
    audit = _quiet_load(logs, cache=cache)
    assert not cache.exists() or not _entries(cache)
    (read,) = audit.sources.itertuples(index=False)
    assert tuple(audit.digests[read.source_file]) == (read.bytes, read.sha256)


def test_a_file_passed_over_is_in_the_key(logs, tmp_path):
    # The sources list what the listing passed over: a cached load gave the earlier list.
    cache = tmp_path / "cache"
    _quiet_load(logs, cache=cache)
    (logs / "receipts" / ".scratch.jsonl").write_text("{}\n", encoding="utf-8")
    (logs / "receipts" / "notes.txt").write_text("notes\n", encoding="utf-8")
    cached, plain = _quiet_load(logs, cache=cache), _quiet_load(logs)
    pd.testing.assert_frame_equal(cached.sources, plain.sources)
    assert plain.sources["skipped"].notna().sum() == 2


def test_other_limits_make_another_entry(logs, tmp_path):
    cache = tmp_path / "cache"
    _quiet_load(logs, cache=cache)
    _quiet_load(logs, cache=cache, limits={"max_rejected_rows": 1})
    assert len(_entries(cache)) == 2
    # How a load runs is not what it holds: the entries made are served again.
    for limits in ({"max_threads": 1}, {"max_partitions": 7}):
        _quiet_load(logs, cache=cache, limits=limits)
    assert len(_entries(cache)) == 2


def test_rows_made_by_other_code_of_the_kit_make_another_entry(logs, tmp_path, monkeypatch):
    from explicit_audit import _version

    cache = tmp_path / "cache"
    with monkeypatch.context() as earlier:  # a kit whose modules differed, of the same version
        earlier.setattr(_version, "_kit_digest", lambda: "0" * 64)
        _quiet_load(logs, cache=cache)
    assert len(_entries(cache)) == 1
    _quiet_load(logs, cache=cache)
    assert len(_entries(cache)) == 2
    _quiet_load(logs, cache=cache)  # the same code: the entry it made is served
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


def _settled(logs: Path) -> tuple[Path, int]:
    """The plans file of ``logs``, every file's times set an hour back (so digests are kept)."""
    path = logs / "plans" / "arborist_runs.jsonl"
    hour_ago = path.stat().st_mtime_ns - 3600 * 10**9
    for file in logs.rglob("*.*"):
        os.utime(file, ns=(hour_ago, hour_ago))
    return path, hour_ago


def test_a_remembered_digest_is_not_fooled_by_a_restored_mtime(logs, tmp_path):
    cache = tmp_path / "cache"
    path, hour_ago = _settled(logs)
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


# --- the seals: what a cached load proves ----------------------------------------------------


@pytest.fixture
def other(tmp_path) -> Path:
    """Another load's sources: the same kinds, other records."""
    folder = tmp_path / "other"
    shutil.copytree(DATA, folder)
    plans = folder / "plans" / "arborist_runs.jsonl"
    plans.write_text("".join(plans.read_text(encoding="utf-8").splitlines(True)[:3]))
    (folder / "receipts" / "more.jsonl").write_text(
        json.dumps(make_receipt()) + "\n{not json\n", encoding="utf-8"
    )
    return folder


def _load(source, cache) -> tuple[ea.Audit, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        audit = ea.load(source, progress=False, cache=cache)
    return audit, [w for w in caught if issubclass(w.category, TamperedCacheWarning)]


def _entry(cache: Path) -> Path:
    (entry,) = [p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return entry


def _same_as_parsed(audit: ea.Audit, source: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = ea.load(source, progress=False)
    for name, frame in plain.tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], frame, obj=name)
    pd.testing.assert_frame_equal(audit.rejected, plain.rejected)
    pd.testing.assert_frame_equal(audit.sources, plain.sources)


def _one_warning(caught, *names: str) -> str:
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    for name in names:
        assert name in message, message
    assert caught[0].filename == __file__  # points at the load, not inside the kit
    return message


def _entries_of(cache: Path, *sources: Path) -> list[Path]:
    """The entry each source's load wrote, loading them one after another."""
    found = []
    for source in sources:
        before = {p.name for p in cache.iterdir()} if cache.exists() else set()
        _load(source, cache)
        (name,) = {p.name for p in cache.iterdir() if p.is_dir()} - before
        found.append(cache / name)
    return found


def test_a_flipped_byte_in_a_table_is_dropped_and_read_again(logs, tmp_path):
    cache = tmp_path / "cache"
    _load(logs, cache)
    entry = _entry(cache)
    path = entry / "plans.arrow"
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 9] = bytes(b ^ 0xFF for b in data[len(data) // 2 :][:9])
    path.write_bytes(bytes(data))
    audit, caught = _load(logs, cache)
    _one_warning(caught, str(entry), "plans.arrow", "dropped")
    _same_as_parsed(audit, logs)
    # Written anew, sealed: the next load reads it back without a word.
    again, caught = _load(logs, cache)
    assert caught == []
    _same_as_parsed(again, logs)


@pytest.mark.parametrize("table", ["plans.arrow", "rejected.arrow"])
def test_a_table_swapped_in_from_another_load_is_refused(logs, other, tmp_path, table):
    cache = tmp_path / "cache"
    mine, theirs = _entries_of(cache, logs, other)
    assert (mine / table).read_bytes() != (theirs / table).read_bytes()
    shutil.copyfile(theirs / table, mine / table)  # a valid Arrow file, of another load
    audit, caught = _load(logs, cache)
    _one_warning(caught, table, "sealed")
    _same_as_parsed(audit, logs)


def test_two_tampered_files_are_named_in_one_warning(logs, other, tmp_path):
    cache = tmp_path / "cache"
    mine, theirs = _entries_of(cache, logs, other)
    for table in ("plans.arrow", "rejected.arrow"):
        shutil.copyfile(theirs / table, mine / table)
    (mine / "extra.arrow").write_bytes(b"anything")
    _, caught = _load(logs, cache)
    _one_warning(caught, "plans.arrow", "rejected.arrow", "extra.arrow is not sealed")


def test_a_whole_entry_of_another_load_under_this_key_is_refused(logs, other, tmp_path):
    cache = tmp_path / "cache"
    mine, theirs = _entries_of(cache, logs, other)
    shutil.rmtree(mine)
    shutil.copytree(theirs, mine)  # files and seal of another load: its seal names its key
    audit, caught = _load(logs, cache)
    _one_warning(caught, "sealed for another load")
    _same_as_parsed(audit, logs)


def _forged(document: dict, value) -> dict:
    """A seal rewritten to match, signed with a key that is not the user's secret."""
    text = json.dumps(["explicit_audit.cache-seal/1", "entry", value], sort_keys=True)
    mac = hmac.new(b"g" * 64, text.encode("ascii"), hashlib.sha256).hexdigest()
    return {**document, "value": value, "mac": mac}


def test_a_seal_rewritten_to_match_swapped_files_is_refused(logs, other, tmp_path):
    cache = tmp_path / "cache"
    mine, theirs = _entries_of(cache, logs, other)
    shutil.copyfile(theirs / "plans.arrow", mine / "plans.arrow")
    document = json.loads((mine / SEAL).read_text(encoding="utf-8"))
    value = document["value"]
    data = (mine / "plans.arrow").read_bytes()
    value["files"]["plans.arrow"] = [len(data), hashlib.sha256(data).hexdigest()]
    (mine / SEAL).write_text(json.dumps(_forged(document, value)), encoding="utf-8")
    audit, caught = _load(logs, cache)
    _one_warning(caught, SEAL, "signature does not hold")
    _same_as_parsed(audit, logs)


def test_a_forged_digests_list_cannot_hide_a_changed_source(logs, tmp_path):
    cache = tmp_path / "cache"
    path, _ = _settled(logs)
    first, _ = _load(logs, cache)
    digests = cache / "digests.json"
    document = json.loads(digests.read_text(encoding="utf-8"))
    old = document["value"][os.path.realpath(path)]
    # The source changed; the digests list rewritten to give it its old digest.
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"top_k": 10', b'"top_k": 11', 1))
    now = path.stat()
    old["stat"] = [now.st_size, now.st_mtime_ns, now.st_ctime_ns, now.st_ino, now.st_dev]
    digests.write_text(json.dumps(document), encoding="utf-8")
    audit, caught = _load(logs, cache)
    _one_warning(caught, "digests.json", "signature does not hold", "hashed again")
    assert audit.plans["top_k"].tolist() != first.plans["top_k"].tolist()
    _same_as_parsed(audit, logs)


def test_a_link_or_a_fifo_in_the_cache_is_dropped_not_followed(logs, tmp_path):
    cache = tmp_path / "cache"
    _load(logs, cache)
    entry = _entry(cache)
    (entry / "plans.arrow").unlink()
    os.mkfifo(entry / "plans.arrow")
    audit, caught = _load(logs, cache)
    _one_warning(caught, "plans.arrow", "not a regular file")
    _same_as_parsed(audit, logs)
    entry = _entry(cache)
    elsewhere = tmp_path / "elsewhere"
    os.replace(entry, elsewhere)
    entry.symlink_to(elsewhere, target_is_directory=True)
    _, caught = _load(logs, cache)
    _one_warning(caught, "a link")
    assert elsewhere.is_dir() and (elsewhere / SEAL).is_file()  # never followed to remove it


def test_the_secret_is_the_users_own_outside_the_cache(tmp_path, secret, monkeypatch):
    cache = tmp_path / "cache"
    key = cache_secret(cache)
    assert len(key) == 64 and stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert cache_secret(cache) == key  # created once, then read
    secret.chmod(0o640)
    with pytest.raises(ea.AuditError, match="chmod 600"):
        cache_secret(cache)
    monkeypatch.setenv(SECRET_ENV, str(cache / "secret"))
    with pytest.raises(ea.AuditError, match="inside the cache folder"):
        cache_secret(cache)


def test_an_entry_written_under_another_secret_is_refused(logs, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    _load(logs, cache)
    monkeypatch.setenv(SECRET_ENV, str(tmp_path / "another-user" / "cache-secret"))
    audit, caught = _load(logs, cache)
    _one_warning(caught, SEAL, "digests.json", "signature does not hold")
    _same_as_parsed(audit, logs)


def test_verify_summary_and_report_never_read_a_cache(logs, tmp_path, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("the command read the load cache")

    for name in ("lookup", "store", "file_digests"):
        monkeypatch.setattr(f"explicit_audit.loading.{name}", refuse)
    assert main(["verify", str(logs), "--json"]) == 1
    assert main(["summary", str(logs)]) == 0
    assert main(["verify", str(logs), "--cache", str(tmp_path / "cache")]) == 2  # no such option
    pytest.importorskip("nbconvert")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    notebook = new_notebook(
        cells=[new_code_cell('DATA = "../data"', metadata={"tags": ["parameters"]})]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, notebooks / "one.ipynb")
    status = main(
        ["report", str(logs), "--out", str(tmp_path / "out"), "--notebooks", str(notebooks)]
    )
    assert status == 1  # the bundled data holds findings: report exits as verify does
    assert (tmp_path / "out" / "one.html").is_file()
    capsys.readouterr()
