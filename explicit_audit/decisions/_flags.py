"""Risk flags under a policy: the one place a set of flags is resolved.

Both :func:`~explicit_audit.route` and the vectorised replay resolve a set of
risk flags the same way, here: sorted, whether any requires 26B (a flag the
policy does not list never does), and the directives of the listed flags in
flag order.
"""

from __future__ import annotations

from collections.abc import Iterable

from .policy import Policy

__all__ = ["FLAG_LOW_CONFIDENCE", "FLAG_MULTI_DOC", "flag_outcome"]

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
