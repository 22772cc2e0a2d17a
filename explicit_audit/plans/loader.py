"""Retrieval plans (arborist): loading them, and rebuilding ``retrieval_plan_hash``.

A plan record is ``{"run_id", "retrieval_plan", "retrieval_plan_hash", ...}``
(``docs/formats.md`` section 2), its plan in the canonical shape or the flat
dataclass shape. The hash is rebuilt from the plan exactly as written (kept in
the ``plan`` column), never from the flattened columns: pandas would turn an
integer column with one gap into floats.

``plans`` columns:

======================  ============  ===================================================
column                  dtype         meaning
======================  ============  ===================================================
source_file             str           file the record came from
source_line             int64         1-based line where the record starts
run_id                  str           the run; <NA> when not written
retrieval_plan_hash     str           the recorded hash, as written
plan_shape              category      canonical (``mt`` object) / flat (``mt_*`` keys)
retrieval_keywords      str           keywords as hashed; <NA> when not a string
keywords_non_ascii      boolean       keywords hold a non-ASCII character
top_k                   Int64         ``int(top_k)``, as the seed hashes it (<NA> past 64 bits)
over_fetch              Int64         ``int(over_fetch)``
max_context_chars       Int64         ``int(max_context_chars)``
shard_ids               list<string>  ``list(shard_ids)``; <NA> when not all strings
has_mt                  boolean       the hash includes an MT block (an MT field is set)
mt_engine               category      MT engine; <NA> without an MT block
mt_manifest_hash        str           MT manifest hash; <NA> without an MT block
source_lang             category      query language before MT; <NA> without an MT block
seed_coercions          str           what the seed's canonical() changed; <NA> for none
plan                    str           the ``retrieval_plan`` object exactly as written:
                                      its JSON text, byte for byte (key order, spacing
                                      and escapes kept); ``json.loads`` reads it
(other keys)            inferred      any other key of the record, e.g. ``question_hash``;
                                      ``record.<key>`` if the name is taken above
======================  ============  ===================================================

A record is rejected, naming the field, when ``retrieval_plan`` or
``retrieval_plan_hash`` is missing, the hash is not a string, or the plan is
one the seed would not hash (``top_k: "8.0"``: ``int()`` raises; ``shard_ids:
null``: ``list()`` raises) or no producer writes (an unknown key, both shapes
at once). Coercions the seed does make (``top_k: "8"``, ``true``, ``8.9``) load
and are listed in ``seed_coercions``. A hash that is a string but not 64
lowercase hex characters loads, and :func:`check_plans` reports it.

The ``plan`` text is the record's own bytes for the plan, taken from the
file as read. A plan whose key the bytes do not show with certainty (written
with an escape, such as ``"retrieval\u005fplan"``, or twice) is kept as the
JSON text Python's ``json`` writes for the value read: same keys in the same
order, same values. Read one with ``json.loads(plans["plan"].iloc[i])``;
:func:`plan_verdicts` and the plan editor read the text themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.columns import extra_columns, fits_int64
from .._core.loaders import parts_and_rejections, table_loader
from .._core.records import KindTables, RawValue
from .._core.registry import load_tables
from ..reading.collect import Source
from ..reading.columnar import ColumnarPart, frame_from_parts
from ..reading.member_text import member_texts
from ..reading.options import LoadOptions
from ._arrow import DTYPES, part_from_rows
from ._canonical import (
    PlanError,
    dataclass_fields,
    seed_canonical,
)
from ._json_text import value_text
from ._producer import ProducerFields, producer_fields
from .shape import RECORD_KEYS

__all__ = ["NAME", "build_tables", "load_plans", "matches"]

#: The kind's name, in the rejected table and the findings.
NAME = "plans"

_RECORD_KEYS = RECORD_KEYS
_RECORD_KEY_SET = frozenset(_RECORD_KEYS)


def matches(value: dict) -> bool:
    return "retrieval_plan" in value or "retrieval_plan_hash" in value


def _text_or_na(value: Any) -> Any:
    return value if type(value) is str else pd.NA


def _int64_or_na(number: int) -> Any:
    # The seed hashes any int; the column holds 64 bits (the plan column keeps all).
    return number if fits_int64(number) else pd.NA


def _written_plans(items: Sequence[RawValue]) -> list[str]:
    """Each record's ``retrieval_plan`` as written: its bytes in the record's text.

    A record whose plan the bytes do not show with certainty (its key written
    with an escape, or twice) keeps the plan as JSON text written from the
    value read (:func:`~explicit_audit.plans._json_text.value_text`).
    """
    if not items:
        return []
    found = plan_texts([item.text for item in items])
    if found is not None:
        return found
    return [_one_written_plan(item) for item in items]


def _one_written_plan(item: RawValue) -> str:
    found = plan_texts([item.text])
    if found is not None:
        return found[0]
    return value_text(item.value["retrieval_plan"])


def plan_texts(records: Sequence[bytes]) -> list[str] | None:
    """The plan's bytes in each record's text, or None where the bytes of one do not
    show it with certainty (see :func:`~explicit_audit.reading.member_text.member_texts`)."""
    starts = np.cumsum([0, *(len(text) + 1 for text in records[:-1])])
    try:
        found = member_texts(
            b"\n".join(records), len(records), "retrieval_plan", object_starts=starts
        )
    except pa.ArrowInvalid:  # not UTF-8: read from the value instead
        return None
    return None if found is None else found.to_pylist()


def _row(value: dict) -> dict[str, Any]:
    """One record's columns; raises PlanError naming the field that does not fit."""
    row = _producer_row(value)
    return row if row is not None else _seed_row(value)


