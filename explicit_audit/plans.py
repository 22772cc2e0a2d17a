"""Retrieval plans (arborist): loading them, and rebuilding ``retrieval_plan_hash``.

A plan record is ``{"run_id", "retrieval_plan", "retrieval_plan_hash", ...}``
(``shared/FORMATS.md`` section 2), its plan in the canonical shape or the flat
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
lowercase hex characters loads, and :func:`verify_plans` reports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._frame_columns import extra_columns, text_safe_series
from ._plan_canonical import (
    PlanError,
    canonical_text,
    dataclass_fields,
    digest,
    digests,
    seed_canonical,
)
from ._plan_variants import diagnose_plan, diagnose_recorded_hash
from ._records import KindTables, RawValue, RecordKind, sort_out
from .canonical import is_sha256_hex
from .errors import AuditError

__all__ = ["KIND", "load_plans", "plan_canonical_json", "plan_hash", "verify_plans"]

_RECORD_KEYS = ("run_id", "retrieval_plan", "retrieval_plan_hash")
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
_STATUS = ("match", "known_variant", "no_known_variant", "malformed_hash", "unhashable")
_STATUS_DTYPE = pd.CategoricalDtype(list(_STATUS))


def _matches(value: dict) -> bool:
    return "retrieval_plan" in value or "retrieval_plan_hash" in value


def _text_or_na(value: Any) -> Any:
    return value if type(value) is str else pd.NA


def _int64_or_na(number: int) -> Any:
    # The seed hashes any int; the column holds 64 bits (the plan column keeps all).
    return number if -(2**63) <= number < 2**63 else pd.NA


def _row(value: dict) -> dict[str, Any]:
    """One record's columns; raises PlanError naming the field that does not fit."""
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


def _build(values: Sequence[RawValue]) -> KindTables:
    kept, rejected = sort_out(values, "plans", _row, PlanError)
    rows = [row for _, row in kept]
    where = [(item.source_file, item.source_line) for item, _ in kept]
    extras = [{k: v for k, v in item.value.items() if k not in _RECORD_KEYS} for item, _ in kept]
    return KindTables({"plans": _frame(rows, where, extras)}, rejected)


KIND = RecordKind(name="plans", tables=("plans",), matches=_matches, build=_build)


def load_plans(
    source: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    strict: bool = False,
    progress: bool = True,
) -> pd.DataFrame:
    """Load arborist retrieval-plan records into a DataFrame, one row per run.

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
        The ``plans`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> plans = ea.load_plans("data/plans/")  # doctest: +SKIP
    >>> ea.verify_plans(plans).status.value_counts()  # doctest: +SKIP
    """
    from .audit import load_kind

    return load_kind(source, KIND, strict=strict, progress=progress).tables["plans"]


def plan_hash(plan: Mapping[str, Any]) -> str:
    """arborist's ``retrieval_plan_hash`` of a written plan, byte for byte.

    Parameters
    ----------
    plan : mapping
        A ``retrieval_plan`` in the canonical shape (``mt`` object, present
        only when an MT field is set) or the flat dataclass shape
        (``mt_engine``, ``mt_manifest_hash``, ``source_lang``). Missing fields
        take the dataclass defaults; the seed's coercions apply (``top_k: "8"``
        hashes as 8, ``retrieval_keywords: null`` as ``""``).

    Returns
    -------
    str
        SHA-256 hex over ``json.dumps(canonical, sort_keys=True,
        separators=(",", ":"))``, non-ASCII escaped as ``\\uXXXX``.

    Raises
    ------
    AuditError
        Where the seed would raise (``top_k: "8.0"``, ``shard_ids: None``) or
        the mapping is no shape a producer writes (an unknown key).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> plan = {"retrieval_keywords": "서울", "top_k": 8, "over_fetch": 2,
    ...         "max_context_chars": 12000, "shard_ids": ["s1"]}
    >>> ea.plan_hash(plan)[:16]
    '69948a403a3a1a09'
    >>> ea.plan_hash(dict(plan, top_k="8")) == ea.plan_hash(plan)
    True
    """
    try:
        return digest(plan)
    except PlanError as exc:
        raise AuditError(
            f"cannot hash this plan: {exc}. Fix the field, or check whether the record was "
            "written by arborist at all."
        ) from None


def plan_canonical_json(plan: Mapping[str, Any]) -> str:
    """The exact text arborist hashes for a written plan (either shape).

    Parameters
    ----------
    plan : mapping
        A ``retrieval_plan``, as for :func:`plan_hash`.

    Returns
    -------
    str
        ``json.dumps(canonical, sort_keys=True, separators=(",", ":"))`` of the
        seed's ``canonical()``: non-ASCII escaped, the MT block only when an MT
        field is set. Its UTF-8 bytes' SHA-256 is :func:`plan_hash`.

    Raises
    ------
    AuditError
        Where the seed would raise, as for :func:`plan_hash`.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> print(ea.plan_canonical_json({"retrieval_keywords": "서울", "top_k": 8}))
    {"max_context_chars":0,"over_fetch":0,"retrieval_keywords":"\\uc11c\\uc6b8","shard_ids":[],"top_k":8}
    """
    try:
        return canonical_text(plan)
    except PlanError as exc:
        raise AuditError(f"cannot write this plan's canonical JSON: {exc}") from None


