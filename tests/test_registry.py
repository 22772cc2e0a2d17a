"""A fifth record kind, declared here and registered with one call, read and checked everywhere.

The toy kind ("badges": ``{"badge_id": ..., "holder": ..., "level": 1-5}``)
is written as docs/howto/plugin-kind.md says: a shape test, a builder,
a table, a check. Registered with :func:`explicit_audit.plugins.register`,
``ea.load`` (both engines), ``ea.verify_all`` and the ``explicit-audit``
commands read and check it, with no edit to the kit; in a new process, a
module that registers it is found through ``EXPLICIT_AUDIT_KINDS`` or the
entry point group ``explicit_audit.kinds``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

import explicit_audit as ea
from explicit_audit.plugins import (
    Check,
    Checker,
    Field,
    FindingsBuilder,
    KindTables,
    RecordError,
    RecordKind,
    Rule,
    RuleTable,
    Shape,
    Table,
    register,
    segment_values,
    sort_out,
    unregister,
)

ROOT = Path(__file__).resolve().parent.parent

# -- the toy kind, as a kind's own package declares it --------------------------------------

NAME = "badges"

RULES = RuleTable(
    [
        Rule(
            "level_out_of_range",
            "A badge's level is a whole number from 1 to 5.",
            check="badge_levels",
            kind=NAME,
            field="level",
        )
    ]
)


def matches(value) -> bool:
    return isinstance(value, dict) and "badge_id" in value


def _row(value: dict) -> dict:
    if not isinstance(value.get("badge_id"), str):
        raise RecordError("badge_id", "must be a string")
    level = value.get("level")
    if not isinstance(level, int) or isinstance(level, bool):
        raise RecordError("level", f"must be a whole number, got {level!r}")
    return {"badge_id": value["badge_id"], "holder": value.get("holder"), "level": level}


def build(segments) -> KindTables:
    kept, rejected = sort_out(segment_values(segments), NAME, _row)
    rows = [row for _, row in kept]
    badges = pd.DataFrame(
        {
            "source_file": pd.Series([item.source_file for item, _ in kept], dtype="str"),
            "source_line": pd.Series([item.source_line for item, _ in kept], dtype="int64"),
            "badge_id": pd.Series([row["badge_id"] for row in rows], dtype="str"),
            "holder": pd.Series([row["holder"] for row in rows], dtype="str"),
            "level": pd.Series([row["level"] for row in rows], dtype="int64"),
        }
    )
    return KindTables({"badges": badges}, rejected)


def level_findings(badges: pd.DataFrame) -> pd.DataFrame:
    found = FindingsBuilder(RULES, badges, record=badges["badge_id"], what="badge_levels")
    for position, level in enumerate(badges["level"].tolist()):
        if not 1 <= level <= 5:
            found.add(position, "level_out_of_range", f"the level is {level}")
    return found.frame()


KIND = RecordKind(
    name=NAME,
    tables=(Table("badges", "one badge (a toy kind)"),),
    matches=matches,
    build=build,
    checks=(
        Checker(
            run=level_findings,
            reads=("badges",),
            checks=(Check("badge_levels", "badge levels from 1 to 5", "badges"),),
            rules=RULES,
        ),
    ),
)

# -- the tests ------------------------------------------------------------------------------

#: The module a plug-in ships: it registers the kind, with the one call.
PLUGIN = """from test_registry import KIND
from explicit_audit.plugins import register

