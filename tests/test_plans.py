"""Retrieval plans: loading, plan_hash against the seed's known answers, verify_plans."""

from __future__ import annotations

import hashlib
import json
import random
import unicodedata
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import explicit_audit as ea
from explicit_audit._core.keys import shape_of as general_shape_of
from explicit_audit._core.records import RawValue
from explicit_audit.plans import KIND
from explicit_audit.plans._canonical import (
    PlanError,
    _seed_dumps,
    dataclass_fields,
    digests,
    seed_canonical,
)
from explicit_audit.plans._producer import producer_fields, producer_text
from explicit_audit.plans.loader import _producer_row, _row, _seed_row
from explicit_audit.plans.shape import SHAPES
from explicit_audit.plans.shape import shape_of as plan_shape_of
from explicit_audit.reading.repeated_keys import repeated_key
from scripts.sample_data import plans as sample_plans

DATA = Path(__file__).parent / "data"
# Read with the standard library: some vectors hold lone surrogates, which
# orjson refuses and the kit's reader falls back to the standard library for.
VECTORS = json.loads((DATA / "plan_hash_vectors.json").read_text(encoding="utf-8"))["vectors"]
HASHED = [v for v in VECTORS if "expected" in v]
REFUSED = [v for v in VECTORS if "seed_raises" in v]
BASE = {
    "retrieval_keywords": "서울 날씨",
    "top_k": 8,
    "over_fetch": 2,
    "max_context_chars": 12000,
    "shard_ids": ["wiki-ko"],
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record(plan, digest, run_id="r-1", **extra):
    return {"run_id": run_id, "retrieval_plan": plan, "retrieval_plan_hash": digest, **extra}


def _write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    return path


def _frame(records) -> pd.DataFrame:
    values = [
        RawValue("mem.jsonl", i + 1, r, json.dumps(r).encode()) for i, r in enumerate(records)
    ]
    built = KIND.build([("values", values)])
    assert not built.rejected
    return built.tables["plans"]


# --- known answers ---------------------------------------------------------------------------
def test_vectors_cover_what_the_issue_names():
    names = " | ".join(v["name"] for v in VECTORS)
    for needle in (
        "korean",
        "astral",
        "nul",
        "lone",
        "flat shape",
        "mt block all empty",
        "top_k as true",
        "float 8.9",
        "string ' 8 '",
        "string '8.0'",
        "keywords as null",
        "shard_ids as string",
    ):
        assert needle in names
    assert len(HASHED) > 200 and REFUSED


@pytest.mark.parametrize("vector", HASHED, ids=[v["name"] for v in HASHED])
def test_plan_hash_equals_the_seeds_digest(vector):
    assert ea.plan_hash(vector["plan"]) == vector["expected"]


@pytest.mark.parametrize("vector", REFUSED, ids=[v["name"] for v in REFUSED])
def test_plan_hash_refuses_where_the_seed_raises(vector):
    with pytest.raises(ea.AuditError, match=r"retrieval_plan\.\w+") as info:
        ea.plan_hash(vector["plan"])
    if vector["name"] != "unknown key, flat shape":
        assert vector["seed_raises"] in str(info.value)


def test_batch_digests_equal_the_seeds_and_refuse_with_none():
    got = digests([v["plan"] for v in VECTORS] * 2)
    assert got == [v.get("expected") for v in VECTORS] * 2


def _slow(plan):
    return _seed_dumps(seed_canonical(dataclass_fields(plan)[0])[0])


def test_fast_route_writes_what_the_slow_route_writes():
    rng = random.Random(11)
    alphabet = ["a", "Z", " ", '"', "\\", "\x00", "\x1f", "\x7f", "é", "서", "東", "😀", "\ud800"]
    plans = [v["plan"] for v in VECTORS if "expected" in v]
    for _ in range(2000):
        plan = {
            "retrieval_keywords": "".join(rng.choices(alphabet, k=rng.randint(0, 8))),
            "top_k": rng.choice(
                [rng.randint(-5, 99), rng.randint(-(2**63), 2**63 - 1), rng.randint(2**63, 10**20)]
            ),
            "over_fetch": rng.randint(0, 3),
            "max_context_chars": rng.randint(0, 99999),
            "shard_ids": ["".join(rng.choices(alphabet, k=3)) for _ in range(rng.randint(0, 3))],
        }
        mt = ["".join(rng.choices(alphabet, k=rng.randint(0, 2))) for _ in range(3)]
        if rng.random() < 0.3:
            plan["mt"] = dict(zip(("engine", "manifest_hash", "source_lang"), mt, strict=True))
        elif rng.random() < 0.5:
            plan.update(zip(("mt_engine", "mt_manifest_hash", "source_lang"), mt, strict=True))
        plans.append(plan)
    fast = [(plan, producer_fields(plan)) for plan in plans]
    assert sum(fields is not None for _, fields in fast) > 1000
    for plan, fields in fast:
        if fields is not None:
            assert producer_text(fields) == _slow(plan), plan
        elif type(plan.get("top_k")) is int and plan["top_k"] > 2**63 - 1:
            assert ea.plan_canonical_json(plan) == _slow(plan), plan


# --- decisions the seed does not make ---------------------------------------------------------
@pytest.mark.parametrize(
    ("plan", "field"),
    [
        (dict(BASE, rerank=True), "retrieval_plan.rerank"),
        (dict(BASE, mt={"engine": "x"}, source_lang="ko"), "retrieval_plan.mt"),
        (dict(BASE, mt=None), "retrieval_plan.mt"),
        (dict(BASE, mt="nllb"), "retrieval_plan.mt"),
        (dict(BASE, mt={"engine": "x", "model": "y"}), "retrieval_plan.mt.model"),
        ([BASE], "retrieval_plan"),
    ],
)
def test_shapes_no_producer_writes_are_refused(plan, field):
    with pytest.raises(ea.AuditError, match=field.replace(".", r"\.")):
        ea.plan_hash(plan)


def test_missing_fields_take_the_dataclass_defaults():
    full = dict(BASE, top_k=0)
    partial = {k: v for k, v in full.items() if k != "top_k"}
    assert ea.plan_hash(partial) == ea.plan_hash(full)


def test_nan_keywords_hash_as_the_seed_writes_them():
    plan = dict(BASE, retrieval_keywords=float("nan"))
    canonical = seed_canonical(dataclass_fields(plan)[0])[0]
    assert ea.plan_hash(plan) == _sha(json.dumps(canonical, sort_keys=True, separators=(",", ":")))
    with pytest.raises(ea.AuditError, match="top_k"):
        ea.plan_hash(dict(BASE, top_k=float("nan")))


# --- loading ----------------------------------------------------------------------------------
def test_load_plans_reads_both_shapes_with_declared_dtypes(tmp_path):
    flat = dict(BASE, mt_engine="m2m100", mt_manifest_hash="ab" * 32, source_lang="ko", top_k="8")
    path = _write_jsonl(
        tmp_path / "runs.jsonl",
        [
            _record(BASE, ea.plan_hash(BASE), "r-1", question_hash="q1"),
            _record(flat, ea.plan_hash(flat), "r-2", question_hash="q2", replayed=True),
        ],
    )
    plans = ea.load_plans(path, progress=False)
    assert list(plans.columns[:2]) == ["source_file", "source_line"]
    assert plans["source_line"].tolist() == [1, 2]
    assert plans["plan_shape"].tolist() == ["canonical", "flat"]
    assert plans["top_k"].dtype == "Int64" and plans["top_k"].tolist() == [8, 8]
    assert json.loads(plans["plan"].iloc[1])["top_k"] == "8"  # kept as written
    assert plans["plan"].dtype == "str"
    assert plans["seed_coercions"].iloc[1] == "top_k: '8' -> 8 by int()"
    assert plans["has_mt"].tolist() == [False, True]
    assert pd.isna(plans["mt_engine"].iloc[0]) and plans["mt_engine"].iloc[1] == "m2m100"
    assert plans["keywords_non_ascii"].tolist() == [True, True]
    assert plans["shard_ids"].iloc[0] == ["wiki-ko"]
    assert isinstance(plans["shard_ids"].dtype, pd.ArrowDtype)
    assert plans["question_hash"].tolist() == ["q1", "q2"]
    assert plans["replayed"].dtype == "boolean"
    assert ea.plan_verdicts(plans)["match"].all()


def test_lone_surrogates_load_and_hash_as_the_seed_hashes_them(tmp_path):
    vector = next(v for v in HASHED if v["name"] == "keywords: lone high surrogate")
    path = tmp_path / "runs.jsonl"
    # json.dumps writes the lone surrogate as the escape \ud800, as a Python producer would.
    path.write_text(json.dumps(_record(vector["plan"], vector["expected"])) + "\n", "utf-8")
    plans = ea.load_plans(path, progress=False)
    assert json.loads(plans["plan"].iloc[0])["retrieval_keywords"] == "x\ud800y"
    assert "\\ud800" in plans["plan"].iloc[0]  # the escape, as written
    assert plans["retrieval_keywords"].iloc[0] == "x\\ud800y"  # shown; the plan column is exact
    assert ea.plan_verdicts(plans)["match"].all()


def test_counts_beyond_64_bits_load_and_hash_exactly(tmp_path):
    plan = dict(BASE, top_k=2**70, over_fetch="1" * 30)
    vector = next(v for v in HASHED if v["name"] == "top_k as big int 2**70")
    assert ea.plan_hash(vector["plan"]) == vector["expected"]
    path = _write_jsonl(tmp_path / "big.jsonl", [_record(plan, ea.plan_hash(plan))])
    plans = ea.load_plans(path, progress=False)
    assert pd.isna(plans["top_k"].iloc[0]) and pd.isna(plans["over_fetch"].iloc[0])
    assert json.loads(plans["plan"].iloc[0])["top_k"] == 2**70
    assert ea.plan_verdicts(plans)["match"].all()


def test_bad_records_are_rejected_naming_file_line_and_field():
    path = DATA / "plans_bad.jsonl"
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(path, progress=False)
    rejected = audit.rejected.set_index("source_line")
    assert set(rejected["kind"]) == {"plans"}
    expected = {
        2: "retrieval_plan: is missing",
        3: "retrieval_plan_hash: is missing",
        4: "retrieval_plan_hash: is int",
        5: "retrieval_plan.top_k: '8.0' is not accepted by int()",
        6: "retrieval_plan.shard_ids: None is not accepted by list()",
        7: "retrieval_plan.rerank: is not a field",
        8: "retrieval_plan.mt: is NoneType",
        9: "retrieval_plan: is list",
        10: "retrieval_plan.mt: the canonical 'mt' object and the flat key 'source_lang'",
    }
    assert sorted(rejected.index) == sorted(expected)
    for line, reason in expected.items():
        assert rejected.loc[line, "reason"].startswith(reason)
        assert rejected.loc[line, "source_file"] == str(path)
    plans = audit.plans
    assert plans["run_id"].tolist() == ["r-good", "r-topk-string", "r-hash-short"]
    checked = ea.plan_verdicts(plans).set_index("run_id")
    assert checked.loc["r-good", "status"] == "match"
    assert checked.loc["r-topk-string", "status"] == "match"
    assert checked.loc["r-hash-short", "status"] == "malformed_hash"
    assert "6 characters" in checked.loc["r-hash-short", "diagnosis"]


def test_strict_load_raises_at_the_first_bad_record():
    with pytest.raises(ea.InputError, match=r"plans_bad\.jsonl:2: retrieval_plan: is missing"):
        ea.load_plans(DATA / "plans_bad.jsonl", strict=True, progress=False)


# --- verification -----------------------------------------------------------------------------
def _variant_of(plan, recorded):
    checked = ea.plan_verdicts(_frame([_record(plan, recorded)]))
    row = checked.iloc[0]
    return row["status"], row["variant"], row["diagnosis"]


def _canonical(plan):
    return seed_canonical(dataclass_fields(plan)[0])[0]


MT = {"engine": "nllb", "manifest_hash": "ab" * 32, "source_lang": "ko"}


@pytest.mark.parametrize(
    ("plan", "writer", "variant"),
    [
        (
            BASE,
            lambda p: json.dumps(
                _canonical(p), sort_keys=True, ensure_ascii=False, separators=(",", ":")
            ),
            "writer:python-utf8",
        ),
        (BASE, lambda p: json.dumps(_canonical(p), separators=(",", ":")), "writer:unsorted-ascii"),
        (
            BASE,
            lambda p: json.dumps(_canonical(p), ensure_ascii=False, separators=(",", ":")),
            "writer:unsorted-utf8",
        ),
        (BASE, lambda p: json.dumps(_canonical(p), sort_keys=True), "writer:python-spaced"),
        (
            BASE,
            lambda p: json.dumps(
                dict(_canonical(p), mt=dict.fromkeys(MT, "")), sort_keys=True, separators=(",", ":")
            ),
            "mt_block_empty",
        ),
        (
            dict(BASE, mt=MT),
            lambda p: json.dumps(BASE, sort_keys=True, separators=(",", ":")),
            "mt_block_dropped",
        ),
        (
            dict(BASE, mt=MT),
            lambda p: json.dumps(
                dict(_canonical(p), mt={"engine": "nllb", "manifest_hash": "ab" * 32}),
                sort_keys=True,
                separators=(",", ":"),
            ),
            "missing:mt.source_lang",
        ),
        (
            BASE,
            lambda p: json.dumps(
                {k: v for k, v in BASE.items() if k != "shard_ids"},
                sort_keys=True,
                separators=(",", ":"),
            ),
            "missing:shard_ids",
        ),
        (
            BASE,
            lambda p: json.dumps(
                dict(
                    BASE,
                    retrieval_keywords=unicodedata.normalize("NFD", BASE["retrieval_keywords"]),
                ),
                sort_keys=True,
                separators=(",", ":"),
            ),
            "keywords_nfd",
        ),
        (
            dict(BASE, mt_engine="", mt_manifest_hash="", source_lang=""),
            lambda p: json.dumps(p, sort_keys=True, separators=(",", ":")),
            "flat_shape",
        ),
        (
            dict(BASE, top_k="8"),
            lambda p: json.dumps(p, sort_keys=True, separators=(",", ":")),
            "written_as_is",
        ),
    ],
)
def test_each_known_variant_is_named(plan, writer, variant):
    status, found, diagnosis = _variant_of(plan, _sha(writer(plan)))
    assert (status, found) == ("known_variant", variant)
    assert diagnosis.startswith("recorded hash reproduced with")


def test_variants_combine_content_and_writer():
    canonical = dict(_canonical(BASE), mt=dict.fromkeys(MT, ""))
    raw = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    _, variant, diagnosis = _variant_of(BASE, _sha(raw))
    assert variant == "mt_block_empty+writer:python-utf8"
    assert "MT block present" in diagnosis and "ensure_ascii=False" in diagnosis
    spaced_raw = json.dumps(_canonical(BASE), sort_keys=True, ensure_ascii=False)
    assert _variant_of(BASE, _sha(spaced_raw))[0] == "no_known_variant"


def test_a_plan_changed_after_hashing_matches_no_variant():
    status, variant, diagnosis = _variant_of(dict(BASE, top_k=9), ea.plan_hash(BASE))
    assert status == "no_known_variant" and pd.isna(variant)
    assert "changed after hashing" in diagnosis


@pytest.mark.parametrize(
    ("recorded", "says"),
    [
        (lambda h: h.upper(), "upper-case hex digits); otherwise it matches"),
        (lambda h: f" {h}\n", "surrounding whitespace); otherwise it matches"),
        (lambda h: h[:40], "40 characters"),
        (lambda h: "", "0 characters"),
    ],
)
def test_a_malformed_recorded_hash_is_reported(recorded, says):
    status, variant, diagnosis = _variant_of(BASE, recorded(ea.plan_hash(BASE)))
    assert (status, variant) == ("malformed_hash", "hash_format")
    assert says in diagnosis


def test_verify_rebuilds_from_the_written_plan_not_the_columns():
    plans = _frame([_record(BASE, ea.plan_hash(BASE))])
    plans["top_k"] = pd.array([99], dtype="Int64")
    plans["retrieval_keywords"] = "edited"
    assert ea.plan_verdicts(plans)["match"].all()


@pytest.mark.parametrize("as_text", [True, False], ids=["text", "dict"])
def test_verify_reports_a_plan_the_seed_cannot_hash_in_a_hand_made_frame(as_text):
    plans = _frame([_record(BASE, ea.plan_hash(BASE))])
    edited = dict(BASE, top_k="8.0")
    if as_text:
        plans.loc[0, "plan"] = json.dumps(edited)
    else:  # a frame of parsed plans (a table saved before plans were kept as text)
        plans["plan"] = pd.Series([edited], dtype=object)
    row = ea.plan_verdicts(plans).iloc[0]
    assert row["status"] == "unhashable" and pd.isna(row["rebuilt_hash"])
    assert "retrieval_plan.top_k" in row["diagnosis"]


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"top_k": 8', "is text that is not JSON"),
        ("", "is text that is not JSON"),
        ("[1, 2]", "not an object"),
        ('{"retrieval_keywords": "k", "top_k": 8, "top_k": "8.0"}', "retrieval_plan.top_k"),
    ],
)
def test_a_plan_text_the_seed_cannot_read_or_hash_is_unhashable(text, says):
    plans = _frame([_record(BASE, ea.plan_hash(BASE))] * 3)
    plans.loc[1, "plan"] = text
    verdicts = ea.plan_verdicts(plans)
    assert verdicts["status"].tolist() == ["match", "unhashable", "match"]
    assert says in verdicts["diagnosis"].iloc[1]


