"""Limits that bound time as well as memory: each hostile shape on a real file.

Shapes that once took minutes or hung (a long array read in quadratic time,
a gzip of blank lines, a gzip bomb, nested YAML aliases, a policy of 200,000
domains) are read here within a bound far below what the old paths took;
the slow ones run in a child process with a timeout, so that a hang fails
the test instead of stopping the suite.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import accounted as _accounted
from conftest import make_receipt, rows_by_path, without_columnar
from conftest import quiet_load as _load
from exact_values import read_exactly

import explicit_audit as ea
from explicit_audit._core.records import RawValue
from explicit_audit.errors import RejectedRowsWarning
from explicit_audit.reading.collect import values_rejected
from explicit_audit.reading.content import GZIP_RATIO_FLOOR
from explicit_audit.reading.limits import Limits

ROOT = Path(__file__).parent.parent
DECISIONS = (ROOT / "data" / "decisions" / "2026-01_baseline.jsonl").read_text().splitlines()


def _in_child(code: str, timeout: float) -> str:
    """Run code in a fresh interpreter within ``timeout`` seconds; its output."""
    try:
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {timeout} s")
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def _decisions(n: int) -> list[str]:
    lines = []
    for i in range(n):
        value = json.loads(DECISIONS[i % len(DECISIONS)])
        value["decision_id"] = f"d-{i}"
        lines.append(json.dumps(value))
    return lines


def _seconds(path) -> float:
    start = time.perf_counter()
    _load(path)
    return time.perf_counter() - start


# -- the array reader is linear ------------------------------------------------------------------


def test_an_array_with_elements_at_column_0_reads_in_linear_time(tmp_path):
    lines = _decisions(8_000)
    array = tmp_path / "array.json"
    array.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    jsonl = tmp_path / "same.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    audit = _load(array)
    assert len(audit.decisions) == 8_000 and audit.rejected.empty
    assert audit.decisions.source_line.tolist() == list(range(2, 8_002))
    # The quadratic search took about 60 times the JSON Lines reading here.
    ratio = min(_seconds(array) for _ in range(2)) / min(_seconds(jsonl) for _ in range(2))
    assert ratio < 25, f"the array takes {ratio:.1f} times the JSON Lines file"


def _exact_lines(path) -> list[int]:
    return [item.source_line for item in read_exactly(path) if isinstance(item, RawValue)]


@pytest.mark.parametrize("indent", [0, 2, 4])
def test_an_array_with_one_element_per_line_start_is_read_in_bulk_with_its_lines(tmp_path, indent):
    receipts = [make_receipt(query=f"q{i}") for i in range(50)]
    path = tmp_path / "array.json"
    if indent:
        path.write_text(json.dumps(receipts, indent=indent) + "\n")
    else:
        path.write_text("[\n" + ",\n".join(json.dumps(r) for r in receipts) + "\n]\n")
    audit = _load(path)
    assert audit.rejected.empty
    assert audit.receipts["query"].tolist() == [f"q{i}" for i in range(50)]
    assert audit.receipts.source_line.tolist() == _exact_lines(path)
    assert rows_by_path(path) == {"columnar": 50, "exact": 0}


def test_an_array_on_one_line_is_read_in_bulk_by_its_elements(tmp_path):
    tricky = ['a, b], {"c": [1, 2]}', "back\\slash\\", 'quote \\" , ]', "é, 레이더 ]}"]
    records = [make_receipt(query=tricky[index % 4] + str(index)) for index in range(300)]
    path = tmp_path / "array.json"
    path.write_text("[" + ", ".join(json.dumps(record) for record in records) + "]")
    assert rows_by_path(path) == {"columnar": 300, "exact": 0}
    audit = _load(path)
    _accounted(audit)
    assert audit.receipts["query"].tolist() == [record["query"] for record in records]
    assert set(audit.receipts.source_line) == {1} and audit.rejected.empty
    exactly = read_exactly(path)
    assert [item.value for item in exactly] == records


def test_a_nested_array_of_objects_at_column_0_is_not_split(tmp_path):
    # An element's own array, its objects written at column 0 like the elements.
    path = tmp_path / "nested.json"
    first = json.dumps(make_receipt(query="a"))[:-1]
    path.write_text(
        "[\n" + first + ', "ctx": [\n{"x": 1},\n{"y": 2}\n]},\n'
        + json.dumps(make_receipt(query="b")) + "\n]\n"
    )  # fmt: skip
    audit = _load(path)
    assert audit.rejected.empty
    assert audit.receipts["query"].tolist() == ["a", "b"]
    assert audit.receipts.source_line.tolist() == _exact_lines(path) == [2, 6]


def test_a_damaged_element_of_a_column_0_array_costs_only_itself(tmp_path):
    lines = [json.dumps(make_receipt(query=f"q{i}")) for i in range(6)]
    lines[3] = lines[3][:40]  # cut short
    path = tmp_path / "array.json"
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q1", "q2", "q4", "q5"]
    assert audit.rejected.source_line.tolist() == [5]
    _accounted(audit)


def test_an_array_missing_a_comma_is_not_read_as_values(tmp_path):
    lines = [json.dumps(make_receipt(query=f"q{i}")) for i in range(3)]
    path = tmp_path / "array.json"
    path.write_text("[\n" + lines[0] + ",\n" + lines[1] + "\n" + lines[2] + "\n]\n")
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q1", "q2"]
    # The missing comma is not made good: the array's damage is reported as before.
    assert audit.rejected.source_line.tolist() == [1, 5]
    assert "the array is never closed" in audit.rejected.reason.iloc[0]


# -- blank lines ----------------------------------------------------------------------------------


def test_a_gzip_of_blank_lines_reads_in_seconds(tmp_path):
    path = tmp_path / "blank.jsonl.gz"
    receipt = json.dumps(make_receipt()).encode()
    # 20 million lines of " \n", with a record after each 5 million.
    path.write_bytes(gzip.compress((b" \n" * 5_000_000 + receipt + b"\n") * 4, 9))
    code = (
        "import time, warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "start = time.perf_counter()\n"
        f"a = ea.load({str(path)!r}, progress=False, limits={{'max_gzip_ratio': 10_000}})\n"
        "print(a.receipts.source_line.tolist(), len(a.rejected), time.perf_counter() - start)"
    )
    lines, rejected, seconds = _in_child(code, timeout=120).rsplit(" ", 2)
    assert lines == "[5000001, 10000002, 15000003, 20000004]" and rejected == "0"
    assert float(seconds) < 60  # the old path took about 40 s per million lines


def test_blank_and_white_space_lines_between_records_keep_their_lines(tmp_path):
    path = tmp_path / "spaced.jsonl"
    receipt = json.dumps(make_receipt())
    path.write_text(f"  \n{receipt}\n \t{receipt}\n\t \n\n{receipt}  \n \n")
    audit = _load(path)
    assert audit.receipts.source_line.tolist() == [2, 3, 6]
    _accounted(audit)


# -- values no kind claims ----------------------------------------------------------------------


def test_a_million_lines_no_kind_claims_are_rejected_and_counted(tmp_path):
    path = tmp_path / "junk.jsonl"
    receipt = json.dumps(make_receipt())
    path.write_text(f"{receipt}\n" + "{}\n" * 1_000_000 + '{"a": 1}\n' + f"{receipt}\n")
    code = (
        "import time, warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "start = time.perf_counter()\n"
        f"a = ea.load({str(path)!r}, progress=False)\n"
        "s = a.sources.iloc[0]\n"
        "print(a.receipts.source_line.tolist(), s.values_read, s.loaded, s.rejected,\n"
        "      len(a.rejected), a.rejected.source_line.iloc[-1], time.perf_counter() - start)\n"
        "print(a.rejected.reason.iloc[-1])"
    )
    first, summary = _in_child(code, timeout=180).strip().split("\n")
    *counts, seconds = first.rsplit(" ", 6)
    assert counts == ["[1, 1000003]", "1000003", "2", "1000001", "100001", "100002"]
    assert "900001 more value(s) rejected between lines 100002 and 1000002" in summary
    assert float(seconds) < 120  # each distinct line is judged once


def _rejections_built(monkeypatch) -> list[int]:
    """The line of each rejection built from now on (the list fills as they are)."""
    from explicit_audit._core.records import Rejection

    built = []
    build = Rejection.__init__

    def counted(self, *args) -> None:
        built.append(args[1])
        build(self, *args)

    monkeypatch.setattr(Rejection, "__init__", counted)
    return built


def test_rejections_past_the_cap_are_counted_without_being_built(tmp_path, monkeypatch):
    built = _rejections_built(monkeypatch)
    path = tmp_path / "junk.jsonl.gz"
    receipt = json.dumps(make_receipt())
    lines = [receipt, *(["{}"] * 5_000), '{"a": 1}', "not json", *(["{}"] * 3), receipt]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    audit = _load(path, limits={"max_rejected_rows": 10})
    _accounted(audit)
    assert audit.receipts.source_line.tolist() == [1, 5_007]
    assert audit.sources.iloc[0][["values_read", "loaded", "rejected"]].tolist() == [5007, 2, 5005]
    assert audit.rejected.source_line.tolist() == [*range(2, 12), 12]
    assert "4995 more value(s) rejected between lines 12 and 5006" in audit.rejected.reason.iloc[-1]
    # Rows are built for the ten kept, the value read exactly, a verdict per distinct text
    # and the summary row: not one per value past the cap.
    assert len(built) < 30, len(built)


def test_the_warning_and_summary_count_every_value_past_the_cap(tmp_path):
    """The summary row stands for the values it names: the warning and ``summary`` count
    5,005 values rejected, not the 11 rows kept."""
    path = tmp_path / "junk.jsonl"
    path.write_text("{}\n" * 5_005)
    with pytest.warns(RejectedRowsWarning, match=r"^5005 input value\(s\) could not be loaded"):
        audit = ea.load(path, progress=False, limits={"max_rejected_rows": 10})
    assert len(audit.rejected) == 11
    run = subprocess.run(
        [sys.executable, "-m", "explicit_audit", "summary", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "\n5005 value(s) could not be loaded;" in run.stdout, run.stdout
    # Rows that only look like the summary row (another kind, or a count not at the start)
    # are one value each.
    assert values_rejected([("unknown", "3 more value(s) rejected between lines 1 and 4")]) == 3
    assert values_rejected([("receipts", "3 more value(s) rejected between lines 1 and 4")]) == 1
    assert values_rejected([("unknown", "x 3 more value(s) rejected between lines")]) == 1


def test_tiny_values_past_the_cap_are_judged_once_and_counted(tmp_path, monkeypatch):
    """Lines that are JSON but not objects (``1``, ``null``) or not JSON: each distinct
    text is judged once, the first rejections are kept with their lines and reasons, and
    those past max_rejected_rows are counted in one summary row with their line range."""
    built = _rejections_built(monkeypatch)
    path = tmp_path / "tiny.jsonl.gz"
    receipt = json.dumps(make_receipt())
    tiny = ["1", "null", '"x"', "[]", "tru"] * 1_000
    path.write_bytes(gzip.compress(("\n".join([receipt, *tiny, receipt]) + "\n").encode()))
    audit = _load(path, limits={"max_rejected_rows": 10})
    _accounted(audit)
    assert audit.receipts.source_line.tolist() == [1, 5_002]
    assert audit.sources.iloc[0][["values_read", "loaded", "rejected"]].tolist() == [5002, 2, 5000]
    kept = audit.rejected.iloc[:10]
    assert kept.source_line.tolist() == list(range(2, 12))
    assert kept.raw.tolist() == tiny[:10]
    assert kept.reason.iloc[0] == "expected a JSON object (a record), got a JSON number"
    assert kept.reason.iloc[4].startswith("invalid JSON: ")
    assert "4990 more value(s) rejected between lines 12 and 5001" in audit.rejected.reason.iloc[-1]
    assert len(audit.rejected) == 11
    # Rows are built for the ten kept, a verdict per distinct text and the summary row.
    assert len(built) < 30, len(built)


def test_a_gzip_of_tiny_values_is_read_within_bounded_memory(tmp_path):
    """Two million lines ``1`` (4 MB, one piece of bytes) are rejected, counted past the
    cap, with the peak memory of a piece of a few hundred thousand lines."""
    path = tmp_path / "tiny.jsonl.gz"
    path.write_bytes(gzip.compress(b"1\n" * 2_000_000, 9))
    code = (
        "import resource, warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "def rss():\n"
        "    with open('/proc/self/statm') as f:\n"
        "        return int(f.read().split()[1]) * resource.getpagesize()\n"
        "before = rss()\n"
        f"a = ea.load({str(path)!r}, progress=False, threads=1)\n"
        "with open('/proc/self/status') as f:\n"
        "    peak = int(f.read().split('VmHWM:')[1].split()[0]) * 1024\n"
        "s = a.sources.iloc[0]\n"
        "print(s.values_read, s.rejected, len(a.rejected), (peak - before) >> 20)"
    )
    values, rejected, rows, megabytes = _in_child(code, timeout=300).split()
    assert (values, rejected, rows) == ("2000000", "2000000", "100001")
    assert int(megabytes) < 250  # a value and a row built per line took 800 MB


def test_a_piece_of_json_lines_holds_at_most_piece_lines_lines():
    from explicit_audit.reading.content import PIECE_LINES, BytesReader

    data = b"".join(b"%d\n" % (index % 10) for index in range(2 * PIECE_LINES + 5))
    pieces = list(BytesReader(None, Limits(), name="tiny.jsonl", data=data))
    assert [piece.first_line for piece in pieces] == [1, PIECE_LINES + 1, 2 * PIECE_LINES + 1]
    assert [piece.data.count(b"\n") for piece in pieces] == [PIECE_LINES, PIECE_LINES, 5]
    assert b"".join(piece.data for piece in pieces) == data


# -- gzip decompression ratio ---------------------------------------------------------------------


def test_a_gzip_past_the_decompression_ratio_is_a_file_rejection_naming_it(tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    receipt = json.dumps(make_receipt()).encode() + b"\n"
    path.write_bytes(gzip.compress(receipt * 3 + b" \n" * (40 << 20) + receipt, 9))
    audit = _load(path)
    assert audit.receipts.source_line.tolist() == [1, 2, 3]
    file_rows = audit.rejected[audit.rejected.kind == "file"]
    (reason,) = file_rows.reason
    assert file_rows.source_file.tolist() == [str(path)]
    assert "more than max_gzip_ratio (200)" in reason and "expands" in reason
    ratio = int(reason.split("expands ")[1].split(" times")[0])
    assert ratio > 200
    _accounted(audit)


def test_a_gzip_under_the_ratio_floor_is_read_whole(tmp_path):
    path = tmp_path / "small.jsonl.gz"
    receipt = json.dumps(make_receipt()).encode() + b"\n"
    lines = (GZIP_RATIO_FLOOR // 2) // len(receipt)
    path.write_bytes(gzip.compress(receipt * lines, 9))
    audit = _load(path)
    assert len(audit.receipts) == lines and audit.rejected.empty


def test_the_ratio_limit_can_be_raised(tmp_path):
    path = tmp_path / "blank.jsonl.gz"
    receipt = json.dumps(make_receipt()).encode() + b"\n"
    path.write_bytes(gzip.compress(b" \n" * (40 << 20) + receipt, 9))
    assert _load(path).receipts.empty
    audit = _load(path, limits={"max_gzip_ratio": 2_000})
    assert audit.receipts.source_line.tolist() == [(40 << 20) + 1] and audit.rejected.empty


# -- policy YAML --------------------------------------------------------------------------------

_POLICY_HEAD = (
    "escalation: {context_char_cap_4b: 1, escalate_on_multi_doc_count: 1, "
    "confidence_threshold: 0.5}\n"
    "fallback_domain: {name: general, high_impact: false}\n"
    "risk_flags: {}\n"
)


def _nested_merge_keys() -> str:
    inner = "{k: 1}"
    for level in range(8):
        copies = ", ".join([f"*a{level}"] * 8)
        inner = f"{{<<: [&a{level} {inner}, {copies}]}}"
    return "policy_id: merged\n" + _POLICY_HEAD + "subject_domains: {d: " + inner + "}\n"


def _nested_aliases() -> str:
    lines = ["policy_id: laughs", _POLICY_HEAD.rstrip("\n"), "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\nsubject_domains: {}\n"


@pytest.mark.parametrize("text", [_nested_merge_keys(), _nested_aliases()], ids=["merge", "alias"])
def test_a_yaml_alias_bomb_is_a_policy_error_at_once(tmp_path, text):
    assert len(text) < 800
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "bomb.yaml").write_text(text)
    (folder / "ok.yaml").write_text("policy_id: ok\n" + _POLICY_HEAD + "subject_domains: {}\n")
    code = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        f"a = ea.load({str(folder)!r}, progress=False)\n"
        "print(list(a.policies), a.rejected.source_file.tolist(), a.rejected.reason.iloc[0])"
    )
    out = _in_child(code, timeout=60)
    assert out.startswith(f"['ok'] ['{folder / 'bomb.yaml'}'] ")
    assert "its aliases would expand it by" in out and "more than the 100000" in out


def test_a_policy_with_200000_domains_replays_in_seconds(tmp_path):
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text("\n".join(DECISIONS[:50]) + "\n")
    # Built in code: reading 200,000 domains from YAML is PyYAML's own time.
    code = (
        "import time, warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "domains = {f'd{i}': {'high_impact': bool(i % 2)} for i in range(200_000)}\n"
        "policy = ea.Policy.from_dict({'policy_id': 'baseline', 'escalation': {\n"
        "    'context_char_cap_4b': 1, 'escalate_on_multi_doc_count': 1,\n"
        "    'confidence_threshold': 0.5}, 'subject_domains': domains,\n"
        "    'fallback_domain': {'name': 'general', 'high_impact': False}, 'risk_flags': {}})\n"
        f"a = ea.load({str(decisions)!r}, progress=False)\n"
        "start = time.perf_counter()\n"
        "replayed = ea.replay(a.decisions, policy)\n"
        "print(len(policy.subject_domains), len(replayed), time.perf_counter() - start)"
    )
    domains, rows, seconds = _in_child(code, timeout=300).split()
    assert (domains, rows) == ("200000", "50")
    assert float(seconds) < 30  # the list.index search took longer than 300 s


# -- max_value_bytes applies to each element of an array ------------------------------------------


@pytest.mark.parametrize("indent", [0, 2])
def test_an_array_larger_than_max_value_bytes_loads_element_by_element(tmp_path, indent):
    lines = _decisions(3_000)
    path = tmp_path / "decisions.json"
    if indent:
        path.write_text(json.dumps([json.loads(line) for line in lines], indent=indent) + "\n")
    else:
        path.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    whole = _load(path)
    limited = _load(path, limits={"max_value_bytes": 64 << 10})
    assert path.stat().st_size > 20 * (64 << 10)
    assert limited.rejected.empty and len(limited.decisions) == 3_000
    assert limited.decisions.source_line.tolist() == whole.decisions.source_line.tolist()
    assert limited.decisions.decision_id.tolist() == [f"d-{i}" for i in range(3_000)]
    _accounted(limited)


def test_an_array_pretty_printed_with_no_indent_is_one_value_past_max_value_bytes(tmp_path):
    # json.dumps(indent=0): the objects nested in an element start lines at column 0 too, so
    # the lines do not tell where an element ends. The array was cut inside its elements:
    # nested objects read as values of their own, the rest one value too large (10 rows
    # for 3 receipts).
    data = ROOT / "data" / "receipts" / "operator_receipts.jsonl"
    receipt = json.loads(data.read_text(encoding="utf-8").splitlines()[0])
    assert any(
        isinstance(value, list) and value and isinstance(value[0], dict)
        for value in receipt.values()
    )  # objects nested in a list: lines of their own
    path = tmp_path / "receipts.json"
    path.write_text(json.dumps([receipt] * 3, indent=0) + "\n", encoding="utf-8")
    limited = _load(path, limits={"max_value_bytes": path.stat().st_size // 2})
    assert limited.rejected["source_line"].tolist() == [1]
    assert "larger than max_value_bytes" in limited.rejected["reason"].iloc[0]
    assert limited.receipts.empty
    _accounted(limited)
    assert len(_load(path).receipts) == 3  # within the bound, read as ever


def test_an_element_larger_than_max_value_bytes_is_rejected_alone(tmp_path):
    lines = _decisions(2_000)
    big = json.loads(lines[1_000])
    big["padding"] = "x" * (80 << 10)
    lines[1_000] = json.dumps(big)
    path = tmp_path / "decisions.json"
    path.write_text("[\n" + ",\n".join(lines) + "\n]\n" + lines[0] + "\n")
    audit = _load(path, limits={"max_value_bytes": 64 << 10})
    assert len(audit.decisions) == 2_000  # 1,999 elements and the value after the array
    assert audit.rejected.source_line.tolist() == [1_002]
    assert "larger than max_value_bytes" in audit.rejected.reason.iloc[0]
    assert audit.decisions.source_line.tolist()[-1] == 2_003
    _accounted(audit)


# -- extra (logger) columns ---------------------------------------------------------------------


def _unique_keys(path, n: int, every: int = 1) -> None:
    """Receipts with a logger's ``host``, and every ``every``-th a key of its own (``k7``)."""
    lines = []
    for index in range(n):
        record = {"host": f"h{index % 3}", **make_receipt(query=f"q {index}")}
        if index % every == 0:
            record[f"k{index}"] = index
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")