register(KIND)
"""


@pytest.fixture
def registered():
    register(KIND)  # the one call
    yield KIND
    unregister(NAME)


@pytest.fixture
def badges(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    lines = [
        {"badge_id": "b1", "holder": "ana", "level": 2},
        {"badge_id": "b2", "holder": "bo", "level": 7},
        {"badge_id": "b3", "holder": "cy", "level": "high"},
        {"badge_id": "b4", "level": 5},
    ]
    (folder / "badges.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def _load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


def test_without_the_kind_its_values_are_unknown(badges):
    audit = _load(badges)
    assert "badges" not in audit.tables
    assert audit.rejected["kind"].astype(str).tolist() == ["unknown"] * 4


def test_load_reads_the_registered_kind(registered, badges):
    audit = _load(badges)
    assert audit.badges["badge_id"].tolist() == ["b1", "b2", "b4"]
    assert audit.badges["source_line"].tolist() == [1, 2, 4]
    rejected = audit.rejected
    assert rejected[["source_line", "kind"]].astype(str).values.tolist() == [["3", "badges"]]
    assert rejected["reason"].iloc[0] == "level: must be a whole number, got 'high'"
    sources = audit.sources
    assert (sources["loaded"] + sources["rejected"] == sources["values_read"]).all()
    assert "badges" in ea.audit.TABLES
    assert audit.summary().set_index("table").loc["badges", "rows"] == 3


def test_verify_all_runs_the_kinds_check(registered, badges):
    result = ea.verify_all(_load(badges))
    summary = result.summary().set_index("check")
    assert summary.loc["badge_levels", ["checked", "findings"]].tolist() == [3, 1]
    assert summary.loc["rejected_rows", "findings"] == 1
    found = result.findings.query("check == 'badge_levels'")
    assert found[["source_line", "record", "rule", "detail"]].values.tolist() == [
        [2, "b2", "level_out_of_range", "the level is 7"]
    ]
    assert "level_out_of_range" in ea.verify.RULES
    assert not result.clean


def test_the_dask_engine_loads_and_checks_it(registered, badges):
    in_memory = _load(badges)
    lazy = _load(badges, engine="dask", blocksize=40)
    assert lazy.engine == "dask"
    pd.testing.assert_frame_equal(lazy.badges.compute(), in_memory.badges)
    on_dask, expected = ea.verify_all(lazy), ea.verify_all(in_memory)
    pd.testing.assert_frame_equal(on_dask.findings, expected.findings)
    assert on_dask.checked == expected.checked


def test_a_kind_that_declares_its_shape_gets_its_keys_checked(badges):
    shape = Shape(
        NAME,
        "badge",
        "a badge",
        (
            Field("badge_id", "string", "the badge"),
            Field("holder", "string", "who holds it", required=False),
            Field("level", "integer", "its level"),
        ),
        record=("badge_id",),
    )
    with (badges / "badges.jsonl").open("a") as lines:
        lines.write(json.dumps({"badge_id": "b5", "level": 2, "Holder": "di", "at": 1}) + "\n")
    register(dataclasses.replace(KIND, shapes=(shape,)))  # no other code
    try:
        for engine in ("pandas", "dask"):
            result = ea.verify_all(_load(badges, engine=engine))
            found = result.findings.query("check == 'record_keys'")
            assert found[["source_line", "record", "rule", "field"]].values.tolist() == [
                [5, "b5", "unknown_key", "Holder"]
            ], engine
            assert found["detail"].iloc[0].endswith("did you mean `holder`?")
        rejected = _load(badges, strict_keys=True).rejected
        assert rejected[["source_line", "kind"]].values.tolist() == [[3, NAME], [5, NAME]]
        assert "strict_keys: unknown key `Holder`" in rejected["reason"].iloc[1]
    finally:
        unregister(NAME)


def _command(*args: str, env: dict) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "explicit_audit.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)


def _environment(plugins: Path, **more: str) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "EXPLICIT_AUDIT_KINDS"}
    env["PYTHONPATH"] = os.pathsep.join([str(plugins), str(ROOT / "tests")])
    return env | more


def test_verify_json_checks_a_kind_named_by_the_environment(badges, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "badges_plugin.py").write_text(PLUGIN)
    env = _environment(plugins, EXPLICIT_AUDIT_KINDS="badges_plugin")
    finished = _command("verify", str(badges), "--json", env=env)
    assert finished.returncode == 1, finished.stderr
    document = json.loads(finished.stdout)
    summary = {row["check"]: row for row in document["summary"]}
    assert (summary["badge_levels"]["checked"], summary["badge_levels"]["findings"]) == (3, 1)
    assert [f["rule"] for f in document["findings"]] == ["rejected_row", "level_out_of_range"]
    # Without the plug-in, the same data is four values of no known kind.
    plain = _command("verify", str(badges), "--json", env=_environment(plugins))
    assert "badge_levels" not in {row["check"] for row in json.loads(plain.stdout)["summary"]}


def test_summary_reads_a_kind_registered_by_an_entry_point(badges, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "badges_plugin.py").write_text(PLUGIN)
    info = plugins / "badges_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: badges-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[explicit_audit.kinds]\nbadges = badges_plugin\n")
    finished = _command("summary", str(badges), env=_environment(plugins))
    assert finished.returncode == 0, finished.stderr
    table = finished.stdout.split("\n\n")[1]  # rows per table, after the heading
    rows = dict(line.split() for line in table.splitlines()[1:])
    assert rows["badges"] == "3"
    assert rows["rejected"] == "1"


def test_a_plugin_that_cannot_be_imported_is_named(badges, tmp_path):
    env = _environment(tmp_path, EXPLICIT_AUDIT_KINDS="no_such_badges_module")
    finished = _command("verify", str(badges), env=env)
    assert finished.returncode == 2
    assert "no_such_badges_module" in finished.stderr
    assert "EXPLICIT_AUDIT_KINDS" in finished.stderr


#: A plug-in with a bug: its check divides by zero.
BROKEN_PLUGIN = """import dataclasses
from test_registry import KIND
from explicit_audit.plugins import register