def test_verify_result_columns_and_dtypes():
    checked = ea.plan_verdicts(_frame([_record(BASE, ea.plan_hash(BASE))]))
    assert list(checked.columns) == [
        "source_file",
        "source_line",
        "run_id",
        "recorded_hash",
        "rebuilt_hash",
        "match",
        "status",
        "variant",
        "diagnosis",
    ]
    assert checked["match"].dtype == "boolean"
    assert isinstance(checked["status"].dtype, pd.CategoricalDtype)
    empty = ea.plan_verdicts(_frame([]))
    assert len(empty) == 0 and "diagnosis" in empty


def test_verify_needs_the_plans_table():
    with pytest.raises(ea.AuditError, match="plans table"):
        ea.plan_verdicts(pd.DataFrame({"x": [1]}))
    with pytest.raises(ea.AuditError, match="plans table"):
        ea.check_plans(pd.DataFrame({"x": [1]}))


# --- sample data ------------------------------------------------------------------------------
PLANTED = {
    "r-000031": ("known_variant", "writer:python-utf8"),
    "r-000058": ("known_variant", "mt_block_empty"),
    "r-000077": ("known_variant", "missing:max_context_chars"),
    "r-000122": ("known_variant", "keywords_nfd"),
    "r-000140": ("known_variant", "writer:unsorted-utf8"),
    "r-000163": ("no_known_variant", None),
    "r-000190": ("no_known_variant", None),
    "r-000215": ("malformed_hash", "hash_format"),
    "r-000240": ("known_variant", "mt_block_dropped"),
    "r-000304": ("known_variant", "flat_shape"),
}


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sample")
    sample_plans.write(folder)
    return folder


