"""Rebuilding every recorded ``retrieval_plan_hash`` and explaining each mismatch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..canonical import is_sha256_hex
from ..errors import AuditError
from ._canonical import (
    PlanError,
    digest,
    digests,
)
from ._variants import diagnose_plan, diagnose_recorded_hash

__all__ = ["verify_plans"]


_STATUS = ("match", "known_variant", "no_known_variant", "malformed_hash", "unhashable")


_STATUS_DTYPE = pd.CategoricalDtype(list(_STATUS))


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
