"""The retrieval receipt record kind, declared once: its tables and checks, registered.

engram's receipts come bare, wrapped in a CLI output, or embedded in a
presentation line; one kind reads them all into three tables.
"""

from __future__ import annotations

from .._core.keys import shape_of
from .._core.records import Check, Checker, RecordKind, Table
from .._core.registry import register
from ..reading.fast import FastPath
from ._arrow import columnar, layout
from ._values import is_presentation, matches
from .checks import RULES, receipt_findings
from .loader import NAME, build_tables, loaded_rows
from .presentation_checks import RULES as PRESENTATION_RULE_TABLE
from .presentation_checks import presentation_findings
from .shape import PRESENTATION_SHAPES, SHAPES

__all__ = ["KIND"]


def _shape_of(value: dict):
    # A presentation line's keys are checked with the presentations
    # (presentation_rules), against engram's own list of them.
    return None if is_presentation(value) else shape_of(SHAPES, value)


KIND = register(
    RecordKind(
        name=NAME,
        tables=(
            Table("receipts", "one retrieval receipt (engram); explicit_audit.receipts"),
            Table(
                "exposed",
                "one exposed result of a receipt; explicit_audit.receipts",
                references={"receipt_row": "receipts"},
            ),
            Table(
                "presentations",
                "one presentation line (engram), presented or failed; "
                "explicit_audit.receipts.presentations",
                references={"receipt_row": "receipts"},
                shapes=PRESENTATION_SHAPES,
            ),
        ),
        matches=matches,
        shapes=SHAPES,
        shape_of=_shape_of,
        build=build_tables,
        fast=FastPath(layout=layout, columnar=columnar),
        loaded=loaded_rows,
        checks=(
            Checker(
                run=receipt_findings,
                reads=("receipts", "exposed"),
                checks=(Check("receipt_rules", "guarantees of engram's receipt code", "receipts"),),
                rules=RULES,
                order=30,
            ),
            Checker(
                run=presentation_findings,
                reads=("presentations",),
                checks=(
                    Check(
                        "presentation_rules",
                        "guarantees of engram's presentation rendering",
                        "presentations",
                    ),
                ),
                rules=PRESENTATION_RULE_TABLE,
                order=40,
            ),
        ),
        order=10,
    )
)