def test_keys_past_max_extra_columns_are_kept_as_json_text(tmp_path):
    import explicit_audit as ea

    path = tmp_path / "unique.jsonl"
    _unique_keys(path, 600)
    with pytest.warns(ea.ExtraColumnsWarning, match="max_extra_columns \\(256\\)"):
        audit = _load(path)
    _accounted(audit)
    receipts = audit.receipts
    assert len(receipts) == 600 and audit.rejected.empty
    columns = [c for c in receipts.columns if c == "host" or (c[0] == "k" and c[1:].isdigit())]
    assert columns == ["host", *(f"k{i}" for i in range(255))]
    assert receipts.columns[-1] == "extra_json" and receipts["extra_json"].dtype == "str"
    assert receipts["extra_json"].iloc[:255].isna().all()
    later = [json.loads(text) for text in receipts["extra_json"].iloc[255:]]
    assert later == [{f"k{i}": i} for i in range(255, 600)]  # every key kept, none dropped
    assert receipts["k3"].dtype == "Int64" and receipts["k3"].iloc[3] == 3


def test_extra_columns_are_the_same_whichever_path_read_the_values(tmp_path):
    import pandas as pd

    from explicit_audit._core import registry

    path = tmp_path / "mixed.jsonl"
    # The lines with host alone are parsed in bulk; those with a key of their own, one by one.
    _unique_keys(path, 400, every=7)
    limits = {"max_extra_columns": 20}
    with pytest.warns(UserWarning, match="extra_json"):
        both = _load(path, limits=limits)
    assert rows_by_path(path)["columnar"] > 0
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds), pytest.warns(UserWarning, match="extra_json"):
        exactly = _load(path, limits=limits)
    pd.testing.assert_frame_equal(both.receipts, exactly.receipts)
    assert list(both.receipts.columns[-21:]) == [
        "host",
        *(f"k{7 * i}" for i in range(19)),
        "extra_json",
    ]
    assert json.loads(both.receipts["extra_json"].iloc[399]) == {"k399": 399}


