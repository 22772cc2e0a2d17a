"""ea.read_parquet reads a folder as untrusted: every case a real folder written by pyarrow or
pandas in tmp_path, refused with an AuditError naming the file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import explicit_audit as ea
from explicit_audit.parquet import MANIFEST, read_parquet
from explicit_audit.reading.limits import Limits

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def bundled():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(DATA, progress=False)


@pytest.fixture
def folder(bundled, tmp_path) -> Path:
    return bundled.to_parquet(tmp_path / "audit")


def _manifest(folder: Path) -> dict:
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))


def _write_manifest(folder: Path, manifest) -> None:
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def _forged(folder: Path) -> None:
    """audit.json's ``written`` rewritten to list the files as they are now, as a forger
    would: what the kit checks past the digests is read as it would be then."""
    try:
        manifest = _manifest(folder)
    except ValueError:
        return
    if not isinstance(manifest, dict) or not isinstance(manifest.get("written"), dict):
        return
    for name in manifest["written"]:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            manifest["written"][name] = [len(data), hashlib.sha256(data).hexdigest()]
    _write_manifest(folder, manifest)


def _refused(folder: Path, file: Path, *says: str) -> str:
    _forged(folder)
    with pytest.raises(ea.AuditError) as raised:
        ea.read_parquet(folder)
    message = str(raised.value)
    assert str(file) in message, message
    for said in says:
        assert re.search(said, message), message
    return message


def test_a_table_name_that_leaves_the_folder_is_refused(folder, tmp_path):
    outside = tmp_path / "x.parquet"
    outside.write_bytes((folder / "plans.parquet").read_bytes())
    manifest = _manifest(folder)
    for name in ("../x", str(tmp_path / "x"), "sub/plans"):
        _write_manifest(folder, {**manifest, "tables": [*manifest["tables"], name]})
        _refused(folder, folder / MANIFEST, "'tables' must be a list of table names")


def test_a_table_linked_out_of_the_folder_is_refused(folder, tmp_path):
    outside = tmp_path / "elsewhere.parquet"
    os.replace(folder / "plans.parquet", outside)
    (folder / "plans.parquet").symlink_to(outside)
    _refused(folder, folder / "plans.parquet", "leads out of the folder")


def test_a_manifest_linked_out_of_the_folder_is_refused(folder, tmp_path):
    outside = tmp_path / "manifest.json"
    os.replace(folder / MANIFEST, outside)
    (folder / MANIFEST).symlink_to(outside)
    _refused(folder, folder, "leads out of the folder")


def test_a_table_no_kind_declares_is_refused(folder):
    manifest = _manifest(folder)
    _write_manifest(folder, {**manifest, "tables": ["plans", "secrets"]})
    _refused(folder, folder / MANIFEST, "'secrets' is no table of a registered record kind")


def test_a_footer_of_300_million_rows_is_refused_before_reading(folder):
    rows = 300_000_000
    pq.write_table(pa.table({"source_file": pa.nulls(rows)}), folder / "plans.parquet")
    size = (folder / "plans.parquet").stat().st_size
    assert size < 2_000_000
    start = time.perf_counter()
    message = _refused(folder, folder / "plans.parquet", f"{rows} rows", "max_gzip_ratio")
    assert time.perf_counter() - start < 5, "read, not refused from the footer"
    assert f"its {size} bytes" in message
    # Under limits that allow it, the same footer is refused for the rows max_file_bytes allows.
    with pytest.raises(ea.AuditError, match=r"max_file_bytes \(1000000\)"):
        read_parquet(folder, limits=Limits(max_file_bytes=1_000_000, max_gzip_ratio=10**9))


def test_wrong_dtypes_written_by_plain_pandas_are_refused(folder, bundled):
    plans = bundled.plans.copy()
    for name in [c for c in plans.columns if plans[c].dtype == "object"]:
        plans[name] = plans[name].astype(str)  # plain pandas writes no JSON column
    plans["source_line"] = plans["source_line"].astype(str)
    plans["top_k"] = plans["top_k"].astype("float64")
    plans.to_parquet(folder / "plans.parquet")
    _refused(
        folder,
        folder / "plans.parquet",
        "not of their declared dtypes",
        "'source_line' is str, declared int64",
    )


def test_a_missing_declared_column_is_refused_from_the_schema(folder, bundled):
    bundled.plans.drop(columns=["retrieval_plan_hash"]).astype({"plan": str}).to_parquet(
        folder / "plans.parquet"
    )
    _refused(folder, folder / "plans.parquet", "no column 'retrieval_plan_hash'")


def test_bad_metadata_is_an_audit_error_naming_the_file(folder):
    table = pq.read_table(folder / "plans.parquet")
    metadata = {**table.schema.metadata, b"explicit_audit": b"{not json"}
    pq.write_table(table.replace_schema_metadata(metadata), folder / "plans.parquet")
    _refused(folder, folder / "plans.parquet", "cannot read this table", "JSONDecodeError")
    metadata[b"explicit_audit"] = json.dumps({"encoded": {"no_such_column": "json"}}).encode()
    pq.write_table(table.replace_schema_metadata(metadata), folder / "plans.parquet")
    _refused(folder, folder / "plans.parquet", "KeyError")


def test_a_json_value_nested_past_the_parser_is_an_audit_error(folder):
    table = pq.read_table(folder / "requests.parquet")
    encoded = json.loads(table.schema.metadata[b"explicit_audit"])["encoded"]
    assert encoded["payload"] == "json"
    payload = pa.array(["[" * 100_000] * len(table), type=table.schema.field("payload").type)
    table = table.set_column(table.schema.get_field_index("payload"), "payload", payload)
    pq.write_table(table, folder / "requests.parquet")
    _refused(folder, folder / "requests.parquet", "RecursionError")


@pytest.mark.parametrize(
    ("cell", "says"),
    [
        # Python's json keeps the last value, another reader the first: refused, as in a log.
        ('{"question": "EVIL", "question": "Is x true?"}', "the key `question` is repeated"),
        ('{"question": "Is x true?", "top_k": NaN}', "`top_k` is NaN, which is not JSON"),
    ],
)
def test_a_json_cell_that_readers_read_apart_is_refused_naming_column_and_row(folder, cell, says):
    table = pq.read_table(folder / "requests.parquet")
    payloads = table.column("payload").to_pylist()
    payloads[1] = cell
    payload = pa.array(payloads, type=table.schema.field("payload").type)
    table = table.set_column(table.schema.get_field_index("payload"), "payload", payload)
    pq.write_table(table, folder / "requests.parquet")
    _refused(folder, folder / "requests.parquet", "column 'payload', row 1", says, "I-JSON")


def test_a_payload_holding_a_lone_surrogate_reads_back_as_the_log_loads_it(tmp_path):
    # Not I-JSON, but a C2 request is hashed as its producer wrote it: loaded, and read back.
    lines = (DATA / "requests" / "compile_requests.jsonl").read_text(encoding="utf-8")
    request = json.loads(lines.splitlines()[0])
    request["payload"]["question"] += "\udc80"
    source = tmp_path / "requests.jsonl"
    source.write_text(json.dumps(request) + "\n", encoding="utf-8")
    audit = ea.load(source, progress=False)
    assert len(audit.requests) == 1 and audit.rejected.empty
    back = ea.read_parquet(audit.to_parquet(tmp_path / "audit"))
    assert back.requests["payload"].tolist() == audit.requests["payload"].tolist()


def test_metadata_that_repeats_a_key_is_refused(folder):
    table = pq.read_table(folder / "plans.parquet")
    mine = table.schema.metadata[b"explicit_audit"].decode()
    twice = mine[:-1] + ', "encoded": {}}'  # the last "encoded" would hide the first
    metadata = {**table.schema.metadata, b"explicit_audit": twice.encode()}
    pq.write_table(table.replace_schema_metadata(metadata), folder / "plans.parquet")
    _refused(folder, folder / "plans.parquet", "the key `encoded` is repeated")


def test_a_file_that_is_not_parquet_or_not_regular_is_refused(folder):
    (folder / "plans.parquet").write_bytes(b"PAR1 but nothing more")
    _refused(folder, folder / "plans.parquet", "not a Parquet file")
    (folder / "plans.parquet").unlink()
    os.mkfifo(folder / "plans.parquet")
    _refused(folder, folder / "plans.parquet", "not a regular file")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "cannot be read"),
        ("[" * 100_000, "nested 100000 levels deep"),
        ('{"format": "explicit_audit.parquet/1", "files": []}', "'tables' must be a list"),
        ('{"format": "explicit_audit.parquet/1", "tables": []}', "'files' must be a list"),
        ('{"format": "explicit_audit.parquet/1", "tables": [], "files": [], "documents": 1}',
         "'documents' must be a dict"),
        ('["explicit_audit.parquet/1"]', "not a folder this kit reads"),
    ],
)  # fmt: skip
def test_a_bad_manifest_is_an_audit_error_naming_it(folder, text, says):
    (folder / MANIFEST).write_text(text, encoding="utf-8")
    with pytest.raises(ea.AuditError, match=re.escape(MANIFEST)) as raised:
        ea.read_parquet(folder)
    assert says in str(raised.value)


def test_a_cache_entry_is_not_read_as_a_folder(folder):
    manifest = _manifest(folder)
    _write_manifest(folder, {**manifest, "suffix": ".arrow"})
    _refused(folder, folder / MANIFEST, "checks their seal")


def test_a_folder_written_by_the_kit_still_reads_back_whole(folder, bundled):
    back = ea.read_parquet(folder)
    for name, frame in bundled.tables.items():
        pd.testing.assert_frame_equal(back.tables[name], frame, check_exact=True)


def test_a_table_edited_or_swapped_in_alone_is_refused_by_its_digest(folder, tmp_path):
    # A plans table from another export: read with it, the bundled data lost 5 findings.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        other = ea.load(DATA / "plans" / "arborist_runs.jsonl", progress=False)
    other.to_parquet(tmp_path / "other")
    (folder / "plans.parquet").write_bytes((tmp_path / "other" / "plans.parquet").read_bytes())
    with pytest.raises(ea.AuditError, match=r"plans\.parquet: .*audit\.json lists"):
        read_parquet(folder)
    # The same size, another byte: its SHA-256 tells.
    folder = other.to_parquet(tmp_path / "again")
    data = bytearray((folder / "rejected.parquet").read_bytes())
    data[len(data) // 2] ^= 1
    (folder / "rejected.parquet").write_bytes(bytes(data))
    with pytest.raises(ea.AuditError, match=r"rejected\.parquet: its SHA-256"):
        read_parquet(folder)


def test_keys_said_not_written_while_written_lists_them_is_refused(folder):
    manifest = _manifest(folder)
    assert manifest["keys"] and "keys.parquet" in manifest["written"]
    manifest["keys"] = False  # its notes of keys would be dropped, and their findings
    _write_manifest(folder, manifest)
    _refused(folder, folder / MANIFEST, "'written' and the tables it reads disagree", "keys")


def test_a_folder_written_before_the_files_were_listed_still_reads(bundled, folder):
    manifest = _manifest(folder)
    del manifest["written"]
    _write_manifest(folder, manifest)
    back = read_parquet(folder)
    pd.testing.assert_frame_equal(back["tables"]["plans"], bundled.plans)
