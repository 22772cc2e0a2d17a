"""Hashes rebuilt from plans kept as JSON text, in bulk, against the seed's route one by one.

:func:`~explicit_audit.plans._text_digests.text_digests` parses plan texts
with Arrow and writes each canonical text column by column; every text it is
not sure of is read one by one. Whichever way a text goes, its hash must be
what :func:`~explicit_audit.plans._canonical.digest` gives for the value
``json.loads`` reads, and None exactly where that raises.
"""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_plans import VECTORS, plan_records
from test_plans_bulk import MT, PLAN

from explicit_audit.plans import _text_digests
from explicit_audit.plans._canonical import PlanError, digest
from explicit_audit.plans._json_text import quoted_strings
from explicit_audit.plans._text_digests import text_digests


def _seed(text: str | None) -> str | None:
    """The reference: ``json.loads`` then the seed's hash, one text at a time."""
    if text is None:
        return None
    try:
        return digest(json.loads(text))
    except (ValueError, RecursionError, PlanError):
        return None


def _texts_of(plan, rng: random.Random) -> str:
    """A plan as some writer writes it: spacing, escapes and key order vary."""
    if isinstance(plan, dict) and rng.random() < 0.3:
        plan = dict(rng.sample(list(plan.items()), len(plan)))
    return json.dumps(
        plan,
        ensure_ascii=rng.random() < 0.5,
        separators=rng.choice([(",", ":"), (", ", ": ")]),
    )


_ODD_TEXTS = [
    json.dumps(dict(PLAN, mt=None)),
    json.dumps(dict(PLAN, mt=MT, mt_engine=None)),
    json.dumps(dict(PLAN, mt_engine="x", mt_manifest_hash=None, source_lang="")),
    json.dumps(dict(PLAN, mt=MT), indent=2),
    json.dumps(PLAN, indent=1, ensure_ascii=False).replace("서울", "\n"),  # a raw line end
    json.dumps(PLAN, ensure_ascii=False).replace("서울", "\t"),  # a raw tab: not JSON
    json.dumps(PLAN).replace('"top_k": 8', '"top_k": 8, "top_k": 9'),
    json.dumps(PLAN).replace('"top_k": 8', '"top_k": 18446744073709551617'),
    json.dumps(PLAN).replace('"top_k": 8', '"top_k": 9223372036854775808'),
    json.dumps(PLAN).replace('"top_k": 8', '"top_k": 1e400'),
    json.dumps(PLAN).replace('"top_k": 8', '"top_k": NaN'),
    json.dumps(PLAN).replace("서울", "\\ud800"),
    json.dumps(PLAN).replace("서울", "\\u2028\\u007f\\u0000\\\\\\/"),
    json.dumps(PLAN).replace("서울", "\x7f"),
    json.dumps(dict(PLAN, shard_ids=["\x7f", "é"], mt=dict(MT, engine="\x7f\u2028"))),
    json.dumps(dict(PLAN, shard_ids=["a", None])),
    json.dumps(dict(PLAN, shard_ids=[])),
    json.dumps(dict(PLAN, mt=dict(MT, engine="", manifest_hash="", source_lang=""))),
    json.dumps(dict(PLAN, mt={"engine": "e"})),
    json.dumps(dict(PLAN, rerank=True)),
    json.dumps(dict(PLAN, mt=MT, source_lang="ko")),  # both shapes: the seed refuses it
    json.dumps({k: v for k, v in PLAN.items() if k != "top_k"}),
    "",
    "   ",
    "{",
    "[1, 2]",
    "null",
    '{"a": 1} {"b": 2}',
    None,
]


def _mixed(count: int, seed: int) -> list[str | None]:
    rng = random.Random(seed)
    texts = []
    for index in range(count):
        word = rng.choice(["k", "서울", "😀", 'q"'])
        plan = dict(PLAN, retrieval_keywords=f"{word} {index}")
        shape = rng.random()
        if shape < 0.3:
            plan["mt"] = dict(MT, engine=rng.choice(["", "nllb", "m2m"]))
        elif shape < 0.5:
            plan.update(mt_engine=rng.choice(["", "x"]), mt_manifest_hash="", source_lang="ja")
        texts.append(_texts_of(plan, rng))
    return texts


@pytest.mark.parametrize("odd_share", [0.0, 0.01, 0.3])
def test_every_text_hashes_as_the_seed_reads_it(odd_share):
    rng = random.Random(7)
    texts = _mixed(3000, seed=3)
    texts += [rng.choice(_ODD_TEXTS) for _ in range(int(odd_share * len(texts)))]
    texts += [json.dumps(v["plan"]) for v in VECTORS if _is_json(v["plan"])]
    rng.shuffle(texts)
    assert text_digests(pa.array(texts, type=pa.string())) == [_seed(t) for t in texts]


