"""Hostile values: numbers, names and dates that once escaped ``ea.load`` or a check.

Each test writes a real file and asserts the promised outcome: a rejected row
naming file and line, a finding, or a clean ``AuditError`` (exit 2 on the
command line, one line, no traceback); never another exception.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import accounted as _accounted
from conftest import make_receipt
from conftest import quiet_load as _load

import explicit_audit as ea
from explicit_audit.views import time_range, window_options, window_readout, withheld_view

ROOT = Path(__file__).parent.parent
DATA = ROOT / "data"
PRESENTED = (
    (Path(__file__).parent / "data" / "engram" / "presentations.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()[0]
)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explicit_audit.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


# -- digit runs past Python's integer-string limit ----------------------------------------------

_LONG = "9" * 4_301  # one digit past sys.get_int_max_str_digits()


def _with_long_integer() -> str:
    return json.dumps(make_receipt()).replace('"score": 0.9', f'"score": {_LONG}')


def _shapes() -> dict[str, tuple[str, int]]:
    """Three receipts, the second holding the long integer, in every layout; its line."""
    good, bad = json.dumps(make_receipt()), _with_long_integer()
    pretty = json.dumps(make_receipt(), indent=2)
    pretty_bad = pretty.replace('"score": 0.9', f'"score": {_LONG}')
    pretty_lines = pretty.count("\n") + 1
    return {
        "lines.jsonl": (f"{good}\n{bad}\n{good}\n", 2),
        "appended.json": (f"{pretty}\n{pretty_bad}\n{pretty}\n", pretty_lines + 1),
        "column0.json": (f"[\n{good},\n{bad},\n{good}\n]\n", 3),
        "one_line.json": (f"[{good}, {bad}, {good}]", 1),
        "indented.json": (f"[\n  {good},\n  {bad},\n  {good}\n]\n", 3),
    }


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("name", list(_shapes()))
def test_an_integer_past_the_int_string_limit_is_one_rejected_value_on_every_path(
    tmp_path, name, gz
):
    text, line = _shapes()[name]
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    audit = _load(path)
    assert len(audit.receipts) == 2
    assert audit.rejected.source_line.tolist() == [line]
    assert audit.rejected.source_file.tolist() == [str(path)]
    assert "an integer of more than 4300 digits" in audit.rejected.reason.iloc[0]
    _accounted(audit)


def test_a_digit_run_past_the_limit_inside_a_string_loads(tmp_path):
    receipt = make_receipt(query="7" * 5_000)
    for name, text in (
        ("run.jsonl", json.dumps(receipt) + "\n"),
        ("run.json", json.dumps([receipt, receipt], indent=2) + "\n"),
    ):
        (tmp_path / name).write_text(text)
        audit = _load(tmp_path / name)
        assert audit.rejected.empty
        assert set(audit.receipts["query"]) == {"7" * 5_000}


def test_verify_json_on_a_long_integer_reports_the_rejection_not_a_traceback(tmp_path):
    path = tmp_path / "log.json"
    path.write_text(f"[\n{_with_long_integer()}\n]\n")
    finished = _cli("verify", str(path), "--json")
    assert "Traceback" not in finished.stderr
    verdict = json.loads(finished.stdout)
    assert finished.returncode == 1
    assert json.dumps(verdict).count("more than 4300 digits") >= 1


# -- numbers beyond a double in fields the checks read ------------------------------------------


@pytest.mark.parametrize("number", ["9" * 400, "-" + "9" * 310, "1e400"])
def test_a_number_javascript_reads_as_infinity_in_a_presentation_pack_is_a_finding(
    tmp_path, number
):
    path = tmp_path / "presentations.jsonl"
    path.write_text(PRESENTED.replace('"version":"0.1.0"', f'"version":"0.1.0","n":{number}'))
    audit = _load(path)
    assert audit.rejected.empty and len(audit.presentations) == 1
    findings = ea.check_presentations(audit)
    (detail,) = findings.loc[findings.rule == "presentation_id_hash", "detail"]
    assert "pack.n is a number JavaScript reads as an infinity" in detail
    assert "canonicalJson refuses" in detail


def test_a_number_just_inside_a_double_still_gives_the_hash(tmp_path):
    path = tmp_path / "presentations.jsonl"
    near_max = str(int(sys.float_info.max))  # 309 digits: a double, not an infinity
    path.write_text(PRESENTED.replace('"version":"0.1.0"', f'"version":"0.1.0","n":{near_max}'))
    findings = ea.check_presentations(_load(path))
    (detail,) = findings.loc[findings.rule == "presentation_id_hash", "detail"]
    assert "its fields give presentation-" in detail


@pytest.mark.parametrize("field", ["score", "relevanceThreshold"])
def test_an_integer_past_a_double_in_a_receipt_number_is_rejected_naming_the_field(tmp_path, field):
    receipt = json.dumps(make_receipt())
    old = {"score": '"score": 0.9', "relevanceThreshold": '"relevanceThreshold": 0.5'}[field]
    bad = receipt.replace(old, old.split(":")[0] + ": " + "9" * 400)
    path = tmp_path / "log.jsonl"
    path.write_text(f"{receipt}\n{bad}\n")
    audit = _load(path)
    assert len(audit.receipts) == 1
    (reason,) = audit.rejected.reason
    assert field in reason and "an integer of 400 digits, beyond a 64-bit float" in reason
    assert audit.rejected.source_line.tolist() == [2]
    ea.verify_all(audit)


def test_an_integer_past_a_double_in_a_decision_probability_is_rejected(tmp_path):
    first = (DATA / "decisions" / "2026-01_baseline.jsonl").read_text().splitlines()[0]
    assert '"confidence":0.429' in first
    bad = first.replace('"confidence":0.429', '"confidence":' + "9" * 400)
    path = tmp_path / "decisions.jsonl"
    path.write_text(f"{first}\n{bad}\n")
    audit = _load(path)
    _accounted(audit)
    assert len(audit.decisions) == 1
    assert audit.rejected.source_line.tolist() == [2]
    assert "inputs.confidence" in audit.rejected.reason.iloc[0]


# -- lone surrogates in a routing policy ---------------------------------------------------------

_BASELINE = (DATA / "policies" / "baseline.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("  hr: {", '  "h\\ud800r": {', "subject_domains.h\\\\ud800r"),
        ("{name: general,", '{name: "gen\\udc00eral",', "fallback_domain.name"),
        ("  personal_data: {", '  "pers\\ud800": {', "risk_flags.pers\\\\ud800"),
        (
            "default_risk_flags: [personal_data]",
            'default_risk_flags: ["x\\ud800"]',
            "subject_domains.hr.default_risk_flags[0]",
        ),
        ("policy_id: baseline", 'policy_id: "b\\ud800"', "policy_id"),
    ],
    ids=["domain", "fallback", "risk_flag", "default_flag", "policy_id"],
)
def test_a_lone_surrogate_in_a_policy_is_a_policy_error_and_the_folder_keeps_the_rest(
    tmp_path, old, new, key
):
    for source in (DATA / "policies").iterdir():
        (tmp_path / source.name).write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    text = _BASELINE.replace(old, new)
    if key != "policy_id":
        text = text.replace("policy_id: baseline", "policy_id: hostile")
    bad = tmp_path / "hostile.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ea.PolicyError) as raised:
        ea.load_policy(bad)
    assert str(bad) in str(raised.value) and f"'{key}'" in str(raised.value)
    assert "lone surrogate" in str(raised.value)
    audit = _load(tmp_path)
    assert sorted(audit.policies) == ["baseline", "cost_saver", "strict"]
    (row,) = audit.rejected.itertuples()
    assert row.source_file == str(bad) and row.kind == "policies" and row.source_line > 0


# -- a scheduler the command line cannot use ------------------------------------------------------


@pytest.mark.parametrize(
    "scheduler", ["processess", "tcp://", "inproc://x", "tls://127.0.0.1:1", "tcp://[::1"]
)
def test_a_bad_scheduler_is_exit_2_with_one_line(scheduler):
    pytest.importorskip("distributed")
    finished = _cli("verify", str(DATA), "--engine", "dask", "--scheduler", scheduler)
    assert finished.returncode == 2, finished.stderr[-2000:]
    assert "Traceback" not in finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and f"scheduler {scheduler!r}" in lines[0]


# -- a receipt dated on the last day a date can be written for -------------------------------------


def test_a_receipt_dated_9999_12_31_keeps_its_time_as_written(tmp_path):
    path = tmp_path / "log.jsonl"
    stamps = ("2025-03-03T08:00:00Z", "9999-12-29T08:00:00Z", "9999-12-31T00:00:00.000Z")
    path.write_text("".join(json.dumps(make_receipt(timestamp=t)) + "\n" for t in stamps))
    # A time column holds nanoseconds (to 2262): such a time is kept as written, and said.
    with pytest.warns(ea.UnparsedTimeWarning, match=r"receipts\.timestamp \(2\)"):
        audit = ea.load(path, progress=False)
    receipts = audit.receipts
    assert receipts["timestamp_unparsed"].dropna().tolist() == list(stamps[1:])
    assert receipts["timestamp"].notna().tolist() == [True, False, False]
    days = time_range(audit)
    assert [f"{day:%Y-%m-%d}" for day in days] == ["2025-03-03", "2025-03-04"]
    labels = [label for label, _ in window_options(days)]
    assert labels[1:-1] == ["2025-03-03", "2025-03-04"]
    assert window_readout((days[0], days[-1])).startswith("2025-03-03 → 2025-03-04")
    # Every receipt counts with no window; a window keeps the one whose time it holds.
    assert withheld_view(audit).loc["(all)", "receipts"] == 3
    assert withheld_view(audit, window=(days[0], None)).loc["(all)", "receipts"] == 1


def test_one_receipt_dated_far_off_keeps_the_explorer_quick_and_its_window_whole(tmp_path):
    import time

    from explicit_audit import widgets
    from explicit_audit.views.withheld import MAX_DAYS

    path = tmp_path / "log.jsonl"
    stamps = ("2025-03-03T08:00:00Z", "2025-03-04T09:00:00Z", "2262-04-10T00:00:00Z")
    path.write_text("".join(json.dumps(make_receipt(timestamp=t)) + "\n" for t in stamps))
    audit = _load(path)
    started = time.perf_counter()
    panel = widgets.withheld_panel(audit)
    assert time.perf_counter() - started < 30  # 86,000 day options took minutes
    days = time_range(audit)
    assert len(days) <= MAX_DAYS + 1
    assert (f"{days[0]:%Y-%m-%d}", f"{days[-1]:%Y-%m-%d}") == ("2025-03-03", "2262-04-11")
    assert len(panel.controls["window"].options) == len(days) + 2  # the two open ends
    # The first step of the coarse days holds the two early receipts, and no other.
    assert withheld_view(audit, window=(days[0], days[1])).loc["(all)", "receipts"] == 2
    assert withheld_view(audit, window=(days[1], None)).loc["(all)", "receipts"] == 1


# -- a pretty writer killed mid-value, the next output written straight after ---------------------


def _pretty_outputs(n: int) -> list[str]:
    return [
        json.dumps(
            {
                "schema_version": 0,
                "status": "hit",
                "records": [],
                "receipt": make_receipt(query=f"q{i}"),
            },
            indent=2,
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_a_value_cut_mid_line_does_not_hide_the_next_pretty_output(tmp_path, fraction, gz):
    outputs = _pretty_outputs(10)
    cut = outputs[4][: int(len(outputs[4]) * fraction)]
    before = "\n".join(outputs[:4]) + "\n"
    text = before + cut + outputs[5] + "\n" + "\n".join(outputs[6:]) + "\n"
    path = tmp_path / ("killed.json" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    audit = _load(path)
    assert audit.receipts["query"].tolist() == [f"q{i}" for i in range(10) if i != 4]
    assert audit.rejected.source_line.tolist() == [before.count("\n") + 1]
    assert audit.receipts.source_line.tolist()[4] == (before + cut).count("\n") + 1
    assert audit.sources[["values_read", "loaded", "rejected"]].values.tolist() == [[10, 9, 1]]


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_cut_value_does_not_hide_a_next_output_holding_a_digit_run_past_the_limit(tmp_path, gz):
    outputs = _pretty_outputs(4)
    long_run = json.loads(outputs[2])
    long_run["ticket"] = 0  # replaced by 4,400 digits: more than Python reads as an int
    long_text = json.dumps(long_run, indent=2).replace('"ticket": 0', '"ticket": ' + "7" * 4_400)
    before = outputs[0] + "\n"
    cut = outputs[1][: len(outputs[1]) // 2]
    text = before + cut + long_text + "\n" + outputs[3] + "\n"
    path = tmp_path / ("killed.json" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q3"]
    # The cut value and the output after it: two rejected rows, each on its own line.
    assert audit.rejected.source_line.tolist() == [
        before.count("\n") + 1,
        (before + cut).count("\n") + 1,
    ]
    assert "4300 digits" in audit.rejected.reason.iloc[1]
    assert audit.sources[["values_read", "loaded", "rejected"]].values.tolist() == [[4, 2, 2]]


def test_an_object_nested_in_a_cut_value_is_not_taken_for_an_output(tmp_path):
    outputs = _pretty_outputs(3)
    # Cut just after the nested receipt object closed: it closes indented.
    cut = outputs[1][: outputs[1].rindex("}", 0, len(outputs[1]) - 1) + 1]
    path = tmp_path / "killed.json"
    path.write_text(outputs[0] + "\n" + cut + "\n" + outputs[2] + "\n")
    audit = _load(path)
    assert audit.receipts["query"].tolist() == ["q0", "q2"]
    assert audit.sources[["values_read", "loaded", "rejected"]].values.tolist() == [[3, 2, 1]]


# -- lone surrogates in record values --------------------------------------------------------


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDFFF", "\\uDbff"])
def test_a_lone_surrogate_in_a_value_is_rejected_naming_its_field_and_line(tmp_path, escape):
    """A receipt, a presentation and a decision holding an escaped lone surrogate are
    rejected, each naming the field; a pair of escapes and other escapes load."""
    from conftest import make_decision

    receipt = json.dumps(make_receipt(query="q"))
    paired = receipt.replace('"q"', '"ok \\ud83d\\ude00 caf\\u00e9"', 1)
    receipt = receipt.replace('"q"', f'"{escape}"', 1)
    presented = json.loads(PRESENTED)
    presented["content"] = "marker"
    presentation = json.dumps(presented).replace('"marker"', f'"a{escape}b"', 1)
    decision = json.dumps(make_decision("d-1")).replace('"d-1"', f'"d{escape}"', 1)
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([paired, receipt, presentation, decision, paired]) + "\n")
    audit = _load(path)
    reasons = dict(zip(audit.rejected.source_line, audit.rejected.reason, strict=True))
    assert sorted(reasons) == [2, 3, 4]
    assert reasons[2].startswith("query holds a lone surrogate")
    assert reasons[3].startswith("content holds a lone surrogate")
    assert reasons[4].startswith("decision_id holds a lone surrogate")
    assert audit.receipts.source_line.tolist() == [1, 5]
    assert audit.receipts["query"].tolist() == ["ok \U0001f600 caf\u00e9"] * 2
    _accounted(audit)


def test_a_lone_surrogate_where_a_plan_takes_an_undeclared_value_is_noted_or_rejected(tmp_path):
    import dask

    lines = (DATA / "plans" / "arborist_runs_flat.jsonl").read_text(encoding="utf-8").splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["retrieval_plan"]["top_k"] = "\ud800"
    second["retrieval_plan"]["retrieval_keywords"] = {"\ud800": 1}
    path = tmp_path / "plans.jsonl"
    # json.dumps writes each lone surrogate as its escape, as a producer might.
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    assert path.read_bytes().count(b'\\ud800"') == 2
    # Writing the note's value once raised TypeError (orjson refuses a lone surrogate).
    audit = _load(path)
    _accounted(audit)
    (reason,) = audit.rejected["reason"]
    assert reason.startswith("retrieval_plan.top_k: '\\ud800' is not accepted by int()")
    (note,) = audit.keys.itertuples()
    assert (note.source_line, note.note) == (2, "undeclared_value")
    assert '`retrieval_plan.retrieval_keywords` is {"\\ud800":1}, not a string' in note.detail
    with dask.config.set(scheduler="synchronous"):
        lazy = _load(path, engine="dask").compute()
    assert lazy.keys.equals(audit.keys) and lazy.rejected.equals(audit.rejected)
    finished = _cli("verify", str(path), "--json")
    assert finished.returncode == 1, finished.stderr
    assert json.loads(finished.stdout)["summary"]
