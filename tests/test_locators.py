"""Locator safety against engram's own answers (tests/data/locator_vectors.json).

The vectors hold inputs and what Node computed for them with engram's
``safeRelativeMarkdownPath`` and with ``path.posix``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest

from explicit_audit.receipts.locators import (
    LOCATOR_ERROR_CODES,
    UnsafeLocator,
    _posix_basename,
    _posix_normalize,
    locator_record_id,
    locator_safety,
    safe_relative_markdown_path,
)

VECTORS = json.loads(
    (Path(__file__).parent / "data" / "locator_vectors.json").read_text(encoding="utf-8")
)
LOCATOR_CASES = VECTORS["safe_relative_markdown_path"]


def _expected(uri: str, collection: str) -> dict:
    for case in LOCATOR_CASES:
        if case["uri"] == uri and case["collection"] == collection:
            return case
    raise AssertionError(f"no known answer for {uri!r} in {collection!r}")


def _assert_matches(result, case: dict) -> None:
    if "error" in case:
        assert isinstance(result, UnsafeLocator), (case, result)
        assert (result.code, result.message) == (case["error"], case["message"])
    else:
        assert result == case["relative_path"]


def test_vectors_cover_every_outcome():
    outcomes = {case.get("error", "safe") for case in LOCATOR_CASES}
    assert outcomes == {"safe", *LOCATOR_ERROR_CODES}


@pytest.mark.parametrize("case", LOCATOR_CASES, ids=lambda c: repr(c["uri"])[:60])
def test_port_matches_engram(case):
    _assert_matches(safe_relative_markdown_path(case["uri"], case["collection"]), case)


@pytest.mark.parametrize(
    "relative",
    [
        "a/./b.md",
        "a//b.md",
        "../x.md",
        "x%2e.md",
        "a\\b.md",
        "/abs.md",
        "dir/.md",
        ".md",
        "a/...md",
        "..md",
        "a.md/",
        "a\u0000.md",
        "x.MD",
        "é/ü.md",
        "😀/a.md",
        "%2e%2e/x.md",
        "c:/x.md",
    ],
)
def test_tricky_paths(relative):
    uri = f"qmd://retrieval-space-0/{relative}"
    case = _expected(uri, "retrieval-space-0")
    _assert_matches(safe_relative_markdown_path(uri, "retrieval-space-0"), case)


@pytest.mark.parametrize(
    ("uri", "collection"),
    [
        ("qmd://cx/x.md", "c"),
        ("QMD://c/x.md", "c"),
        ("qmd://c", "c"),
        ("qmd:///x.md", ""),
        ("qmd://col/sub/x.md", "col"),
        ("qmd://c/x.md", "c/"),
    ],
)
def test_tricky_collections(uri, collection):
    _assert_matches(safe_relative_markdown_path(uri, collection), _expected(uri, collection))


@pytest.mark.parametrize("case", VECTORS["posix_normalize"], ids=lambda c: repr(c["path"])[:40])
def test_posix_normalize_matches_node(case):
    assert _posix_normalize(case["path"]) == case["normalized"]


@pytest.mark.parametrize("case", VECTORS["posix_basename_md"], ids=lambda c: repr(c["path"])[:40])
def test_posix_basename_matches_node(case):
    assert _posix_basename(case["path"], ".md") == case["basename"]


def test_vectorised_matches_engram_on_every_vector():
    table = locator_safety(
        [c["uri"] for c in LOCATOR_CASES], [c["collection"] for c in LOCATOR_CASES]
    ).to_pylist()
    for case, row in zip(LOCATOR_CASES, table, strict=True):
        assert row["error"] == case.get("error"), case
        assert row["relative_path"] == case.get("relative_path"), case
        if "relative_path" in case:
            assert row["record_id"] == _posix_basename(case["relative_path"], ".md")


def test_vectorised_matches_port_on_random_locators():
    rng = random.Random(7)
    alphabet = ["a", "b", ".", ".", "/", "/", "\\", "%", "m", "d", ".md", "é", "\u0000", "c"]
    collections = ["c", "c/d", "", "é", "c.d"]
    uris, cols = [], []
    for _ in range(3000):
        collection = rng.choice(collections)
        prefix = rng.choice([f"qmd://{collection}/", "qmd://c/", "qmd://", ""])
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        uris.append(prefix + body + rng.choice(["", ".md"]))
        cols.append(collection)
    table = locator_safety(pa.array(uris), pa.array(cols)).to_pylist()
    for uri, collection, row in zip(uris, cols, table, strict=True):
        result = safe_relative_markdown_path(uri, collection)
        if isinstance(result, str):
            assert (row["relative_path"], row["error"]) == (result, None), uri
            assert row["record_id"] == locator_record_id(result)
        else:
            assert (row["relative_path"], row["error"]) == (None, result.code), uri


def test_normalize_adds_nothing_after_the_segment_test():
    # The vectorised path skips engram's last test (normalize / isAbsolute);
    # that is sound only if every path passing the earlier tests is normal.
    rng = random.Random(11)
    checked = 0
    for _ in range(20000):
        path = "".join(rng.choice("a./") for _ in range(rng.randint(1, 10))) + ".md"
        parts = path.split("/")
        if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
            continue
        checked += 1
        assert _posix_normalize(path) == path
    assert checked > 1000


def test_nulls_give_null_rows():
    table = locator_safety(
        pa.array(["qmd://c/x.md", None, "qmd://c/y.md"]), pa.array(["c", "c", None])
    ).to_pylist()
    assert table[0] == {"relative_path": "x.md", "error": None, "record_id": "x"}
    assert table[1] == {"relative_path": None, "error": None, "record_id": None}
    assert table[2] == {"relative_path": None, "error": None, "record_id": None}


def test_empty_input():
    assert locator_safety(pa.array([], pa.string()), pa.array([], pa.string())).num_rows == 0


def test_lengths_must_agree():
    with pytest.raises(ValueError, match="same length"):
        locator_safety(["qmd://c/x.md"], [])


def test_record_id_quirks_follow_node():
    cases = {c["path"]: c["basename"] for c in VECTORS["posix_basename_md"]}
    for path in (".md", "dir/.md", "a/..md", "x.md.md", "a/b/c.md"):
        assert locator_record_id(path) == cases[path]


def test_a_newline_in_a_folder_name_does_not_change_the_required_id():
    # engram accepts such a locator and requires basename(relativePath, ".md").
    uris = ["qmd://notes/2024\nQ1/risk-note.md", "qmd://notes/a\n/b\nc.md"]
    table = locator_safety(uris, ["notes", "notes"])
    assert table.column("error").to_pylist() == [None, None]
    assert table.column("record_id").to_pylist() == ["risk-note", "b\nc"]
    assert [locator_record_id(p) for p in table.column("relative_path").to_pylist()] == [
        "risk-note",
        "b\nc",
    ]