def _plans_frame(plans: Any) -> pd.DataFrame:
    frame = plans if isinstance(plans, pd.DataFrame) else getattr(plans, "plans", plans)
    if not isinstance(frame, pd.DataFrame) or not {"plan", "retrieval_plan_hash"} <= set(
        frame.columns
    ):
        raise AuditError(
            "verify_plans needs the plans table (columns 'plan' and 'retrieval_plan_hash'); "
            "pass ea.load(...).plans or ea.load_plans(...)."
        )
    return frame


def verify_plans(plans: pd.DataFrame) -> pd.DataFrame:
    """Rebuild every ``retrieval_plan_hash`` and explain each mismatch.

    Parameters
    ----------
    plans : DataFrame or Audit
        The ``plans`` table from :func:`load_plans` or ``ea.load(...)``.

    Returns
    -------
    DataFrame
        One row per plan, same index as ``plans``:

        ==============  ========  ===================================================
        source_file     str       file of the record
        source_line     int64     line of the record
        run_id          str       the run, when the table has it
        recorded_hash   str       the hash as written
        rebuilt_hash    str       the seed's hash of the plan as written
        match           boolean   recorded == rebuilt
        status          category  match / known_variant / no_known_variant /
                                  malformed_hash / unhashable
        variant         str       code of the variant that reproduces the recorded
                                  hash (``writer:python-utf8``, ``mt_block_empty``)
        diagnosis       str       the variant in words, or what else is wrong
        ==============  ========  ===================================================

        ``no_known_variant`` means no known writer produced the recorded hash
        from this plan: the plan (or its hash) was changed after hashing.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> checked = ea.verify_plans(ea.load("data/").plans)  # doctest: +SKIP
    >>> checked[~checked.match]  # doctest: +SKIP
    """
    frame = _plans_frame(plans)
    written = frame["plan"].tolist()
    rebuilt = digests(written)
    statuses = np.zeros(len(written), dtype=np.int8)
    variants: dict[int, str] = {}
    diagnoses: dict[int, str] = {}
    for index in [i for i, digest_ in enumerate(rebuilt) if digest_ is None]:
        try:
            digest(written[index])
        except PlanError as exc:
            statuses[index] = _STATUS.index("unhashable")
            diagnoses[index] = f"the seed cannot hash it: {exc}"
    recorded = pa.array(frame["retrieval_plan_hash"], type=pa.string())
    rebuilt_array = pa.array(rebuilt, type=pa.string())
    matched = pc.fill_null(pc.equal(recorded, rebuilt_array), False).to_numpy(zero_copy_only=False)
    for index in np.flatnonzero(~matched).tolist():
        if statuses[index]:
            continue
        recorded_hash = recorded[index].as_py()
        if not is_sha256_hex(recorded_hash):
            statuses[index] = _STATUS.index("malformed_hash")
            variants[index], diagnoses[index] = diagnose_recorded_hash(
                recorded_hash, rebuilt[index]
            )
            continue
        found = diagnose_plan(written[index], recorded_hash)
        if found is None:
            statuses[index] = _STATUS.index("no_known_variant")
            diagnoses[index] = (
                "no known variant reproduces the recorded hash: the plan or its hash was "
                "changed after hashing"
            )
        else:
            statuses[index] = _STATUS.index("known_variant")
            variants[index], diagnoses[index] = found
    index = frame.index
    result = pd.DataFrame(index=index)
    for name in ("source_file", "source_line", "run_id"):
        if name in frame:
            result[name] = frame[name]
    result["recorded_hash"] = pd.Series(recorded, index=index, dtype="str")
    result["rebuilt_hash"] = pd.Series(rebuilt_array, index=index, dtype="str")
    result["match"] = pd.Series(
        pd.arrays.BooleanArray(matched, np.zeros_like(matched)), index=index
    )
    result["status"] = pd.Categorical.from_codes(statuses, dtype=_STATUS_DTYPE)
    result["variant"] = _sparse_text(variants, len(written), index)
    result["diagnosis"] = _sparse_text(diagnoses, len(written), index)
    return result


def _sparse_text(values: dict[int, str], size: int, index: pd.Index) -> pd.Series:
    """A str column that is <NA> except at a few positions."""
    column = [None] * size
    for position, text in values.items():
        column[position] = text
    return pd.Series(pa.array(column, type=pa.string()), index=index, dtype="str")