def test_lines_each_with_a_key_of_their_own_load_in_linear_time(tmp_path):
    path = tmp_path / "unique.jsonl"
    _unique_keys(path, 6_000)
    code = (
        "import time, warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "start = time.perf_counter()\n"
        f"a = ea.load({str(path)!r}, progress=False)\n"
        "print(a.receipts.shape[0], len(a.receipts.columns) < 300, time.perf_counter() - start)"
    )
    rows, narrow, seconds = _in_child(code, timeout=120).split()
    assert (rows, narrow) == ("6000", "True")
    assert float(seconds) < 15  # a column per key: 12 s for 4,000 lines, 157 s for 16,000


@pytest.mark.parametrize("limit", [256, 1])
def test_a_key_named_extra_json_is_kept_in_that_text_never_as_a_column(tmp_path, limit):
    import pandas as pd

    import explicit_audit as ea
    from explicit_audit._core import registry

    path = tmp_path / "named.jsonl"
    values = [3, "text", {"nested": [1]}, None, 2.5] * 20  # groups of lines read in bulk too
    lines = [
        json.dumps({"host": "h", "extra_json": value, **make_receipt(query=f"q {index}")})
        for index, value in enumerate(values)
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(ea.ExtraColumnsWarning, match="or a key named 'extra_json'"):
        audit = _load(path, limits={"max_extra_columns": limit})
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds), pytest.warns(ea.ExtraColumnsWarning):
        exactly = _load(path, limits={"max_extra_columns": limit})
    pd.testing.assert_frame_equal(audit.receipts, exactly.receipts)
    receipts = audit.receipts
    assert list(receipts.columns).count("extra_json") == 1 and receipts.columns[-1] == "extra_json"
    assert receipts["extra_json"].dtype == "str"
    texts = [text if isinstance(text, str) else None for text in receipts["extra_json"]]
    assert texts[:5] == [
        '{"extra_json":3}',  # as written: not 3.0 beside the 2.5 of other lines
        '{"extra_json":"text"}',
        '{"extra_json":{"nested":[1]}}',
        None,  # a null is no value, as for any key past the limit
        '{"extra_json":2.5}',
    ]
    assert texts[5:] == texts[:95]
    assert receipts["host"].tolist() == ["h"] * 100  # the one other key is still a column


