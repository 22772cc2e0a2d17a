"""A cut excerpt's whole text, read back from the bytes the audit was loaded from.

Real files on disk, loaded by the kit: each rejected value longer than its
excerpt gets the line it starts on, plain or gzipped, and nothing where the
line is not the value's text (a value inside a JSON array) or the file cannot
be read again.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit.report.whole_text import WholeText, whole_texts

LONG = '{"schemaVersion": 1, "query": "' + "q" * 700 + '", "broken": '


def _rejected(folder: Path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        rejected = ea.load(folder, progress=False).rejected
    return rejected.sort_values(["source_file", "source_line"]).reset_index(drop=True)


def _path_of(folder: Path):
    return lambda name: Path(name) if Path(name).is_relative_to(folder) else None


@pytest.mark.parametrize("gzipped", [False, True], ids=["plain", "gzip"])
def test_each_cut_excerpt_gets_the_line_it_was_cut_from(tmp_path, gzipped):
    lines = ["{}", LONG, '{"short": ', LONG.replace("q", "r") + "\r", "{}"]
    text = "\n".join(lines).encode()
    if gzipped:
        (tmp_path / "x.jsonl.gz").write_bytes(gzip.compress(text))
    else:
        (tmp_path / "x.jsonl").write_bytes(text)
    rejected = _rejected(tmp_path)
    assert rejected["source_line"].tolist() == [1, 2, 3, 4, 5]  # {} is of no kind
    found = whole_texts(rejected, _path_of(tmp_path))
    # The short lines' excerpts are whole: nothing to open.
    assert sorted(found) == [1, 3]
    assert found[1] == WholeText(LONG, len(LONG), len(LONG), "line")
    assert found[3].text == LONG.replace("q", "r") + "\r" and found[3].whole
    for position, whole in found.items():
        assert whole.text.startswith(rejected["raw"][position].removesuffix("…"))


def test_a_line_longer_than_the_bound_shows_its_start_and_its_length(tmp_path):
    (tmp_path / "x.jsonl").write_text(LONG + "\n", encoding="utf-8")
    found = whole_texts(_rejected(tmp_path), _path_of(tmp_path), max_bytes=500)
    assert found[0] == WholeText(LONG[:500], len(LONG), 500, "line")
    assert not found[0].whole


def test_a_value_written_over_several_lines_gets_its_text_to_its_closing_bracket(tmp_path):
    # A JSON document: each value opens a line of its own and spans several; a string
    # holds brackets, quotes and an escaped backslash before its quote.
    values = [{"schemaVersion": 1, "query": 'q[{"' * 100 + "\\", "nested": {"a": [1]}}] * 2
    text = json.dumps(values, indent=2)
    (tmp_path / "x.json").write_text(text, encoding="utf-8")
    rejected = _rejected(tmp_path)
    assert len(rejected) == 2 and rejected["raw"].str.endswith("…").all()
    found = whole_texts(rejected, _path_of(tmp_path))
    assert sorted(found) == [0, 1]
    written = json.dumps(values[0], indent=2).replace("\n", "\n  ")
    for whole in found.values():
        assert whole == WholeText(written, len(written), len(written), "value")
        assert json.loads(whole.text) == values[0]


def test_a_value_that_does_not_start_its_line_keeps_its_excerpt_alone(tmp_path):
    # Values of a JSON array on one line: the second starts inside the first's line.
    values = [{"schemaVersion": 1, "query": "q" * 700, "broken": True}] * 2
    (tmp_path / "x.json").write_text(json.dumps(values), encoding="utf-8")
    rejected = _rejected(tmp_path)
    assert rejected["raw"].str.endswith("…").sum() == 2
    # The line opens with "[", not with either value: neither is given a text.
    assert whole_texts(rejected, _path_of(tmp_path)) == {}


def test_a_file_that_cannot_be_read_again_is_left_out(tmp_path):
    (tmp_path / "x.jsonl").write_text(LONG + "\n", encoding="utf-8")
    rejected = _rejected(tmp_path)
    assert whole_texts(rejected, lambda name: None) == {}
    (tmp_path / "x.jsonl").unlink()
    assert whole_texts(rejected, _path_of(tmp_path)) == {}
    # A line the file no longer holds: cut off since it was read.
    (tmp_path / "x.jsonl").write_text("{}\n", encoding="utf-8")
    assert whole_texts(rejected, _path_of(tmp_path)) == {}
