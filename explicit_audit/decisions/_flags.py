"""Risk flags under a policy: the one place a set of flags is resolved.

Both :func:`~explicit_audit.route` and the vectorised replay resolve a set of
risk flags the same way, here: sorted, whether any requires 26B (a flag the
policy does not list never does), and the directives of the listed flags in
flag order. :func:`requires_by_state` is the ``requires_26b`` part of that
rule for many flag sets at once, as array operations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .policy import Policy

__all__ = ["FLAG_LOW_CONFIDENCE", "FLAG_MULTI_DOC", "flag_outcome", "requires_by_state"]

#: The two flags a decision derives itself (from the document count and the confidence).
FLAG_MULTI_DOC = "multi_doc_dependency"
FLAG_LOW_CONFIDENCE = "low_confidence_reasoning"


def flag_outcome(policy: Policy, flags: Iterable[str]) -> tuple[tuple[str, ...], bool, tuple]:
    """Sorted flags, whether one requires 26B, and the directives in flag order."""
    ordered = tuple(sorted(set(flags)))
    known = [policy.risk_flags[f] for f in ordered if f in policy.risk_flags]
    requires = any(flag.requires_26b for flag in known)
    directives = tuple(flag.synthesis_directive for flag in known if flag.synthesis_directive)
    return ordered, requires, directives


def _requires(policy: Policy, flag: str) -> bool:
    """Whether ``flag`` requires 26B under ``policy``: never when the policy does not list it."""
    spec = policy.risk_flags.get(flag)
    return spec is not None and bool(spec.requires_26b)


def requires_by_state(
    policy: Policy,
    flag_names: Sequence[str],
    flag_codes: np.ndarray,
    flag_owner: np.ndarray,
    owner_defaults: Sequence[Iterable[str]],
    owner_group: np.ndarray,
) -> np.ndarray:
    """Whether a flag requires 26B, for every flag set and each way the derived flags join.

    Flag set ``k`` is the union of the flags ``flag_names[flag_codes[j]]`` for
    every ``j`` with ``flag_owner[j] == k`` (none: an empty set) and the
    defaults ``owner_defaults[owner_group[k]]``. Equal, for every ``k`` and
    state, to the ``requires`` of :func:`flag_outcome` over that set with the
    derived flags of the state added; the loop runs over distinct flag names
    and groups, never over sets.

    Parameters
    ----------
    policy : Policy
    flag_names : sequence of str
        The distinct flags the codes number.
    flag_codes, flag_owner : ndarray of int
        Each listed flag's code and the set it belongs to.
    owner_defaults : sequence of iterables of str
        The default flags of each group (a subject domain's).
    owner_group : ndarray of int
        The group of each set; its length is the number of sets.

    Returns
    -------
    ndarray of bool, length ``4 * len(owner_group)``
        At ``4 * k + 2 * multi_doc + low_confidence``: whether set ``k``, with
        :data:`FLAG_MULTI_DOC` added when ``multi_doc`` and
        :data:`FLAG_LOW_CONFIDENCE` when ``low_confidence``, holds a flag
        that requires 26B.
    """
    sets = len(owner_group)
    named = np.array([_requires(policy, name) for name in flag_names], dtype=bool)
    own = np.zeros(sets, dtype=bool)
    flag_codes = np.asarray(flag_codes, dtype=np.int64)
    if len(flag_codes):
        own[np.asarray(flag_owner, dtype=np.int64)[named[flag_codes]]] = True
    groups, group_of_set = np.unique(np.asarray(owner_group, dtype=np.int64), return_inverse=True)
    by_group = np.array(
        [any(_requires(policy, flag) for flag in owner_defaults[group]) for group in groups],
        dtype=bool,
    )
    base = own | by_group[group_of_set]
    multi = _requires(policy, FLAG_MULTI_DOC)
    low = _requires(policy, FLAG_LOW_CONFIDENCE)
    table = np.empty((sets, 4), dtype=bool)
    table[:, 0] = base
    table[:, 1] = base | low
    table[:, 2] = base | multi
    table[:, 3] = base | multi | low
    return table.ravel()
