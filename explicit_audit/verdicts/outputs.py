"""The outputs of ``explicit-audit verify``: the kit's own formats, and writing one.

``text`` (the default) is for people; ``json`` (``--json``) is the kit's
own strict JSON; ``junit`` and ``sarif`` are for CI dashboards. Each is one
entry of the registry of formats (:mod:`explicit_audit.verdicts.formats`),
declared here as a format kept outside the kit would be. Each also has a
document for a run that could not check anything (exit 2), but for text,
whose reader reads stderr: a pipeline that reads the output always gets one
document to read.
"""

from __future__ import annotations

import json
from typing import TextIO

from .formats import Failure, OutputFormat, Rendering, output_format, register_format
from .junit import junit_error, junit_xml
from .sarif import sarif_error, sarif_log
from .text import verdict_text
from .verdict import Verdict

__all__ = ["KIT_FORMATS", "error_output", "json_text", "write_verdict"]


def json_text(document: dict) -> str:
    """``document`` as strict JSON text (RFC 8259), indented, with a final newline.

    The text is always UTF-8: a lone surrogate in a string (a byte of a file
    name that is not UTF-8, as the system gave it) is written ``\\xNN``.
    """
    # allow_nan=False: a NaN that slipped through is a bug to see, never output to parse.
    text = json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(_utf8(document), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return text


def _utf8(value):
    """``value`` with every string made encodable as UTF-8 (a lone surrogate escaped)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            pass
        try:
            raw = value.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            return value.encode("utf-8", errors="backslashreplace").decode("utf-8")
        return raw.decode("utf-8", errors="backslashreplace")
    if isinstance(value, dict):
        return {_utf8(key): _utf8(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_utf8(item) for item in value]
    return value


def json_document(verdict: Verdict, provenance: dict) -> dict:
    """The ``--json`` document: the data, the exit status, the checks, the findings, and more.

    ``clean`` and ``state`` are the verdict's (:data:`~explicit_audit.verdicts.verdict.STATES`);
    ``window`` and ``baseline`` are there when they were asked for.
    """
    document = {
        "data": verdict.data,
        "exit_status": verdict.status,
        **verdict.verification.to_dict(),
        "provenance": provenance,
    }
    # The verdict's own state, of one vocabulary with the exit status: "clean" is true
    # only when every check looked at records and found no error.
    document.update(clean=verdict.clean, state=verdict.state)
    if verdict.window is not None:
        document["window"] = verdict.window.to_dict()
    if verdict.baseline is not None:
        document["baseline"] = verdict.baseline_dict()
    return document


def _text(verdict: Verdict, rendering: Rendering) -> str:
    lines = [verdict_text(verdict, max_findings=rendering.max_findings), *rendering.notes]
    return "\n".join(lines) + "\n"


def _json(verdict: Verdict, rendering: Rendering) -> str:
    return json_text(json_document(verdict, rendering.provenance))


def _json_failed(failure: Failure) -> str:
    error = {
        "type": failure.type,
        "file": failure.file,
        "line": failure.line,
        "field": failure.field,
        "message": failure.message,
    }
    return json_text(
        {"data": failure.data, "exit_status": failure.status, "clean": None, "error": error}
    )


#: The kit's own formats, registered as a format kept outside the kit would be.
KIT_FORMATS = (
    OutputFormat(
        "text",
        "for people, the default: each check, then at most --max-findings findings per check",
        write=_text,
    ),
    OutputFormat(
        "json",
        "one strict JSON document (RFC 8259) holding every finding, as --json writes",
        write=_json,
        failed=_json_failed,
    ),
    OutputFormat(
        "junit",
        "JUnit XML, one test case per rule and one skipped test case per check not run",
        write=lambda verdict, rendering: junit_xml(verdict),
        failed=junit_error,
    ),
    OutputFormat(
        "sarif",
        "SARIF 2.1.0, one result per finding",
        write=lambda verdict, rendering: sarif_log(verdict),
        failed=sarif_error,
    ),
)
for _format in KIT_FORMATS:
    register_format(_format)


def write_verdict(
    verdict: Verdict,
    name: str,
    stream: TextIO,
    *,
    provenance: dict | None = None,
    max_findings: int = 20,
    notes: tuple[str, ...] = (),
) -> None:
    """Write the verdict to ``stream`` in the registered format ``name``."""
    rendering = Rendering(provenance or {}, max_findings, tuple(notes))
    stream.write(output_format(name).write(verdict, rendering))
    stream.flush()


def error_output(name: str, failure: Failure) -> str | None:
    """The document of a run that could not check anything in the format ``name``, or
    None where the format has none (text: stderr says it)."""
    failed = output_format(name).failed
    return None if failed is None else failed(failure)
