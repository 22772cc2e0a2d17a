"""The findings of :func:`explicit_audit.verify_requests`, row by row and by ``base_id``."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._core.columns import text_safe_series
from ..canonical import (
    DIALECTS,
    REQUEST_HASH_DIALECT,
    canonical_hash,
    is_sha256_hex,
    matching_dialects,
)
from ..errors import AuditError

__all__ = ["FINDING_COLUMNS", "FORBIDDEN_PAYLOAD_KEYS", "findings_frame"]

#: Keys a compile-request payload must never carry (§7.1 hiding rule).
FORBIDDEN_PAYLOAD_KEYS = frozenset(
    {
        "intended_state",
        "intended_intervention",
        "operator_name",
        "proposer_output",
        "verifier_output",
        "other_model_output",
        "transformed_image_sha256",
        "transformed_image",
        "candidate_transformed_image",
        "original_answer",
    }
)
#: Columns of :func:`verify_requests`' result.
FINDING_COLUMNS = {
    "source_file": "file of the request record",
    "source_line": "line of the request record",
    "base_id": "the C2 candidate",
    "model": "the model that received the request",
    "finding": "hash_mismatch / hash_malformed / unhashable / forbidden_key / "
    "forbidden_key_nested / independence / record_payload_mismatch",
    "severity": "error (a breach or an unexplained hash) / warning (explained or weaker)",
    "field": "dotted path of the field at fault",
    "dialect": "for hash_mismatch: the dialect that reproduces the recorded hash",
    "detail": "what was found, in words",
}
_FINDINGS = pd.CategoricalDtype(
    [
        "hash_mismatch",
        "hash_malformed",
        "unhashable",
        "forbidden_key",
        "forbidden_key_nested",
        "independence",
        "record_payload_mismatch",
    ]
)


def _payload_hash(payload: Any, dialect: str) -> str:
    if not isinstance(payload, dict):
        raise AuditError(f"payload is {type(payload).__name__}, not an object")
    return canonical_hash(payload, dialect)


def _forbidden_nested(value: Any, path: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in FORBIDDEN_PAYLOAD_KEYS:
                found.append((f"{path}.{key}", key))
            _forbidden_nested(item, f"{path}.{key}", found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _forbidden_nested(item, f"{path}[{index}]", found)


def _hash_findings(payload: Any, recorded: Any, dialect: str) -> tuple[list[tuple], str | None]:
    """Hash findings of one row, and the payload's digest (None if unwritable)."""
    try:
        rebuilt = _payload_hash(payload, dialect)
    except AuditError as exc:
        others = [name for name in DIALECTS if name != dialect]
        found = matching_dialects(payload, recorded, others) if isinstance(payload, dict) else []
        detail = f"no {dialect!r} digest exists for this payload: {exc}"
        if found:
            detail += f"; the recorded request_sha256 matches dialect {found[0]!r}"
        return [("unhashable", "error", "payload", found[0] if found else pd.NA, detail)], None
    if recorded == rebuilt:
        return [], rebuilt
    if not is_sha256_hex(recorded):
        detail = f"recorded request_sha256 {recorded!r} is not 64 lowercase hex characters"
        if isinstance(recorded, str) and recorded.strip().lower() == rebuilt:
            detail += "; otherwise it matches"
        return [("hash_malformed", "error", "request_sha256", pd.NA, detail)], rebuilt
    others = [name for name in DIALECTS if name != dialect]
    found = matching_dialects(payload, recorded, others)
    if found:
        detail = (
            f"recorded request_sha256 matches dialect {found[0]!r} "
            f"({DIALECTS[found[0]].description}), not {dialect!r}; rebuilt {rebuilt}"
        )
        return [("hash_mismatch", "warning", "request_sha256", found[0], detail)], rebuilt
    detail = (
        f"no known dialect reproduces the recorded request_sha256 (rebuilt {rebuilt}): the "
        "payload or its hash was changed after hashing"
    )
    return [("hash_mismatch", "error", "request_sha256", pd.NA, detail)], rebuilt


def _hiding_findings(payload: dict) -> list[tuple]:
    found = [
        (
            "forbidden_key",
            "error",
            f"payload.{key}",
            pd.NA,
            f"payload carries {key!r}, which the §7.1 hiding rule forbids",
        )
        for key in payload
        if key in FORBIDDEN_PAYLOAD_KEYS
    ]
    nested: list[tuple[str, str]] = []
    for key, item in payload.items():
        _forbidden_nested(item, f"payload.{key}", nested)
    found.extend(
        (
            "forbidden_key_nested",
            "warning",
            path,
            pd.NA,
            f"a key named {name!r} (a name the hiding rule forbids at the top level) is nested "
            "in the payload",
        )
        for path, name in nested
    )
    return found


