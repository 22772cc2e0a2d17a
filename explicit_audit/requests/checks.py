"""The checks of compile requests: hashes, the §7.1 hiding rule, independence, consistency.

Each rule's severity is decided from explicit_learning's ``build_compile_request``:

- every hash finding is an error, including a hash another known dialect
  explains: the recorded ``request_sha256`` is not the one the producer promises;
- a forbidden key at the payload's top level is an error (the builder refuses
  it); the same name nested deeper is a notice, since the builder only checks
  the top level, so such a payload is valid and only shown for a look;
- an independence breach is an error;
- a record field (``base_id``, ``dsl``, ``image_sha256``) that contradicts the
  payload is an error: the builder writes both from the one candidate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core import engine
from .._core.deprecation import deprecated_alias
from .._core.engine import concat_parts
from .._core.findings import FINDING_COLUMNS, NOTICE, FindingsBuilder, Rule, RuleTable
from ..canonical import (
    DIALECTS,
    REQUEST_HASH_DIALECT,
    canonical_hash,
    is_sha256_hex,
    matching_dialects,
)
from ..errors import AuditError
from .loader import NAME

__all__ = [
    "FINDING_COLUMNS",
    "FORBIDDEN_PAYLOAD_KEYS",
    "RULES",
    "check_requests",
    "verify_requests",
]

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

#: Every rule :func:`check_requests` applies, with its check and severity.
RULES = RuleTable(
    [
        Rule(
            "hash_mismatch",
            "request_sha256 is the canonical-JSON hash of the payload in the expected dialect "
            "(a hash another dialect explains is still not the promised one).",
            check="request_hashes",
            kind=NAME,
            field="request_sha256",
        ),
        Rule(
            "hash_malformed",
            "request_sha256 is 64 lowercase hexadecimal characters.",
            check="request_hashes",
            kind=NAME,
            field="request_sha256",
        ),
        Rule(
            "payload_unhashable",
            "The payload is a JSON object the expected dialect can write.",
            check="request_hashes",
            kind=NAME,
            field="payload",
        ),
        Rule(
            "forbidden_key",
            "The payload carries no key the §7.1 hiding rule forbids at its top level.",
            check="request_hiding_rule",
            kind=NAME,
        ),
        Rule(
            "forbidden_key_nested",
            "A forbidden key name nested inside the payload: the builder allows it (it checks "
            "the top level only), so it is shown for a look.",
            check="request_hiding_rule",
            kind=NAME,
            severity=NOTICE,
        ),
        Rule(
            "independence",
            "Every request for one base_id carries the same payload: each model compiles "
            "from the same evidence.",
            check="request_independence",
            kind=NAME,
            field="payload",
        ),
        Rule(
            "record_payload_mismatch",
            "The record's base_id, dsl and image_sha256 equal the payload's: the builder "
            "writes both from one candidate.",
            check="request_consistency",
            kind=NAME,
        ),
    ]
)

# One finding before it is placed: (rule, field or None, detail).
_Found = tuple[str, "str | None", str]


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


def _hash_findings(payload: Any, recorded: Any, dialect: str) -> tuple[list[_Found], str | None]:
    """Hash findings of one row, and the payload's digest (None if unwritable)."""
    try:
        rebuilt = _payload_hash(payload, dialect)
    except AuditError as exc:
        others = [name for name in DIALECTS if name != dialect]
        found = matching_dialects(payload, recorded, others) if isinstance(payload, dict) else []
        detail = f"no {dialect!r} digest exists for this payload: {exc}"
        if found:
            detail += f"; the recorded request_sha256 matches dialect {found[0]!r}"
        return [("payload_unhashable", None, detail)], None
    if recorded == rebuilt:
        return [], rebuilt
    if not is_sha256_hex(recorded):
        detail = f"recorded request_sha256 {recorded!r} is not 64 lowercase hex characters"
        if isinstance(recorded, str) and recorded.strip().lower() == rebuilt:
            detail += "; otherwise it matches"
        return [("hash_malformed", None, detail)], rebuilt
    others = [name for name in DIALECTS if name != dialect]
    found = matching_dialects(payload, recorded, others)
    if found:
        detail = (
            f"recorded request_sha256 matches dialect {found[0]!r} "
            f"({DIALECTS[found[0]].description}), not {dialect!r}; rebuilt {rebuilt}"
        )
        return [("hash_mismatch", None, detail)], rebuilt
    detail = (
        f"no known dialect reproduces the recorded request_sha256 (rebuilt {rebuilt}): the "
        "payload or its hash was changed after hashing"
    )
    return [("hash_mismatch", None, detail)], rebuilt


def _hiding_findings(payload: dict) -> list[_Found]:
    found: list[_Found] = [
        (
            "forbidden_key",
            f"payload.{key}",
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
            path,
            f"a key named {name!r} (a name the hiding rule forbids at the top level) is nested "
            "in the payload",
        )
        for path, name in nested
    )
    return found


def _record_findings(payload: dict, written: dict[str, Any]) -> list[_Found]:
    found: list[_Found] = []
    for column, value in written.items():
        sent = payload.get(column)
        if sent is not None and not pd.isna(value) and value != sent:
            found.append(
                (
                    "record_payload_mismatch",
                    column,
                    f"the record says {column}={value!r}, the payload {sent!r}",
                )
            )
    return found


def _independence_findings(
    base_ids: list, models: list, digests: list[str | None]
) -> list[tuple[int, str, None, str]]:
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
        found.extend((r, "independence", None, detail) for r in rows)
    return found


