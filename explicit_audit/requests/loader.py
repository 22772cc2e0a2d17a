"""C2 compile requests (explicit_learning): loading them, and checking §7.1.

A request record is ``CompileRequest.to_dict()`` plus the model that received
it (``docs/formats.md`` section 3). Three things are checked, all from the
payload exactly as written (the ``payload`` column):

- ``request_sha256`` is the canonical-JSON SHA-256 of the payload, by default
  in the ``python-utf8`` dialect (sorted keys, compact, non-ASCII raw); a
  mismatch is tested against every other dialect of
  :mod:`explicit_audit.canonical`;
- the hiding rule: the payload carries no key of the seed's
  ``_FORBIDDEN_PAYLOAD_KEYS`` at its top level (what the seed asserts); the same
  names nested deeper are reported apart, as a notice;
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

from collections.abc import Sequence
from typing import Any, Unpack

import pandas as pd
import pyarrow as pa

from .._core.columns import beside, extra_columns, text_safe_series
from .._core.loaders import table_loader
from .._core.records import KindTables, segment_values, sort_out
from .._core.registry import load_tables
from ..errors import RecordError
from ..reading.collect import Source
from ..reading.options import LoadOptions
from .shape import SHAPES

__all__ = ["NAME", "build_tables", "load_requests", "matches"]

#: The kind's name, in the rejected table and the findings.
NAME = "requests"

(_SHAPE,) = SHAPES
_RECORD_KEYS = tuple(field.name for field in _SHAPE.fields)
#: What the record's own fields become: a category where few values repeat, else text.
_CATEGORIES = ("model", "dsl")
_DTYPES = {
    **{
        field.name: "category" if field.name in _CATEGORIES else "str"
        for field in _SHAPE.fields
        if field.type == "string"
    },
    "question": "str",
    "n_choices": "Int64",
    "has_world_candidates": "boolean",
    "payload_keys": pd.ArrowDtype(pa.list_(pa.string())),
    "payload": object,
}


def matches(value: dict) -> bool:
    return "payload" in value and ("request_sha256" in value or "base_id" in value)


def _optional_text(value: dict, key: str) -> Any:
    item = value.get(key)
    if item is None:
        return pd.NA
    if not isinstance(item, str):
        raise RecordError(key, f"is {type(item).__name__}, not a string")
    return item


_REQUIRED_TEXT = tuple(f.name for f in _SHAPE.fields if f.type == "string" and f.required)
_OPTIONAL_TEXT = tuple(f.name for f in _SHAPE.fields if f.type == "string" and not f.required)


def _row(value: dict) -> dict[str, Any]:
    payload = value["payload"]
    if not isinstance(payload, dict):
        kind = "null" if payload is None else type(payload).__name__
        raise RecordError("payload", f"is {kind}, not an object; request_sha256 hashes an object")
    for key in sorted(_REQUIRED_TEXT, reverse=True):  # request_sha256 named first
        if not isinstance(value.get(key), str):
            what = "is missing" if value.get(key) is None else "is not a string"
            raise RecordError(key, what)
    choices = payload.get("choices")
    question = payload.get("question")
    return {
        **{key: value[key] for key in _REQUIRED_TEXT},
        **{key: _optional_text(value, key) for key in _OPTIONAL_TEXT},
        "question": question if isinstance(question, str) else pd.NA,
        "n_choices": len(choices) if isinstance(choices, list) else pd.NA,
        "has_world_candidates": "world_candidates" in payload,
        "payload_keys": sorted(payload),
        "payload": payload,
    }


def build_tables(segments: Sequence[tuple]) -> KindTables:
    values = segment_values(segments)
    kept, rejected = sort_out(values, "requests", _row, RecordError)
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
        frame = beside(frame, extra_columns(extras, frame.index), "record.")
    return KindTables({"requests": frame}, rejected)


@table_loader("requests")
def load_requests(source: Source, **options: Unpack[LoadOptions]) -> pd.DataFrame:
    """Load explicit_learning C2 compile requests, one row per request sent.

    Examples
    --------
    >>> requests = ea.load_requests("data/requests/", progress=False)
    >>> ea.check_requests(requests).rule.value_counts().sum() > 0
    np.True_
    """
    return load_tables(source, NAME, **options)["requests"]
