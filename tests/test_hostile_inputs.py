"""Hostile and broken files on disk: never a crash, a hang or a wrong line; nothing lost.

Each test writes a real file, loads it, and checks the rejected row (or the
clean error) names file and line, and that loaded + rejected == values read.
The slow ones run in a child process, so that a crash (a signal) or a hang
fails the test instead of the suite.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import zlib

import pytest
from conftest import accounted as _accounted
from conftest import make_receipt, rows_by_path
from conftest import quiet_load as _load
from exact_values import read_exactly

import explicit_audit as ea
from explicit_audit.reading import content as content_module
from explicit_audit.reading.streams import salvage


def _line(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _in_child(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run code in a fresh interpreter; a crash shows as a negative return code."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
    )


# -- crashes and hangs ----------------------------------------------------------------------


def test_a_line_nested_20000_deep_after_the_first_is_rejected_not_a_crash(tmp_path):
    path = tmp_path / "deep.jsonl"
    deep = '{"schemaVersion": 0, "x": ' + "[" * 20_000 + "]" * 20_000 + "}"
    path.write_text(_line(make_receipt()) + "\n" + deep + "\n" + _line(make_receipt()) + "\n")
    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        f"a = ea.load({str(path)!r}, progress=False)\n"
        "print(len(a.receipts), a.rejected.source_line.tolist(), a.rejected.reason.iloc[0])"
    )
    run = _in_child(code)
    assert run.returncode == 0, run.stderr[-2000:]
    rows, lines, reason = run.stdout.split(" ", 2)
    assert rows == "2" and lines == "[2]"
    assert "deeper than max_depth (512)" in reason


def test_nesting_limit_is_a_keyword_and_applies_on_every_path(tmp_path):
    nested = make_receipt()
    nested["ctx"] = {"a": {"b": {"c": {"d": 1}}}}  # depth 5 as a whole
    for name, text in (
        ("log.jsonl", _line(nested) + "\n"),
        ("log.json", json.dumps(nested, indent=2) + "\n"),
    ):
        path = tmp_path / name
        path.write_text(text)
        assert len(_load(path).receipts) == 1
        audit = _load(path, limits={"max_depth": 4})
        assert audit.receipts.empty
        assert "deeper than max_depth (4)" in audit.rejected.reason.iloc[0]
        _accounted(audit)


def test_a_file_truncated_while_it_is_read_rejects_the_cut_value(tmp_path, monkeypatch):
    path = tmp_path / "rotating.jsonl"
    lines = [_line(make_receipt(query=f"q{i}")) + "\n" for i in range(6000)]
    path.write_text("".join(lines))
    real_chunks = content_module.FileReader._raw_chunks

    def chunks_while_truncated(self):
        for number, chunk in enumerate(real_chunks(self)):
            if number == 0:
                # logrotate copytruncate: the file is cut to 1.5 MB while being read.
                os.truncate(path, 1_500_000)
            yield chunk

    monkeypatch.setattr(content_module.FileReader, "_raw_chunks", chunks_while_truncated)
    audit = _load(path)
    kept = "".join(lines).encode()[:1_500_000].count(b"\n")
    assert len(audit.receipts) == kept
    assert audit.receipts.source_line.tolist() == list(range(1, kept + 1))
    (cut,) = audit.rejected.itertuples()
    assert cut.source_line == kept + 1 and "invalid JSON" in cut.reason
    _accounted(audit)


def test_a_fifo_in_a_folder_is_reported_not_opened(tmp_path):
    (tmp_path / "log.jsonl").write_text(_line(make_receipt()) + "\n")
    os.mkfifo(tmp_path / "pipe.jsonl")
    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        f"a = ea.load({str(tmp_path)!r}, progress=False)\n"
        "print(len(a.receipts), a.rejected[['source_line', 'kind', 'reason']].values.tolist())"
    )
    run = _in_child(code, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("1 [[0, 'file', 'a FIFO, not a regular file: not read']]")
    with pytest.raises(ea.AuditError, match="a FIFO, not a regular file"):
        ea.load(tmp_path / "pipe.jsonl", progress=False)


def test_a_link_to_dev_zero_and_a_link_to_itself_are_reported(tmp_path):
    (tmp_path / "log.jsonl").write_text(_line(make_receipt()) + "\n")
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "self.jsonl").symlink_to(tmp_path / "self.jsonl")
    audit = _load(tmp_path)
    assert len(audit.receipts) == 1
    reasons = dict(zip(audit.rejected.source_file, audit.rejected.reason, strict=True))
    assert reasons[str(tmp_path / "zero.jsonl")] == "a device, not a regular file: not read"
    assert reasons[str(tmp_path / "self.jsonl")].startswith("cannot read")
    assert (audit.rejected.source_line == 0).all()
    _accounted(audit)


def test_lone_surrogates_in_keys_and_in_file_names(tmp_path):
    path = tmp_path / "keys.jsonl"
    surrogate_key = '{"\\ud800": 1}'
    receipt = _line(make_receipt()).replace('"query"', '"\\ud800"', 1)
    path.write_text(surrogate_key + "\n" + receipt + "\n" + _line(make_receipt()) + "\n")
    audit = _load(path)
    assert len(audit.receipts) == 1
    assert audit.rejected.source_line.tolist() == [1, 2]
    assert "\\ud800" in audit.rejected.reason.iloc[0]
    _accounted(audit)
    odd = tmp_path / os.fsdecode(b"caf\xe9.jsonl")
    odd.write_text(_line(make_receipt()) + "\nnot json\n")
    audit = _load(odd)
    assert audit.receipts.source_file.astype(str).tolist() == [str(tmp_path / "caf\\xe9.jsonl")]
    assert audit.rejected.source_line.tolist() == [2]
    _accounted(audit)


# -- provenance -------------------------------------------------------------------------------


def test_two_values_on_a_line_and_one_split_over_two_lines_keep_their_lines(tmp_path):
    good = [_line(make_receipt(query=f"q{i}")) for i in range(4)]
    split = _line(make_receipt(query="split"))
    half = len(split) // 2
    text = "\n".join(
        [good[0], good[1] + good[2], split[:half], split[half:], good[3]]
    )  # lines 1..5
    path = tmp_path / "odd.jsonl"
    path.write_text(text + "\n")
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q3"]
    assert audit.receipts.source_line.tolist() == [1, 5]
    assert audit.rejected.source_line.tolist() == [2, 3, 4]
    _accounted(audit)


def test_nan_inside_a_part_no_kind_reads_is_refused_whatever_else_the_file_holds(tmp_path):
    line = {"schema_version": 0, "status": "hit", "records": [{"score": 1}]}
    line["receipt"] = make_receipt()
    nan_line = _line(line).replace('"score": 1', '"score": NaN')
    clean = "\n".join(_line(line) for _ in range(3))
    damaged = "\n".join([_line(line), "not json", _line(line)])
    for name, others in (("clean.jsonl", clean), ("damaged.jsonl", damaged)):
        path = tmp_path / name
        path.write_text(others + "\n" + nan_line + "\n")
        audit = _load(path)
        assert audit.rejected.source_line.max() == 4, name
        assert "invalid JSON" in audit.rejected.reason.iloc[-1]
        _accounted(audit)


# -- memory and size limits -----------------------------------------------------------------


def test_rejected_rows_past_the_cap_are_counted_in_one_row_per_file(tmp_path):
    path = tmp_path / "empties.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n" * 5000))
    audit = _load(path, limits={"max_rejected_rows": 100})
    assert len(audit.rejected) == 101
    summary = audit.rejected.iloc[-1]
    assert summary.source_line == 101
    assert "4900 more value(s) rejected between lines 101 and 5000" in summary.reason
    assert audit.sources.values_read.tolist() == [5000]
    assert audit.sources.rejected.tolist() == [5000]
    _accounted(audit)


def test_a_gzip_bomb_is_one_rejected_value_not_memory(tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    with gzip.open(path, "wb") as out:
        out.write(_line(make_receipt()).encode() + b"\n")
        out.write(b"\0" * (50 << 20))
        out.write(b"\n" + _line(make_receipt()).encode() + b"\n")
    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        # The ratio limit would stop reading at the zeros; this is about the value limit.
        f"limits = {{'max_value_bytes': 1 << 20, 'max_gzip_ratio': 10_000}}\n"
        f"a = ea.load({str(path)!r}, progress=False, limits=limits)\n"
        # VmHWM is this process's own peak: ru_maxrss would also count the forking
        # test process's size, which exec carries over on Linux.
        "status = open('/proc/self/status').read()\n"
        "peak = int(status.split('VmHWM:')[1].split()[0]) // 1024\n"
        "print(len(a.receipts), a.rejected.source_line.tolist(), peak)\n"
        "print(a.rejected.reason.iloc[0])"
    )
    run = _in_child(code)
    assert run.returncode == 0, run.stderr[-2000:]
    first, reason = run.stdout.strip().split("\n")
    head, peak = first.rsplit(" ", 1)
    rows, lines = head.split(" ", 1)
    assert rows == "2" and lines == "[2]"
    assert "larger than max_value_bytes" in reason
    assert int(peak) < 400, f"peak {peak} MB for 50 MB of zeros"


def test_a_file_larger_than_max_file_bytes_is_read_up_to_it(tmp_path):
    path = tmp_path / "big.jsonl"
    line = _line(make_receipt()) + "\n"
    path.write_text(line * 100)
    audit = _load(path, limits={"max_file_bytes": len(line) * 10 + 5})
    assert len(audit.receipts) == 10
    reasons = audit.rejected.reason.tolist()
    assert any("larger than max_file_bytes" in reason for reason in reasons)
    _accounted(audit)


def test_limits_are_checked(tmp_path):
    with pytest.raises(ea.AuditError, match="unknown reading limit"):
        ea.load(tmp_path, limits={"max_dept": 3})
    with pytest.raises(ea.AuditError, match="positive integer"):
        ea.load(tmp_path, limits={"max_depth": 0})


# -- damaged gzip keeps what zcat keeps -------------------------------------------------------


def _inflate_until_damage(packed: bytes) -> bytes:
    """Everything zlib decompresses before it finds the damage, fed one byte at a time."""
    decompressor = zlib.decompressobj(wbits=31)
    out = []
    for index in range(len(packed)):
        try:
            out.append(decompressor.decompress(packed[index : index + 1]))
        except zlib.error:
            break
    return b"".join(out)


@pytest.mark.parametrize("where", [0.3, 0.5, 0.8])
def test_damage_in_a_small_gzip_keeps_every_line_before_it(tmp_path, where):
    text = "".join(_line(make_receipt(query=f"q{i}")) + "\n" for i in range(300))
    packed = bytearray(gzip.compress(text.encode()))
    cut = int(len(packed) * where)
    packed[cut : cut + 8] = b"\xff" * 8
    path = tmp_path / "damaged.jsonl.gz"
    path.write_bytes(bytes(packed))
    before = _inflate_until_damage(bytes(packed))
    complete = before[: before.rfind(b"\n") + 1].split(b"\n")[:-1]
    assert complete, "some lines decompress before the damage"
    original = text.encode().split(b"\n")
    expected = []
    for line, written in zip(complete, original, strict=False):
        if line != written:
            break  # the damage may decode into garbage before zlib notices
        expected.append(json.loads(line)["query"])
    audit = _load(path)
    assert audit.receipts["query"].tolist()[: len(expected)] == expected
    assert audit.sources.values_read.iloc[0] >= len(complete)
    assert any("gzip" in reason for reason in audit.rejected.reason)
    _accounted(audit)


def test_the_salvage_keeps_output_up_to_the_broken_byte():
    data = zlib.compress(b"".join(b"line %d\n" % i for i in range(2000)), wbits=31)
    broken = data[: len(data) // 2] + b"\xff" * 16 + data[len(data) // 2 + 16 :]
    decompressor = zlib.decompressobj(wbits=31)
    salvaged = b"".join(salvage(decompressor, broken))
    assert salvaged.startswith(b"line 0\nline 1\n")
    assert len(salvaged) > 1000


# -- every path agrees --------------------------------------------------------------------------


def test_a_damaged_line_costs_only_itself_in_bulk(tmp_path):
    lines = [_line(make_receipt(query=f"q{i}")) for i in range(500)]
    lines[250] = lines[250][:-10]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert rows_by_path(path) == {"columnar": 499, "exact": 0}
    audit = _load(path)
    assert audit.rejected.source_line.tolist() == [251]
    exact = read_exactly(path)
    assert [item.source_line for item in exact if hasattr(item, "value")] == [
        line for line in range(1, 501) if line != 251
    ]


# -- bytes that are not UTF-8 ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["log.jsonl", "log.jsonl.gz", "log.json"])
def test_a_line_that_is_not_utf8_is_rejected_naming_the_byte_and_the_rest_loads(tmp_path, name):
    """A byte that is not UTF-8, in a value, in a key or as a raw surrogate, among
    thousands of good lines: each such line is rejected with the byte and its column,
    every other line loads (once a key that was not UTF-8 stopped the whole load)."""
    pretty = name == "log.json"
    values = [make_receipt(query=f"q{i} \u00e9\u3131") for i in range(3_000)]
    texts = [
        (json.dumps(value, indent=2, ensure_ascii=False) if pretty else _line(value)).encode()
        for value in values
    ]
    bad = {100: (b'"q100 ', b'"q\xff100 '), 1_500: (b'"query"', b'"qu\xc3ery"')}
    bad[2_900] = (b'"q2900 ', b'"q\xed\xa0\x802900 ')
    for index, (old, new) in bad.items():
        assert old in texts[index]
        texts[index] = texts[index].replace(old, new, 1)
    data = b"\n".join(texts) + b"\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    audit = _load(path)
    first_lines = [1 + sum(text.count(b"\n") + 1 for text in texts[:index]) for index in bad]
    assert audit.rejected.source_line.tolist() == first_lines
    reasons = audit.rejected.reason.tolist()
    for reason, index, first, byte in zip(
        reasons, bad, first_lines, ("0xFF", "0xC3", "0xED"), strict=True
    ):
        assert f"invalid UTF-8: byte {byte}" in reason
        before = texts[index][: texts[index].index(bytes.fromhex(byte[2:]))]
        column = len(before.rsplit(b"\n", 1)[-1].decode()) + 1
        line = first + before.count(b"\n")
        where = f"line {line}, " if pretty else ""
        assert reason.endswith(f"({where}column {column})")
    good = [index for index in range(len(values)) if index not in bad]
    assert audit.receipts["query"].tolist() == [values[index]["query"] for index in good]
    _accounted(audit)


def test_a_byte_that_is_not_utf8_in_an_array_on_one_line_is_placed_in_that_line(tmp_path):
    """Elements of one array written on one line: each holding a byte that is not UTF-8
    is rejected with the column of that byte in the line, not in the element."""
    items = [_line(make_receipt(query=f"q{i} \u00e9")).encode() for i in range(2_000)]
    for index in (7, 1_500):
        items[index] = items[index].replace(
            f'"q{index} '.encode(), f'"q\xff{index} '.encode("latin-1")
        )
    path = tmp_path / "array.json"
    data = b"[" + b", ".join(items) + b"]\n"
    path.write_bytes(data)
    audit = _load(path)
    assert len(audit.receipts) == 1_998
    assert audit.rejected.source_line.tolist() == [1, 1]
    at = data.index(b"\xff")
    columns = [at, data.index(b"\xff", at + 1)]
    for reason, column in zip(audit.rejected.reason, columns, strict=True):
        before = data[:column].decode("utf-8", "surrogateescape")
        assert reason.endswith(f"byte 0xFF (invalid start byte) (line 1, column {len(before) + 1})")
    _accounted(audit)
