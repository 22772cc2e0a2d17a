"""The sections of a routing policy, declared once: their fields are its YAML keys.

A field without a default is a key the YAML must have; one with a default may
be left out. :mod:`explicit_audit.decisions._policy_yaml` reads the keys it
accepts, and which are required, off these dataclasses.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["Escalation", "FallbackDomain", "RiskFlag", "SubjectDomain", "section_keys"]


@dataclass(frozen=True, slots=True)
class Escalation:
    """The three escalation thresholds of a policy."""

    context_char_cap_4b: int
    escalate_on_multi_doc_count: int
    confidence_threshold: float


@dataclass(frozen=True, slots=True)
class SubjectDomain:
    """A subject domain: whether it is high impact, and the risk flags it always carries."""

    high_impact: bool
    default_risk_flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FallbackDomain:
    """The domain used for any subject domain the policy does not name."""

    name: str
    high_impact: bool
    default_risk_flags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RiskFlag:
    """A risk flag the policy knows: whether it forces 26B, and its synthesis directive."""

    requires_26b: bool
    synthesis_directive: str | None = None


def section_keys(section: type) -> dict[str, bool]:
    """``{key: required}`` of one section: its fields, required where they have no default."""
    return {
        field.name: field.default is dataclasses.MISSING
        and field.default_factory is dataclasses.MISSING
        for field in dataclasses.fields(section)
    }
