"""Every key accounted for: unknown keys, defaulted fields, strict_keys, the counts per key.

Records are written to real files and read by ``ea.load`` on both engines,
``verify_all`` and the ``explicit-audit`` command; the records mutated are
the bundled data's own clean ones, as their producers wrote them.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path

import dask
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reading_properties import SETTINGS

import explicit_audit as ea
from explicit_audit._core import keys as keys_module
from explicit_audit._core import registry
from explicit_audit._core.keys import likely_typo, shape_of
from explicit_audit._core.times import TIME_KEYS

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
ENGRAM = ROOT / "tests" / "data" / "engram"  # engram's real outputs


def _line(path: Path, number: int = 1) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[number - 1])


def _write(folder: Path, name: str, records: list[dict], *, policies: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if policies and not (folder / "policies").exists():
        shutil.copytree(DATA / "policies", folder / "policies")
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _verify(
    folder: Path, engine: str = "pandas", scheduler="synchronous", **options
) -> ea.Verification:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        # A logger's key named as a time (``timestamp``) may be given any value here.
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        audit = ea.load(folder, progress=False, engine=engine, **options)
    if engine == "dask":
        with dask.config.set(scheduler=scheduler):
            return ea.verify_all(audit)
    return ea.verify_all(audit)


def _cli(*args: str) -> tuple[int, str]:
    command = [sys.executable, "-m", "explicit_audit.cli", *args]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    return finished.returncode, finished.stdout


def _decision() -> dict:
    return _line(DATA / "decisions" / "2026-01_baseline.jsonl")


def _receipt() -> dict:
    return _line(DATA / "receipts" / "operator_receipts.jsonl")


# -- each case, on real files --------------------------------------------------------------


def test_a_typo_inside_a_decision_is_an_unknown_key_and_its_field_a_defaulted_one(tmp_path):
    record = _decision()
    record["inputs"]["confidance"] = record["inputs"].pop("confidence")
    _write(tmp_path, "dec.jsonl", [_decision(), record], policies=True)
    result = _verify(tmp_path)
    found = result.findings.loc[result.findings["check"] == "record_keys"]
    rows = found[["source_file", "source_line", "record", "rule", "severity", "field"]]
    assert rows.astype(str).values.tolist() == [
        [str(tmp_path / "dec.jsonl"), "2", "d-01-0001", "unknown_key", "notice",
         "inputs.confidance"],
        [str(tmp_path / "dec.jsonl"), "2", "d-01-0001", "defaulted_field", "notice",
         "inputs.confidence"],
    ]  # fmt: skip
    details = found["detail"].tolist()
    assert details[0].endswith("did you mean `inputs.confidence`?")
    assert "the producer's default 1.0 is used" in details[1]
    # The replay uses decide_routing's default, as the producer would.
    audit = ea.load(tmp_path, progress=False)
    assert audit.decisions["confidence"].tolist() == [0.429, 1.0]


def test_a_field_left_out_is_a_defaulted_field_in_text_and_json(tmp_path):
    record = _decision()
    del record["inputs"]["confidence"]
    path = _write(tmp_path, "dec.jsonl", [_decision(), _decision(), record], policies=True)
    status, output = _cli("verify", str(tmp_path), "--json")
    document = json.loads(output)
    (finding,) = [f for f in document["findings"] if f["check"] == "record_keys"]
    assert (finding["source_file"], finding["source_line"], finding["record"]) == (
        str(path),
        3,
        "d-01-0001",
    )
    assert (finding["rule"], finding["severity"], finding["field"]) == (
        "defaulted_field",
        "notice",
        "inputs.confidence",
    )
    assert "default 1.0 is used" in finding["detail"]
    # The replay at 1.0 escalates less than the recorded decision (made at 0.429).
    policy = [f for f in document["findings"] if f["check"] == "decision_policy"]
    assert [f["source_line"] for f in policy] == [3] * len(policy) and policy
    assert status == document["exit_status"] == 1 and document["state"] == "findings"
    status, text = _cli("verify", str(tmp_path))
    assert status == 1
    assert f"{path}:3: defaulted_field (notice) [d-01-0001]: `inputs.confidence` is absent" in text


def test_notices_leave_the_verdict_clean_in_text_and_json(tmp_path):
    record = _decision()
    del record["inputs"]["evidence_doc_count"]
    record["inputs"]["evidence_doc_count"] = 0  # the default, written: no note
    typo = _decision()
    typo["inputs"]["Evidence_Docs"] = 1
    typo["decision_id"] = "d-01-0002"  # another record: one id holds one record
    _write(tmp_path, "dec.jsonl", [record, typo], policies=True)
    status, text = _cli("verify", str(tmp_path))
    assert status == 0
    assert "clean on what was checked" in text and "1 notice(s)" in text
    assert f"{tmp_path / 'dec.jsonl'}:2: unknown_key (notice) [d-01-0002]" in text
    assert "inputs.Evidence_Docs" in text
    status, output = _cli("verify", str(tmp_path), "--json")
    document = json.loads(output)
    assert (status, document["exit_status"], document["state"], document["clean"]) == (
        0,
        0,
        "clean on what was checked",  # the other kinds' checks were not run
        False,
    )
    assert document["keys"] == [
        {
            "key": "inputs.Evidence_Docs",
            "kind": "decisions",
            "note": "unknown_key",
            "count": 1,
            "files": str(tmp_path / "dec.jsonl"),
            "suggestion": "inputs.evidence_doc_count",
        }
    ]


def test_a_receipt_key_of_another_case_is_noted_not_dropped(tmp_path):
    record = _receipt()
    record["withheld"]["audienceID"] = record["withheld"].pop("audienceId")
    path = _write(tmp_path, "rec.jsonl", [record])
    result = _verify(tmp_path)
    keys = result.findings.loc[result.findings["check"] == "record_keys"]
    assert keys[["source_line", "rule", "field"]].values.tolist() == [
        [1, "unknown_key", "withheld.audienceID"]
    ]
    assert keys["record"].tolist() == [record["request_id"]]
    assert keys["detail"].iloc[0].endswith("did you mean `withheld.audienceId`?")
    # The audience is null as read, which the receipt rules flag: exit 1, in both modes.
    assert result.exit_status == 1
    status, output = _cli("verify", str(path), "--json")
    assert status == json.loads(output)["exit_status"] == 1
    status, text = _cli("verify", str(path))
    assert status == 1 and "withheld.audienceID" in text


def test_logger_keys_stay_columns_but_a_near_miss_of_a_declared_key_is_flagged(tmp_path):
    record = _receipt()
    record["relevanceTreshold"] = record["relevanceThreshold"]
    record["hostname"] = "gw-1"
    snake = _receipt()
    snake["relevance_threshold"] = 0.5
    _write(tmp_path, "rec.jsonl", [_receipt(), record, snake])
    result = _verify(tmp_path)
    keys = result.findings.loc[result.findings["check"] == "record_keys"]
    assert keys[["source_line", "rule", "field"]].values.tolist() == [
        [2, "unknown_key", "relevanceTreshold"],
        [3, "unknown_key", "relevance_threshold"],
    ]
    assert all(d.endswith("did you mean `relevanceThreshold`?") for d in keys["detail"])
    assert result.state == "clean"
    status, output = _cli("verify", str(tmp_path), "--json")
    document = json.loads(output)
    assert (status, document["exit_status"], document["state"], document["clean"]) == (
        0,
        0,
        "clean on what was checked",  # the other kinds' checks were not run
        False,
    )
    assert [(k["key"], k["count"]) for k in document["keys"]] == [
        ("relevanceTreshold", 1),
        ("relevance_threshold", 1),
    ]
    status, text = _cli("verify", str(tmp_path))
    assert status == 0 and f"{tmp_path / 'rec.jsonl'}:2: unknown_key (notice)" in text
    receipts = ea.load(tmp_path, progress=False).receipts
    # timestamp, request_id and host (and the typo itself) are extra columns, as ever.
    assert {"timestamp", "request_id", "host", "hostname", "relevanceTreshold"} <= set(receipts)


@pytest.mark.parametrize(
    ("key", "declared", "expected"),
    [
        ("relevanceTreshold", ["relevanceThreshold", "query"], "relevanceThreshold"),
        ("relevance_threshold", ["relevanceThreshold"], "relevanceThreshold"),
        ("audienceID", ["audienceId", "count"], "audienceId"),
        ("confidnece", ["confidence"], "confidence"),
        ("timestamp", ["subject_domain", "content_chars", "decision_id"], None),
        ("request_id", ["decision_id", "policy_id", "base_id", "run_id"], None),
        ("host", ["kind", "scope", "query"], None),
        ("ts", ["id"], None),
    ],
)
def test_likely_typo(key, declared, expected):
    assert likely_typo(key, declared) == expected


def _full_rule(key: str, declared: tuple[str, ...]) -> str | None:
    """:func:`likely_typo` as its docstring states it: no short way, no cache, no pruning."""

    def fold(name: str) -> str:
        return re.sub(r"[_\-\s]", "", name).lower()

    folded = fold(key)
    exact: dict[str, str] = {}
    for name in declared:
        exact.setdefault(fold(name), name)
    if folded in exact:
        return exact[folded]
    best = None
    for name in declared:
        other = fold(name)
        shorter = min(len(folded), len(other))
        bound = 0 if shorter < 5 else 1 if shorter < 8 else 2
        found = keys_module._distance(folded, other, bound)
        if bound and found <= bound and (best is None or found < best[0]):
            best = (found, name)
    return best[1] if best else None


def test_a_short_name_is_judged_as_the_full_rule_judges_it():
    """Names of under five folded characters are decided without the cached search.

    Drawn with separators, case pairs and characters whose lower case is longer
    (``İ``), against declared names of every length, including short ones: every
    answer is the rule's, evaluated in full.
    """
    rng = random.Random(23)
    alphabet = "abcdxyzAIK019_- \u0130\u0131\u00df\u212a"
    declared = ("id", "ts", "Ab", "x_y", "\u0130ab", "abcde", "audienceId", "kind", "a-b-c")
    for _ in range(20_000):
        key = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 7)))
        assert likely_typo(key, declared) == _full_rule(key, declared), key
    for name in declared:
        for key in (name, name.upper(), name.lower(), name[:4]):
            assert likely_typo(key, declared) == _full_rule(key, declared), key
    # Four characters whose lower case is five (``İ`` lowers to two): one edit from a
    # declared name of six, so a likely typo, as the full rule says.
    assert likely_typo("\u0130abc", ("\u0130abcd",)) == "\u0130abcd"


def test_a_rejection_lists_every_problem_of_the_record(tmp_path):
    record = _decision()
    record["inputs"]["content_chars"] = "many"
    record["inputs"]["confidence"] = 7
    record["decision"]["risk_flagz"] = record["decision"].pop("risk_flags")
    path = _write(tmp_path, "dec.jsonl", [record], policies=True)
    result = _verify(tmp_path)
    assert result.findings["rule"].astype(str).tolist() == ["rejected_row"]
    (detail,) = result.findings["detail"]
    for named in ("inputs.content_chars", "inputs.confidence: must be a number from 0 to 1",
                  "decision.risk_flags: missing", "unknown key `decision.risk_flagz`"):  # fmt: skip
        assert named in detail
    status, output = _cli("verify", str(path), "--json")
    (finding,) = json.loads(output)["findings"]
    assert status == 1 and finding["source_line"] == 1 and finding["detail"] == detail


def test_strict_keys_rejects_the_record_naming_file_line_and_key(tmp_path):
    record = _decision()
    record["inputs"]["confidance"] = record["inputs"].pop("confidence")
    path = _write(tmp_path, "dec.jsonl", [_decision(), record], policies=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        audit = ea.load(tmp_path, progress=False, strict_keys=True)
    assert len(audit.decisions) == 1
    rejected = audit.rejected[["source_file", "source_line", "kind"]].values.tolist()
    assert rejected == [[str(path), 2, "decisions"]]
    assert "unknown key `inputs.confidance`" in audit.rejected["reason"].iloc[0]
    assert audit.keys.empty  # the record's notes are in its rejection
    sources = audit.sources.set_index("source_file").loc[str(path)]
    assert sources[["values_read", "loaded", "rejected"]].tolist() == [2, 1, 1]
    with pytest.raises(ea.InputError, match=r"dec\.jsonl.*2.*inputs\.confidance"):
        ea.load(tmp_path, progress=False, strict_keys=True, strict=True)
    # Without strict_keys, the same record loads, with its notes.
    assert len(ea.load(tmp_path, progress=False).keys) == 2
    status, output = _cli("verify", str(tmp_path), "--strict-keys", "--json")
    document = json.loads(output)
    assert status == document["exit_status"] == 1
    (finding,) = [f for f in document["findings"] if f["rule"] == "rejected_row"]
    assert (finding["source_file"], finding["source_line"]) == (str(path), 2)
    assert "strict_keys: unknown key `inputs.confidance`" in finding["detail"]
    status, text = _cli("verify", str(tmp_path), "--strict-keys")
    assert status == 1 and f"{path}:2: rejected_row" in text


def test_strict_keys_in_load_bytes_and_a_kinds_own_loader(tmp_path):
    record = _decision()
    record["decision"]["riskFlags"] = []
    data = (json.dumps(_decision()) + "\n" + json.dumps(record) + "\n").encode()
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        part = ea.load_bytes(data, source_file="queue/d.jsonl", first_line=41, strict_keys=True)
        path = _write(tmp_path, "d.jsonl", [_decision(), record])
        table = ea.load_decisions(path, progress=False, strict_keys=True)
    assert part.rejected[["source_file", "source_line"]].values.tolist() == [["queue/d.jsonl", 42]]
    assert "unknown key `decision.riskFlags`" in part.rejected["reason"].iloc[0]
    assert part.rejected["reason"].iloc[0].endswith("did you mean `decision.risk_flags`?")
    assert table["source_line"].tolist() == [1]
    lenient = ea.load_bytes(data, source_file="queue/d.jsonl", first_line=41)
    assert lenient.keys[["source_line", "key"]].values.tolist() == [[42, "decision.riskFlags"]]


@pytest.mark.parametrize("kind", ["requests/compile_requests.jsonl", "plans/arborist_runs.jsonl"])
def test_a_top_level_key_holding_a_lone_surrogate_loads(tmp_path, kind):
    # JSON may escape a lone surrogate in a key; Arrow cannot store one as text.
    line = (DATA / kind).read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "records.jsonl"
    path.write_text(line[:-1] + ', "host\\ud800": 1, "host\\\\ud800": 2}\n', encoding="utf-8")
    audit = ea.load(path, progress=False)
    table = next(frame for frame in audit.tables.values() if len(frame))
    assert audit.rejected.empty and len(table) == 1
    assert table[["host\\ud800", "host\\ud800#2"]].values.tolist() == [[1, 2]]
    assert audit.keys.empty  # a logger's key, however spelled, is no typo of a declared one


def test_strict_keys_passes_a_record_with_only_logger_keys(tmp_path):
    _write(tmp_path, "rec.jsonl", [_receipt()])
    result = _verify(tmp_path, strict_keys=True)
    assert result.clean and result.findings.empty


def test_the_columnar_path_hands_an_undeclared_key_to_the_exact_path(tmp_path):
    # Lines that all parse in bulk, one of them with a key no shape declares.
    lines = (DATA / "decisions" / "2026-01_baseline.jsonl").read_text().splitlines()[:200]
    records = [json.loads(line) for line in lines]
    records[150]["decision"]["escalate_to_26B"] = records[150]["decision"]["escalate_to_26b"]
    _write(tmp_path, "dec.jsonl", records, policies=True)
    result = _verify(tmp_path)
    keys = result.findings.loc[result.findings["check"] == "record_keys"]
    assert keys[["source_line", "field"]].values.tolist() == [[151, "decision.escalate_to_26B"]]
    assert keys["detail"].iloc[0].endswith("did you mean `decision.escalate_to_26b`?")
    # The replays are those of the lines as they were.
    _write(tmp_path / "before", "dec.jsonl", [json.loads(line) for line in lines], policies=True)
    before = _verify(tmp_path / "before").findings
    policy = result.findings.loc[result.findings["check"] == "decision_policy"]
    assert policy["detail"].tolist() == before["detail"].tolist()
    assert policy["source_line"].tolist() == before["source_line"].tolist()


def test_both_engines_find_the_same_keys(tmp_path, cluster):
    decisions = [_decision() for _ in range(3)]
    decisions[0]["inputs"]["confidance"] = decisions[0]["inputs"].pop("confidence")
    del decisions[2]["decision"]["used_fallback"]
    receipt = _receipt()
    receipt["withheld"]["audienceID"] = receipt["withheld"].pop("audienceId")
    _write(tmp_path, "dec.jsonl", decisions, policies=True)
    _write(tmp_path / "more", "rec.jsonl", [_receipt(), receipt])
    memory = _verify(tmp_path)
    assert len(memory.findings.query("check == 'record_keys'")) == 4
    # In this process, and in worker processes (the shapes pickled to them).
    for scheduler in ("synchronous", cluster.get):
        lazy = _verify(tmp_path, engine="dask", scheduler=scheduler)
        assert lazy.findings.astype(str).equals(memory.findings.astype(str))
        assert lazy.key_counts().equals(memory.key_counts())
    strict_memory = _verify(tmp_path, strict_keys=True)
    strict_lazy = _verify(tmp_path, engine="dask", strict_keys=True)
    assert strict_lazy.findings.astype(str).equals(strict_memory.findings.astype(str))
    assert strict_memory.findings["rule"].astype(str).tolist().count("rejected_row") == 2


def test_summary_says_how_many_keys_are_not_as_declared_on_both_engines(tmp_path):
    record = _decision()
    record["inputs"]["confidance"] = record["inputs"].pop("confidence")
    _write(tmp_path, "dec.jsonl", [_decision(), record], policies=True)
    memory = ea.load(tmp_path, progress=False).keys
    with dask.config.set(scheduler="synchronous"):
        lazy = ea.load(tmp_path, progress=False, engine="dask").accounting().keys
        for engine in ("pandas", "dask"):
            status, text = _cli("summary", str(tmp_path), "--engine", engine)
            assert status == 0, engine
            assert "2 key(s) not as declared" in text, engine
    assert isinstance(lazy, pd.DataFrame)
    assert lazy.astype(str).equals(memory.astype(str))
    assert memory[["source_line", "note", "key"]].values.tolist() == [
        [2, "unknown_key", "inputs.confidance"],
        [2, "defaulted_field", "inputs.confidence"],
    ]


def test_the_key_counts_per_key_and_in_the_report_banner(tmp_path):
    from explicit_audit.report._header import verdict_html

    records = [_decision() for _ in range(3)]
    for record in records[:2]:
        record["inputs"]["confidance"] = record["inputs"].pop("confidence")
    _write(tmp_path, "a.jsonl", records[:1], policies=True)
    _write(tmp_path, "b.jsonl", records[1:])
    result = _verify(tmp_path)
    counts = result.key_counts()
    assert counts.astype(object).where(counts.notna(), None).to_dict("records") == [
        {
            "key": "inputs.confidance",
            "kind": "decisions",
            "note": "unknown_key",
            "count": 2,
            "files": f"{tmp_path / 'a.jsonl'}, {tmp_path / 'b.jsonl'}",
            "suggestion": "inputs.confidence",
        },
        {
            "key": "inputs.confidence",
            "kind": "decisions",
            "note": "defaulted_field",
            "count": 2,
            "files": f"{tmp_path / 'a.jsonl'}, {tmp_path / 'b.jsonl'}",
            "suggestion": None,
        },
    ]
    banner = verdict_html(result, str(tmp_path))
    assert "Keys not as declared" in banner
    assert "<td><code>inputs.confidance</code></td><td>decisions</td><td>unknown_key</td>" in banner
    assert "<code>inputs.confidence</code></td></tr>" in banner  # the suggestion
    canonical = DATA / "plans" / "arborist_runs.jsonl"
    assert "Keys not as declared" not in verdict_html(_verify(canonical), str(canonical))
    # The flat plans hold values arborist's type does not declare ("top_k": "5").
    flat = verdict_html(_verify(DATA / "plans"), "data/plans")
    assert "<td>plans</td><td>undeclared_value</td>" in flat


def test_a_report_shows_the_keys_in_its_verdict_banner(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    record = _receipt()
    record["withheld"]["audienceID"] = record["withheld"].pop("audienceId")
    data = tmp_path / "data"
    _write(data, "rec.jsonl", [_receipt(), record])
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    notebook = new_notebook(
        cells=[
            new_markdown_cell("# Receipts"),
            new_code_cell('DATA = "../data"', metadata={"tags": ["parameters"]}),
            new_code_cell("import explicit_audit as ea\naudit = ea.load(DATA, progress=False)"),
            new_code_cell("len(audit.receipts)"),
        ]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}  # fmt: skip
    nbformat.write(notebook, notebooks / "receipts.ipynb")
    out = tmp_path / "out"
    status, _ = _cli("report", str(data), "--out", str(out), "--notebooks", str(notebooks))
    assert status == 1  # as verify: the null audience the typo leaves is a finding
    page = (out / "receipts.html").read_text(encoding="utf-8")
    start = page.index('id="verdict"')
    banner = page[start : page.index("</section>", start)]
    assert "Keys not as declared" in banner
    row = "<td><code>withheld.audienceID</code></td><td>receipts</td><td>unknown_key</td>"
    assert row in banner
    assert "<code>withheld.audienceId</code>" in banner


def test_the_text_verdict_lists_the_keys_up_to_max_findings(tmp_path):
    records = [_decision() for _ in range(4)]
    for number, record in enumerate(records):
        record["decision"][f"note_{number}"] = "drift"
    _write(tmp_path, "dec.jsonl", records, policies=True)
    status, text = _cli("verify", str(tmp_path), "--max-findings", "3")
    assert status == 0
    table = text[text.index("keys not as declared") :]
    assert [f"decision.note_{n}" in table for n in range(4)].count(True) >= 3
    assert "... and 1 more key(s) (--json lists all)" in table
    _, output = _cli("verify", str(tmp_path), "--json")
    assert len(json.loads(output)["keys"]) == 4


def test_the_engram_fixtures_and_the_bundled_data_have_every_key_declared():
    flat = str(DATA / "plans" / "arborist_runs_flat.jsonl")
    # The flat plans' values arborist's type does not declare: "top_k": "5",
    # "max_context_chars": 12000.0, and the three MT fields null.
    undeclared = [(flat, 10), (flat, 21), (flat, 33), (flat, 33), (flat, 33)]
    for source in (ENGRAM, DATA):
        for engine in ("pandas", "dask"):
            result = _verify(source, engine=engine)
            found = result.findings.query("check == 'record_keys'")
            assert set(found["rule"].astype(str)) <= {"undeclared_value"}, (source, engine)
            places = list(zip(found["source_file"], found["source_line"], strict=True))
            assert places == (undeclared if source == DATA else []), (source, engine)
            counts = result.key_counts()
            assert set(counts["note"]) <= {"undeclared_value"} and counts["count"].sum() == len(
                places
            )
    engram = _verify(ENGRAM)
    assert engram.clean and engram.findings.empty and engram.accounting.rejected.empty


# -- the property: one key changed, one note ------------------------------------------------

_POOL_FILES = {
    "decisions": ["decisions/2026-01_baseline.jsonl", "decisions/2026-03_cost_saver.jsonl"],
    "plans": ["plans/arborist_runs.jsonl", "plans/arborist_runs_flat.jsonl"],
    "receipts": ["receipts/operator_receipts.jsonl", "receipts/recall_cli.jsonl"],
    "requests": ["requests/compile_requests.jsonl"],
}


@cache
def _pool(kind: str) -> tuple[str, ...]:
    """Lines of the bundled data of ``kind`` that load and verify with no finding at all."""
    found = []
    for name in _POOL_FILES[kind]:
        path = DATA / name
        result = _verify(path if kind != "decisions" else [path, DATA / "policies"])
        flagged = set(result.findings["source_line"].dropna().astype(int))
        lines = path.read_text(encoding="utf-8").splitlines()
        found += [line for number, line in enumerate(lines, 1) if number not in flagged][:25]
    return tuple(found)


def _objects(fields, value: dict, prefix: str = ""):
    """``(path prefix, fields, object)`` of every declared, closed object present in ``value``."""
    yield prefix, fields, value
    for field in fields:
        item = value.get(field.name)
        if field.type == "object" and not field.open and isinstance(item, dict):
            yield from _objects(field.fields, item, f"{prefix}{field.name}.")


def _variant(name: str, taken: set[str]) -> str:
    """A spelling of ``name`` a logger might write by mistake (another case convention)."""
    if "_" in name:
        head, *rest = name.split("_")
        candidate = head + "".join(part.title() for part in rest)
    elif name.lower() != name:
        candidate = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    else:
        candidate = name.upper()
    return candidate if candidate not in taken else name.upper()


LOGGER_KEYS = ["timestamp", "request_id", "host", "hostname", "level", "trace_id", "ts", "pid"]


@st.composite
def mutations(draw):
    kind = draw(st.sampled_from(sorted(_POOL_FILES)))
    record = json.loads(draw(st.sampled_from(_pool(kind))))
    shape = shape_of(registry.kind(kind).shapes, record)
    places = list(_objects(shape.fields, record))
    prefix, fields, target = draw(st.sampled_from(places))
    declared = {field.name for field in fields}
    # A field may go when the record cannot load without it, or when it holds the default.
    removable = [
        field
        for field in fields
        if field.name in target
        and (field.required or (field.has_default and target[field.name] == field.default))
    ]
    action = draw(st.sampled_from(["add", "log", *(["remove", "rename"] if removable else [])]))
    if action == "log":
        # A logger's own key at the top level: an extra column, not a finding.
        new = draw(st.sampled_from(LOGGER_KEYS))
        record[new] = draw(st.integers(0, 9) | st.text(max_size=5))
        return kind, record, action, "", None, None
    if action == "add":
        if prefix:
            new = draw(st.from_regex(r"[a-z][a-z_]{2,10}[a-z]", fullmatch=True))
            new = new if new not in declared else new + "_x"
        else:
            new = _variant(draw(st.sampled_from(sorted(declared))), set(target) | declared)
        target[new] = draw(st.none() | st.integers(-5, 5) | st.text(max_size=5))
        return kind, record, action, prefix, None, new
    field = draw(st.sampled_from(removable))
    value = target.pop(field.name)
    new = None
    if action == "rename":
        new = _variant(field.name, set(target) | declared)
        target[new] = value
    return kind, record, action, prefix, field, new


@settings(SETTINGS, max_examples=80)
@given(mutation=mutations())
def test_one_key_changed_is_one_note_or_one_rejection(tmp_path_factory, mutation):
    """One key added is one ``unknown_key`` (none for a logger's own key at the top
    level); one removed is one ``defaulted_field``, or one rejection naming it where
    the record cannot do without it; a rename is both halves: the new key's
    ``unknown_key`` and the old field's ``defaulted_field``, or one rejection naming
    both. Nothing else is found."""
    kind, record, action, prefix, field, new = mutation
    folder = tmp_path_factory.mktemp("mutated")
    _write(folder, "records.jsonl", [record], policies=kind == "decisions")
    result = _verify(folder)
    old = None if field is None else prefix + field.name
    added = None if new is None else prefix + new
    # A logger's time key with text that is not a time is also a time notice.
    timed = result.findings["check"] == "record_times"
    assert set(result.findings.loc[timed, "field"]) <= set(record) & set(TIME_KEYS)
    findings = result.findings.loc[~timed]
    found = sorted(zip(findings["rule"].astype(str), findings["field"], strict=True))
    details = findings["detail"].tolist()
    if found == [("rejected_row", None)] or (found and found[0][0] == "rejected_row"):
        # A required field gone, or a key the kind's builder refuses: one rejection naming it.
        assert len(found) == 1, found
        assert field is None or field.required or action == "rename", found
        for path in filter(None, (old, added)):
            assert path in details[0], (path, details[0])
        return
    expected = []
    if added is not None:
        expected.append(("unknown_key", added))
    if field is not None:
        assert not field.required, (field, found)
        expected.append(("defaulted_field", old))
    assert found == sorted(expected), (action, found, details)
    if added is not None:
        (detail,) = result.findings.loc[result.findings["rule"] == "unknown_key", "detail"]
        if action == "rename" or not prefix:
            assert "did you mean" in detail


# -- a field left to its default is replayed with it --------------------------------------

KNOWN = json.loads((ROOT / "tests" / "data" / "routing_known_answers.json").read_text("utf-8"))
INPUT_DEFAULTS = {
    "deterministic_keyword_hits": [],
    "self_declared_high_impact": False,
    "self_declared_risk_flags": [],
    "confidence": 1.0,
    "evidence_doc_count": 0,
}


@pytest.mark.parametrize("shape", ["nested", "flat"])
def test_a_field_left_out_is_replayed_with_decide_routings_default(tmp_path, shape):
    # The known answers are the reference decide_routing's; an input equal to its
    # default may be left out of the record, and the same answer must come back.
    records, omitted = [], []
    for number, case in enumerate(KNOWN["cases"], 1):
        inputs = dict(case["inputs"])
        decision = dict(case["expected"])
        left_out = [name for name, default in INPUT_DEFAULTS.items() if inputs[name] == default]
        for name in left_out:
            del inputs[name]
        if decision["used_fallback"] is False:
            del decision["used_fallback"]
            left_out.append("used_fallback")
        ids = {"decision_id": case["name"], "policy_id": case["policy_id"]}
        if shape == "flat":
            records.append(ids | inputs | decision)
            omitted += [(number, name) for name in left_out]
        else:
            records.append(ids | {"inputs": inputs, "decision": decision})
            omitted += [
                (number, ("decision." if name == "used_fallback" else "inputs.") + name)
                for name in left_out
            ]
    _write(tmp_path, "known.jsonl", records)
    audit = ea.load(tmp_path, progress=False)
    policies = ea.PolicySet(ea.Policy.from_dict(spec) for spec in KNOWN["policies"].values())
    assert len(audit.decisions) == len(KNOWN["cases"]) and audit.rejected.empty
    assert ea.check_decisions(audit.decisions, policies).empty
    keys = audit.keys
    assert (keys["note"] == "defaulted_field").all()
    assert sorted(zip(keys["source_line"], keys["key"], strict=True)) == sorted(omitted)
    assert len(omitted) > len(KNOWN["cases"])
