"""The C2 compile request record kind, declared once: its table and its checks, registered."""

from __future__ import annotations

from .._core.records import Check, Checker, RecordKind, Table
from .._core.registry import register
from .checks import RULES, partition_findings, request_findings, with_independence
from .loader import NAME, build_tables, matches
from .shape import SHAPES

__all__ = ["KIND"]

KIND = register(
    RecordKind(
        name=NAME,
        tables=(
            Table(
                "requests", "one C2 compile request (explicit_learning); explicit_audit.requests"
            ),
        ),
        matches=matches,
        shapes=SHAPES,
        build=build_tables,
        checks=(
            Checker(
                # Each partition checks its own rows; independence (one payload
                # per base_id) is checked over every partition's digests together.
                run=partition_findings,
                combine=with_independence,
                whole=request_findings,
                reads=("requests",),
                checks=(
                    Check("request_hashes", "request_sha256 rebuilt from each payload", "requests"),
                    Check(
                        "request_hiding_rule",
                        "payload keys the §7.1 hiding rule forbids",
                        "requests",
                    ),
                    Check(
                        "request_independence", "one payload per base_id across models", "requests"
                    ),
                    Check(
                        "request_consistency",
                        "record fields that contradict their payload",
                        "requests",
                    ),
                ),
                rules=RULES,
                order=20,
            ),
        ),
        order=30,
    )
)
