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
from operator import itemgetter
from typing import Any, Unpack

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.collect import Source
from .._core.columnar import string_series
from .._core.columns import extra_columns, fits_int64, text_safe_series
from .._core.options import LoadOptions
from .._core.records import KindTables, segment_values, sort_out
from .._core.registry import load_tables
from ._canonical import (
    PlanError,
    dataclass_fields,
    seed_canonical,
)
from ._producer import ProducerFields, producer_fields

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
#: The columns of a row, as :func:`_row` gives them.
_ROW_COLUMNS = list(_COLUMN_DTYPES)[2:]


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
        "plan": value["retrieval_plan"],
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


#: The Arrow type each column's values are first gathered in (pandas would look
#: at each value on its own to choose how to store it).
_ARROW_TYPES = {
    "str": pa.string(),
    "category": pa.string(),
    "Int64": pa.int64(),
    "boolean": pa.bool_(),
}
_NULLABLE = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get


def _series(name: str, data: list) -> pd.Series:
    """One column of the table from its values, with its declared dtype."""
    dtype = _COLUMN_DTYPES[name]
    if name == "plan":
        return pd.Series(data, dtype=object)
    categorical = isinstance(dtype, pd.CategoricalDtype)
    wanted = pa.string() if categorical else _ARROW_TYPES.get(dtype)
    if name == "shard_ids":
        wanted = _LIST_OF_STRINGS.pyarrow_dtype
    try:
        array = pa.array(data, type=wanted, from_pandas=True) if wanted is not None else None
    except (UnicodeEncodeError, pa.ArrowException, OverflowError, TypeError, ValueError):
        # A lone surrogate, which Arrow cannot store, is shown as U+FFFD instead.
        array = None
    if array is None:
        return text_safe_series(data, dtype)
    if name == "shard_ids":
        return pd.Series(pd.arrays.ArrowExtensionArray(array))
    if dtype == "str":
        return string_series(array)
    if categorical or dtype == "category":
        return string_series(array).astype(dtype)
    return pd.Series(array.to_pandas(types_mapper=_NULLABLE))


def _frame(columns: dict[str, list], extras: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame({name: _series(name, data) for name, data in columns.items()})
    if any(extras):
        extra = extra_columns(extras, frame.index)
        extra.columns = [f"record.{c}" if c in frame.columns else c for c in extra.columns]
        frame = pd.concat([frame, extra], axis=1)
    return frame


def _extra_keys(value: dict) -> dict:
    return {k: v for k, v in value.items() if k not in _RECORD_KEYS}


def build_tables(segments: Sequence[tuple]) -> KindTables:
    """The ``plans`` table from values read one by one and from bulk parts, in file order."""
    values = segment_values(segments)
    kept, rejected = sort_out(values, "plans", _row, PlanError)
    columns: dict[str, list] = {
        "source_file": [item.source_file for item, _ in kept],
        "source_line": [item.source_line for item, _ in kept],
    }
    for name in _ROW_COLUMNS:
        columns[name] = [row[name] for _, row in kept]
    extras = [
        {} if item.value.keys() <= _RECORD_KEY_SET else _extra_keys(item.value) for item, _ in kept
    ]
    parts = [part for what, part in segments if what == "part"]
    if parts:
        files = _file_order(segments)
        codes = [files[name] for name in columns["source_file"]]
        for part in parts:
            part.add_to(columns, extras)
            codes += [files[name] for name in part.row_files()]
        order = _row_order(np.asarray(codes, dtype=np.int64), columns["source_line"])
        if order is not None:
            take = itemgetter(*order) if len(order) > 1 else lambda column: (column[order[0]],)
            columns = {name: list(take(column)) for name, column in columns.items()}
            extras = list(take(extras))
    return KindTables({"plans": _frame(columns, extras)}, rejected)


def _file_order(segments: Sequence[tuple]) -> dict[str, int]:
    """Each file's rank, in the order the segments first name it."""
    files: dict[str, int] = {}
    for what, segment in segments:
        names = segment.file_names() if what == "part" else (v.source_file for v in segment)
        for name in names:
            files.setdefault(name, len(files))
    return files


def _row_order(codes: np.ndarray, lines: list[int]) -> list[int] | None:
    """The rows' order by file, then line (stable); None when they are in order already."""
    lines_array = np.asarray(lines, dtype=np.int64)
    if len(codes) < 2:
        return None
    step_file, step_line = np.diff(codes), np.diff(lines_array)
    if (step_file >= 0).all() and (step_line[step_file == 0] >= 0).all():
        return None
    return np.lexsort((lines_array, codes)).tolist()


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