def test_sample_plans_verification_flags_exactly_the_planted_rows(sample_dir):
    with pytest.warns(ea.RejectedRowsWarning):
        audit = ea.load(sample_dir, progress=False)
    plans = audit.plans
    assert len(plans) > 300
    assert plans["keywords_non_ascii"].mean() > 0.5
    assert plans["has_mt"].any() and (~plans["has_mt"]).any()
    assert set(plans["plan_shape"]) == {"canonical", "flat"}
    checked = ea.plan_verdicts(plans)
    pd.testing.assert_frame_equal(ea.plan_verdicts(audit), checked)
    flagged = checked[~checked["match"]]
    got = {
        run: (status, None if pd.isna(variant) else variant)
        for run, status, variant in zip(
            flagged["run_id"], flagged["status"], flagged["variant"], strict=True
        )
    }
    assert got == PLANTED
    findings = ea.check_plans(audit)
    assert list(findings.columns) == list(ea.verify.FINDING_COLUMNS)
    assert dict(zip(findings["record"], findings["rule"], strict=True)) == {
        run: status for run, (status, _) in PLANTED.items()
    }
    assert findings["row"].tolist() == flagged.index.tolist()
    assert findings["source_line"].tolist() == flagged["source_line"].tolist()
    assert set(findings["severity"]) == {"error"} and set(findings["check"]) == {"plan_hashes"}
    for detail, recorded in zip(findings["detail"], flagged["recorded_hash"], strict=True):
        assert f"recorded {recorded}" in detail
    rejected = audit.rejected[audit.rejected["kind"] == "plans"]
    assert rejected["reason"].tolist() == [
        "retrieval_plan.top_k: '8.0' is not accepted by int(); the seed's canonical() would "
        "raise ValueError (invalid literal for int() with base 10: '8.0')"
    ]
    assert plans["seed_coercions"].notna().sum() == 3


