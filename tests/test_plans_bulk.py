"""The plans' bulk path against the exact path: same tables, rejections, notes and lines.

Plan records are written to real files (JSON Lines and pretty ``.json`` logs)
as producers write them and as no producer does: escapes, lone surrogates,
integers beyond 64 bits, ``-0.0``, ``1e400``, duplicate keys, keys in any
order, logger keys (a likely typo of a record key among them), records
another kind claims. Each file is loaded with the bulk path and with every
kind read value by value; every table, the rejected rows, the key notes and
the per-file accounting must be equal, and every hash rebuilt the same.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import rows_by_path, without_columnar
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.reading.limits import Limits

DATA = Path(__file__).parent / "data"
LINE_VECTORS = json.loads((DATA / "plan_line_vectors.json").read_text("utf-8"))["vectors"]
PLAN = {
    "retrieval_keywords": "서울 지하철 😀",
    "top_k": 8,
    "over_fetch": 2,
    "max_context_chars": 12000,
    "shard_ids": ["wiki-ko", "law-kr"],
}
MT = {"engine": "nllb", "manifest_hash": "ab" * 32, "source_lang": "ko"}


def _load(path: Path) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        return ea.load(path, progress=False)


def _exactly(path: Path) -> ea.Audit:
    with registry.replaced([without_columnar(kind) for kind in registry.kinds()]):
        return _load(path)


def _same(bulk: ea.Audit, exact: ea.Audit) -> None:
    for name in bulk.tables:
        pd.testing.assert_frame_equal(bulk.tables[name], exact.tables[name], obj=name)
    for name in ("rejected", "sources", "keys"):
        pd.testing.assert_frame_equal(getattr(bulk, name), getattr(exact, name), obj=name)
    pd.testing.assert_frame_equal(ea.plan_verdicts(bulk.plans), ea.plan_verdicts(exact.plans))


def _compare(path: Path) -> ea.Audit:
    bulk = _load(path)
    _same(bulk, _exactly(path))
    return bulk


def _hashed(plan: dict) -> str:
    try:
        return ea.plan_hash(plan)
    except ea.AuditError:
        return "0" * 64


# --- written lines -----------------------------------------------------------------------------
#: Records spelled as text: (plan text or None for PLAN, what follows the plan).
_RECORD_TAILS = [
    ', "retrieval_plan_hash": "{h}"}}',
    ', "retrieval_plan_hash": "{h}", "question_hash": "q", "ok": true, "n": 3}}',
    ', "retrieval_plan_hash": "{h}", "elapsed": -0.0}}',
    ', "retrieval_plan_hash": "{h}", "elapsed": 1.5e3, "tags": ["a", {{"b": null}}]}}',
    ', "retrieval_plan_hash": "{h}", "big": 123456789012345678901234567890}}',
    ', "retrieval_plan_hash": "{h}", "huge": 1e400}}',
    ', "retrieval_plan_hash": "{h}", "retrieval_plan_hsh": "x"}}',  # a likely typo
    ', "retrieval_plan_hash": "{h}", "receipt": {{}}, "status": "hit"}}',  # a receipt's
    ', "retrieval_plan_hash": "{h}", "deep": ' + "[" * 600 + "]" * 600 + "}}",
    ', "retrieval_plan_hash": "{h}", "retrieval_plan_hash": "{h}"}}',  # duplicate key
    ', "retrieval_plan_hash": 5}}',
    ', "retrieval_plan_hash": "{h}", "note": "\\ud800"}}',  # a lone surrogate
    ', "retrieval_plan_hash": "{h}", "note": "\\u00e9\\n\\"\\/"}}',
    ', "retrieval_plan_hash": "{h}"}} {{"run_id": "two on one line"}}',
]
_RUN_IDS = ['"run_id": "r-1", ', '"run_id": null, ', "", '"run_id": 7, ', '"run_id": "é\\t", ']


def _plan_texts() -> list[str]:
    canonical = json.dumps(PLAN, ensure_ascii=False)
    with_mt = json.dumps(dict(PLAN, mt=MT))
    flat = json.dumps(dict(PLAN, mt_engine="", mt_manifest_hash="", source_lang=""))
    reordered = json.dumps(dict(reversed(list(dict(PLAN, mt=MT).items()))), ensure_ascii=False)
    return [
        canonical,
        with_mt,
        flat,
        reordered,
        canonical.replace('"top_k": 8', '"top_k": 8.0'),
        canonical.replace('"top_k": 8', '"top_k": 9223372036854775808'),
        canonical.replace('"top_k": 8', '"top_k": -9223372036854775808'),
        canonical.replace('"top_k": 8', '"top_k": -0.0'),
        canonical.replace('"top_k": 8', '"top_k": 1e400'),
        canonical.replace('"top_k": 8', '"top_k": 8, "top_k": 9'),
        canonical.replace('"top_k": 8', '"top_k": true'),
        canonical.replace('"wiki-ko"', '"wiki\\ud840\\udc00\\u00e9\\/"'),
        canonical.replace('"wiki-ko"', '"\\ud800"'),
        canonical.replace('"wiki-ko"', "null"),
        canonical.replace("서울", "\\uc11c\\uc6b8 \\" + '"' + "q\\u0000"),
        canonical.replace("서울", "\x7f\\u007f"),
        canonical.replace('"shard_ids"', '"rerank": true, "shard_ids"'),
        canonical.replace(', "shard_ids": ["wiki-ko", "law-kr"]', ""),
        with_mt.replace('"source_lang": "ko"', '"source_lang": "ko", "model": "x"'),
        with_mt.replace('"engine": "nllb"', '"engine": ""')
        .replace('"ab', '"')
        .replace('"source_lang": "ko"', '"source_lang": ""'),
        flat.replace('"mt_engine": ""', '"mt_engine": "x", "mt": {}'),
        # Arrow reads a key written null as a key left out; the seed does not.
        with_mt.replace(json.dumps(MT), "null"),
        with_mt.replace('"source_lang": "ko"}', '"source_lang": "ko"}, "mt_engine": null'),
        flat.replace('"mt_engine": ""', '"mt_engine": null'),
        canonical.replace('"max_context_chars": 12000', '"max_context_chars": null'),
        json.dumps(dict(PLAN, mt=MT), indent=2),  # several lines
        "[1, 2]",
        "null",
    ]


PLAN_TEXTS = _plan_texts()


def _line(plan_text: str, run_id: str, tail: str) -> str:
    try:
        digest = _hashed(json.loads(plan_text))
    except (ValueError, TypeError, AttributeError):
        digest = "0" * 64
    return "{" + run_id + '"retrieval_plan": ' + plan_text + tail.format(h=digest)


@st.composite
def plan_lines(draw) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["written", "vector", "blank", "junk"]))
        if kind == "written":
            plan = draw(st.sampled_from(PLAN_TEXTS))
            run_id = draw(st.sampled_from(_RUN_IDS))
            tail = draw(st.sampled_from(_RECORD_TAILS))
            lines.append(_line(plan, run_id, tail))
        elif kind == "vector":
            vector = draw(st.sampled_from(LINE_VECTORS))
            recorded = vector.get("seed", "0" * 64)
            tail = ', "retrieval_plan_hash": "' + recorded + '"}}'
            lines.append(_line(vector["plan"], '"run_id": "v", ', tail))
        elif kind == "blank":
            lines.append("")
        else:
            lines.append(draw(st.sampled_from(['{"run_id": "x"}', "{", '{"a": 1}', "[]"])))
    return lines


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(lines=plan_lines(), pretty=st.booleans())
def test_the_bulk_path_loads_what_the_exact_path_loads(lines, pretty):
    with tempfile.TemporaryDirectory() as folder:
        if pretty:  # a .json log: each record starts a line at column 0
            path = Path(folder) / "plans.json"
            lines = [line for line in lines if line.startswith("{")]
        else:
            path = Path(folder) / "plans.jsonl"
        path.write_text("\n".join(lines) + "\n", "utf-8", errors="surrogatepass")
        _compare(path)


@pytest.mark.parametrize("layout", ["jsonl", "pretty"])
def test_every_written_line_loads_as_on_the_exact_path(tmp_path, layout):
    """Every plan of the known-answer vectors with each record tail, in one file."""
    lines = []
    for index, vector in enumerate(LINE_VECTORS):
        tail = _RECORD_TAILS[index % len(_RECORD_TAILS)]
        lines.append(_line(vector["plan"], f'"run_id": "v{index}", ', tail))
    for plan in PLAN_TEXTS:
        for tail in _RECORD_TAILS:
            lines.append(_line(plan, '"run_id": "w", ', tail))
    if layout == "pretty":
        pretty = [
            line.replace(', "retrieval_plan_hash"', ',\n  "retrieval_plan_hash"') for line in lines
        ]
        text = "\n".join(pretty)
        path = tmp_path / "plans.json"
    else:
        text = "\n".join(lines)
        path = tmp_path / "plans.jsonl"
    path.write_text(text + "\n", "utf-8", errors="surrogatepass")
    audit = _compare(path)
    assert len(audit.plans) > 1000 and len(audit.rejected) > 100


def test_plans_as_producers_write_them_are_taken_in_bulk(tmp_path):
    records = []
    for index in range(300):
        plan = dict(PLAN, retrieval_keywords=f"키워드 {index}")
        if index % 3 == 1:
            plan["mt"] = MT
        elif index % 3 == 2:
            plan.update(mt_engine="e", mt_manifest_hash="", source_lang="ja")
        digest = ea.plan_hash(plan)
        record = {"run_id": f"r-{index}", "retrieval_plan": plan, "retrieval_plan_hash": digest}
        records.append(dict(record, question_hash="q"))
    path = tmp_path / "plans.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    assert rows_by_path(path) == {"columnar": 300, "exact": 0}
    audit = _compare(path)
    assert ea.plan_verdicts(audit.plans)["match"].all()
    assert audit.plans["source_line"].tolist() == list(range(1, 301))


def test_a_line_the_bulk_path_refuses_keeps_its_place(tmp_path):
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    odd = dict(good, retrieval_plan=dict(PLAN, top_k="8"))
    lines = [json.dumps(good)] * 5 + [json.dumps(odd)] + [json.dumps(good)] * 5
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert rows_by_path(path) == {"columnar": 10, "exact": 1}
    audit = _compare(path)
    assert audit.plans.loc[5, "seed_coercions"] == "top_k: '8' -> 8 by int()"
    assert audit.plans["source_line"].tolist() == list(range(1, 12))


def test_spans_read_in_runs_give_the_same_rows(tmp_path, monkeypatch):
    from explicit_audit.reading import parts

    monkeypatch.setattr(parts, "_BULK_RUN", 4)
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    lines = [json.dumps(dict(good, run_id=f"r{index}")) for index in range(13)]
    lines[6] = json.dumps(dict(good, retrieval_plan=dict(PLAN, top_k="8")))
    lines[9] = '{"run_id": "not a plan"}'
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert rows_by_path(path) == {"columnar": 11, "exact": 1}
    audit = _compare(path)
    assert audit.plans["source_line"].tolist() == [*range(1, 10), *range(11, 14)]
    assert audit.rejected["source_line"].tolist() == [10]


@pytest.mark.parametrize(
    "plan",
    [
        dict(PLAN, mt=None),
        dict(PLAN, mt=MT, mt_engine=None),
        dict(PLAN, mt_engine="e", mt_manifest_hash=None, source_lang="ja"),
        dict(PLAN, mt_engine=None),
    ],
    ids=["mt null", "mt and a flat key null", "a flat key null", "one flat key null"],
)
def test_a_plan_key_written_null_among_clean_records_loads_as_on_the_exact_path(tmp_path, plan):
    # Arrow reads a key written null as a key left out: the piece parses, and the
    # columnar path itself must see the difference.
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    odd = {"run_id": "odd", "retrieval_plan": plan, "retrieval_plan_hash": _hashed(plan)}
    lines = [json.dumps(dict(good, run_id=f"r{index}")) for index in range(20)]
    lines.insert(7, json.dumps(odd))
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    audit = _compare(path)
    assert len(audit.plans) + len(audit.rejected) == 21


def test_the_plan_text_is_the_records_own_bytes(tmp_path):
    plan_text = (
        '{ "top_k" : 8,"shard_ids":["wiki-ko" , "law-kr"], "retrieval_keywords":"\\uc11c\\uc6b8",\n'
    )
    plan_text += '  "over_fetch": 2, "max_context_chars": 12000}'
    digest = ea.plan_hash(json.loads(plan_text))
    lines = [
        '{"run_id": "a", "retrieval_plan": '
        + plan_text.replace("\n", "")
        + f', "retrieval_plan_hash": "{digest}"}}',
        json.dumps(
            {"run_id": "b", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
        ),
    ]
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    audit = _compare(path)
    assert audit.plans["plan"].tolist() == [plan_text.replace("\n", ""), json.dumps(PLAN)]
    pretty = tmp_path / "plans.json"
    pretty.write_text(json.dumps([json.loads(line) for line in lines], indent=2), "utf-8")
    audit = _compare(pretty)
    assert audit.plans["plan"].iloc[1] == json.dumps(PLAN, indent=2).replace("\n", "\n    ")
    assert ea.plan_verdicts(audit.plans)["match"].all()


@pytest.mark.parametrize("escaped_last", [True, False])
def test_a_plan_key_written_twice_one_with_an_escape_is_rejected_on_every_path(
    tmp_path, escaped_last
):
    """The seed hashes the plan read last; a reader that keeps the first reads another
    plan under the same hash: the record is loaded by no path (I-JSON)."""
    other = dict(PLAN, top_k=9)
    first, last = (PLAN, other)
    keys = ['"retrieval_plan"', '"retrieval\\u005fplan"']
    if not escaped_last:
        keys.reverse()
    odd = (
        '{"run_id": "odd", ' + f"{keys[0]}: {json.dumps(first)}, {keys[1]}: {json.dumps(last)}, "
        f'"retrieval_plan_hash": "{ea.plan_hash(last)}"}}'
    )
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    lines = [json.dumps(dict(good, run_id=f"r{index}")) for index in range(20)]
    lines.insert(5, odd)
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    audit = _compare(path)
    assert "odd" not in set(audit.plans["run_id"])
    assert audit.rejected["source_line"].tolist() == [6]
    assert "the key `retrieval_plan` is repeated" in audit.rejected["reason"].iloc[0]
    assert ea.plan_verdicts(audit.plans)["match"].all()


def test_a_logger_column_of_mixed_types_is_typed_once_over_every_path(tmp_path):
    # A lone surrogate sends its record to the exact path; typed apart, its text
    # was shown as U+FFFD, where one column of a number and a text keeps it.
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    lines = [json.dumps(dict(good, note=index)) for index in range(5)]
    lines.append(json.dumps(dict(good, note="\ud800")))
    lines.append(json.dumps(dict(good, note="plain")))
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert rows_by_path(path) == {"columnar": 6, "exact": 1}
    audit = _compare(path)
    assert audit.plans["note"].tolist() == [0, 1, 2, 3, 4, "\ud800", "plain"]


def test_logger_keys_named_as_a_column_and_as_its_renaming_get_a_column_each(tmp_path):
    good = {"run_id": "r", "retrieval_plan": PLAN, "retrieval_plan_hash": ea.plan_hash(PLAN)}
    lines = [json.dumps(dict(good, plan=index, **{"record.plan": -index})) for index in range(4)]
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    audit = _compare(path)
    assert audit.plans.columns.is_unique
    assert audit.plans["record.plan"].tolist() == [0, 1, 2, 3]  # the logger's "plan"
    assert audit.plans["record.plan#2"].tolist() == [0, -1, -2, -3]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("keys_of_their_own", [False, True])
def test_plan_texts_found_beside_the_parse_are_the_records_own(
    tmp_path, threads, keys_of_their_own
):
    """Each plan's text, found while Arrow parses the piece (one core each with two threads,
    after the parse with one, again after keys past the limit are set apart), is its bytes."""
    lines, plans = [], []
    for index in range(120):
        plan = dict(PLAN, retrieval_keywords=f'키워드 "{index}" }}{{,')
        if index % 2:
            plan["mt"] = MT
        plans.append(json.dumps(plan, ensure_ascii=index % 3 == 0))
        logger = f', "k{index}": {{"retrieval_plan": [{index}]}}' if keys_of_their_own else ""
        lines.append(
            '{"retrieval_plan": '
            + plans[-1]
            + logger
            + f', "run_id": "r{index}", "retrieval_plan_hash": "{ea.plan_hash(plan)}"}}'
        )
    path = tmp_path / "plans.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    options = {"progress": False, "threads": threads, "limits": {"max_extra_columns": 5}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.ExtraColumnsWarning)
        audit = ea.load(path, **options)
        with registry.replaced([without_columnar(kind) for kind in registry.kinds()]):
            exact = ea.load(path, **options)
    limits = Limits(max_extra_columns=5, max_threads=threads)
    assert rows_by_path(path, limits) == {"columnar": 120, "exact": 0}
    _same(audit, exact)
    assert audit.plans["plan"].tolist() == plans
    assert ea.plan_verdicts(audit.plans)["match"].all()
    if keys_of_their_own:  # five made columns, the rest set apart
        assert audit.plans["extra_json"].notna().sum() == 115
        assert audit.plans["k0"].iloc[0] == {"retrieval_plan": [0]}
