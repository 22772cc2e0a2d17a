"""C2 compile requests (explicit_learning): loading them, and checking §7.1.

A request record is ``CompileRequest.to_dict()`` plus the model that received
it (``shared/FORMATS.md`` section 3). Three things are checked, all from the
payload exactly as written (the ``payload`` column):

- ``request_sha256`` is the canonical-JSON SHA-256 of the payload, by default
  in the ``python-utf8`` dialect (sorted keys, compact, non-ASCII raw); a
  mismatch is tested against every other dialect of
  :mod:`explicit_audit.canonical`;
- the hiding rule: the payload carries no key of the seed's
  ``_FORBIDDEN_PAYLOAD_KEYS`` at its top level (what the seed asserts); the same
  names nested deeper are reported apart, as a weaker finding;
- independence: every request for one ``base_id`` carries the same payload.

``requests`` columns:

=====================  ============  ==============================================
column                 dtype         meaning
=====================  ============  ==============================================
source_file            str           file the record came from
source_line            int64         1-based line where the record starts
model                  category      the model that received it; <NA> if not written
base_id                str           the C2 candidate
dsl                    category      the DSL named by the record; <NA> if not written
request_sha256         str           the recorded hash, as written
image_sha256           str           the untransformed image's hash; <NA> if absent
question               str           ``payload.question``; <NA> when not a string
n_choices              Int64         ``len(payload.choices)``; <NA> when not a list
has_world_candidates   boolean       the payload carries structured evidence
payload_keys           list<string>  the payload's top-level keys, sorted
payload                object        the payload exactly as written
(other keys)           inferred      any other key of the record (``record.<key>`` if
                                     the name is taken above)
=====================  ============  ==============================================

A record is rejected, naming the field, when ``payload`` is not an object, or
``request_sha256`` or ``base_id`` is missing or not a string.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from ._frame_columns import extra_columns, text_safe_series
from ._records import KindTables, RawValue, RecordKind, sort_out
from ._request_findings import FINDING_COLUMNS, FORBIDDEN_PAYLOAD_KEYS, findings_frame
from .canonical import DIALECTS, REQUEST_HASH_DIALECT, canonical_hash
from .errors import AuditError

__all__ = [
    "FINDING_COLUMNS",
    "FORBIDDEN_PAYLOAD_KEYS",
    "KIND",
    "load_requests",
    "request_hash",
    "verify_requests",
]

_RECORD_KEYS = ("model", "base_id", "dsl", "request_sha256", "image_sha256", "payload")
_DTYPES = {
    "model": "category",
    "base_id": "str",
    "dsl": "category",
    "request_sha256": "str",
    "image_sha256": "str",
    "question": "str",
    "n_choices": "Int64",
    "has_world_candidates": "boolean",
    "payload_keys": pd.ArrowDtype(pa.list_(pa.string())),
    "payload": object,
}


class _RecordError(Exception):
    pass


def _matches(value: dict) -> bool:
    return "payload" in value and ("request_sha256" in value or "base_id" in value)


def _optional_text(value: dict, key: str) -> Any:
    item = value.get(key)
    if item is None:
        return pd.NA
    if not isinstance(item, str):
        raise _RecordError(f"{key}: is {type(item).__name__}, not a string")
    return item


def _row(value: dict) -> dict[str, Any]:
    payload = value["payload"]
    if not isinstance(payload, dict):
        kind = "null" if payload is None else type(payload).__name__
        raise _RecordError(f"payload: is {kind}, not an object; request_sha256 hashes an object")
    for key in ("request_sha256", "base_id"):
        if not isinstance(value.get(key), str):
            what = "is missing" if value.get(key) is None else "is not a string"
            raise _RecordError(f"{key}: {what}")
    choices = payload.get("choices")
    question = payload.get("question")
    return {
        "model": _optional_text(value, "model"),
        "base_id": value["base_id"],
        "dsl": _optional_text(value, "dsl"),
        "request_sha256": value["request_sha256"],
        "image_sha256": _optional_text(value, "image_sha256"),
        "question": question if isinstance(question, str) else pd.NA,
        "n_choices": len(choices) if isinstance(choices, list) else pd.NA,
        "has_world_candidates": "world_candidates" in payload,
        "payload_keys": sorted(payload),
        "payload": payload,
    }


def _build(values: Sequence[RawValue]) -> KindTables:
    kept, rejected = sort_out(values, "requests", _row, _RecordError)
    rows = [row for _, row in kept]
    files = [item.source_file for item, _ in kept]
    lines = [item.source_line for item, _ in kept]
    extras = [{k: v for k, v in item.value.items() if k not in _RECORD_KEYS} for item, _ in kept]
    data = {
        "source_file": pd.Series(files, dtype="str"),
        "source_line": pd.Series(lines, dtype="int64"),
    }
    for name, dtype in _DTYPES.items():
        values = [row[name] for row in rows]
        data[name] = (
            pd.Series(values, dtype=object)
            if name == "payload"
            else text_safe_series(values, dtype)
        )
    frame = pd.DataFrame(data)
    if any(extras):
        extra = extra_columns(extras, frame.index)
        extra.columns = [f"record.{c}" if c in frame.columns else c for c in extra.columns]
        frame = pd.concat([frame, extra], axis=1)
    return KindTables({"requests": frame}, rejected)


KIND = RecordKind(name="requests", tables=("requests",), matches=_matches, build=_build)


def load_requests(
    source: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    strict: bool = False,
    progress: bool = True,
) -> pd.DataFrame:
    """Load explicit_learning C2 compile requests, one row per request sent.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    progress : bool, default True
        Show a progress bar over files for long loads.

    Returns
    -------
    DataFrame
        The ``requests`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> requests = ea.load_requests("data/requests/")  # doctest: +SKIP
    >>> ea.verify_requests(requests).finding.value_counts()  # doctest: +SKIP
    """
    from .audit import load_kind

    return load_kind(source, KIND, strict=strict, progress=progress).tables["requests"]


def request_hash(payload: Mapping[str, Any], dialect: str = REQUEST_HASH_DIALECT) -> str:
    """``request_sha256`` of a compile-request payload.

    Parameters
    ----------
    payload : mapping
        The payload object.
    dialect : str, default "python-utf8"
        A dialect of :data:`explicit_audit.canonical.DIALECTS`; the default is
        the seed's ``_compact_json`` writer (sorted keys, compact, non-ASCII raw).

    Returns
    -------
    str
        64 lowercase hex characters.

    Raises
    ------
    AuditError
        When ``payload`` is not a mapping, holds NaN or Infinity (JSON has no
        such numbers; Python's ``json.dumps`` would write the non-JSON token
        ``NaN``), or cannot be written in ``dialect``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> ea.request_hash({"question": "몇 개?"}) == ea.request_hash({"question": "몇 개?"},
    ...                                                          "python-ascii")
    False
    """
    if not isinstance(payload, Mapping):
        raise AuditError(
            f"a compile-request payload is an object, not {type(payload).__name__}; pass the "
            "record's 'payload' value"
        )
    return canonical_hash(payload, dialect)


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
