"""A decisions table taken apart into arrays, once, and resolved under one policy.

:func:`encode_inputs` turns the input columns into numpy arrays that no policy
changes; rows are numbered by (subject domain, set of self-declared flags),
combinations which are few (:mod:`._combo_keys` numbers them).
:func:`apply_policy` resolves those combinations under one policy: each one's
flags, directives and ``requires_26b`` for the four ways the two derived flags
can join. :func:`~explicit_audit.replay` and :func:`~explicit_audit.sweep` both
start from here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._core.lists import FlatList, flat_list, nonempty_rows
from .._core.overlap import THREADS, both
from ..errors import AuditError
from ._combo_keys import row_keys, small_codes
from ._flags import FLAG_LOW_CONFIDENCE, FLAG_MULTI_DOC, flag_outcome, requires_by_state
from .policy import Policy

__all__ = ["INPUT_COLUMNS", "EncodedInputs", "PolicyView", "apply_policy", "encode_inputs"]

#: The inputs of ``decide_routing``, in its order: the input columns replay reads.
INPUT_COLUMNS = (
    "subject_domain",
    "content_chars",
    "deterministic_keyword_hits",
    "self_declared_high_impact",
    "self_declared_risk_flags",
    "confidence",
    "evidence_doc_count",
)


@dataclass(frozen=True)
class EncodedInputs:
    """The inputs of a decisions table as arrays, independent of any policy.

    ``combo`` numbers each row's (subject domain, set of self-declared flags),
    in the smallest integer type that holds the numbers (widen it before
    arithmetic);
    ``combo_domain`` and ``combo_flags`` describe each such combination, and
    so do ``combo_flag_codes`` and ``combo_flag_owner`` as arrays: each flag
    of a combination as a code into ``flag_names``, and its combination.
    """

    index: pd.Index
    domain_codes: np.ndarray
    domain_names: list
    keyword_hit: np.ndarray
    self_high_impact: np.ndarray
    content_chars: np.ndarray
    evidence_doc_count: np.ndarray
    confidence: np.ndarray
    combo: np.ndarray
    combo_domain: np.ndarray
    combo_flags: list[frozenset[str]]
    flag_names: list[str]
    combo_flag_codes: np.ndarray
    combo_flag_owner: np.ndarray


def _column(columns: dict[str, pd.Series], name: str, dtype: type) -> np.ndarray:
    column = columns[name]
    missing = int(column.isna().sum())
    if missing:
        raise AuditError(
            f"column {name!r}: {missing} row(s) have no value; every decision input is "
            "required (decisions loaded by ea.load are always complete)."
        )
    return column.to_numpy(dtype=dtype)


def encode_inputs(decisions: pd.DataFrame, threads: int = THREADS) -> EncodedInputs:
    """Take the input columns of a decisions table apart (see :class:`EncodedInputs`).

    With ``threads`` of 2 or more, the other columns are read while the
    self-declared flags are encoded (:func:`~explicit_audit._core.overlap.both`);
    the encoding, and the error a wrong table raises, are the same with one.
    """
    missing = [name for name in INPUT_COLUMNS if name not in decisions.columns]
    if missing:
        raise AuditError(
            f"the decisions table lacks the input column(s) {', '.join(missing)}; "
            "pass a table loaded by ea.load or ea.load_decisions."
        )
    # Each column looked up here once: the steps below may run in two threads.
    columns = {name: decisions[name] for name in INPUT_COLUMNS}
    flags, others = both(
        lambda: _attempt(_flag_codes, columns),
        lambda: _other_columns(columns),
        threads,
    )
    # A table wrong in several columns raises the error of the first one in
    # the order they are read one at a time: domain, hits, flags, numbers.
    for _, error in [*others[:2], flags, *others[2:]]:
        if error is not None:
            raise error
    (domain_codes, domain_names), keyword_hit, numbers = (value for value, _ in others)
    return EncodedInputs(
        index=decisions.index,
        domain_codes=domain_codes,
        domain_names=domain_names,
        keyword_hit=keyword_hit,
        **numbers,
        **_combinations(domain_codes, len(domain_names), *flags[0]),
    )


def _attempt(step: Callable[[dict], Any], columns: dict[str, pd.Series]) -> tuple[Any, Any]:
    """``(step(columns), None)``, or ``(None, error)`` when the table is wrong."""
    try:
        return step(columns), None
    except AuditError as error:  # raised by the caller, in the columns' order
        return None, error


def _other_columns(columns: dict[str, pd.Series]) -> list[tuple[Any, Any]]:
    """The domains, keyword hits and numbers, each as :func:`_attempt` gives it.

    Read in that order, up to the first wrong one.
    """
    outcomes = []
    for step in (_domains, _keyword_hits, _numbers):
        outcomes.append(_attempt(step, columns))
        if outcomes[-1][1] is not None:
            break
    return outcomes


def _domains(columns: dict[str, pd.Series]) -> tuple[np.ndarray, list]:
    """Each row's subject domain as a code, and the names the codes number."""
    domains = columns["subject_domain"]
    if isinstance(domains.dtype, pd.CategoricalDtype):
        domain_codes, domain_names = domains.cat.codes.to_numpy(), list(domains.cat.categories)
    else:
        domain_codes, uniques = pd.factorize(domains)
        domain_names = list(uniques)
    # Checked in the codes' own type (a categorical's is small), widened after.
    if (domain_codes < 0).any():
        raise AuditError("column 'subject_domain': some rows have no value.")
    return domain_codes.astype(np.int64, copy=False), domain_names