def _records(frame: pd.DataFrame) -> list[str]:
    models = frame["model"].tolist() if "model" in frame else [None] * len(frame)
    return [
        f"{base_id} ({model if isinstance(model, str) else 'no model'})"
        for base_id, model in zip(frame["base_id"].tolist(), models, strict=True)
    ]


def _findings(
    frame: pd.DataFrame, dialect: str, *, independence: bool = True
) -> tuple[pd.DataFrame, list[str | None]]:
    """Every finding over a requests table, in the kit's findings shape; the payload digests.

    ``independence=False`` leaves out the independence rule, which looks
    across rows (a partitioned table checks it over all partitions).
    """
    n = len(frame)
    models = frame["model"].tolist() if "model" in frame else [None] * n
    base_ids = frame["base_id"].tolist()
    found = FindingsBuilder(RULES, frame, record=_records(frame), what="check_requests")
    columns = [c for c in ("base_id", "dsl", "image_sha256") if c in frame]
    record_values = {c: frame[c].tolist() for c in columns}
    digests: list[str | None] = []
    payloads = frame["payload"].tolist()
    for row, (payload, recorded) in enumerate(
        zip(payloads, frame["request_sha256"].tolist(), strict=True)
    ):
        row_found, payload_digest = _hash_findings(payload, recorded, dialect)
        digests.append(payload_digest)
        if isinstance(payload, dict):
            row_found.extend(_hiding_findings(payload))
            written = {c: record_values[c][row] for c in columns}
            row_found.extend(_record_findings(payload, written))
        for rule, field, detail in row_found:
            found.add(row, rule, detail, field=field)
    if independence:
        for row, rule, field, detail in _independence_findings(base_ids, models, digests):
            found.add(row, rule, detail, field=field)
    return found.frame(), digests


def partition_findings(
    frame: pd.DataFrame, dialect: str = REQUEST_HASH_DIALECT
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One partition's findings but independence, and what independence needs of its rows."""
    findings, digests = _findings(frame, dialect, independence=False)
    columns = ["source_file", "source_line", "base_id"]
    needs = pd.DataFrame(
        {
            **{c: frame[c].astype(object) for c in columns if c in frame},
            "model": frame["model"].astype(object) if "model" in frame else None,
            "digest": pd.Series(digests, index=frame.index, dtype=object),
            "record": pd.Series(_records(frame), index=frame.index, dtype=object),
        },
        index=frame.index,
    )
    return findings, needs


def with_independence(parts: list[tuple[pd.DataFrame, pd.DataFrame]]) -> pd.DataFrame:
    """The partitions' findings, and independence over all their rows, in the builder's order."""
    needs = pd.concat([need for _, need in parts])
    models = needs["model"].tolist()
    found = FindingsBuilder(RULES, needs, record=needs["record"], what="check_requests")
    for row, rule, field, detail in _independence_findings(
        needs["base_id"].tolist(), models, needs["digest"].tolist()
    ):
        found.add(row, rule, detail, field=field)
    findings = concat_parts([f for f, _ in parts] + [found.frame()])
    rows = findings["row"].to_numpy(dtype="int64", na_value=-1)
    rules = findings["rule"].cat.codes.to_numpy()
    order = np.lexsort((np.arange(len(findings)), rules, rows))
    return findings.iloc[order].reset_index(drop=True)


def request_findings(frame: pd.DataFrame, dialect: str = REQUEST_HASH_DIALECT) -> pd.DataFrame:
    """:func:`check_requests` of a whole in-memory requests table."""
    return _findings(frame, dialect)[0]


def check_requests(requests: pd.DataFrame, *, dialect: str = REQUEST_HASH_DIALECT) -> pd.DataFrame:
    """Check every compile request's hash, the hiding rule, independence and consistency.

    Parameters
    ----------
    requests : DataFrame or Audit
        The ``requests`` table from :func:`load_requests` or ``ea.load(...)``.
    dialect : str, default "python-utf8"
        The dialect ``request_sha256`` is expected in.

    Returns
    -------
    DataFrame
        The findings table of the kit (:data:`FINDING_COLUMNS`), one row per
        finding, none when all is well. ``record`` is ``"base_id (model)"``;
        ``rule`` a key of :data:`RULES`, each with its severity (only
        ``forbidden_key_nested`` is a notice); a hash mismatch names in
        ``detail`` the dialect that reproduces the recorded hash, if any. An
        independence breach is reported on every request of the ``base_id``,
        since either side may be the one that differs.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> findings = ea.check_requests(ea.load("data/", progress=False).requests)
    >>> findings.groupby("rule", observed=True).size().to_dict()
    {'hash_mismatch': 4, 'forbidden_key': 2, 'forbidden_key_nested': 2, 'independence': 2}
    """
    frame = requests if engine.is_table(requests) else getattr(requests, "requests", None)
    if not engine.is_table(frame) or not {
        "payload",
        "request_sha256",
        "base_id",
    } <= set(frame.columns):
        raise AuditError(
            "check_requests needs the requests table (columns 'payload', 'request_sha256', "
            "'base_id'); pass ea.load(...).requests or ea.load_requests(...)."
        )
    if dialect not in DIALECTS:
        raise AuditError(
            f"unknown canonical-JSON dialect {dialect!r}; choose one of {', '.join(DIALECTS)}"
        )
    return engine.reduce(
        partition_findings,
        with_independence,
        frame,
        what="check_requests",
        whole=request_findings,
        dialect=dialect,
    )


verify_requests = deprecated_alias(
    "verify_requests",
    check_requests,
    use="ea.check_requests",
    changes="It returns the findings of :func:`check_requests`, in the kit's findings shape: "
    "the 0.1 column ``finding`` is now ``rule``, the dialect is named in ``detail``, and "
    "``severity`` is ``error`` or ``notice``.",
)
