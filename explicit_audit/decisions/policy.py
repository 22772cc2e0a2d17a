"""Routing policies: what a policy is, its content hash, and variants of it.

Reading policy files and holding several policies is :mod:`explicit_audit.decisions.policies`.

A policy is one YAML file (``docs/formats.md`` section 5)::

    policy_id: baseline                 # optional; defaults to the file name's stem
    description: ...                    # optional free text, not part of the rules
    escalation:
      context_char_cap_4b: 6000         # int >= 0; content_chars > cap escalates
      escalate_on_multi_doc_count: 3    # int >= 0; evidence_doc_count >= count escalates
      confidence_threshold: 0.6         # number in [0, 1]; confidence < threshold escalates
    subject_domains:                    # name -> {high_impact, default_risk_flags}
      legal: {high_impact: true, default_risk_flags: [legal_advice]}
    fallback_domain: {name: general, high_impact: false, default_risk_flags: []}
    risk_flags:                         # flag -> {requires_26b, synthesis_directive}
      legal_advice: {requires_26b: true, synthesis_directive: "Cite the governing clause."}

``default_risk_flags`` and ``synthesis_directive`` may be left out (no flags,
no directive); every other key is required, and any key not listed here is an
error. YAML is read with ``yaml.safe_load`` only, so a file that carries a
Python tag (``!!python/object``) is refused.

The content hash of a policy is the SHA-256 (hex) of the canonical JSON of its
*rules*: ``escalation`` (threshold as a float), ``subject_domains``,
``fallback_domain`` and ``risk_flags``, with every ``default_risk_flags`` list
sorted and de-duplicated and an empty directive written as null, serialised
with ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
and encoded as UTF-8. ``policy_id``, ``description`` and the source file are
not part of it: two policies with the same hash decide every input the same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import PolicyError
from ._policy_yaml import check_policy
from .policy_sections import Escalation, FallbackDomain, RiskFlag, SubjectDomain

__all__ = ["Escalation", "FallbackDomain", "Policy", "RiskFlag", "SubjectDomain"]


def _plain(value: Any) -> Any:
    """Dataclasses and mappings of them as plain dicts and lists, for re-validation."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True, eq=False)