def test_sample_plans_match_the_committed_data_folder(sample_dir):
    committed = Path(__file__).parents[1] / "data" / "plans"
    if not committed.exists():
        pytest.skip("data/ has not been generated")
    for path in sorted((sample_dir / "plans").iterdir()):
        assert path.read_bytes() == (committed / path.name).read_bytes(), path.name


def test_plans_with_integers_beyond_64_bits_verify_exactly(tmp_path):
    plan = {
        "retrieval_keywords": "x",
        "top_k": 18446744073709551617,
        "over_fetch": 0,
        "max_context_chars": 10**20,
        "shard_ids": [],
    }
    edited = dict(plan, max_context_chars=10**20 + 1)
    records = [
        {"run_id": "kept", "retrieval_plan": plan, "retrieval_plan_hash": ea.plan_hash(plan)},
        {"run_id": "edited", "retrieval_plan": edited, "retrieval_plan_hash": ea.plan_hash(plan)},
    ]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    checked = ea.plan_verdicts(ea.load_plans(path, progress=False)).set_index("run_id")
    assert bool(checked.loc["kept", "match"]) is True
    assert bool(checked.loc["edited", "match"]) is False


def test_check_plans_of_matching_plans_is_empty_with_the_findings_dtypes():
    findings = ea.check_plans(_frame([_record(BASE, ea.plan_hash(BASE))]))
    assert findings.empty
    assert findings.dtypes.astype(str).tolist() == [
        "category", "category", "str", "Int64", "Int64", "str", "category", "category", "str",
        "str",
    ]  # fmt: skip


