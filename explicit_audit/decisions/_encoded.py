"""A decisions table taken apart into arrays, once, and resolved under one policy.

:func:`encode_inputs` turns the input columns into numpy arrays that no policy
changes; rows are numbered by (subject domain, set of self-declared flags),
combinations which are few. :func:`apply_policy` resolves those combinations
under one policy: each one's flags, directives and ``requires_26b`` for the
four ways the two derived flags can join. :func:`~explicit_audit.replay` and
:func:`~explicit_audit.sweep` both start from here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._core.lists import FlatList, flat_list
from ..errors import AuditError
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

    ``combo`` numbers each row's (subject domain, set of self-declared flags);
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


def _column(decisions: pd.DataFrame, name: str, dtype: type) -> np.ndarray:
    column = decisions[name]
    missing = int(column.isna().sum())
    if missing:
        raise AuditError(
            f"column {name!r}: {missing} row(s) have no value; every decision input is "
            "required (decisions loaded by ea.load are always complete)."
        )
    return column.to_numpy(dtype=dtype)


def _small_codes(count: int) -> type:
    """The smallest signed integer type that numbers ``count`` things."""
    for dtype in (np.int8, np.int16, np.int32):
        if count <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _compact(key: np.ndarray, bound: int) -> np.ndarray:
    """Number the distinct values of a non-negative key 0, 1, 2, ... (in value order)."""
    if bound <= max(4 * len(key), 1 << 16):
        seen = np.zeros(bound, dtype=bool)
        seen[key] = True
        number = np.cumsum(seen, dtype=np.int64) - 1
        return np.take(number.astype(_small_codes(bound)), key)
    return pd.factorize(key, sort=True)[0].astype(np.int64)


def _row_keys(
    domain_codes: np.ndarray, n_domains: int, flags: FlatList, codes: np.ndarray, names: list
) -> np.ndarray:
    """A code per row naming its (domain, set of flags); order and repeats of flags ignored.

    ``codes`` numbers each flat flag into ``names`` (:meth:`FlatList.codes`).
    Each row's flags become a bit mask (62 distinct flags per word), packed
    next to the domain code, and the packed keys are numbered.
    """
    key, bound = domain_codes, max(n_domains, 1)
    # Every row's start, with one zero appended so that a row at the very end
    # (or an empty one) reduces over valid positions; an empty row's reduction
    # reads its neighbour's first flag and is zeroed after.
    starts = flags.offsets[:-1]
    nonempty = flags.lengths > 0
    for word in range(0, len(names), 62):
        width = min(62, len(names) - word)
        bit_type = np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint64
        bits = np.zeros(len(codes) + 1, dtype=bit_type)
        if len(names) <= 62:
            np.left_shift(bit_type(1), codes.astype(bit_type), out=bits[:-1])
        else:
            in_word = (codes >= word) & (codes < word + width)
            shifted = np.left_shift(np.uint64(1), np.clip(codes - word, 0, 61).astype(np.uint64))
            bits[:-1] = np.where(in_word, shifted, 0)
        mask = np.bitwise_or.reduceat(bits, starts) if len(starts) else bits[:0]
        mask *= nonempty
        mask = mask.astype(np.int64)
        shift = (bound - 1).bit_length()
        if shift + width <= 62:
            key, bound = key | (mask << shift), 1 << (shift + width)
        else:
            mask = _compact(mask, 1 << width)
            key, bound = key * (int(mask.max()) + 1) + mask, 1 << 62
        key = _compact(key, bound)
        bound = int(key.max()) + 1 if len(key) else 1
    return key if len(names) else _compact(key, bound)


def encode_inputs(decisions: pd.DataFrame) -> EncodedInputs:
    """Take the input columns of a decisions table apart (see :class:`EncodedInputs`)."""
    missing = [name for name in INPUT_COLUMNS if name not in decisions.columns]
    if missing:
        raise AuditError(
            f"the decisions table lacks the input column(s) {', '.join(missing)}; "
            "pass a table loaded by ea.load or ea.load_decisions."
        )
    n = len(decisions)
    domains = decisions["subject_domain"]
    if isinstance(domains.dtype, pd.CategoricalDtype):
        domain_codes = domains.cat.codes.to_numpy(dtype=np.int64)
        domain_names = list(domains.cat.categories)
    else:
        domain_codes, uniques = pd.factorize(domains)
        domain_names = list(uniques)
    if (domain_codes < 0).any():
        raise AuditError("column 'subject_domain': some rows have no value.")
    hits = flat_list(decisions["deterministic_keyword_hits"], "deterministic_keyword_hits")
    self_flags = flat_list(decisions["self_declared_risk_flags"], "self_declared_risk_flags")
    flag_codes, flag_names = self_flags.codes()
    combo = _row_keys(domain_codes, len(domain_names), self_flags, flag_codes, flag_names)
    representative = np.zeros(int(combo.max()) + 1 if n else 0, dtype=np.int64)
    representative[combo] = np.arange(n)
    # The flags of each combination's representative row, as codes, gathered
    # from those rows alone: combinations are few, rows many.
    counts = self_flags.lengths[representative]
    owner = np.repeat(np.arange(len(representative)), counts)
    first = np.cumsum(counts) - counts
    within = np.arange(len(owner)) - first[owner]
    combo_flag_codes = flag_codes[self_flags.offsets[representative][owner] + within]
    own_names = [flag_names[code] for code in combo_flag_codes.tolist()]
    return EncodedInputs(
        index=decisions.index,
        domain_codes=domain_codes,
        domain_names=domain_names,
        keyword_hit=hits.lengths > 0,
        self_high_impact=_column(decisions, "self_declared_high_impact", bool),
        content_chars=_column(decisions, "content_chars", np.int64),
        evidence_doc_count=_column(decisions, "evidence_doc_count", np.int64),
        confidence=_column(decisions, "confidence", np.float64),
        combo=combo.astype(np.int64),
        combo_domain=domain_codes[representative],
        combo_flags=[
            frozenset(own_names[start : start + count])
            for start, count in zip(first.tolist(), counts.tolist(), strict=True)
        ],
        flag_names=flag_names,
        combo_flag_codes=combo_flag_codes,
        combo_flag_owner=owner,
    )


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

    def base_requires(self, combo: np.ndarray) -> np.ndarray:
        """Per row: whether a flag other than the two derived ones requires 26B."""
        return self.requires_table[combo * 4]

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
        [used_index[name] for name in applied_names], dtype=_small_codes(len(used_names))
    )
    # Each answer looked up per domain first, then gathered once per row.
    codes = encoded.domain_codes
    high_impact = np.take(spec_high_impact[spec_of_domain], codes)
    high_impact |= encoded.keyword_hit
    high_impact |= encoded.self_high_impact
    return PolicyView(
        encoded,
        policy,
        high_impact=high_impact,
        used_fallback=np.take(spec_of_domain == fallback, codes),
        domain_used=np.take(spec_to_used[spec_of_domain], codes),
        used_names=used_names,
        spec_defaults=[spec.default_risk_flags for spec in specs],
        combo_spec=spec_of_domain[encoded.combo_domain],
    )


_BOTH_DERIVED = (FLAG_MULTI_DOC, FLAG_LOW_CONFIDENCE)
