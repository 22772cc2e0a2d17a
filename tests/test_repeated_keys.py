"""Repeated keys (I-JSON, RFC 7493): an object naming one key twice is rejected on every path.

Records of every kind and shape are taken from the bundled data; one of them
is written with a key of one of its objects (at any depth) repeated, before
or after the original, among records of its kind that hold none. The file is
loaded by the pandas engine with its fast paths on and off, by the Dask
engine, as JSON Lines, as a pretty ``.json`` log and gzipped, over HTTP: each
rejects that record alone, on its line, naming the key's dotted path, and
loads every other record alike.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import threading
import warnings
from pathlib import Path

import dask
import pytest
from conftest import accounted, make_decision, without_columnar
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dask_properties import _assert_same_load
from test_reading_properties import SETTINGS

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.cli import main
from explicit_audit.reading.repeated_keys import repeated_key

DATA = Path(__file__).resolve().parent.parent / "data"

#: One file of each record shape in the bundled data.
_SAMPLES = (
    "decisions/2026-01_baseline.jsonl",
    "plans/arborist_runs.jsonl",
    "plans/arborist_runs_flat.jsonl",
    "requests/compile_requests.jsonl",
    "receipts/operator_receipts.jsonl",
    "receipts/presentations.jsonl.gz",
    "receipts/harness_outcomes.jsonl.gz",
    "receipts/recall_cli.jsonl",
)


def _records(name: str, count: int = 24) -> list[dict]:
    """The first records of a bundled file that load (a file may hold a planted bad one)."""
    path = DATA / name
    rejected = set(_load(path).rejected["source_line"].tolist())
    opened = gzip.open(path, "rt", encoding="utf-8") if name.endswith(".gz") else path.open()
    with opened as lines:
        values = [
            json.loads(line)
            for number, line in enumerate(lines, 1)
            if line.strip() and number not in rejected
        ]
    return values[:count]


@functools.cache
def _samples() -> dict[str, list[dict]]:
    return {name: _records(name) for name in _SAMPLES}


def _objects(value, path=()):
    """Every object of ``value`` that has a key, with its path (keys and indices)."""
    if isinstance(value, dict):
        if value:
            yield path, value
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, (*path, index))


def _written(value, target, key, decoy, first, indent, path=(), depth=0) -> str:
    """``value`` as JSON; the object at ``target`` names ``key`` twice (the decoy first or last)."""
    pad = "\n" + " " * (indent * (depth + 1)) if indent else ""
    end = "\n" + " " * (indent * depth) if indent else ""
    if isinstance(value, dict):
        members = [
            json.dumps(k, ensure_ascii=False)
            + ": "
            + _written(v, target, key, decoy, first, indent, (*path, k), depth + 1)
            for k, v in value.items()
        ]
        if path == target:
            extra = json.dumps(key, ensure_ascii=False) + ": " + json.dumps(decoy)
            members = [extra, *members] if first else [*members, extra]
        return "{" + pad + ("," + pad).join(members) + end + "}"
    if isinstance(value, list):
        items = [
            _written(v, target, key, decoy, first, indent, (*path, i), depth + 1)
            for i, v in enumerate(value)
        ]
        return "[" + pad + ("," + pad).join(items) + end + "]" if items else "[]"
    return json.dumps(value, ensure_ascii=False)


def _dotted(path: tuple, key: str) -> str:
    out = ""
    for step in (*path, key):
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


@st.composite
def planted(draw):
    """A file's records, one of them with a key repeated; its index and the key's path."""
    name = draw(st.sampled_from(_SAMPLES))
    records = _samples()[name]
    at = draw(st.integers(0, len(records) - 1))
    path, found = draw(st.sampled_from(list(_objects(records[at]))))
    key = draw(st.sampled_from(sorted(found)))
    decoy = draw(st.sampled_from(["EVIL", 0, None, {"x": 1}, [1]]))
    first = draw(st.booleans())
    return records, at, (path, key, decoy, first), _dotted(path, key)


def _write(folder: Path, records, at, repeat, layout: str) -> tuple[Path, int]:
    """The records in a layout, record ``at`` with its key repeated; that record's line."""
    indent = 2 if layout.startswith("pretty") else 0
    texts, line, bad_line = [], 1, 0
    for index, record in enumerate(records):
        if index == at:
            bad_line = line
            text = _written(record, *repeat, indent)
        elif indent:
            text = json.dumps(record, ensure_ascii=False, indent=indent)
        else:
            text = json.dumps(record, ensure_ascii=False)
        texts.append(text)
        line += text.count("\n") + 1
    body = ("\n".join(texts) + "\n").encode()
    name = "log.json" if indent else "log.jsonl"
    if layout.endswith(".gz"):
        path = folder / (name + ".gz")
        path.write_bytes(gzip.compress(body))
    else:
        path = folder / name
        path.write_bytes(body)
    return path, bad_line


