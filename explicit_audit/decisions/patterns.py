"""How the policy variants agree: decisions per pattern of escalation across the variants.

Every decision is replayed under every variant at its own thresholds; its
pattern is the tuple of those escalations. The rows where the variants
disagree are the decisions a change of policy would flip.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._core import engine
from .policies import policies_by_id
from .routing import replay

__all__ = ["escalation_patterns"]


def escalation_patterns(decisions: pd.DataFrame, policies: Any) -> pd.DataFrame:
    """Decisions per pattern of escalation to 26B across the policy variants.

    Parameters
    ----------
    decisions : DataFrame
        A decisions table (``audit.decisions``).
    policies : PolicySet, mapping, Policy or list of Policy
        The variants, each replayed at its own thresholds.

    Returns
    -------
    DataFrame
        One row per pattern that occurs: the index holds one level per
        variant (named by its ``policy_id``, in the order given), True where
        the variant escalates; the column ``decisions`` counts the decisions
        of that pattern. Patterns ascending, False before True. Equal to
        ``pd.DataFrame({id: ea.replay(decisions, p)["escalate_to_26b"] ...})
        .value_counts()`` sorted; on Dask tables, each partition's counts
        are added.

    Examples
    --------
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> ea.escalation_patterns(audit.decisions, audit.policies)  # doctest: +SKIP
    """
    by_id = policies_by_id(policies)
    if not by_id:
        raise ValueError("escalation_patterns needs at least one policy variant")
    return engine.reduce(
        _pattern_counts,
        _added,
        decisions,
        what="escalation_patterns",
        whole=_patterns,
        by_id=by_id,
    )


def _patterns(decisions: pd.DataFrame, by_id: dict) -> pd.DataFrame:
    return _pattern_counts(decisions, by_id).sort_index().to_frame()


def _pattern_counts(decisions: pd.DataFrame, by_id: dict) -> pd.Series:
    escalated = pd.DataFrame(
        {
            policy_id: replay(decisions, policy)["escalate_to_26b"]
            for policy_id, policy in by_id.items()
        },
        index=decisions.index,
    )
    return escalated.value_counts().rename("decisions")


def _added(parts: list[pd.Series]) -> pd.DataFrame:
    """The partitions' counts per pattern, added."""
    found = [part for part in parts if len(part)]
    if not found:
        return parts[0].sort_index().to_frame()
    levels = list(range(found[0].index.nlevels))
    total = pd.concat(found).groupby(level=levels, sort=True).sum().astype("int64")
    total.index.names = found[0].index.names
    return total.rename("decisions").to_frame()
