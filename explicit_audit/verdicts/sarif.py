"""A verdict as SARIF 2.1.0, the static-analysis log that code-scanning dashboards read.

The mapping:

- one run whose tool (``explicit-audit``, the kit's version) lists every
  rule of every check as a reporting descriptor: its name as ``id``, what it
  requires as ``shortDescription``, its severity as the default level
  (``error``, or ``note`` for a notice), its check and record kind as
  properties;
- one result per finding: the rule, the level, the detail as the message,
  the file (a relative path against the base ``CWD``, the folder ``verify``
  ran in; an absolute path or a URL as a URI; the file's own bytes,
  percent-encoded; standard input as no file) and line, the record's id as a
  logical location, and ``partialFingerprints["explicitAuditFinding/v1"]``,
  the finding's identity across runs
  (:func:`~explicit_audit.verdicts.baseline.fingerprint`: the same rule on
  the same record keeps it however the lines shift);
- with a baseline, each result's ``baselineState`` (``new`` or
  ``unchanged``), and the resolved findings as results in state ``absent``;
- the invocation's exit code, the verdict's state
  (:data:`~explicit_audit.verdicts.verdict.STATES`) and the checks not run
  (no records), the records of each kind ``--expect`` named and the ones
  missing, the window and what it left out.

A line 0 (a file as a whole) gives no region. The log validates against the
SARIF 2.1.0 JSON schema.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from .._core import registry
from .._core.edit_findings import STATE_CHECK
from .._core.jsonable import json_rows
from ..reading.names import STDIN_NAME, name_bytes
from .baseline import fingerprint
from .formats import Failure
from .verdict import Verdict

__all__ = ["FINGERPRINT_KEY", "sarif_error", "sarif_log"]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: The key of a result's ``partialFingerprints`` that holds its identity.
FINGERPRINT_KEY = "explicitAuditFinding/v1"
_BASE = "CWD"
_LEVELS = {"error": "error", "notice": "note"}


def _driver(verdict_version: str, state: bool = False) -> dict:
    rules = []
    for name, rule in registry.rules(state=state).items():
        rules.append(
            {
                "id": name,
                "shortDescription": {"text": rule.description},
                "defaultConfiguration": {"level": _LEVELS.get(rule.severity, "warning")},
                "properties": {"check": rule.check, "kind": rule.kind or None},
            }
        )
    return {"name": "explicit-audit", "version": verdict_version, "rules": rules}


def _location(finding: dict) -> dict:
    name = str(finding.get("source_file") or "")
    if "://" in name:
        artifact = {"uri": name}
    elif name in (STDIN_NAME, ""):
        artifact = {"description": {"text": "standard input" if name else "no file"}}
    else:
        # The file's own bytes, not the text that shows them (a backslash, a byte
        # that is not UTF-8, a control character are escaped there).
        path = name_bytes(name)
        if os.path.isabs(path):
            artifact = {"uri": "file://" + quote(path)}
        else:
            artifact = {"uri": quote(path), "uriBaseId": _BASE}
    physical: dict = {"artifactLocation": artifact}
    line = finding.get("source_line")
    if type(line) is int and line >= 1:
        physical["region"] = {"startLine": line}
    location: dict = {"physicalLocation": physical}
    if finding.get("record") is not None:
        location["logicalLocations"] = [{"name": str(finding["record"]), "kind": "object"}]
    return location


def _result(finding: dict, rule_index: dict[str, int], state: str | None) -> dict:
    result = {
        "ruleId": finding["rule"],
        "level": _LEVELS.get(finding["severity"], "warning"),
        "kind": "fail",
        "message": {"text": str(finding["detail"])},
        "locations": [_location(finding)],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(finding)},
        "properties": {
            "check": finding["check"],
            "kind": finding.get("kind"),
            "field": finding.get("field"),
            "row": finding.get("row"),
        },
    }
    if finding["rule"] in rule_index:
        result["ruleIndex"] = rule_index[finding["rule"]]
    if state is not None:
        result["baselineState"] = state
    return result


def sarif_log(verdict: Verdict) -> str:
    """The verdict as one SARIF 2.1.0 log (JSON text): one run, a result per finding.

    Examples
    --------
    >>> json.loads(sarif_log(verdict))["runs"][0]["invocations"][0]["exitCode"]  # doctest: +SKIP
    1
    """
    driver = _driver(verdict.version, STATE_CHECK in verdict.verification.checked)
    rule_index = {rule["id"]: index for index, rule in enumerate(driver["rules"])}
    with_baseline = verdict.baseline is not None
    results = []
    for position, finding in enumerate(verdict.findings):
        state = None
        if with_baseline:
            state = "new" if verdict.is_new(position) else "unchanged"
        results.append(_result(finding, rule_index, state))
    if verdict.baseline is not None:
        results.extend(_result(f, rule_index, "absent") for f in verdict.baseline.resolved)
    invocation: dict = {"executionSuccessful": True, "exitCode": verdict.status}
    statuses = verdict.verification.statuses
    properties: dict = {
        "data": verdict.data,
        "state": verdict.state,
        "not_run": [check for check, status in statuses.items() if status == "not run"],
    }
    if verdict.verification.expected:
        properties["expected"] = dict(verdict.verification.expected)
        properties["missing"] = verdict.verification.missing
    if verdict.window is not None:
        properties["window"] = verdict.window.to_dict()
    if verdict.baseline is not None:
        properties["baseline"] = {
            key: value
            for key, value in verdict.baseline_dict().items()
            if not key.endswith("_findings")
        }
    invocation["properties"] = properties
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {_BASE: {"uri": Path.cwd().as_uri() + "/"}},
        "invocations": [invocation],
        "results": results,
        "columnKind": "unicodeCodePoints",
        "properties": {"summary": json_rows(verdict.verification.summary())},
    }
    return _dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]})


def sarif_error(failure: Failure) -> str:
    """The SARIF log of a run that could not check anything: a failed invocation."""
    notification = {"level": "error", "message": {"text": failure.message}}
    run = {
        "tool": {"driver": {"name": "explicit-audit", "version": failure.version}},
        "invocations": [
            {
                "executionSuccessful": False,
                "exitCode": failure.status,
                "toolExecutionNotifications": [notification],
            }
        ],
        "results": [],
    }
    return _dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]})


def _dumps(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
