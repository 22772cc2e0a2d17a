"""The retrieval plan record kind, declared once: its table and its check, registered."""

from __future__ import annotations

from .._core.records import Check, Checker, RecordKind, Table
from .._core.registry import register
from ..reading.fast import FastPath
from ._arrow import columnar, layout
from ._bulk import read_bulk
from .checks import RULES, plan_findings
from .loader import NAME, build_tables, matches
from .shape import SHAPES, shape_of

__all__ = ["KIND"]

KIND = register(
    RecordKind(
        name=NAME,
        tables=(
            Table(
                "plans",
                "one retrieval plan record (arborist); explicit_audit.plans",
                # The plan's text is kept byte for byte; its fields are columns of their own.
                written=("plan_shape", "plan"),
            ),
        ),
        matches=matches,
        shapes=SHAPES,
        shape_of=shape_of,
        build=build_tables,
        fast=FastPath(layout=layout, columnar=columnar, bulk=read_bulk),
        checks=(
            Checker(
                run=plan_findings,
                reads=("plans",),
                checks=(
                    Check("plan_hashes", "retrieval_plan_hash rebuilt from each plan", "plans"),
                ),
                rules=RULES,
                order=10,
            ),
        ),
        order=20,
    )
)
