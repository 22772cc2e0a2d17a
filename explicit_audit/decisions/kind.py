"""The routing decision record kind, declared once: its table, policies and check, registered."""

from __future__ import annotations

from .._core.records import Check, Checker, Documents, RecordKind, Rejection, Table
from .._core.registry import register
from ..errors import PolicyError
from ..reading.fast import FastPath
from ._arrow import columnar, layout
from .checks import RULES, decision_findings
from .loader import NAME, build_tables, matches
from .policies import PolicySet, load_policy_files
from .policy import Policy
from .shape import POLICY_SHAPES, SHAPES

__all__ = ["KIND"]


def _load_policies(paths) -> tuple[PolicySet, list[Rejection]]:
    return load_policy_files(paths, strict=False)


def _policy_files(policies: PolicySet) -> list[str]:
    return [str(policy.source_file) for policy in policies.values() if policy.source_file]


def _dump_policies(policies: PolicySet) -> list[dict]:
    return [
        {"source_file": policy.source_file, "policy": policy.to_dict()}
        for policy in policies.values()
    ]


def _restore_policies(values: list[dict]) -> PolicySet:
    return PolicySet(
        Policy.from_dict(value["policy"], source=value["source_file"]) for value in values
    )


def _strict_error(first: Rejection) -> PolicyError:
    return PolicyError.at(first.source_file, None, first.reason, first.source_line or None)


KIND = register(
    RecordKind(
        name=NAME,
        tables=(
            Table(
                "decisions",
                "one routing decision (hyungi document server); explicit_audit.decisions",
                written=("shape",),
            ),
        ),
        matches=matches,
        shapes=SHAPES,
        build=build_tables,
        fast=FastPath(layout=layout, columnar=columnar),
        documents=Documents(
            name="policies",
            kind="policies",
            load=_load_policies,
            empty=PolicySet,
            files=_policy_files,
            strict_error=_strict_error,
            dump=_dump_policies,
            restore=_restore_policies,
            shapes=POLICY_SHAPES,
        ),
        checks=(
            Checker(
                run=decision_findings,
                reads=("decisions",),
                documents=("policies",),
                checks=(
                    Check(
                        "decision_policy",
                        "decisions replayed against the policy they name",
                        "decisions",
                    ),
                ),
                rules=RULES,
                order=50,
            ),
        ),
        order=40,
    )
)