def _is_json(plan) -> bool:
    try:
        json.dumps(plan, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


@pytest.mark.parametrize("odd", _ODD_TEXTS, ids=range(len(_ODD_TEXTS)))
def test_a_text_among_clean_ones_hashes_as_the_seed_reads_it(odd):
    # Among clean texts, Arrow parses the batch whenever it can read the odd one:
    # the bulk path itself must then leave it to be read one by one, or hash it right.
    texts = [*_mixed(40, seed=1), odd, *_mixed(40, seed=2)]
    assert text_digests(pa.array(texts, type=pa.string())) == [_seed(t) for t in texts]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_each_known_answer_among_clean_texts_hashes_as_the_seed_hashed_it(vector):
    if not _is_json(vector["plan"]):
        pytest.skip("no JSON text holds this plan")
    for ensure_ascii in (True, False):
        text = json.dumps(vector["plan"], ensure_ascii=ensure_ascii)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        texts = [*_mixed(20, seed=4), text, *_mixed(20, seed=5)]
        found = text_digests(pa.array(texts, type=pa.string()))
        assert found[20] == vector.get("expected"), vector["name"]
        assert found == [_seed(t) for t in texts]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("run", [16, 1 << 13])
def test_runs_refused_by_arrow_are_read_one_by_one(monkeypatch, run, threads):
    monkeypatch.setattr(_text_digests, "_RUN", run)
    texts = _mixed(500, seed=11)
    # Refused runs at the start, then clean ones: the rest is read one by one.
    for at in (3, 40, 70):
        texts[at] = json.dumps(PLAN).replace('"top_k": 8', '"top_k": "8"')
    expected = [_seed(t) for t in texts]
    assert text_digests(pa.array(texts, type=pa.string()), threads) == expected
    # Runs of several chunks parsed two at a time, a refused one among them.
    column = pa.chunked_array([texts[:130], texts[130:131], texts[131:]], type=pa.string())
    assert text_digests(column, threads) == expected


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("type_", [pa.string(), pa.large_string()])
def test_a_sliced_chunked_column_is_read_where_it_stands(type_, threads):
    texts = _mixed(300, seed=2)
    column = pa.chunked_array([texts[:100], texts[100:]], type=type_).slice(50, 200)
    assert text_digests(column, threads) == [_seed(t) for t in texts[50:250]]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(records=st.lists(plan_records(), min_size=1, max_size=20), ascii_=st.booleans())
def test_drawn_plans_hash_as_the_seed_reads_them(records, ascii_):
    texts = []
    for record in records:
        text = json.dumps(record["retrieval_plan"], ensure_ascii=ascii_)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate is kept as its escape
            text = json.dumps(record["retrieval_plan"])
        texts.append(text)
    assert text_digests(pa.array(texts, type=pa.string())) == [_seed(t) for t in texts]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(strings=st.lists(st.text(), max_size=20), ensure_ascii=st.booleans())
def test_a_quoted_string_is_what_json_dumps_writes(strings, ensure_ascii):
    strings = [s.encode("utf-8", "replace").decode("utf-8") for s in strings]  # storable
    got = quoted_strings(pa.array(strings, type=pa.string()), ensure_ascii=ensure_ascii)
    assert got.to_pylist() == [json.dumps(s, ensure_ascii=ensure_ascii) for s in strings]


@pytest.mark.parametrize("blank", ["", " ", "\n", "\t\r\n "])
def test_a_text_of_two_values_beside_a_blank_one_is_not_read_as_two_rows(blank):
    # Arrow would read two rows from the first and none from the blank text: as many
    # rows as texts, each in the wrong place.
    two = json.dumps(PLAN) + " " + json.dumps(dict(PLAN, top_k=9))
    texts = [*_mixed(10, seed=6), two, blank, *_mixed(10, seed=7)]
    assert text_digests(pa.array(texts, type=pa.string())) == [_seed(t) for t in texts]


def test_an_unfinished_text_closed_by_its_neighbour_is_not_read_as_a_row():
    # "{...," + "}" would parse as one value across the two texts, and a text of two
    # values beside them would make the rows as many as the texts again.
    plan = json.dumps(PLAN)
    texts = [*_mixed(10, seed=8), plan[:-1], "}", plan + plan, *_mixed(10, seed=9)]
    texts += ['{"retrieval_keywords": "x}', '{"a": 1}"}', plan + plan]  # a string run on
    assert text_digests(pa.array(texts, type=pa.string())) == [_seed(t) for t in texts]