def _long_rejections(folder: Path) -> None:
    """One rejection of each stage, each value about 800 characters long, in a JSON Lines
    log, a pretty log and a policy."""
    pad = "x" * 800
    wrong_type = make_receipt(query=pad, withheld={"audienceId": "peer", "count": "6"})
    lines = [
        json.dumps(wrong_type),
        json.dumps({"not_a_record": pad}),  # no kind claims it
        '{"query": "' + pad + '", "query": "again"}',  # a repeated key
        '{"query": "' + pad + '", ',  # not JSON
    ]
    (folder / "log.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pretty = [json.dumps(wrong_type, indent=2), json.dumps({"not_a_record": pad}, indent=2)]
    (folder / "log.json").write_text("\n".join(pretty) + "\n", encoding="utf-8")
    (folder / "bad.yaml").write_text(f"policy_id: p\ndescription: {pad}\nnope: [\n")


@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize("chars", [20, 1000])
def test_every_rejection_keeps_excerpt_chars_of_its_text_on_every_path(tmp_path, engine, chars):
    if engine == "dask":
        pytest.importorskip("dask")
    _long_rejections(tmp_path)
    audit = _load(tmp_path, engine=engine, limits=Limits(excerpt_chars=chars)).compute()
    rejected = audit.rejected
    assert len(rejected) == 7, rejected[["source_file", "source_line", "reason"]]
    lengths = rejected["raw"].str.len()
    if chars == 20:
        assert (lengths == 20).all(), rejected[["source_file", "source_line", "raw"]]
    else:  # each value is longer than the default 300 characters: kept whole, to the limit
        assert (lengths > 300).all(), rejected[["source_file", "source_line", "raw"]]