def broken(badges):
    return 1 / 0

register(dataclasses.replace(KIND, checks=(dataclasses.replace(KIND.checks[0], run=broken),)))
"""


def test_a_bug_in_a_plugin_exits_70_with_its_traceback_never_1(badges, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "broken_badges.py").write_text(BROKEN_PLUGIN)
    env = _environment(plugins, EXPLICIT_AUDIT_KINDS="broken_badges")
    said = "explicit-audit verify: stopped by an unexpected ZeroDivisionError: division by zero"
    documents = {}
    for output in ("text", "json", "junit", "sarif"):
        finished = _command("verify", str(badges), "--format", output, env=env)
        # Exit 1 would say "something was found": a verdict that was never reached.
        assert finished.returncode == 70, (output, finished.returncode, finished.stderr)
        lines = finished.stderr.strip().splitlines()
        assert lines[0] == "Traceback (most recent call last):" and "1 / 0" in finished.stderr
        assert lines[-1] == f"{said}; nothing was decided", lines[-1]
        documents[output] = finished.stdout
    assert documents["text"] == ""
    document = json.loads(documents["json"])
    assert (document["exit_status"], document["clean"]) == (70, None)
    assert document["error"]["type"] == "ZeroDivisionError"
    assert document["error"]["message"].startswith("stopped by an unexpected ZeroDivisionError")
    (run,) = json.loads(documents["sarif"])["runs"]
    (invocation,) = run["invocations"]
    assert (invocation["exitCode"], invocation["executionSuccessful"]) == (70, False)
    errors = ET.fromstring(documents["junit"]).findall(".//error")
    assert [error.get("type") for error in errors] == ["ZeroDivisionError"]


def test_a_kind_cannot_take_another_kinds_table(registered):
    taken = RecordKind("copies", tables=("badges",), matches=matches, build=build)
    with pytest.raises(ea.AuditError, match="table 'badges' is taken"):
        register(taken)


def test_a_rule_whose_check_the_checker_does_not_declare_is_refused():
    stray = RuleTable([Rule("level_high", "Levels stay low.", check="badge_level", kind=NAME)])
    checker = dataclasses.replace(KIND.checks[0], rules=RULES | stray)
    kind = dataclasses.replace(KIND, checks=(checker,))
    with pytest.raises(ea.AuditError) as raised:
        register(kind)
    message = str(raised.value)
    assert "'level_high'" in message and "'badge_level'" in message
    assert "its checks: badge_levels" in message
    assert NAME not in {found.name for found in ea.plugins.kinds()}


#: A plug-in module, edited between loads: the holder as written or upper-cased (its
#: rows), and the highest level it allows (the findings an audit state keeps).
EDITED = """import dataclasses