def _record_findings(payload: dict, written: dict[str, Any]) -> list[tuple]:
    found = []
    for column, value in written.items():
        sent = payload.get(column)
        if sent is not None and not pd.isna(value) and value != sent:
            found.append(
                (
                    "record_payload_mismatch",
                    "warning",
                    column,
                    pd.NA,
                    f"the record says {column}={value!r}, the payload {sent!r}",
                )
            )
    return found


def _independence_findings(base_ids: list, models: list, digests: list[str | None]) -> list[tuple]:
    groups: dict[Any, list[int]] = {}
    for row, base_id in enumerate(base_ids):
        groups.setdefault(base_id, []).append(row)
    found = []
    for base_id, rows in groups.items():
        distinct = {digests[r] for r in rows if digests[r] is not None}
        if len(distinct) < 2:
            continue
        sent = ", ".join(f"{models[r]}: {str(digests[r])[:12]}" for r in rows)
        detail = (
            f"{len(rows)} requests for base_id {base_id!r} carry {len(distinct)} different "
            f"payloads ({sent}); every model must compile from the same evidence"
        )
        found.extend((r, "independence", "error", "payload", pd.NA, detail) for r in rows)
    return found


def findings_frame(frame: pd.DataFrame, dialect: str) -> pd.DataFrame:
    """Every finding over a requests table, in row order (see :data:`FINDING_COLUMNS`)."""
    n = len(frame)
    files = frame["source_file"].tolist() if "source_file" in frame else [pd.NA] * n
    lines = frame["source_line"].tolist() if "source_line" in frame else [pd.NA] * n
    models = frame["model"].tolist() if "model" in frame else [pd.NA] * n
    base_ids = frame["base_id"].tolist()
    columns = [c for c in ("base_id", "dsl", "image_sha256") if c in frame]
    record_values = {c: frame[c].tolist() for c in columns}
    findings: list[tuple] = []
    digests: list[str | None] = []
    payloads = frame["payload"].tolist()
    for row, (payload, recorded) in enumerate(
        zip(payloads, frame["request_sha256"].tolist(), strict=True)
    ):
        found, payload_digest = _hash_findings(payload, recorded, dialect)
        digests.append(payload_digest)
        if isinstance(payload, dict):
            found.extend(_hiding_findings(payload))
            written = {c: record_values[c][row] for c in columns}
            found.extend(_record_findings(payload, written))
        findings.extend((row, *f) for f in found)
    findings.extend(_independence_findings(base_ids, models, digests))
    findings.sort(key=lambda f: f[0])
    rows = [f[0] for f in findings]
    result = pd.DataFrame(
        {
            "source_file": text_safe_series([files[r] for r in rows], "str"),
            "source_line": pd.Series([lines[r] for r in rows], dtype="Int64"),
            "base_id": text_safe_series([base_ids[r] for r in rows], "str"),
            "model": text_safe_series([models[r] for r in rows], "str"),
            "finding": pd.Series([f[1] for f in findings], dtype=_FINDINGS),
            "severity": pd.Series(
                [f[2] for f in findings], dtype=pd.CategoricalDtype(["error", "warning"])
            ),
            "field": text_safe_series([f[3] for f in findings], "str"),
            "dialect": pd.Series([f[4] for f in findings], dtype="str"),
            "detail": text_safe_series([f[5] for f in findings], "str"),
        }
    )
    result.index = pd.Index([frame.index[r] for r in rows], name=frame.index.name)
    return result


def verify_requests(requests: pd.DataFrame, *, dialect: str = REQUEST_HASH_DIALECT) -> pd.DataFrame:
    """Check every compile request's hash, the hiding rule and independence.

    Parameters
    ----------
    requests : DataFrame or Audit
        The ``requests`` table from :func:`load_requests` or ``ea.load(...)``.
    dialect : str, default "python-utf8"
        The dialect ``request_sha256`` is expected in.

    Returns
    -------
    DataFrame
        One row per finding (none when all is well), with the columns of
        :data:`FINDING_COLUMNS`. An independence breach is reported on every
        request of the ``base_id``, since either side may be the one that
        differs.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> findings = ea.verify_requests(ea.load("data/").requests)  # doctest: +SKIP
    >>> findings.groupby("finding").size()  # doctest: +SKIP
    """
    frame = requests if isinstance(requests, pd.DataFrame) else getattr(requests, "requests", None)
    if not isinstance(frame, pd.DataFrame) or not {"payload", "request_sha256", "base_id"} <= set(
        frame.columns
    ):
        raise AuditError(
            "verify_requests needs the requests table (columns 'payload', 'request_sha256', "
            "'base_id'); pass ea.load(...).requests or ea.load_requests(...)."
        )
    if dialect not in DIALECTS:
        raise AuditError(
            f"unknown canonical-JSON dialect {dialect!r}; choose one of {', '.join(DIALECTS)}"
        )
    return findings_frame(frame, dialect)
