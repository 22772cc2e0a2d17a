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
plan                    object        the ``retrieval_plan`` object exactly as written
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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

import pandas as pd
import pyarrow as pa

from .._core.collect import Source
from .._core.columns import extra_columns, fits_int64, text_safe_series
from .._core.options import LoadOptions
from .._core.records import KindTables, segment_values, sort_out
from .._core.registry import load_tables
from ._canonical import (
    PlanError,
    dataclass_fields,
    seed_canonical,
)

__all__ = ["NAME", "build_tables", "load_plans", "matches"]

#: The kind's name, in the rejected table and the findings.
NAME = "plans"

_RECORD_KEYS = ("run_id", "retrieval_plan", "retrieval_plan_hash")
_RECORD_KEY_SET = frozenset(_RECORD_KEYS)
_LIST_OF_STRINGS = pd.ArrowDtype(pa.list_(pa.string()))
_COLUMN_DTYPES = {
    "source_file": "str",
    "source_line": "int64",
    "run_id": "str",
    "retrieval_plan_hash": "str",
    "plan_shape": pd.CategoricalDtype(["canonical", "flat"]),
    "retrieval_keywords": "str",
    "keywords_non_ascii": "boolean",
    "top_k": "Int64",
    "over_fetch": "Int64",
    "max_context_chars": "Int64",
    "shard_ids": _LIST_OF_STRINGS,
    "has_mt": "boolean",
    "mt_engine": "category",
    "mt_manifest_hash": "str",
    "source_lang": "category",
    "seed_coercions": "str",
    "plan": "object",
}


def matches(value: dict) -> bool:
    return "retrieval_plan" in value or "retrieval_plan_hash" in value


def _text_or_na(value: Any) -> Any:
    return value if type(value) is str else pd.NA


def _int64_or_na(number: int) -> Any:
    # The seed hashes any int; the column holds 64 bits (the plan column keeps all).
    return number if fits_int64(number) else pd.NA


def _row(value: dict) -> dict[str, Any]:
    """One record's columns; raises PlanError naming the field that does not fit."""
    row = _producer_row(value)
    return row if row is not None else _seed_row(value)


def _producer_row(value: dict) -> dict[str, Any] | None:
    """The columns of a record as producers write it, or None for :func:`_seed_row` to decide.

    Every field written, each of its exact type (text, whole numbers within
    64 bits, a list of text, an ``mt`` object of three texts or the three flat
    keys): then the seed's expressions change nothing and no default is taken,
    and the row is the one :func:`_seed_row` builds (a test compares them on
    generated records), without building the canonical dict and its notes.
    """
    plan = value.get("retrieval_plan")
    recorded = value.get("retrieval_plan_hash")
    run_id = value.get("run_id")
    if type(plan) is not dict or type(recorded) is not str:
        return None
    if run_id is not None and type(run_id) is not str:
        return None
    keywords = plan.get("retrieval_keywords")
    top_k, over_fetch = plan.get("top_k"), plan.get("over_fetch")
    max_chars, shard_ids = plan.get("max_context_chars"), plan.get("shard_ids")
    if (
        type(keywords) is not str
        or type(top_k) is not int
        or type(over_fetch) is not int
        or type(max_chars) is not int
        or type(shard_ids) is not list
        or not (fits_int64(top_k) and fits_int64(over_fetch) and fits_int64(max_chars))
    ):
        return None
    for shard in shard_ids:
        if type(shard) is not str:
            return None
    size = len(plan)
    if size == 5:
        engine = manifest = lang = ""
        shape = "canonical"
    elif size == 6:
        block = plan.get("mt")
        if type(block) is not dict or len(block) != 3:
            return None
        engine, manifest = block.get("engine"), block.get("manifest_hash")
        lang = block.get("source_lang")
        shape = "canonical"
    elif size == 8:
        engine, manifest = plan.get("mt_engine"), plan.get("mt_manifest_hash")
        lang = plan.get("source_lang")
        shape = "flat"
    else:
        return None
    if type(engine) is not str or type(manifest) is not str or type(lang) is not str:
        return None
    has_mt = bool(engine or manifest or lang)
    return {
        "run_id": run_id if run_id is not None else pd.NA,
        "retrieval_plan_hash": recorded,
        "plan_shape": shape,
        "retrieval_keywords": keywords,
        "keywords_non_ascii": not keywords.isascii(),
        "top_k": top_k,
        "over_fetch": over_fetch,
        "max_context_chars": max_chars,
        "shard_ids": list(shard_ids),
        "has_mt": has_mt,
        "mt_engine": engine if has_mt else pd.NA,
        "mt_manifest_hash": manifest if has_mt else pd.NA,
        "source_lang": lang if has_mt else pd.NA,
        "seed_coercions": pd.NA,
        "plan": plan,
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
        "plan": plan,
    }


def _frame(
    rows: list[dict[str, Any]], where: list[tuple[str, int]], extras: list[dict]
) -> pd.DataFrame:
    columns: dict[str, Any] = {
        "source_file": [w[0] for w in where],
        "source_line": [w[1] for w in where],
    }
    for name in list(_COLUMN_DTYPES)[2:]:
        columns[name] = [row[name] for row in rows]
    frame = pd.DataFrame(
        {
            name: pd.Series(data, dtype=object)
            if name == "plan"
            else text_safe_series(data, _COLUMN_DTYPES[name])
            for name, data in columns.items()
        }
    )
    if any(extras):
        extra = extra_columns(extras, frame.index)
        extra.columns = [f"record.{c}" if c in frame.columns else c for c in extra.columns]
        frame = pd.concat([frame, extra], axis=1)
    return frame


def _extra_keys(value: dict) -> dict:
    return {k: v for k, v in value.items() if k not in _RECORD_KEYS}


def build_tables(segments: Sequence[tuple]) -> KindTables:
    values = segment_values(segments)
    kept, rejected = sort_out(values, "plans", _row, PlanError)
    rows = [row for _, row in kept]
    where = [(item.source_file, item.source_line) for item, _ in kept]
    extras = [
        {} if item.value.keys() <= _RECORD_KEY_SET else _extra_keys(item.value) for item, _ in kept
    ]
    return KindTables({"plans": _frame(rows, where, extras)}, rejected)


def load_plans(source: Source, **options: Unpack[LoadOptions]) -> pd.DataFrame:
    """Load arborist retrieval-plan records into a DataFrame, one row per run.

    Parameters
    ----------
    source, **options
        As for :func:`explicit_audit.load`; values of other kinds are skipped.

    Returns
    -------
    DataFrame
        The ``plans`` table (columns in the module docstring).

    Examples
    --------
    >>> plans = ea.load_plans("data/plans/", progress=False)
    >>> ea.plan_verdicts(plans).status.value_counts()["match"] > 0
    np.True_
    """
    return load_tables(source, NAME, **options)["plans"]