import pandas as pd
import test_registry as toy

UPPER, HIGHEST = {upper}, {highest}


def build(segments):
    built = toy.build(segments)
    table = built.tables["badges"]
    if UPPER:
        table = table.assign(holder=table["holder"].str.upper())
    return toy.KindTables({{"badges": table}}, built.rejected)


def level_findings(badges):
    found = toy.FindingsBuilder(toy.RULES, badges, record=badges["badge_id"], what="badge_levels")
    for position, level in enumerate(badges["level"].tolist()):
        if not 1 <= level <= HIGHEST:
            found.add(position, "level_out_of_range", f"the level is {{level}}")
    return found.frame()


KIND = dataclasses.replace(
    toy.KIND,
    build=build,
    checks=(dataclasses.replace(toy.KIND.checks[0], run=level_findings),),
)
"""


def _registered_from(path: Path, *, upper: bool, highest: int) -> None:
    import importlib.util

    path.write_text(EDITED.format(upper=upper, highest=highest), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("edited_badges", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["edited_badges"] = module
    spec.loader.exec_module(module)
    register(module.KIND)


@pytest.mark.parametrize("kept", ["cache", "state"])
def test_a_plug_in_kind_edited_between_loads_is_never_served_its_earlier_rows(
    badges, tmp_path, kept
):
    folder = tmp_path / "kept"
    plugin = tmp_path / "plugin" / "edited_badges.py"
    plugin.parent.mkdir()
    seen = []
    try:
        # Each text a size of its own: Python reuses a module's compiled code for a file of
        # the same size and modification time, written within the same second.
        for upper, highest in ((False, 5), (True, 5), (True, 10), (True, 10)):
            _registered_from(plugin, upper=upper, highest=highest)
            audit = _load(badges, **{kept: folder})
            found = ea.verify_all(audit).findings.query("check == 'badge_levels'")
            seen.append((audit.badges["holder"].fillna("").tolist(), found["source_line"].tolist()))
            unregister(NAME)
    finally:
        sys.modules.pop("edited_badges", None)
        if NAME in ea.audit.TABLES:
            unregister(NAME)
    assert seen == [
        (["ana", "bo", ""], [2]),
        (["ANA", "BO", ""], [2]),
        (["ANA", "BO", ""], []),
        (["ANA", "BO", ""], []),
    ]


def test_a_kind_whose_check_is_defined_in_a_notebook_cell_is_known_by_its_code(monkeypatch):
    # A cell's functions belong to the kernel's __main__, whose file (the kernel's launcher)
    # is not theirs: keyed by that file, an edited cell kept the digest, and its earlier rows.
    import types

    from explicit_audit._version import code_digest

    kernel = types.ModuleType("kernel_main")
    kernel.__file__ = __file__  # a module with a file of its own, as ipykernel's __main__
    monkeypatch.setitem(sys.modules, "kernel_main", kernel)
    digests = []
    for highest in (5, 10):
        cell = f"def run(badges):\n    return toy.level_findings(badges) if {highest} else None\n"
        namespace = {"__name__": "kernel_main", "toy": sys.modules[__name__]}
        exec(compile(cell, "<cell>", "exec"), namespace)
        assert namespace["run"].__module__ == "kernel_main"
        checker = dataclasses.replace(KIND.checks[0], run=namespace["run"])
        digests.append(code_digest([dataclasses.replace(KIND, checks=(checker,))]))
    assert digests[0] != digests[1]