def test_verify_plans_is_a_deprecated_alias_of_plan_verdicts():
    plans = _frame([_record(BASE, ea.plan_hash(BASE)), _record(BASE, "0" * 64)])
    with pytest.warns(DeprecationWarning, match="plan_verdicts"):
        old = ea.verify_plans(plans)
    pd.testing.assert_frame_equal(old, ea.plan_verdicts(plans))


# --- written lines, read from disk, against the seed ---------------------------------------
LINE_VECTORS = json.loads((DATA / "plan_line_vectors.json").read_text("utf-8"))["vectors"]


def _repeats_a_key(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return repeated_key(text.encode("utf-8"), value) is not None


@pytest.mark.parametrize("layout", ["jsonl", "pretty"])
def test_written_plans_load_and_hash_as_the_seed_hashes_them(tmp_path, layout):
    """2,500 plans as written (escapes, surrogates, duplicate keys, coercions, numbers
    beyond 64 bits), one per record: each loads with the seed's hash rebuilt and
    matching, or is rejected on its own line where the seed raises or a key is
    written twice."""
    lines, where = [], []
    for index, vector in enumerate(LINE_VECTORS):
        recorded = json.dumps(vector.get("seed", "0" * 64))
        head = f'{{"run_id": "v{index}", "retrieval_plan": '
        if layout == "jsonl":
            where.append(len(lines) + 1)
            lines.append(f'{head}{vector["plan"]}, "retrieval_plan_hash": {recorded}}}')
        else:  # a pretty log: each record over three lines, the plan as written
            where.append(len(lines) + 1)
            lines += [head, f"  {vector['plan']},", f'  "retrieval_plan_hash": {recorded}}}']
    path = tmp_path / ("plans.jsonl" if layout == "jsonl" else "plans.json")
    path.write_text("\n".join(lines) + "\n", "utf-8")
    with warnings.catch_warnings(action="ignore"):
        audit = ea.load(path, progress=False)
    verdicts = ea.plan_verdicts(audit.plans)
    by_run = dict(zip(verdicts.run_id, verdicts.itertuples(), strict=True))
    rejected = dict(zip(audit.rejected.source_line, audit.rejected.itertuples(), strict=True))
    for index, vector in enumerate(LINE_VECTORS):
        if _repeats_a_key(vector["plan"]):
            # The seed hashes the last value of a key written twice, a reader that keeps
            # the first another plan: never loaded (I-JSON), on any path.
            assert f"v{index}" not in by_run, vector["plan"]
            assert "is repeated in one object" in rejected[where[index]].reason
            continue
        if "seed" in vector:
            row = by_run[f"v{index}"]
            assert (row.rebuilt_hash, row.status, row.source_line) == (
                vector["seed"],
                "match",
                where[index],
            ), vector["plan"]
        else:
            assert f"v{index}" not in by_run, vector["plan"]
            assert rejected[where[index]].kind == "plans", vector["plan"]
    assert len(verdicts) + len(audit.rejected) == len(LINE_VECTORS)


# --- the producer route of the loader against the seed's route ------------------------------
_TEXTS = st.text(max_size=6) | st.sampled_from(["", "서울", "😀", "a\ud800", "é"])
_ODD = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -0.0,
        8.9,
        1e16,
        "8",
        " 8 ",
        "8.0",
        2**63 - 1,
        2**63,
        -(2**63),
        -(2**63) - 1,
        [],
        {},
    ]
)
_COUNTS = st.integers(min_value=-(2**64), max_value=2**64) | _ODD
_SHARDS = st.lists(_TEXTS, max_size=3) | st.lists(_TEXTS | _ODD, max_size=3) | _TEXTS | _ODD