def _numbers(columns: dict[str, pd.Series]) -> dict[str, np.ndarray]:
    """The flag and number columns as arrays, checked complete in the table's order."""
    return {
        "self_high_impact": _column(columns, "self_declared_high_impact", bool),
        "content_chars": _column(columns, "content_chars", np.int64),
        "evidence_doc_count": _column(columns, "evidence_doc_count", np.int64),
        "confidence": _column(columns, "confidence", np.float64),
    }


def _keyword_hits(columns: dict[str, pd.Series]) -> np.ndarray:
    """Whether each row has a keyword hit."""
    return nonempty_rows(columns["deterministic_keyword_hits"], "deterministic_keyword_hits")


def _flag_codes(columns: dict[str, pd.Series]) -> tuple[FlatList, np.ndarray, list[str]]:
    """The self-declared flags taken apart, and each flat flag as a code into the names."""
    self_flags = flat_list(columns["self_declared_risk_flags"], "self_declared_risk_flags")
    return (self_flags, *self_flags.codes())


def _combinations(
    domain_codes: np.ndarray,
    n_domains: int,
    self_flags: FlatList,
    flag_codes: np.ndarray,
    flag_names: list[str],
) -> dict:
    """Each row's combination, and each combination's domain and flags."""
    combo, combo_domain, combo_flag_codes, owner = row_keys(
        domain_codes, n_domains, self_flags, flag_codes, flag_names
    )
    counts = np.bincount(owner, minlength=len(combo_domain))
    first = np.cumsum(counts) - counts
    own_names = [flag_names[code] for code in combo_flag_codes.tolist()]
    return {
        "combo": combo,
        "combo_domain": combo_domain,
        "combo_flags": [
            frozenset(own_names[start : start + count])
            for start, count in zip(first.tolist(), counts.tolist(), strict=True)
        ],
        "flag_names": flag_names,
        "combo_flag_codes": combo_flag_codes,
        "combo_flag_owner": owner,
    }


