"""The reading core on real files: formats, provenance, and every kind of bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import accounted as _accounted
from conftest import make_receipt, without_columnar
from conftest import quiet_load as _load
from exact_values import read_exactly

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit._core.records import RawValue, Rejection
from explicit_audit.reading.content import PIECE_BYTES
from explicit_audit.reading.sources import scan_sources

FIXTURES = Path(__file__).parent / "data" / "engram"


def _line(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def test_jsonl_values_keep_file_and_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(f"{_line(make_receipt())}\n\n{_line(make_receipt(query='second'))}\n", "utf-8")
    items = read_exactly(path)
    assert [item.source_line for item in items] == [1, 3]
    assert all(isinstance(item, RawValue) for item in items)
    assert items[1].value["query"] == "second"


def test_concatenated_pretty_printed_values_start_on_their_own_lines(tmp_path):
    path = tmp_path / "recall.json"
    first = json.dumps(make_receipt(), indent=2)
    second = json.dumps(make_receipt(query="b"), indent=2)
    path.write_text(first + "\n" + second + "\n", "utf-8")
    items = read_exactly(path)
    assert [item.source_line for item in items] == [1, first.count("\n") + 2]


def test_array_elements_get_their_own_lines(tmp_path):
    path = tmp_path / "array.json"
    path.write_text(
        "[\n" + _line(make_receipt()) + ",\n\n" + _line(make_receipt(query="x")) + "\n]\n"
    )
    audit = _load(path)
    assert audit.receipts.source_line.tolist() == [2, 4]
    _accounted(audit)


def test_engram_recall_log_loads_with_nothing_rejected():
    audit = _load(FIXTURES / "recall_log.json")
    assert len(audit.receipts) == 12
    assert audit.rejected.empty
    starts = [
        number
        for number, text in enumerate(
            (FIXTURES / "recall_log.json").read_text("utf-8").splitlines(), 1
        )
        if text == "{"
    ]
    assert audit.receipts.source_line.tolist() == starts


def test_invalid_json_line_is_rejected_with_its_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(f'{_line(make_receipt())}\n{{"schemaVersion": 0,\n{_line(make_receipt())}\n')
    with pytest.warns(ea.RejectedRowsWarning, match=r"log.jsonl:2: invalid JSON"):
        audit = ea.load(path, progress=False)
    assert audit.receipts.source_line.tolist() == [1, 3]
    row = audit.rejected.iloc[0]
    assert (row.source_line, row.kind) == (2, "unknown")
    assert "(column " in row.reason and row.raw.startswith('{"schemaVersion"')
    _accounted(audit)


def test_broken_value_in_a_concatenated_log_does_not_lose_the_next_ones(tmp_path):
    path = tmp_path / "recall.json"
    good = json.dumps(make_receipt(), indent=2)
    broken = good.replace('"scope": "search",', '"scope": "search"', 1)
    path.write_text("\n".join([good, broken, good]) + "\n", "utf-8")
    audit = _load(path)
    height = good.count("\n") + 1
    assert audit.receipts.source_line.tolist() == [1, 2 * height + 1]
    assert audit.rejected.source_line.tolist() == [height + 1]
    assert "line" in audit.rejected.reason.iloc[0]


def test_strict_mode_raises_naming_file_and_line(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(f"{_line(make_receipt())}\nnot json\n")
    with pytest.raises(ea.InputError, match=r"log.jsonl:2: invalid JSON") as raised:
        ea.load(path, strict=True, progress=False)
    assert raised.value.source_line == 2


def test_truncated_gzip_keeps_what_was_read_and_rejects_the_cut_value(tmp_path):
    lines = "".join(_line(make_receipt(query=f"q{i}")) + "\n" for i in range(40)).encode()
    whole = gzip.compress(lines)
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    audit = _load(path)
    assert 0 < len(audit.receipts) < 40
    assert audit.receipts.source_line.tolist() == list(range(1, len(audit.receipts) + 1))
    reasons = audit.rejected.reason.tolist()
    assert any("gzip stream is truncated" in reason for reason in reasons)
    _accounted(audit)


def test_gzip_jsonl_loads_like_plain(tmp_path):
    text = "".join(_line(make_receipt(query=f"q{i}")) + "\n" for i in range(5))
    (tmp_path / "a.jsonl").write_text(text)
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    plain = _load(tmp_path / "a.jsonl").receipts.drop(columns="source_file")
    packed = _load(tmp_path / "b.jsonl.gz").receipts.drop(columns="source_file")
    assert plain.equals(packed)


def test_invalid_utf8_is_rejected_per_value(tmp_path):
    bad = _line(make_receipt(query="caf\u00e9")).encode().replace(b"\xc3\xa9", b"\xe9")
    path = tmp_path / "log.jsonl"
    path.write_bytes(_line(make_receipt()).encode() + b"\n" + bad + b"\n")
    audit = _load(path)
    assert len(audit.receipts) == 1
    assert audit.rejected.source_line.tolist() == [2]
    assert "utf-8" in audit.rejected.reason.iloc[0].lower()
    json_path = tmp_path / "log.json"
    json_path.write_bytes(_line(make_receipt()).encode() + b"\n" + bad + b"\n")
    audit = _load(json_path)
    assert len(audit.receipts) == 1 and audit.rejected.source_line.tolist() == [2]
    _accounted(audit)


def test_byte_order_mark_and_crlf_line_ends_load(tmp_path):
    path = tmp_path / "windows.jsonl"
    body = "\r\n".join(_line(make_receipt(query=f"q{i}")) for i in range(3)) + "\r\n\r\n"
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    audit = _load(path)
    assert audit.rejected.empty
    assert audit.receipts["query"].tolist() == ["q0", "q1", "q2"]
    assert audit.receipts.source_line.tolist() == [1, 2, 3]


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_byte_order_mark_cut_across_gzip_members_is_the_same_mark(tmp_path, cut):
    import dask

    lines = "".join(_line(make_receipt(query=f"q{i}")) + "\n" for i in range(3))
    body = b"\xef\xbb\xbf" + lines.encode()
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(body)
    members = tmp_path / "members.jsonl.gz"
    members.write_bytes(gzip.compress(body[:cut]) + gzip.compress(body[cut:]))
    expected = _load(whole)
    assert expected.rejected.empty and len(expected.receipts) == 3
    for engine in ("pandas", "dask"):
        with dask.config.set(scheduler="synchronous"):
            audit = ea.load(members, progress=False, engine=engine).compute()
        assert audit.rejected.empty, audit.rejected["reason"].tolist()
        assert audit.receipts["query"].tolist() == ["q0", "q1", "q2"]
        assert audit.receipts["source_line"].tolist() == [1, 2, 3]


def test_empty_file_loads_nothing_and_is_accounted_for(tmp_path):
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "log.jsonl").write_text(_line(make_receipt()) + "\n")
    audit = _load(tmp_path)
    assert len(audit.receipts) == 1 and audit.rejected.empty
    empty = audit.sources.set_index("source_file").loc[str(tmp_path / "empty.jsonl")]
    assert (empty.values_read, empty.loaded, empty.rejected) == (0, 0, 0)


def test_folder_with_nothing_to_load_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    with pytest.raises(ea.AuditError, match="holds no file to load"):
        ea.load(tmp_path, progress=False)


def test_missing_path_and_unknown_suffix_are_errors(tmp_path):
    with pytest.raises(ea.AuditError, match="no such file"):
        ea.load(tmp_path / "missing.jsonl", progress=False)
    (tmp_path / "log.csv").write_text("a,b\n")
    with pytest.raises(ea.AuditError, match="cannot read this kind of file"):
        ea.load(tmp_path / "log.csv", progress=False)


def test_globs_and_folders_are_read_in_sorted_order(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("b.jsonl", "a.jsonl", "sub/c.jsonl", ".hidden.jsonl"):
        (tmp_path / name).write_text(_line(make_receipt()) + "\n")
    found = scan_sources(tmp_path).files
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.jsonl",
        "b.jsonl",
        "sub/c.jsonl",
    ]
    assert scan_sources(str(tmp_path / "*.jsonl")).files == found[:2]


def test_values_of_no_known_kind_are_rejected_not_dropped(tmp_path):
    path = tmp_path / "mixed.jsonl"
    path.write_text(_line(make_receipt()) + '\n{"hello": "world"}\n[1, 2]\n"text"\n')
    audit = _load(path)
    assert len(audit.receipts) == 1
    reasons = audit.rejected.reason.tolist()
    assert "not a record of any known kind" in reasons[0]
    assert "got a JSON array" in reasons[1] and "got a JSON string" in reasons[2]
    _accounted(audit)


def test_nan_and_infinity_are_not_json(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(
        _line(make_receipt()).replace('"relevanceThreshold": 0.5', '"relevanceThreshold": NaN')
    )
    audit = _load(path)
    assert audit.receipts.empty and len(audit.rejected) == 1


def test_rejection_is_a_value_object():
    rejection = Rejection("f.jsonl", 3, "receipts", "why", "raw")
    assert rejection.source_line == 3


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".jsonl.gz"])
def test_integers_beyond_64_bits_stay_exact(tmp_path, suffix):
    # orjson would read them as floats; a hash rebuilt from a float is wrong.
    big = [18446744073709551617, -9223372036854775809, 10**30]
    text = "".join(json.dumps({"n": n, "m": 1.5, "s": "x"}) + "\n" for n in big).encode()
    path = tmp_path / f"values{suffix}"
    path.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    items = read_exactly(path)
    assert [item.value["n"] for item in items] == big
    assert all(type(item.value["n"]) is int and item.value["m"] == 1.5 for item in items)


def test_nan_is_refused_on_the_long_integer_path_too(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text('{"n": 18446744073709551617, "x": NaN}\n')
    (item,) = read_exactly(path)
    assert isinstance(item, Rejection) and "NaN" in item.reason


def test_every_gzip_member_is_read(tmp_path):
    one = (json.dumps(make_receipt(query="a")) + "\n").encode()
    two = "".join(json.dumps(make_receipt(query=q)) + "\n" for q in "bc").encode()
    for name in ("log.jsonl.gz", "log.json.gz"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(one) + gzip.compress(two))
        audit = _load(path)
        assert audit.receipts["query"].tolist() == ["a", "b", "c"], name
        assert audit.rejected.empty
    path = tmp_path / "tail.jsonl.gz"
    path.write_bytes(gzip.compress(one + two) + b"not gzip")
    audit = _load(path)
    assert len(audit.receipts) == 3
    assert audit.rejected[["source_line", "kind"]].values.tolist() == [[0, "file"]]
    assert "not gzip" in audit.rejected["reason"].iloc[0]
    _accounted(audit)


def test_a_value_cut_by_a_truncated_gzip_is_rejected_once(tmp_path):
    pretty = "".join(json.dumps(make_receipt(query=f"q{i}"), indent=2) + "\n" for i in range(3))
    whole = gzip.compress(pretty.encode())
    path = tmp_path / "log.json.gz"
    path.write_bytes(whole[: len(whole) // 2])
    audit = _load(path)
    assert len(audit.rejected) == 1
    assert "truncated" in audit.rejected["reason"].iloc[0]
    _accounted(audit)


def test_a_broken_element_does_not_take_the_rest_of_an_array(tmp_path):
    good = json.dumps(make_receipt())
    path = tmp_path / "array.json"
    path.write_text(f'[\n  {good},\n  {{"bad",\n  {good},\n  {good}\n]\n')
    audit = _load(path)
    assert audit.receipts["source_line"].tolist() == [2, 4, 5]
    assert audit.rejected["source_line"].tolist() == [3]
    pretty = json.dumps([make_receipt(query=f"q{i}") for i in range(4)], indent=2)
    path.write_text(pretty.replace('"q1",', '"q1"', 1))
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q2", "q3"]
    assert len(audit.rejected) == 1
    _accounted(audit)
    path.write_text(f"[\n  {good}\n  {good}\n]\n")  # a comma missing
    audit = _load(path)
    assert len(audit.receipts) == 2
    assert "expected ','" in audit.rejected["reason"].iloc[0]


@pytest.mark.parametrize(
    ("opening", "between", "closing", "first"),
    [
        ("[", ",\n", "]\n", 1),  # the first element on the "[" line, the others at column 0
        ("[", "\n,", "\n]\n", 1),  # comma first
        ("[\n  ", ",\n  ", "\n]\n", 2),  # pretty
    ],
)
@pytest.mark.parametrize("bad_at", [0, 2, 4])
def test_a_broken_element_of_any_multi_line_array_is_rejected_alone(
    tmp_path, opening, between, closing, first, bad_at
):
    # The first element sharing the "[" line set the column the others were looked for
    # at: every element after a broken one went into its rejected row.
    elements = [json.dumps(make_receipt(query=f"q{i}")) for i in range(5)]
    elements[bad_at] = '{"bad":}'
    path = tmp_path / "array.json"
    path.write_text(opening + between.join(elements) + closing, encoding="utf-8")
    audit = _load(path)
    assert audit.receipts["query"].tolist() == [f"q{i}" for i in range(5) if i != bad_at]
    lines = [first + i for i in range(5) if i != bad_at]
    assert audit.receipts["source_line"].tolist() == lines
    assert audit.rejected["source_line"].tolist() == [first + bad_at]
    _accounted(audit)


@pytest.mark.parametrize("values", [1500, 22000])
def test_a_file_of_interleaved_shapes_loads_as_value_by_value(tmp_path, values):
    """Every engram shape interleaved in one file (in one piece, and in several: a first
    key found to start several shapes is regrouped at once in the next pieces): the
    tables equal those of the exact path, value by value."""
    outcomes = [json.loads(line) for line in (FIXTURES / "outcomes.jsonl").read_text().splitlines()]
    presentations = [
        json.loads(line) for line in (FIXTURES / "presentations.jsonl").read_text().splitlines()
    ]
    shapes = [*outcomes, *(outcome["receipt"] for outcome in outcomes), *presentations]
    shapes.append({"retrieval_plan": {"top_k": 8}, "retrieval_plan_hash": "0" * 64})
    lines = [_line(shapes[(index * 7) % len(shapes)]) for index in range(values)]
    lines[700] = lines[700][:40]  # one damaged line among them
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert (path.stat().st_size > 2 * PIECE_BYTES) == (values > 1500)
    loaded = _load(path)
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds):
        exactly = _load(path)
    for name in loaded.tables:
        pd.testing.assert_frame_equal(loaded.tables[name], exactly.tables[name], obj=name)
    pd.testing.assert_frame_equal(loaded.rejected, exactly.rejected)
    assert loaded.rejected.source_line.tolist() == [701]
    assert (
        len(loaded.receipts) > values * 2 // 3
        and len(loaded.presentations) > 50
        and len(loaded.plans)
    )
    _accounted(loaded)


def test_an_array_carried_over_many_pieces_is_searched_for_its_end_once(tmp_path, monkeypatch):
    """``[\\n{...},\\n{...}\\n]`` read in pieces far smaller than it: each piece's search for
    the last value boundary starts where the one before ended, and the values, their
    lines and the values after the array are those of one piece."""
    from explicit_audit.reading import content, cuts, digests

    elements = [_line(make_receipt(query=f"q {index}")) for index in range(400)]
    after = json.dumps(make_receipt(query="after"), indent=2)
    text = "[\n" + ",\n".join(elements) + "\n]\n" + after + "\n   \n" + after + "\n"
    path = tmp_path / "array.json"
    path.write_text(text, "utf-8")
    whole = _load(path)
    checked = []
    ends_a_value = cuts._ends_a_value

    def counted(data, end):
        checked.append(end)
        return ends_a_value(data, end)

    searches = []
    last_cut = cuts.last_cut

    def searched(data, jsonl, start=0):
        searches.append(len(data))
        return last_cut(data, jsonl, start)

    monkeypatch.setattr(content, "PIECE_BYTES", 4096)
    monkeypatch.setattr(digests, "READ_BYTES", 4096)
    monkeypatch.setattr(cuts, "_ends_a_value", counted)
    monkeypatch.setattr(content, "last_cut", searched)
    pieces = _load(path)
    assert len(path.read_bytes()) > 40 * 4096
    for name in whole.tables:
        pd.testing.assert_frame_equal(whole.tables[name], pieces.tables[name], obj=name)
    second = 403 + after.count("\n") + 2  # after the first and a line of spaces
    assert pieces.receipts.source_line.tolist()[-3:] == [401, 403, second]
    assert whole.rejected.empty and pieces.rejected.empty
    # Each element's line start is judged about once, not once per piece after it; and
    # the array carried on is joined with runs that double it, not once per chunk read.
    assert len(checked) < 3 * len(elements)
    assert len(searches) < 16 and sum(searches) < 4 * len(path.read_bytes())


def test_engram_shapes_that_share_a_first_key_differ_in_the_key_of_their_first_container():
    """The guess that regroups a first key holding several shapes (grouping.container_key)."""
    from explicit_audit.reading.grouping import container_key

    outcome = (FIXTURES / "outcomes.jsonl").read_bytes().splitlines()
    presentation = (FIXTURES / "presentations.jsonl").read_bytes().splitlines()
    keys = {container_key(line, 0) for line in outcome if line.startswith(b'{"schema_version"')}
    assert keys == {b"records", b"errors"}  # engram's CLI outcomes: hits, misses, failures
    # A presentation holds its receipt (a failed one its errors, as a failed outcome does).
    assert {container_key(line, 0) for line in presentation} == {b"receipt", b"errors"}
    assert container_key(b'{"a":1}', 0) == b""
    assert container_key(b'  {"a":{"b":[]}}', 2) == b"a"


def test_long_digit_runs_are_found_alike_span_by_span_and_in_one_scan():
    """fallback.long_digit_spans: a few spans searched one by one find what the scan finds."""
    import random

    from explicit_audit.reading.fallback import long_digit_spans
    from explicit_audit.reading.limits import Limits
    from explicit_audit.reading.spans import split_piece

    rng = random.Random(7)
    lines = []
    for index in range(400):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.choice([3, 18, 19, 40])))
        where = rng.choice(["value", "string", "key"])
        if where == "value":
            lines.append(f'{{"n": {digits}, "i": {index}}}')
        elif where == "string":
            lines.append(f'{{"s": "x{digits}y", "i": {index}}}')
        else:
            lines.append(f'{{"k{digits}": 1, "i": {index}}}')
        lines.extend(["{}"] * rng.choice([0, 0, 3]))  # too short to hold a run
    data = ("\n".join(lines) + "\n").encode()
    spans = split_piece(data, 1, True, Limits())
    count = len(spans)
    whole = long_digit_spans(data, spans)
    assert 50 < whole.sum() < 350  # some spans hold such a run, some do not
    short = np.flatnonzero(spans.ends - spans.starts == 2).tolist()
    assert len(short) > 100
    for members in (
        [3, 4, 5],
        list(range(0, count, 9)),
        list(range(0, count, 2)),  # many: scanned whole, then only these kept
        short,
        [*short, 3, 4, 5],
        list(range(count)),
    ):
        found = long_digit_spans(data, spans, members)
        assert found[members].tolist() == whole[members].tolist()
        assert not np.delete(found, members).any()


@pytest.mark.parametrize("long_runs", [3, 3_000])
def test_lines_of_white_space_are_left_out_and_every_other_line_kept(long_runs):
    """split_piece: each line kept exactly when it holds a byte that is not white space.

    Short white-space lines are judged byte by byte in step; long runs of white
    space, few (one by one) or many (one count over the piece), another way.
    """
    import random

    from explicit_audit.reading.limits import Limits
    from explicit_audit.reading.spans import split_piece

    rng = random.Random(long_runs)
    lines = []
    for _ in range(6_000):
        lead = "".join(rng.choice(" \t\r") for _ in range(rng.choice([0, 1, 2, 5, 14, 15])))
        lines.append(lead + rng.choice(["", "", "{}", "x", " ", '{"a": 1}  ']))
    for _ in range(long_runs):
        where = rng.randrange(len(lines))
        lines[where] = " " * rng.choice([15, 16, 17, 40]) + rng.choice(["", "\t", "{}", "y"])
    for ending in ("\n", ""):
        data = ("\n".join(lines) + ending).encode()
        spans = split_piece(data, 7, True, Limits())
        solid = [index + 7 for index, line in enumerate(lines) if line.strip(" \t\r\n")]
        assert spans.lines.tolist() == solid
        texts = [data[s:e].decode() for s, e in zip(spans.starts, spans.ends, strict=True)]
        assert texts == [line for line in lines if line.strip(" \t\r\n")]


@pytest.mark.parametrize("layout", ["long_sparse", "long_dense", "few_long"])
def test_opening_brackets_are_counted_alike_in_one_pass_and_span_by_span(layout):
    """_too_many_brackets: a span is flagged exactly when it holds more ``{`` and ``[``
    than max_depth, whether the piece's brackets are found in one pass (long spans,
    few brackets) or each span is counted on its own (dense brackets, or few long spans).
    """
    import random

    from explicit_audit.reading.limits import Limits
    from explicit_audit.reading.span_checks import _too_many_brackets
    from explicit_audit.reading.spans import split_piece

    rng = random.Random(layout)
    limits = Limits(max_depth=512)
    lines = []
    for _ in range(60):
        if layout == "few_long" and rng.random() < 0.9:  # just too short to be counted
            lines.append('{"a": "' + "y" * 4_080 + '"}')
            continue
        brackets = rng.choice([500, 511, 512, 513, 520, 700])
        parts = [rng.choice("{[") for _ in range(brackets)]
        parts += ["x"] * rng.choice([4_000] if layout == "few_long" else [4_000, 9_000, 30_000])
        rng.shuffle(parts)
        lines.append("{" + "".join(parts)[1:] + "}")
        if layout == "long_dense":  # a short line of brackets only: 1 byte in 3 is one
            lines.append("[" * 3_000)
    data = ("\n".join(lines) + "\n").encode()
    spans = split_piece(data, 1, True, limits)
    buffer = np.frombuffer(data, dtype=np.uint8)
    flagged = _too_many_brackets(data, buffer, spans.starts, spans.ends, limits)
    expected = [
        end - start > 4096 and data.count(b"{", start, end) + data.count(b"[", start, end) > 512
        for start, end in zip(spans.starts.tolist(), spans.ends.tolist(), strict=True)
    ]
    assert flagged.tolist() == expected
    assert 0 < sum(expected) < len(expected)
    # The flagged spans are not clean: the exact path measures their depth.
    assert not (spans.clean & flagged).any()


def test_spans_holding_nan_or_infinity_are_found_wherever_either_is_written():
    """_doubtful: a span is flagged exactly when ``NaN`` or ``Infinity`` starts in it,
    in a string or not, with near misses, repeats and a word cut by the piece's end."""
    import random

    from explicit_audit.reading.span_checks import _doubtful

    rng = random.Random(5)
    words = ["NaN", "Infinity", "Na", "NNaN", "Infinit", "IInfinity", "nan", "N", "I", "x", "In"]
    lines = ['{"v": "' + "".join(rng.choice(words) for _ in range(rng.randrange(6))) + '"}'
             for _ in range(3_000)]  # fmt: skip
    for tail in ("", "\n{NaN", "\n{Infinit", "\n{Na", "\nInfinity"):
        data = ("\n".join(lines) + tail).encode()
        starts, ends, at = [], [], 0
        for line in data.split(b"\n"):
            starts.append(at)
            ends.append(at + len(line))
            at += len(line) + 1
        buffer = np.frombuffer(data, dtype=np.uint8)
        found = _doubtful(buffer, np.array(starts), np.array(ends))
        expected = [
            b"NaN" in data[start:end] or b"Infinity" in data[start:end]
            for start, end in zip(starts, ends, strict=True)
        ]
        assert found.tolist() == expected
        assert 100 < sum(expected) < len(expected) - 100