@st.composite
def plan_records(draw) -> dict:
    odd = draw(st.booleans())
    plan = {
        "retrieval_keywords": draw(_TEXTS | _ODD if odd else _TEXTS),
        "top_k": draw(_COUNTS if odd else st.integers(0, 100)),
        "over_fetch": draw(_COUNTS if odd else st.integers(0, 5)),
        "max_context_chars": draw(_COUNTS if odd else st.integers(0, 10**6)),
        "shard_ids": draw(_SHARDS if odd else st.lists(_TEXTS, max_size=3)),
    }
    mt_values = _TEXTS | _ODD if odd else _TEXTS
    shape = draw(st.sampled_from(["none", "mt", "flat", "both"] if odd else ["none", "mt", "flat"]))
    mt_keys = ["engine", "manifest_hash", "source_lang"]
    flat_keys = ["mt_engine", "mt_manifest_hash", "source_lang"]
    if shape in ("mt", "both"):
        keys = draw(st.lists(st.sampled_from([*mt_keys, "x"]))) if odd else mt_keys
        plan["mt"] = {key: draw(mt_values) for key in keys}
    if shape in ("flat", "both"):
        for key in draw(st.lists(st.sampled_from(flat_keys))) if odd else flat_keys:
            plan[key] = draw(mt_values)
    for key in draw(st.lists(st.sampled_from([*plan, "extra"]), max_size=2 if odd else 0)):
        if key == "extra":
            plan[key] = 1
        else:
            plan.pop(key, None)
    recorded = draw(st.sampled_from(["ab" * 32, 5] if odd else ["ab" * 32]))
    record = {"retrieval_plan": plan, "retrieval_plan_hash": recorded}
    run_id = draw(st.sampled_from(["r-1", None, "absent", 7] if odd else ["r-1", None, "absent"]))
    if run_id != "absent":
        record["run_id"] = run_id
    return record


