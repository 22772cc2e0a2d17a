"""The outputs of ``explicit-audit verify``: one document in the format asked for.

``text`` (the default) is for people; ``json`` (``--json``) is the kit's
own strict JSON; ``junit`` and ``sarif`` are for CI dashboards. Each format
also has a document for a run that could not check anything (exit 2), so a
pipeline that reads the output always gets one document to read.
"""

from __future__ import annotations

import json
from typing import TextIO

from .junit import junit_error, junit_xml
from .sarif import sarif_error, sarif_log
from .text import verdict_text
from .verdict import Verdict

__all__ = ["FORMATS", "error_output", "json_text", "write_verdict"]

#: The formats ``verify --format`` writes.
FORMATS = ("text", "json", "junit", "sarif")


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

    ``window`` and ``baseline`` are there when they were asked for.
    """
    document = {
        "data": verdict.data,
        "exit_status": verdict.status,
        **verdict.verification.to_dict(),
        "provenance": provenance,
    }
    if verdict.window is not None:
        document["window"] = verdict.window.to_dict()
    if verdict.baseline is not None:
        document["baseline"] = verdict.baseline_dict()
    return document


def write_verdict(
    verdict: Verdict,
    output_format: str,
    stream: TextIO,
    *,
    provenance: dict | None = None,
    max_findings: int = 20,
) -> None:
    """Write the verdict to ``stream`` in ``output_format`` (one of :data:`FORMATS`)."""
    if output_format == "json":
        text = json_text(json_document(verdict, provenance or {}))
    elif output_format == "junit":
        text = junit_xml(verdict)
    elif output_format == "sarif":
        text = sarif_log(verdict)
    else:
        text = verdict_text(verdict, max_findings=max_findings) + "\n"
    stream.write(text)
    stream.flush()


def error_output(
    output_format: str, data: str | None, exc: Exception, kind: str, *, version: str, status: int
) -> str | None:
    """The document of a run that could not check anything, or None for text (stderr says it)."""
    if output_format == "json":
        error = {
            "type": kind,
            "file": getattr(exc, "source_file", None),
            "line": getattr(exc, "source_line", None),
            "field": getattr(exc, "field", None),
            "message": str(exc),
        }
        document = {"data": data, "exit_status": status, "clean": None, "error": error}
        return json_text(document)
    if output_format == "junit":
        return junit_error(data or "", str(exc), kind)
    if output_format == "sarif":
        return sarif_error(version, str(exc), status)
    return None
