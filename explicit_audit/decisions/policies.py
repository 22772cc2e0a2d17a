"""Policy files and sets of policies: reading YAML, collecting bad files, PolicySet.

See :mod:`explicit_audit.decisions.policy` for the YAML layout a policy file follows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._core.records import Rejection, excerpt
from .._core.yaml_lines import text_line
from ..errors import AuditError, PolicyError
from ..reading.digests import HeldFile
from ..reading.names import display_name
from ..reading.sources import POLICY_SUFFIXES, is_policy_name, scan_sources
from ._policy_yaml import read_policy_yaml
from .policy import Policy

__all__ = ["PolicySet", "load_policies", "load_policy", "load_policy_files", "policies_by_id"]


class PolicySet(Mapping[str, Policy]):
    """Policies by ``policy_id``, in the order they were found.

    It is a read-only mapping; :meth:`to_frame` shows it as a small table and
    notebooks render that table.

    Parameters
    ----------
    policies : iterable of Policy
        Each ``policy_id`` at most once.

    Examples
    --------
    >>> policies = ea.load_policies("data/policies/")  # doctest: +SKIP
    >>> policies["baseline"].escalation  # doctest: +SKIP
    """

    #: Columns of :meth:`to_frame`.
    COLUMNS = MappingProxyType(
        {
            "policy_id": "the policy's name",
            "context_char_cap_4b": "content_chars above this escalates",
            "escalate_on_multi_doc_count": "evidence_doc_count at or above this escalates",
            "confidence_threshold": "confidence below this escalates",
            "subject_domains": "number of named subject domains",
            "high_impact_domains": "how many of them are high impact",
            "fallback_domain": "name of the fallback domain",
            "risk_flags": "number of risk flags the policy knows",
            "requires_26b_flags": "how many of them force 26B",
            "content_hash": "SHA-256 of the rules",
            "source_file": "the YAML file, if read from one",
        }
    )

    def __init__(self, policies: Iterable[Policy] = ()) -> None:
        self._policies: dict[str, Policy] = {}
        for policy in policies:
            if not isinstance(policy, Policy):
                raise TypeError(f"PolicySet holds Policy objects, got {type(policy).__name__}")
            if policy.policy_id in self._policies:
                first = self._policies[policy.policy_id]
                raise PolicyError(
                    f"{policy.source_file or '<policy>'}: policy_id {policy.policy_id!r} is "
                    f"already used by {first.source_file or 'another policy'}; give each "
                    "variant its own policy_id."
                )
            self._policies[policy.policy_id] = policy

    def __getitem__(self, policy_id: str) -> Policy:
        return self._policies[policy_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._policies)

    def __len__(self) -> int:
        return len(self._policies)

    def to_frame(self) -> pd.DataFrame:
        """One row per policy: its thresholds, sizes and hash (see :attr:`COLUMNS`).

        Returns
        -------
        DataFrame
        """
        rows = [
            {
                "policy_id": p.policy_id,
                "context_char_cap_4b": p.escalation.context_char_cap_4b,
                "escalate_on_multi_doc_count": p.escalation.escalate_on_multi_doc_count,
                "confidence_threshold": p.escalation.confidence_threshold,
                "subject_domains": len(p.subject_domains),
                "high_impact_domains": sum(d.high_impact for d in p.subject_domains.values()),
                "fallback_domain": p.fallback_domain.name,
                "risk_flags": len(p.risk_flags),
                "requires_26b_flags": sum(f.requires_26b for f in p.risk_flags.values()),
                "content_hash": p.content_hash,
                "source_file": p.source_file,
            }
            for p in self._policies.values()
        ]
        frame = pd.DataFrame(rows, columns=list(self.COLUMNS))
        dtypes = dict.fromkeys(("context_char_cap_4b", "escalate_on_multi_doc_count"), "int64")
        dtypes |= dict.fromkeys(("subject_domains", "high_impact_domains"), "int64")
        dtypes |= dict.fromkeys(("risk_flags", "requires_26b_flags"), "int64")
        dtypes |= {"confidence_threshold": "float64", "source_file": "object"}
        dtypes |= dict.fromkeys(("policy_id", "fallback_domain", "content_hash"), "str")
        return frame.astype(dtypes)

    def __repr__(self) -> str:
        if not self._policies:
            return "PolicySet(empty)"
        return "PolicySet(\n" + "\n".join(f"  {p!r}," for p in self._policies.values()) + "\n)"

    def _repr_html_(self) -> str:
        return self.to_frame()._repr_html_()


def load_policy(path: str | os.PathLike) -> Policy:
    """Read one policy YAML file.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Policy

    Raises
    ------
    PolicyError
        Naming the file, the line where known, and the key at fault: unknown or
        missing keys, wrong types, out-of-range values, YAML that does not
        parse or that carries a Python tag.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> ea.load_policy("data/policies/baseline.yaml").policy_id  # doctest: +SKIP
    'baseline'
    """
    source = display_name(path)
    # A file the load held is parsed from the bytes it hashed, not read again.
    data, locate = read_policy_yaml(path if isinstance(path, HeldFile) else Path(path))
    try:
        return Policy.from_dict(data, source=source)
    except PolicyError as error:
        raise locate(error) from None


def _policy_paths(source: Any) -> list[Path]:
    paths = [p for p in scan_sources(source).files if is_policy_name(p)]
    if not paths:
        raise PolicyError(f"{source}: no policy file ({', '.join(POLICY_SUFFIXES)}) found there.")
    return paths


def load_policy_files(
    paths: Iterable[str | os.PathLike], *, strict: bool = False
) -> tuple[PolicySet, list[Rejection]]:
    """Read policy files, collecting the bad ones as rejections.

    Parameters
    ----------
    paths : iterable of str or path-like
        YAML files, read in the order given.
    strict : bool, default False
        Raise the first :class:`~explicit_audit.PolicyError` instead of collecting it.

    Returns
    -------
    PolicySet
        The policies that loaded.
    list of Rejection
        One per file that did not (kind ``"policies"``), with the line where known.
        A second file using a ``policy_id`` already loaded is rejected too.
    """
    policies: list[Policy] = []
    rejections: list[Rejection] = []
    seen: dict[str, Policy] = {}
    for path in paths:
        try:
            policy = load_policy(path)
            if policy.policy_id in seen:
                PolicySet([seen[policy.policy_id], policy])  # raises the duplicate error
        except PolicyError as error:
            if strict:
                raise
            line = error.source_line or 0
            reason = error.detail
            rejections.append(
                Rejection(display_name(path), line, "policies", reason, _excerpt_line(path, line))
            )
            continue
        seen[policy.policy_id] = policy
        policies.append(policy)
    return PolicySet(policies), rejections


def _excerpt_line(path: str | os.PathLike, line: int) -> str:
    try:
        held = path if isinstance(path, HeldFile) else Path(path)
        text = held.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    found = text_line(text, line)
    return excerpt(text if found is None else found)


def load_policies(source: str | os.PathLike | Iterable[str | os.PathLike]) -> PolicySet:
    """Read every policy YAML file in a folder, a glob or a list of files.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders (every ``.yaml``/``.yml`` below, sorted) or globs.

    Returns
    -------
    PolicySet

    Raises
    ------
    PolicyError
        At the first bad file, or when two files use the same ``policy_id``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> ea.load_policies("data/policies/").to_frame()  # doctest: +SKIP
    """
    policies, _ = load_policy_files(_policy_paths(source), strict=True)
    return policies


def policies_by_id(policies: Any) -> dict[str, Policy]:
    """Policies by ``policy_id``, from a Policy, a PolicySet, a mapping or a list."""
    if isinstance(policies, Policy):
        return {policies.policy_id: policies}
    if isinstance(policies, Mapping):
        return dict(policies)
    if isinstance(policies, Iterable):
        return {policy.policy_id: policy for policy in policies}
    raise AuditError(
        f"policies: expected a Policy, a PolicySet or a list of policies, got "
        f"{type(policies).__name__}; load them with ea.load_policies(...)."
    )