def _record_fields(value: dict) -> tuple[Any, str, ProducerFields] | None:
    """``(run_id, recorded hash, plan fields)`` of a record as producers write it, or None.

    Every field written, each of its exact type (:func:`producer_fields`): then
    the seed's expressions change nothing and no default is taken, and the row
    is the one :func:`_seed_row` builds (a test compares them on generated
    records), without building the canonical dict and its notes.
    """
    recorded = value.get("retrieval_plan_hash")
    run_id = value.get("run_id")
    if type(recorded) is not str or (run_id is not None and type(run_id) is not str):
        return None
    fields = producer_fields(value.get("retrieval_plan"))
    if fields is None:
        return None
    return run_id, recorded, fields


def _producer_row(value: dict) -> dict[str, Any] | None:
    """The columns of a record as producers write it, or None for :func:`_seed_row` to decide."""
    found = _record_fields(value)
    if found is None:
        return None
    run_id, recorded, fields = found
    has_mt = fields.has_mt
    return {
        "run_id": run_id if run_id is not None else pd.NA,
        "retrieval_plan_hash": recorded,
        "plan_shape": fields.shape,
        "retrieval_keywords": fields.keywords,
        "keywords_non_ascii": not fields.keywords.isascii(),
        "top_k": fields.top_k,
        "over_fetch": fields.over_fetch,
        "max_context_chars": fields.max_context_chars,
        "shard_ids": list(fields.shard_ids),
        "has_mt": has_mt,
        "mt_engine": fields.engine if has_mt else pd.NA,
        "mt_manifest_hash": fields.manifest_hash if has_mt else pd.NA,
        "source_lang": fields.source_lang if has_mt else pd.NA,
        "seed_coercions": pd.NA,
    }


def _seed_row(value: dict) -> dict[str, Any]:
    """One record's columns through the seed's ``canonical()``, with notes on its coercions."""
    for key in ("retrieval_plan", "retrieval_plan_hash"):
        if value.get(key) is None:
            what = "is missing" if key not in value else "is null"
            raise PlanError(key, f"{what}; a plan record carries the plan and its hash")
    recorded = value["retrieval_plan_hash"]
    if not isinstance(recorded, str):
        raise PlanError(
            "retrieval_plan_hash", f"is {type(recorded).__name__}, not a 64-hex-character string"
        )
    run_id = value.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise PlanError("run_id", f"is {type(run_id).__name__}, not a string")
    plan = value["retrieval_plan"]
    fields, shape, missing = dataclass_fields(plan)
    canonical, notes = seed_canonical(fields)
    notes = [f"{name} missing -> dataclass default" for name in missing] + notes
    keywords = _text_or_na(canonical["retrieval_keywords"])
    shard_ids = canonical["shard_ids"]
    mt = canonical.get("mt")
    return {
        "run_id": run_id if run_id is not None else pd.NA,
        "retrieval_plan_hash": recorded,
        "plan_shape": shape,
        "retrieval_keywords": keywords,
        "keywords_non_ascii": pd.NA if keywords is pd.NA else not keywords.isascii(),
        "top_k": _int64_or_na(canonical["top_k"]),
        "over_fetch": _int64_or_na(canonical["over_fetch"]),
        "max_context_chars": _int64_or_na(canonical["max_context_chars"]),
        "shard_ids": shard_ids if set(map(type, shard_ids)) <= {str} else None,
        "has_mt": mt is not None,
        "mt_engine": pd.NA if mt is None else _text_or_na(mt["engine"]),
        "mt_manifest_hash": pd.NA if mt is None else _text_or_na(mt["manifest_hash"]),
        "source_lang": pd.NA if mt is None else _text_or_na(mt["source_lang"]),
        "seed_coercions": "; ".join(notes) if notes else pd.NA,
    }


def _part(kept: list) -> ColumnarPart:
    """The part of the values a builder kept, with each plan's text as written."""
    rows = [row for _, row in kept]
    for row, text in zip(rows, _written_plans([item for item, _ in kept]), strict=True):
        row["plan"] = text
    where = [(item.source_file, item.source_line) for item, _ in kept]
    extras = [
        {} if item.value.keys() <= _RECORD_KEY_SET else _extra_keys(item.value) for item, _ in kept
    ]
    index = pd.RangeIndex(len(rows))
    return part_from_rows(rows, where, extra_columns(extras, index, as_text=False, typed=False))


def build_tables(segments: Sequence[tuple]) -> KindTables:
    """The ``plans`` table from values read one by one and from columnar parts, in file order."""
    parts, rejected = parts_and_rejections(segments, NAME, _row, _part)
    return KindTables({"plans": frame_from_parts(parts, DTYPES, taken="record.")}, rejected)


def _extra_keys(value: dict) -> dict:
    return {k: v for k, v in value.items() if k not in _RECORD_KEYS}


@table_loader("plans")
def load_plans(source: Source, **options: Unpack[LoadOptions]) -> pd.DataFrame:
    """Load arborist retrieval-plan records into a DataFrame, one row per run.

    Examples
    --------
    >>> plans = ea.load_plans("data/plans/", progress=False)
    >>> ea.plan_verdicts(plans).status.value_counts()["match"] > 0
    np.True_
    """
    return load_tables(source, NAME, **options)["plans"]
