"""A verdict as JUnit XML, the test report every CI dashboard reads.

The mapping, chosen so that a dashboard's history follows each rule from run
to run:

- ``<testsuites>``: the run, named ``explicit-audit verify DATA``;
- one ``<testsuite>`` per check, in verdict order (``rejected_rows``,
  ``plan_hashes``, ...), its properties saying what it covers, how many
  records it examined, the data, and the window and baseline when given;
- one ``<testcase>`` per rule of the check (``classname`` the check,
  ``name`` the rule), every rule listed whether it found anything or not;
- for a check that looked at no record (not run), one ``<testcase>`` named
  after the check holding ``<skipped message="...">`` with the reason, never
  a passing one: a check that did not run passes nothing;
- with ``--expect``, a suite ``expect``: a test case per kind named, a
  ``<failure>`` where none of its records was found (exit 3);
- a ``<failure>`` in a rule's test case when it has findings that fail the
  run (errors; with ``--new-only``, new errors only), its text one line per
  finding (``file:line: [record] field: detail``); the findings that do not
  fail it (notices, and persisting errors under ``--new-only``) are listed
  in the test case's ``<system-out>``.

The document validates against the JUnit schema of Jenkins' xUnit plug-in
(``junit-10.xsd``, the one ``pytest --junitxml`` writes to). A finding's
line escapes control characters as the text format does (``\\r``, ``\\n``,
``\\x1b``), so that each finding stays one line and a carriage return is not
read back as a newline; elsewhere, characters XML 1.0 cannot hold are
written as ``\\xNN`` or ``\\uNNNN`` escapes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .._core import registry
from .._core.edit_findings import STATE_CHECK
from .formats import Failure
from .text import escape_char, visible
from .verdict import Verdict

__all__ = ["junit_error", "junit_xml"]

# XML 1.0 allows tab, newline, carriage return and everything from U+0020 on,
# but for the surrogates and U+FFFE/U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: object) -> str:
    return _NOT_XML.sub(escape_char, str(text))


def _line(finding: dict, *, new: bool | None) -> str:
    place = f"{finding['source_file']}:{finding['source_line']}"
    record = f" [{finding['record']}]" if finding.get("record") is not None else ""
    field = f" {finding['field']}:" if finding.get("field") is not None else ""
    mark = ""
    if new is not None:
        mark = " (new)" if new else " (persisting)"
    notice = " (notice)" if finding["severity"] != "error" else ""
    return _xml_text(visible(f"{place}:{record}{field} {finding['detail']}{notice}{mark}"))


def junit_xml(verdict: Verdict) -> str:
    """The verdict as one JUnit XML document, with its XML declaration.

    A test suite per check, a test case per rule (a failure holding the
    findings that fail the run), a skipped test case per check not run.

    Examples
    --------
    >>> junit_xml(verdict).splitlines()[1]  # doctest: +SKIP
    '<testsuites name="explicit-audit verify data" tests="41" failures="28" errors="0">'
    """
    state = STATE_CHECK in verdict.verification.checked
    checks = registry.checks(state=state)
    read = {
        check.name: registry.examined(checker, check)
        for checker in registry.checkers(state=state)
        for check in checker.checks
    }
    rules = registry.rules(state=state)
    summary = verdict.verification.summary()
    by_rule: dict[tuple[str, str], list[int]] = {}
    for position, finding in enumerate(verdict.findings):
        by_rule.setdefault((finding["check"], finding["rule"]), []).append(position)
    root = ET.Element("testsuites", name=_xml_text(f"explicit-audit verify {verdict.data}"))
    total_tests = total_failures = 0
    for row in summary.itertuples(index=False):
        check = row.check
        suite = ET.SubElement(root, "testsuite", name=check)
        properties = ET.SubElement(suite, "properties")
        for name, value in _properties(verdict, row, checks.get(check)):
            ET.SubElement(properties, "property", name=name, value=_xml_text(value))
        names = [name for name, rule in rules.items() if rule.check == check]
        if row.status == "not run":
            case = ET.SubElement(suite, "testcase", classname=check, name=check)
            ET.SubElement(case, "skipped", message=_not_run(row, read.get(check)))
            noted = [p for name in names for p in by_rule.get((check, name), [])]
            if noted:  # notices about no record checked (none fails the run)
                ET.SubElement(case, "system-out").text = _lines(verdict, noted)
            tests, failures, skipped = 1, 0, 1
        else:
            failures = _rule_cases(suite, verdict, check, names, by_rule)
            tests, skipped = len(names), 0
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        suite.set("skipped", str(skipped))
        total_tests += tests
        total_failures += failures
    tests, failures = _expected_cases(root, verdict)
    root.set("tests", str(total_tests + tests))
    root.set("failures", str(total_failures + failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _expected_cases(root: ET.Element, verdict: Verdict) -> tuple[int, int]:
    """A suite ``expect``, a test case per kind ``--expect`` names: failed where it is missing.

    The exit status is then 3, not 0: a dashboard that reads the cases sees why.
    """
    expected = verdict.verification.expected
    if not expected:
        return 0, 0
    suite = ET.SubElement(root, "testsuite", name="expect")
    for name, records in expected.items():
        case = ET.SubElement(suite, "testcase", classname="expect", name=name)
        if records:
            ET.SubElement(case, "system-out").text = f"expected {name}: {records} record(s)"
        else:
            ET.SubElement(case, "failure", type="missing", message=f"expected {name}: none found")
    failures = len(verdict.verification.missing)
    for key, value in (("tests", len(expected)), ("failures", failures), ("errors", 0)):
        suite.set(key, str(value))
    suite.set("skipped", "0")
    return len(expected), failures


def _rule_cases(
    suite: ET.Element,
    verdict: Verdict,
    check: str,
    names: list[str],
    by_rule: dict[tuple[str, str], list[int]],
) -> int:
    """A test case per rule of a check that ran; how many of them fail."""
    rules = registry.rules(state=STATE_CHECK in verdict.verification.checked)
    failures = 0
    for rule_name in names:
        case = ET.SubElement(suite, "testcase", classname=check, name=rule_name)
        positions = by_rule.get((check, rule_name), [])
        failing = [p for p in positions if verdict.fails(p)]
        if failing:
            failures += 1
            failure = ET.SubElement(
                case,
                "failure",
                type=rule_name,
                message=_xml_text(f"{len(failing)} finding(s): {rules[rule_name].description}"),
            )
            failure.text = _lines(verdict, failing)
        passing = [p for p in positions if not verdict.fails(p)]
        if passing:
            ET.SubElement(case, "system-out").text = _lines(verdict, passing)
    return failures


def _lines(verdict: Verdict, positions: list[int]) -> str:
    """The findings at ``positions``, one line each, marked new or persisting with a baseline."""
    with_baseline = verdict.baseline is not None
    return "\n".join(
        _line(verdict.findings[p], new=verdict.is_new(p) if with_baseline else None)
        for p in positions
    )


def _not_run(row, tables: tuple[str, ...] | None) -> str:
    """Why a check was skipped: it looked at no record, and which tables it would have read."""
    if row.check == STATE_CHECK:
        where = "the audit state holds no earlier audit of DATA's files"
    elif not tables:
        where = "no value was read"
    elif len(tables) == 1:
        where = f"DATA holds no record of the table {tables[0]}"
    else:
        where = f"DATA holds no record of the tables {', '.join(tables)} it reads"
    return _xml_text(f"not run (no records): {where}, so this check ({row.covers}) looked at none")


def _properties(verdict: Verdict, row, check) -> list[tuple[str, str]]:
    found = [
        ("covers", row.covers),
        ("records_checked", str(row.checked)),
        ("errors_found", str(row.findings)),
        ("notices_found", str(row.notices)),
        ("data", verdict.data),
        ("explicit_audit_version", verdict.version),
    ]
    if check is not None and check.examines is not None:
        found.append(("table", check.examines))
    if verdict.window is not None:
        found.append(("window", verdict.window.window.describe()))
        found.append(("window_undated", verdict.window.window.undated))
    if verdict.baseline is not None:
        found.append(("baseline", verdict.baseline.baseline))
        found.append(("new_only", "true" if verdict.new_only else "false"))
    return found


def junit_error(failure: Failure) -> str:
    """The JUnit document of a run that could not check anything: one erroring test case."""
    data, message = failure.data or "", failure.message
    root = ET.Element(
        "testsuites", name=_xml_text(f"explicit-audit verify {data}"), tests="1", failures="0"
    )
    root.set("errors", "1")
    suite = ET.SubElement(
        root, "testsuite", name="input", tests="1", failures="0", errors="1", skipped="0"
    )
    case = ET.SubElement(suite, "testcase", classname="input", name="read")
    error = ET.SubElement(case, "error", type=failure.type, message=_xml_text(message))
    error.text = _xml_text(message)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
