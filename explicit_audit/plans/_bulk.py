"""Plan records read in bulk, record by record, where the columnar path refused a piece.

The columnar path (:mod:`explicit_audit.plans._arrow`) takes a piece whole or
not at all: one record with ``top_k: "8"`` makes Arrow refuse every record
around it. The reading core then parses the piece's spans with orjson in one
pass and hands the plans kind the values it claims (``FastPath.bulk``).
:func:`read_bulk` takes each record written as producers write it, as the
row the exact path builds for it (:func:`~explicit_audit.plans.loader._producer_row`),
and refuses, for the exact path to read value by value, every record whose
row or key notes could differ there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core.columns import extra_columns
from .._core.keys import likely_typo
from ..reading.columnar import ColumnarPart
from ._arrow import part_from_columns
from ._producer import ProducerFields, producer_fields
from .loader import _RECORD_KEYS, _extra_keys, plan_texts

__all__ = ["read_bulk"]

#: Types of an extra value orjson reads exactly as the exact path does: any other
#: (a float, an object, an array) may hold an integer beyond 64 bits, or nest deeply.
_PLAIN_EXTRA = frozenset((str, int, bool, type(None)))
_TOP_KEYS = tuple(_RECORD_KEYS)
_NO_EXTRAS: dict = {}


def read_bulk(
    values: list[Any], texts: list[bytes], lines: np.ndarray, source_file: str, guard: Any
) -> tuple[ColumnarPart | None, list[int]]:
    """The plan records among values parsed in bulk, as a part; the positions refused.

    A record is taken when it is in a producer shape (as
    :func:`~explicit_audit.plans.loader._record_fields` finds it) and the
    exact path would give it no key note: its other keys are logger keys,
    none a likely typo of a record key, and a value among them that orjson
    might not read as the exact path does (see ``guard``) sends the record
    to the exact path. Its plan's text is its bytes in the record, as on
    every path; a run whose plans the bytes do not show with certainty is
    refused whole.
    """
    taken: list[int] = []
    refused: list[int] = []
    run_ids: list[Any] = []
    recorded_hashes: list[str] = []
    all_fields: list[ProducerFields] = []
    extras: list[dict] = []
    for position, value in enumerate(values):
        # _record_fields, inlined: this loop runs once per record of a piece.
        recorded, run_id = value.get("retrieval_plan_hash"), value.get("run_id")
        fields = producer_fields(value.get("retrieval_plan"))
        if (
            fields is None
            or type(recorded) is not str
            or (run_id is not None and type(run_id) is not str)
        ):
            refused.append(position)
            continue
        extra = _NO_EXTRAS
        if len(value) != 2 + ("run_id" in value):
            extra = _extra_keys(value)
            if _doubtful_extras(extra, texts[position], guard):
                refused.append(position)
                continue
        taken.append(position)
        run_ids.append(run_id)
        recorded_hashes.append(recorded)
        all_fields.append(fields)
        extras.append(extra)
    if not taken:
        return None, refused
    plans = plan_texts([texts[position] for position in taken])
    if plans is None:
        return None, sorted(refused + taken)
    columns = _columns(all_fields)
    columns["source_file"] = [source_file] * len(taken)
    columns["source_line"] = lines[np.asarray(taken, dtype=np.int64)].tolist()
    columns["run_id"] = run_ids
    columns["retrieval_plan_hash"] = recorded_hashes
    columns["plan"] = plans
    index = pd.RangeIndex(len(taken))
    return part_from_columns(
        columns, extra_columns(extras, index, as_text=False, typed=False)
    ), refused


def _columns(all_fields: list[ProducerFields]) -> dict[str, list]:
    """The plan's columns of records in a producer shape (the rows ``_producer_row`` builds)."""
    (keywords, top_k, over_fetch, max_chars, shard_ids, engine, manifest, lang, shape) = zip(
        *all_fields, strict=True
    )
    has_mt = [bool(e or m or s) for e, m, s in zip(engine, manifest, lang, strict=True)]
    return {
        "plan_shape": shape,
        "retrieval_keywords": keywords,
        "keywords_non_ascii": [not text.isascii() for text in keywords],
        "top_k": top_k,
        "over_fetch": over_fetch,
        "max_context_chars": max_chars,
        "shard_ids": shard_ids,
        "has_mt": has_mt,
        "mt_engine": [e if h else None for e, h in zip(engine, has_mt, strict=True)],
        "mt_manifest_hash": [m if h else None for m, h in zip(manifest, has_mt, strict=True)],
        "source_lang": [s if h else None for s, h in zip(lang, has_mt, strict=True)],
        "seed_coercions": [None] * len(all_fields),
    }


def _doubtful_extras(extra: dict, text: bytes, guard: Any) -> bool:
    """Whether a record's logger keys send it to the exact path."""
    for key in extra:
        if likely_typo(key, _TOP_KEYS) is not None:
            return True  # noted there as an unknown key
    if set(map(type, extra.values())) <= _PLAIN_EXTRA:
        return False
    return guard(text)