class PolicyView:
    """What one policy makes of encoded inputs, before any threshold is applied.

    Per row: ``high_impact``, ``used_fallback``, ``domain_used`` (a code into
    ``used_names``). Per combination ``k`` and derived-flag state
    ``4 * k + 2 * multi_doc + low_confidence``: ``requires_table`` (array
    operations, :func:`~._flags.requires_by_state`), and ``flag_table`` and
    ``directive_table``, resolved by :func:`~._flags.flag_outcome` when first
    read (a replay reads them; a sweep or a flip count never does).
    """

    def __init__(
        self,
        encoded: EncodedInputs,
        policy: Policy,
        *,
        high_impact: np.ndarray,
        used_fallback: np.ndarray,
        domain_used: np.ndarray,
        used_names: list[str],
        spec_defaults: list[tuple[str, ...]],
        combo_spec: np.ndarray,
    ) -> None:
        self.high_impact = high_impact
        self.used_fallback = used_fallback
        self.domain_used = domain_used
        self.used_names = used_names
        self._encoded = encoded
        self._policy = policy
        self._spec_defaults = spec_defaults
        self._combo_spec = combo_spec
        self.requires_table = requires_by_state(
            policy,
            encoded.flag_names,
            encoded.combo_flag_codes,
            encoded.combo_flag_owner,
            spec_defaults,
            combo_spec,
        )

    @property
    def combo_fallback(self) -> np.ndarray:
        """Per combination: whether its domain fell back (the fallback spec is the last)."""
        return self._combo_spec == len(self._spec_defaults) - 1

    def base_requires(self, combo: np.ndarray) -> np.ndarray:
        """Per row: whether a flag other than the two derived ones requires 26B."""
        # Multiplied in the index type: the codes may be in a smaller one.
        return self.requires_table[np.multiply(combo, 4, dtype=np.intp)]

    @functools.cached_property
    def _outcomes(self) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        flag_table, directive_table = [], []
        for spec, own_flags in zip(self._combo_spec, self._encoded.combo_flags, strict=True):
            base = set(self._spec_defaults[spec]) | own_flags
            for derived in ((), (FLAG_LOW_CONFIDENCE,), (FLAG_MULTI_DOC,), _BOTH_DERIVED):
                ordered, _, directives = flag_outcome(self._policy, base.union(derived))
                flag_table.append(ordered)
                directive_table.append(directives)
        return flag_table, directive_table

    @property
    def flag_table(self) -> list[tuple[str, ...]]:
        """Per combination and state: the sorted risk flags."""
        return self._outcomes[0]

    @property
    def directive_table(self) -> list[tuple[str, ...]]:
        """Per combination and state: the directives of the known flags, in flag order."""
        return self._outcomes[1]


def apply_policy(encoded: EncodedInputs, policy: Policy) -> PolicyView:
    """Resolve domains and flag sets of encoded inputs under one policy."""
    names = list(policy.subject_domains)
    specs = [policy.subject_domains[name] for name in names] + [policy.fallback_domain]
    fallback = len(names)
    position = {name: i for i, name in enumerate(names)}
    spec_of_domain = np.array(
        [position.get(name, fallback) for name in encoded.domain_names] or [0], dtype=np.int64
    )
    spec_high_impact = np.array([spec.high_impact for spec in specs], dtype=bool)
    applied_names = [*names, policy.fallback_domain.name]
    # Each name's first position, looked up in a dict: list.index per name is
    # quadratic in the number of domains (a policy may name 200,000).
    used_index: dict[str, int] = {}
    for name in applied_names:
        used_index.setdefault(name, len(used_index))
    used_names = list(used_index)
    spec_to_used = np.array(
        [used_index[name] for name in applied_names], dtype=small_codes(len(used_names))
    )
    # Each answer looked up per domain first, then gathered once per row.
    high_impact, used_fallback, domain_used = _per_row(
        encoded.domain_codes,
        spec_high_impact[spec_of_domain],
        spec_of_domain == fallback,
        spec_to_used[spec_of_domain],
    )
    high_impact |= encoded.keyword_hit
    high_impact |= encoded.self_high_impact
    return PolicyView(
        encoded,
        policy,
        high_impact=high_impact,
        used_fallback=used_fallback,
        domain_used=domain_used,
        used_names=used_names,
        spec_defaults=[spec.default_risk_flags for spec in specs],
        combo_spec=spec_of_domain[encoded.combo_domain],
    )


#: Applied domains whose code, fallback bit and high-impact bit share one byte.
_PACKED_DOMAINS = 64


def _per_row(
    codes: np.ndarray, high_impact: np.ndarray, fallback: np.ndarray, used: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three answers of each row's domain: per domain arrays gathered by ``codes``.

    While the applied domains are few, the three share a byte per domain and
    are gathered once: a gather reads a million int64 codes, unpacking a
    byte per row is a fraction of that.
    """
    if used.dtype.itemsize > 1 or (len(used) and int(used.max()) >= _PACKED_DOMAINS):
        return np.take(high_impact, codes), np.take(fallback, codes), np.take(used, codes)
    table = used.astype(np.uint8) << 2
    table |= fallback.astype(np.uint8) << 1
    table |= high_impact.astype(np.uint8)
    packed = np.take(table, codes)
    # Each bit taken out as 0 or 1, which a bool array viewed as bytes holds.
    row_high_impact = (packed & 1).view(bool)
    row_fallback = (packed & 2) != 0
    row_used = (packed >> 2).view(used.dtype)  # below 64: the same bytes in int8
    return row_high_impact, row_fallback, row_used


_BOTH_DERIVED = (FLAG_MULTI_DOC, FLAG_LOW_CONFIDENCE)