class Policy:
    """One routing policy: immutable, with a stable content hash.

    Build one with :func:`load_policy` or :meth:`Policy.from_dict`; make
    variants with :meth:`with_escalation` and :meth:`replace`, which return new
    policies (with a new ``policy_id`` and ``content_hash``). Two policies are
    equal when their ``policy_id`` and ``content_hash`` are.

    Attributes
    ----------
    policy_id : str
    escalation : Escalation
    subject_domains : Mapping[str, SubjectDomain]
    fallback_domain : FallbackDomain
    risk_flags : Mapping[str, RiskFlag]
    description : str
    source_file : str or None
        The YAML file it was read from, if any.
    content_hash : str
        SHA-256 of the canonical JSON of the rules (see the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> policy = ea.load_policy("data/policies/baseline.yaml")
    >>> cheaper = policy.with_escalation(context_char_cap_4b=12000)
    >>> cheaper.policy_id, cheaper.escalation.context_char_cap_4b
    ('baseline[cap=12000]', 12000)
    """

    policy_id: str
    escalation: Escalation
    subject_domains: Mapping[str, SubjectDomain]
    fallback_domain: FallbackDomain
    risk_flags: Mapping[str, RiskFlag]
    description: str = ""
    source_file: str | None = None
    content_hash: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "subject_domains", MappingProxyType(dict(self.subject_domains)))
        object.__setattr__(self, "risk_flags", MappingProxyType(dict(self.risk_flags)))
        rules = json.dumps(
            self._rules(), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")
        object.__setattr__(self, "content_hash", hashlib.sha256(rules).hexdigest())

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> Policy:
        """Check a parsed policy (a mapping in the YAML layout) and build the Policy.

        Parameters
        ----------
        data : Mapping
            The policy in the layout of the YAML file.
        source : str, optional
            Where it came from, for error messages; its stem is the default ``policy_id``.

        Returns
        -------
        Policy

        Raises
        ------
        PolicyError
            Naming the source and the key at fault.

        Examples
        --------
        >>> import explicit_audit as ea
        >>> ea.Policy.from_dict({"policy_id": "p", "escalation": {"context_char_cap_4b": 10,
        ...     "escalate_on_multi_doc_count": 3, "confidence_threshold": 0.5},
        ...     "subject_domains": {}, "fallback_domain": {"name": "general",
        ...     "high_impact": False}, "risk_flags": {}}).escalation.context_char_cap_4b
        10
        """
        where = source or "<policy>"
        checked = check_policy(data, where)
        policy_id = checked.get("policy_id")
        if policy_id is None:
            if source is None:
                raise PolicyError(f"{where}: policy key 'policy_id' is missing; name the policy.")
            policy_id = Path(source).name.split(".")[0]
        escalation = checked["escalation"]
        return cls(
            policy_id=policy_id,
            escalation=Escalation(
                escalation["context_char_cap_4b"],
                escalation["escalate_on_multi_doc_count"],
                float(escalation["confidence_threshold"]),
            ),
            subject_domains={
                name: SubjectDomain(spec["high_impact"], tuple(spec["default_risk_flags"]))
                for name, spec in checked["subject_domains"].items()
            },
            fallback_domain=FallbackDomain(
                checked["fallback_domain"]["name"],
                checked["fallback_domain"]["high_impact"],
                tuple(checked["fallback_domain"]["default_risk_flags"]),
            ),
            risk_flags={
                name: RiskFlag(spec["requires_26b"], spec["synthesis_directive"] or None)
                for name, spec in checked["risk_flags"].items()
            },
            description=checked.get("description", ""),
            source_file=source,
        )

    def _rules(self) -> dict[str, Any]:
        def domain(spec: SubjectDomain | FallbackDomain) -> dict[str, Any]:
            out = _plain(spec)
            out["default_risk_flags"] = sorted(set(spec.default_risk_flags))
            return out

        return {
            "escalation": _plain(self.escalation)
            | {"confidence_threshold": float(self.escalation.confidence_threshold)},
            "subject_domains": {name: domain(s) for name, s in self.subject_domains.items()},
            "fallback_domain": domain(self.fallback_domain),
            "risk_flags": {name: _plain(flag) for name, flag in self.risk_flags.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        """The policy in the YAML layout, as plain dicts and lists.

        Returns
        -------
        dict
            Feeding it back to :meth:`from_dict` gives an equal policy.
        """
        out: dict[str, Any] = {"policy_id": self.policy_id}
        if self.description:
            out["description"] = self.description
        for key in ("escalation", "subject_domains", "fallback_domain", "risk_flags"):
            out[key] = _plain(getattr(self, key))
        return out

    def replace(self, **changes: Any) -> Policy:
        """A new policy with some top-level parts replaced, checked like a YAML file.

        Parameters
        ----------
        **changes
            Any of ``policy_id``, ``description``, ``escalation``,
            ``subject_domains``, ``fallback_domain``, ``risk_flags``, as plain
            mappings or as the dataclasses of this module.

        Returns
        -------
        Policy
            Its ``policy_id`` is the one given, else ``"<old id>~<first 8 hex of its hash>"``.

        Examples
        --------
        >>> policy = ea.load_policy("data/policies/baseline.yaml")
        >>> flags = dict(policy.risk_flags)
        >>> flags["numeric_claims"] = ea.RiskFlag(requires_26b=True)
        >>> policy.replace(risk_flags=flags).policy_id
        'baseline~8c53a734'
        """
        data = self.to_dict()
        data.update({key: _plain(value) for key, value in changes.items()})
        if "policy_id" not in changes:
            data["policy_id"] = self.policy_id
        new = Policy.from_dict(data, source=f"{self.policy_id}.replace(...)")
        new_id = changes.get("policy_id") or f"{self.policy_id}~{new.content_hash[:8]}"
        return dataclasses.replace(new, policy_id=new_id, source_file=None)

    def with_escalation(
        self,
        *,
        context_char_cap_4b: int | None = None,
        escalate_on_multi_doc_count: int | None = None,
        confidence_threshold: float | None = None,
        policy_id: str | None = None,
    ) -> Policy:
        """A new policy with other escalation thresholds.

        Parameters
        ----------
        context_char_cap_4b, escalate_on_multi_doc_count, confidence_threshold : optional
            The thresholds to change; the others are kept.
        policy_id : str, optional
            Defaults to the old id with the changed values, e.g. ``"baseline[cap=8000]"``.

        Returns
        -------
        Policy

        Examples
        --------
        >>> policy = ea.load_policy("data/policies/baseline.yaml")
        >>> policy.with_escalation(confidence_threshold=0.5).policy_id
        'baseline[conf=0.5]'
        """
        given = {
            "context_char_cap_4b": context_char_cap_4b,
            "escalate_on_multi_doc_count": escalate_on_multi_doc_count,
            "confidence_threshold": confidence_threshold,
        }
        given = {key: value for key, value in given.items() if value is not None}
        if policy_id is None:
            short = {
                "context_char_cap_4b": "cap",
                "escalate_on_multi_doc_count": "docs",
                "confidence_threshold": "conf",
            }
            label = ",".join(f"{short[key]}={value}" for key, value in given.items())
            policy_id = f"{self.policy_id}[{label}]" if label else self.policy_id
        escalation = _plain(self.escalation) | given
        return self.replace(escalation=escalation, policy_id=policy_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Policy):
            return NotImplemented
        return (self.policy_id, self.content_hash) == (other.policy_id, other.content_hash)

    def __hash__(self) -> int:
        return hash((self.policy_id, self.content_hash))

    def __repr__(self) -> str:
        esc = self.escalation
        return (
            f"Policy({self.policy_id!r}, cap={esc.context_char_cap_4b}, "
            f"docs>={esc.escalate_on_multi_doc_count}, conf<{esc.confidence_threshold}, "
            f"domains={len(self.subject_domains)}, risk_flags={len(self.risk_flags)}, "
            f"hash={self.content_hash[:12]})"
        )
