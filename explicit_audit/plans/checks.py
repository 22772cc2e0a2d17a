"""Rebuilding every recorded ``retrieval_plan_hash`` and explaining each mismatch.

:func:`plan_verdicts` gives one verdict per plan (recorded and rebuilt hash,
status, diagnosis); :func:`check_plans` gives the plans whose hash does not
hold as findings, in the one findings shape of the kit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core import engine
from .._core.deprecation import deprecated_alias
from .._core.findings import FINDING_COLUMNS, FindingsBuilder, Rule, RuleTable
from ..canonical import is_sha256_hex
from ..errors import AuditError
from ..reading.gc_pause import cyclic_gc_paused
from ._canonical import (
    PlanError,
    digest,
    digests,
    written_plan,
)
from ._text_digests import text_digests
from ._variants import diagnose_plan, diagnose_recorded_hash
from .loader import NAME

__all__ = ["FINDING_COLUMNS", "RULES", "check_plans", "plan_verdicts", "verify_plans"]


_STATUS = ("match", "known_variant", "no_known_variant", "malformed_hash", "unhashable")


_STATUS_DTYPE = pd.CategoricalDtype(list(_STATUS))

#: Every status but ``match`` is a finding of :func:`check_plans`, and an error:
#: even a hash that another known writer explains (``known_variant``) is not the
#: hash arborist promises for the plan.
RULES = RuleTable(
    Rule(name, text, check="plan_hashes", kind=NAME, field=field)
    for name, field, text in (
        (
            "known_variant",
            "retrieval_plan_hash",
            "The recorded hash is arborist's hash of the plan as written; a known other "
            "writer or edit reproduces it, but it is not the promised one.",
        ),
        (
            "no_known_variant",
            "retrieval_plan_hash",
            "The recorded hash is arborist's hash of the plan as written; no known writer "
            "reproduces it, so the plan or its hash changed after hashing.",
        ),
        (
            "malformed_hash",
            "retrieval_plan_hash",
            "The recorded hash is 64 lowercase hexadecimal characters.",
        ),
        (
            "unhashable",
            "plan",
            "The plan is one arborist's canonical() can hash.",
        ),
    )
)


def _plans_frame(plans: Any) -> pd.DataFrame:
    frame = plans if engine.is_table(plans) else getattr(plans, "plans", plans)
    if not engine.is_table(frame) or not {"plan", "retrieval_plan_hash"} <= set(frame.columns):
        raise AuditError(
            "plan_verdicts and check_plans need the plans table (columns 'plan' and "
            "'retrieval_plan_hash'); pass ea.load(...).plans or ea.load_plans(...)."
        )
    return frame


def plan_verdicts(plans: pd.DataFrame) -> pd.DataFrame:
    """Rebuild every ``retrieval_plan_hash`` and explain each mismatch, one row per plan.

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
    >>> verdicts = ea.plan_verdicts(ea.load("data/", progress=False).plans)
    >>> int(verdicts.match.sum()), int((~verdicts.match).sum())
    (314, 10)
    """
    return engine.each_row(_verdicts, _plans_frame(plans))


def _verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`plan_verdicts` of an in-memory plans table (or one partition of it).

    The cyclic garbage collector is paused meanwhile, as during a load: each
    plan's text is made from new small tuples, and each pass of the collector
    would walk every plan of the table while finding nothing to free.
    """
    with cyclic_gc_paused():
        return _verdicts_of(frame)


def _verdicts_of(frame: pd.DataFrame) -> pd.DataFrame:
    written = _WrittenPlans(frame["plan"])
    rebuilt = written.digests()
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


class _WrittenPlans:
    """The ``plan`` column: JSON text (as loaded) or parsed values (a frame made by hand)."""

    def __init__(self, column: pd.Series) -> None:
        self.column = column
        self.is_text = isinstance(column.dtype, pd.StringDtype)

    def __len__(self) -> int:
        return len(self.column)

    def digests(self) -> list[str | None]:
        """Each plan's rebuilt hash, None where the seed would not hash it."""
        if self.is_text:
            return text_digests(pa.array(self.column, type=pa.string()))
        return digests([_readable(value) for value in self.column.tolist()])

    def __getitem__(self, position: int) -> Any:
        """The plan at a position as the seed reads it (text parsed by ``json.loads``).

        Raises :class:`PlanError` for text that is not JSON.
        """
        return written_plan(self.column.iloc[position])


def _readable(value: Any) -> Any:
    # Text that is not JSON stays text, which the seed's canonical() refuses.
    try:
        return written_plan(value)
    except PlanError:
        return value


def _sparse_text(values: dict[int, str], size: int, index: pd.Index) -> pd.Series:
    """A str column that is <NA> except at a few positions."""
    column = [None] * size
    for position, text in values.items():
        column[position] = text
    return pd.Series(pa.array(column, type=pa.string()), index=index, dtype="str")


def check_plans(plans: pd.DataFrame) -> pd.DataFrame:
    """Every plan whose recorded ``retrieval_plan_hash`` does not hold, as findings.

    Parameters
    ----------
    plans : DataFrame or Audit
        As for :func:`plan_verdicts`.

    Returns
    -------
    DataFrame
        The findings table of the kit (:data:`FINDING_COLUMNS`), one row per
        plan whose verdict (:func:`plan_verdicts`) is not ``match``: ``rule``
        is its status (a key of :data:`RULES`), ``record`` its ``run_id``,
        ``detail`` the diagnosis with both hashes. Every rule is an error.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> findings = ea.check_plans(ea.load("data/", progress=False).plans)
    >>> findings["rule"].value_counts()[["known_variant", "no_known_variant"]].tolist()
    [7, 2]
    """
    return engine.findings(plan_findings, _plans_frame(plans), what="check_plans")


def plan_findings(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`check_plans` of an in-memory plans table (or one partition of it)."""
    verdicts = _verdicts(frame)
    found = FindingsBuilder(RULES, frame, record=frame.get("run_id"), what="check_plans")
    matched = verdicts["match"].to_numpy(dtype=bool, na_value=False)
    diagnoses = verdicts["diagnosis"].to_numpy(dtype=object, na_value=None)
    recorded = verdicts["recorded_hash"].to_numpy(dtype=object, na_value="(none)")
    rebuilt = verdicts["rebuilt_hash"].to_numpy(dtype=object, na_value="(none)")
    statuses = verdicts["status"].astype("str").to_numpy(dtype=object)
    for position in np.flatnonzero(~matched):
        hashes = f"recorded {recorded[position]}, rebuilt {rebuilt[position]}"
        diagnosis = diagnoses[position]
        detail = f"{diagnosis} ({hashes})" if diagnosis is not None else hashes
        found.add(position, statuses[position], detail)
    return found.frame()


verify_plans = deprecated_alias(
    "verify_plans",
    plan_verdicts,
    use="ea.plan_verdicts (one verdict per plan, as before) or ea.check_plans (the "
    "mismatches as findings)",
    changes="It returns what it returned in 0.1, one verdict per plan.",
)