def _row_or_error(route, record):
    try:
        return route(record)
    except PlanError as exc:
        return f"PlanError: {exc}"


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(record=plan_records())
def test_the_producer_route_gives_the_seed_routes_row(record):
    """Generated records, odd and plain: the loader's row is the seed route's row, and
    the producer route answers for every record in a shape producers write."""
    assert _row_or_error(_row, record) == _row_or_error(_seed_row, record)
    fast = _producer_row(record)
    if fast is not None:
        assert fast == _seed_row(record)
        assert fast["seed_coercions"] is pd.NA
        event("producer route")


def test_the_producer_route_takes_what_producers_write():
    canonical = dict(BASE)
    with_mt = dict(BASE, mt={"engine": "nllb", "manifest_hash": "ab", "source_lang": "ko"})
    flat = dict(BASE, mt_engine="", mt_manifest_hash="", source_lang="")
    for plan in (canonical, with_mt, flat, dict(BASE, top_k=2**63 - 1)):
        assert _producer_row(_record(plan, "ab" * 32)) == _seed_row(_record(plan, "ab" * 32))
    for plan in (dict(BASE, top_k=2**63), dict(BASE, top_k=True), dict(BASE, top_k=8.0)):
        assert _producer_row(_record(plan, "ab" * 32)) is None
    assert _producer_row(_record(dict(with_mt, mt={"engine": "nllb"}), "ab" * 32)) is None


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(record=plan_records())
def test_the_plans_shape_for_keys_is_the_general_rules(record):
    """The plans kind names the shape a record's keys are read as without walking both
    shapes: the same shape the kit's general rule finds, on odd and plain records."""
    assert plan_shape_of(record) is general_shape_of(SHAPES, record)
    record["retrieval_plan"] = dict(record["retrieval_plan"], mt_engine="x", mt={"engine": "x"})
    assert plan_shape_of(record) is general_shape_of(SHAPES, record)


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_run_ids_that_differ_in_a_lone_surrogate_stay_two_records(tmp_path, engine):
    """As U+FFFD, both ids read ``r\ufffd``: two records read as one written twice."""
    written = json.loads(Path("data/plans/arborist_runs.jsonl").read_text("utf-8").splitlines()[0])
    lines = [json.dumps({**written, "run_id": "r" + chr(0xD800 + n)}) for n in range(2)]
    (tmp_path / "plans.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    audit = ea.load(tmp_path, progress=False, engine=engine)
    verification = ea.verify_all(audit)
    assert verification.findings.empty and verification.checked["record_duplicates"] == 2
    plans = audit.plans.compute() if engine == "dask" else audit.plans
    assert plans["run_id"].tolist() == ["r\\ud800", "r\\ud801"]
    assert ea.plan_verdicts(plans)["match"].all()
