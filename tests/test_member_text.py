"""Each object's written text of one top-level member, found with NumPy."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from explicit_audit.reading import wide_keys
from explicit_audit.reading.member_text import member_texts


def _objects(texts: list[bytes], separator: bytes = b"\n") -> tuple[bytes, np.ndarray]:
    starts = np.cumsum([0, *(len(text) + len(separator) for text in texts[:-1])])
    return separator.join(texts), starts


@pytest.mark.parametrize(
    "text, written",
    [
        (b'{"p": {"b": 1, "a": [2]}}', '{"b": 1, "a": [2]}'),
        (b'{"a": "\\"p\\": 1", "p" :\n  {"x": "}, \\\\"}  \n}', '{"x": "}, \\\\"}'),
        (b'{"q": {"p": 1}, "p": [1, {"p": 2}], "pp": 3}', '[1, {"p": 2}]'),
        (b'{"k\\"p": 1, "p": "v"}', '"v"'),
        (b'{"p": "\\u00e9\\ud800"}', '"\\u00e9\\ud800"'),
        (b'{"p": 1e400, "z": 0}', "1e400"),
    ],
)
def test_the_member_is_its_bytes_as_written(text, written):
    assert member_texts(text, 1, "p").to_pylist() == [written]


@pytest.mark.parametrize(
    "text",
    [
        b'{"q": 1}',  # not there
        b'{"p": 1, "p": 2}',  # twice
        b'{"\\u0070": 1}',  # written with an escape
        b'{"p": 1, "\\u0070": 2}',  # twice, the one read last with an escape
        b'{"\\u0070": 2, "p": 1}',
        b'{"p": 1, "\\x": 2}',  # a key that does not read: not certain
        b'{"q": {"p": 1}}',  # only nested
        b'[{"p": 1}]',  # not an object
        b'{"p": "unclosed}',
    ],
)
def test_a_member_the_bytes_do_not_show_with_certainty_is_none(text):
    assert member_texts(text, 1, "p") is None


def test_each_object_has_its_member_in_order():
    data, starts = _objects([b'{"p": 1}', b'{"a": 2, "p": [3]}', b'{"p": {}}'])
    assert member_texts(data, 3, "p", object_starts=starts).to_pylist() == ["1", "[3]", "{}"]
    data, _ = _objects([b'{"p": 1}', b'{"a": 2}'])
    assert member_texts(data, 2, "p") is None


@pytest.mark.parametrize("name", ["p", "retrieval_plan", "a_key_longer_than_sixteen_bytes"])
def test_a_key_differing_in_any_byte_is_not_taken(name):
    for at in range(len(name)):
        other = name[:at] + ("X" if name[at] != "X" else "Y") + name[at + 1 :]
        text = json.dumps({other: 1, name: 2}).encode()
        assert member_texts(text, 1, name).to_pylist() == ["2"]
        assert member_texts(json.dumps({other: 1}).encode(), 1, name) is None


@pytest.mark.parametrize("threads", [1, 2])
def test_runs_of_objects_give_what_one_pass_gives(monkeypatch, threads):
    rng = random.Random(5)
    records, expected = [], []
    for index in range(3000):
        plan = {"k": "é" * rng.randint(0, 5) + '"\\}' * rng.randint(0, 2), "n": index}
        keys = [("a", [index, {"p": 1}]), ("p", plan), ("z", "p")]
        rng.shuffle(keys)
        indent = rng.choice([None, 2])
        record = json.dumps(dict(keys), indent=indent, ensure_ascii=rng.random() < 0.5)
        records.append(record.encode())
        expected.append(plan)
    data, starts = _objects(records)
    monkeypatch.setattr(wide_keys, "_CHUNK_BYTES", 1 << 12)
    found = member_texts(data, len(records), "p", object_starts=starts, threads=threads)
    assert [json.loads(text) for text in found.to_pylist()] == expected
    for record, text in zip(records, found.to_pylist(), strict=True):
        assert text.encode() in record
    one_pass = member_texts(data, len(records), "p")
    assert found.equals(one_pass)


def test_a_long_run_of_white_space_costs_its_length():
    # Past a few steps over all of them, each position is found in one pass.
    records = [
        b'{"p":' + b" " * 100_000 + b'{"a": 1}' + b"\n" * 100_000 + b', "q": 2}',
        b'{"p": [1]}',
        b'{"p"' + b"\t" * 50 + b":" + b" " * 17 + b'"x"' + b" " * 16 + b"}",
    ]
    data, starts = _objects(records)
    assert member_texts(data, 3, "p", object_starts=starts).to_pylist() == [
        '{"a": 1}',
        "[1]",
        '"x"',
    ]
