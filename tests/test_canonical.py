"""Canonical-JSON dialects: the registry, the bytes each writes, refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest

from explicit_audit import AuditError
from explicit_audit.canonical import (
    DIALECTS,
    canonical_hash,
    canonical_json,
    is_sha256_hex,
    matching_dialects,
)

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "request_hash_vectors.json").read_text(encoding="utf-8"))
SAMPLE = {"b": [1, 2.5, None, True], "a": "서울 😀 café", "c": {"z": "\x00\n", "y": 'q"\\'}}


def test_registry_names_and_canonical_flags():
    canonical = {name for name, d in DIALECTS.items() if d.canonical}
    assert canonical == {"python-utf8", "python-ascii", "rfc8785", "orjson-sorted"}
    assert set(DIALECTS) - canonical == {"python-spaced", "unsorted-ascii", "unsorted-utf8"}
    assert all(d.name == name and d.description for name, d in DIALECTS.items())
    with pytest.raises(TypeError):
        DIALECTS["mine"] = DIALECTS["rfc8785"]  # the registry is read-only


@pytest.mark.parametrize(
    ("dialect", "reference"),
    [
        (
            "python-utf8",
            lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
        ),
        ("python-ascii", lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"))),
        ("python-spaced", lambda v: json.dumps(v, sort_keys=True)),
        ("unsorted-ascii", lambda v: json.dumps(v, separators=(",", ":"))),
        ("unsorted-utf8", lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))),
        ("orjson-sorted", lambda v: orjson.dumps(v, option=orjson.OPT_SORT_KEYS).decode()),
    ],
)
def test_each_dialect_writes_what_its_reference_writer_writes(dialect, reference):
    assert canonical_json(SAMPLE, dialect) == reference(SAMPLE).encode("utf-8")
    expected = hashlib.sha256(reference(SAMPLE).encode("utf-8")).hexdigest()
    assert canonical_hash(SAMPLE, dialect) == expected


def test_default_dialect_is_python_utf8():
    assert canonical_json(SAMPLE) == canonical_json(SAMPLE, "python-utf8")


def test_ascii_dialect_writes_astral_characters_as_surrogate_pairs():
    text = canonical_json({"k": "😀"}, "python-ascii")
    assert text.isascii()
    assert json.loads(text)["k"] == "😀"
    assert b"\\ud83d\\ude00" in text


def test_rfc8785_matches_the_rfc_sample():
    sample = VECTORS["rfc8785_example"]
    assert canonical_json(sample["input"], "rfc8785").decode("utf-8") == sample["canonical"]


def test_rfc8785_and_python_differ_on_whole_floats_and_key_order():
    value = {"\ue000": 1.0, "😀": 2}
    assert canonical_json(value, "rfc8785") != canonical_json(value, "python-utf8")


@pytest.mark.parametrize("dialect", list(DIALECTS))
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_refused_with_their_path(dialect, bad):
    with pytest.raises(AuditError, match=r"\$\.outer\[1\]\.x is NaN or infinite"):
        canonical_json({"outer": [0, {"x": bad}]}, dialect)


def test_unknown_dialect_names_the_known_ones():
    with pytest.raises(AuditError, match="python-utf8"):
        canonical_hash({}, "yaml")


def test_value_a_dialect_cannot_write_is_an_audit_error():
    with pytest.raises(AuditError, match="orjson-sorted"):
        canonical_json({1: "non-string key"}, "orjson-sorted")
    with pytest.raises(AuditError, match="rfc8785"):
        canonical_json({"n": 2**60}, "rfc8785")
    with pytest.raises(AuditError, match="python-utf8"):
        canonical_json({"s": "\ud800"}, "python-utf8")
    assert canonical_json({"s": "\ud800"}, "python-ascii") == b'{"s":"\\ud800"}'


def test_matching_dialects_finds_the_writer_and_only_it():
    value = {"q": "몇 개?", "n": 3}
    digest = canonical_hash(value, "python-ascii")
    found = matching_dialects(value, digest)
    assert "python-ascii" in found
    assert "python-utf8" not in found
    assert matching_dialects(value, "0" * 64) == []
    assert matching_dialects(value, digest, ["python-utf8", "rfc8785"]) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ab" * 32, True),
        ("AB" * 32, False),
        ("ab" * 31, False),
        (" " + "ab" * 32, False),
        ("g" * 64, False),
        (None, False),
        (12, False),
    ],
)
def test_is_sha256_hex(text, expected):
    assert is_sha256_hex(text) is expected