def _load(source, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        warnings.simplefilter("ignore", ea.ExtraColumnsWarning)
        return ea.load(source, progress=False, **options)


def _exactly(source) -> ea.Audit:
    with registry.replaced(tuple(without_columnar(kind) for kind in registry.kinds())):
        return _load(source)


def _assert_rejected_alone(audit: ea.Audit, path: Path, line: int, dotted: str) -> None:
    rejected = audit.rejected
    assert rejected["source_line"].tolist() == [line], rejected
    assert rejected["source_file"].astype(str).tolist() == [str(path)]
    assert f"the key `{dotted}` is repeated" in rejected["reason"].iloc[0]
    accounted(audit)


@settings(SETTINGS, max_examples=12)
@given(planted(), st.sampled_from(["jsonl", "pretty", "jsonl.gz", "pretty.gz"]))
def test_a_repeated_key_at_any_depth_is_rejected_alike_on_every_path(tmp_path, case, layout):
    records, at, repeat, dotted = case
    path, line = _write(tmp_path, records, at, repeat, layout)
    fast = _load(path)
    _assert_rejected_alone(fast, path, line, dotted)
    _assert_same_load(fast, _exactly(path))
    with dask.config.set(scheduler="synchronous"):
        lazy = _load(path, engine="dask", blocksize=16384).compute()
    _assert_same_load(fast, lazy)


def test_a_question_planted_in_a_hashed_payload_is_not_clean_on_either_engine(
    tmp_path, capsys, cluster
):
    """The probe's case: ``"question":"EVIL"`` first in a C2 request's payload, whose hash
    matches the last value; on a real cluster too."""
    lines = (DATA / "requests" / "compile_requests.jsonl").read_text("utf-8").splitlines()[:24]
    planted_line = lines[5].replace('"payload": {', '"payload": {"question": "EVIL", ', 1)
    assert json.loads(planted_line) == json.loads(lines[5])  # the last value wins: same hash
    lines[5] = planted_line
    path = tmp_path / "requests.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    _assert_rejected_alone(_load(path), path, 6, "payload.question")
    with dask.config.set(scheduler=cluster.get):
        lazy = _load(path, engine="dask", blocksize=8192)
        _assert_rejected_alone(lazy.compute(), path, 6, "payload.question")
    outputs = []
    for engine in (["--engine", "pandas"], ["--engine", "dask", "--scheduler", "synchronous"]):
        assert main(["verify", str(path), "--json", *engine]) == 1
        outputs.append(json.loads(capsys.readouterr().out)["findings"])
    assert outputs[0] == outputs[1]
    found = [(f["rule"], f["source_line"]) for f in outputs[0] if "payload.question" in f["detail"]]
    assert found == [("rejected_row", 6)]


def test_keys_set_apart_from_wide_lines_are_checked_too(tmp_path):
    """Lines each with a logger key of their own: those keys are set apart from the bytes
    before the bulk parse; one written twice (or once escaped) is still found."""
    lines = []
    for index in range(2000):
        text = json.dumps(make_decision(f"d-{index}"))[:-1] + f', "k{index}": {index}'
        if index == 700:
            text += f', "k\\u0037{index - 700:02d}": "EVIL"'  # "k700", escaped
        if index == 1500:
            text += f', "k{index}": {{"x": 1, "x": 2}}'
        lines.append(text + "}")
    path = tmp_path / "wide.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    audit = _load(path)
    assert audit.rejected["source_line"].tolist() == [701, 1501]
    assert audit.rejected["reason"].str.contains("the key `k700`").iloc[0]
    assert audit.rejected["reason"].str.contains("the key `k1500`").iloc[1]
    assert len(audit.decisions) == 1998
    _assert_same_load(audit, _exactly(path))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a_repeated_key_over_http_is_rejected_as_in_a_local_file(tmp_path):
    records = _samples()["decisions/2026-01_baseline.jsonl"]
    path, line = _write(tmp_path, records, 3, (("inputs",), "confidence", 0.99, True), "jsonl")
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{path.name}"
        remote = _load(url)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert remote.rejected["source_line"].tolist() == [line]
    assert "`inputs.confidence` is repeated" in remote.rejected["reason"].iloc[0]
    assert len(remote.decisions) == len(records) - 1


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (b'{"a": 1, "a": 1}', "a"),
        (b'{"a": "x:y", "b": {"c": [{"d": 1}, {"d": 2, "d": 3}]}}', "b.c[1].d"),
        (b'[{"a": 1}, {"b": {"a": 1, "\\u0061": 2}}]', "[1].b.a"),
        (b'{"a": "::::", "b": {"a": 1}, "c": [{"a": 1}, {"a": 1}]}', None),
        (b'{"\\"": 1, "\\\\": 2, "k": "\\":"}', None),
        # A colon escaped in a string left does not hide a key repeated.
        (b'{"b": "\\u003a", "a": 1, "a": 2}', "a"),
        # Values orjson cannot write back: an integer beyond 64 bits, a lone surrogate.
        (b'{"n": 123456789012345678901234567890, "a": 1, "a": ":"}', "a"),
        (b'{"n": 123456789012345678901234567890, "a": ":"}', None),
        (b'{"s": "\\ud800", "a": 1, "a": 2}', "a"),
        (b'{"s": "\\ud800:", "a": 1}', None),
    ],
)
def test_repeated_key_names_the_first_one_and_no_other(text, found):
    assert repeated_key(text, json.loads(text)) == found
