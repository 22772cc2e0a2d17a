"""Routing decisions (hyungi document server): loading them into ``decisions``.

One record per decision, nested ``{"decision_id", "policy_id", "inputs": {...},
"decision": {...}}`` or flat (the input and decision fields side by side at the
top level), as in ``docs/formats.md`` section 4. Inputs and recorded outputs become
separate columns: the recorded outputs carry the prefix ``recorded_``, so that
a replayed decision (:func:`~explicit_audit.replay`) sits beside them without
a clash.

``decisions`` columns:

=============================  ============  ==============================================
column                         dtype         meaning
=============================  ============  ==============================================
source_file                    str           file the record came from
source_line                    int64         1-based line where the record starts
decision_id                    str           the record's ``decision_id``; missing if absent
policy_id                      category      the policy the decision says it followed
shape                          category      nested / flat
subject_domain                 category      input: the domain upstream matched
content_chars                  int64         input: characters given to the 4B model
deterministic_keyword_hits     list<string>  input: keyword matches
self_declared_high_impact      bool          input: the 4B model's high-impact declaration
self_declared_risk_flags       list<string>  input: flags the 4B model declared
confidence                     float64       input: the 4B model's confidence, in [0, 1]
evidence_doc_count             int64         input: documents the answer draws on
recorded_escalate_to_26b       bool          recorded: escalated to the 26B model
recorded_escalation_reasons    list<string>  recorded: reasons, in recorded order
recorded_risk_flags            list<string>  recorded: risk flags
recorded_high_impact_task      bool          recorded: high impact
recorded_synthesis_directives  list<string>  recorded: directives
recorded_subject_domain_used   category      recorded: the domain applied
recorded_used_fallback         bool          recorded: the fallback domain was used
=============================  ============  ==============================================

Inputs ``decide_routing`` gives a default may be left out and take that
default: no keyword hits, no self-declared high impact or flags, confidence
1.0, no evidence documents; so may ``used_fallback`` (false), as in
``RoutingDecision``. ``subject_domain`` and ``content_chars`` and every other
decision field are required. A record is rejected, naming the field, when a
count is negative or not a whole number, the confidence is not a number in
[0, 1] (NaN included), a list is given as a string or holds a non-string, or a
boolean is not ``true``/``false``. Other keys are kept: top-level ones under
their own name (``extra.<key>`` if the name is taken by a column above),
keys inside ``inputs``/``decision`` as ``inputs.<key>`` / ``decision.<key>``.

A clean JSON Lines file (every field present, not null and valid) is read by
the columnar fast path of :mod:`explicit_audit.decisions._arrow`; anything else
value by value. Both give the same rows, in file order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Unpack

import pandas as pd

from .._core.columns import INT64_MAX
from .._core.describe import describe
from .._core.lists import LIST_OF_STRINGS_DTYPE as LIST_OF_STRINGS
from .._core.loaders import parts_and_rejections, table_loader
from .._core.records import KindTables
from .._core.registry import load_tables
from ..errors import RecordError
from ..reading.collect import Source
from ..reading.columnar import frame_from_parts
from ..reading.options import LoadOptions
from ._arrow import part_from_rows
from .routing import INPUT_COLUMNS, REPLAY_COLUMNS
from .shape import INPUT_DEFAULTS, INPUT_FIELDS, OUTPUT_DEFAULTS, OUTPUT_FIELDS

__all__ = ["COLUMN_DTYPES", "NAME", "build_tables", "load_decisions"]

#: The kind's name, in the rejected table and the findings.
NAME = "decisions"

_INPUTS = INPUT_COLUMNS
_OUTPUTS = tuple(REPLAY_COLUMNS)
# What each field must hold, read off the declared shape (decisions/shape.py).
_TYPES = {field.name: field.type for field in (*INPUT_FIELDS, *OUTPUT_FIELDS)}
_LISTS = {name for name, type_ in _TYPES.items() if type_ == "strings"}
_BOOLS = {name for name, type_ in _TYPES.items() if type_ == "boolean"}
_COUNTS = {name for name, type_ in _TYPES.items() if type_ == "count"}
_PROBABILITIES = {name for name, type_ in _TYPES.items() if type_ == "probability"}
_IDS = ("decision_id", "policy_id")

#: The dtype of the ``decisions`` table's column of each field type (a string names
#: one of few values: a domain, a policy).
_DTYPE_OF = {
    "string": "category",
    "count": "int64",
    "probability": "float64",
    "boolean": "bool",
    "strings": LIST_OF_STRINGS,
}
#: Column name -> dtype of the ``decisions`` table (extra columns follow these): the
#: inputs' own, then the recorded outputs', read off the declared fields.
COLUMN_DTYPES: dict[str, Any] = {
    "source_file": "str",
    "source_line": "int64",
    "decision_id": "str",
    "policy_id": "category",
    "shape": "category",
    **{field.name: _DTYPE_OF[field.type] for field in INPUT_FIELDS},
    **{f"recorded_{field.name}": _DTYPE_OF[field.type] for field in OUTPUT_FIELDS},
}


def matches(value: Any) -> bool:
    """Whether a parsed JSON value is a routing decision record (nested or flat)."""
    if not isinstance(value, dict):
        return False
    if "inputs" in value and "decision" in value:
        return True
    return "subject_domain" in value and "escalate_to_26b" in value


def _field(name: str, value: Any, path: str) -> Any:
    """Check one input or output field; return the value to store."""
    if name in _LISTS:
        if isinstance(value, str):
            raise RecordError(path, f"expected a list of strings, got a string {value!r}")
        if not isinstance(value, list):
            raise RecordError(path, f"expected a list of strings, got {describe(value)}")
        for item in value:
            if not isinstance(item, str):
                raise RecordError(path, f"expected a list of strings, holds {describe(item)}")
        return value
    if name in _BOOLS:
        if not isinstance(value, bool):
            raise RecordError(path, f"expected true or false, got {describe(value)}")
        return value
    if name in _COUNTS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordError(path, f"expected a whole number, got {describe(value)}")
        if not 0 <= value <= INT64_MAX:
            raise RecordError(path, f"a count cannot be negative or above 2**63-1, got {value}")
        return value
    if name in _PROBABILITIES:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(path, f"expected a number in [0, 1], got {describe(value)}")
        if not (0 <= value <= 1 and math.isfinite(value)):  # a huge int: no float()
            raise RecordError(path, f"must be a number in [0, 1], got {value!r}")
        return float(value)
    if not isinstance(value, str):
        raise RecordError(path, f"expected a string, got {describe(value)}")
    return value


def _section(part: Any, names: Sequence[str], prefix: str, defaults: dict) -> tuple[dict, dict]:
    """Check the fields of one section; return them and the section's unknown keys."""
    row: dict[str, Any] = {}
    for name in names:
        if name in part:
            row[name] = _field(name, part[name], prefix + name)
        elif name in defaults:
            row[name] = defaults[name]
        else:
            raise RecordError(f"{prefix}{name}", "missing (a required field)")
    extras = {key: item for key, item in part.items() if key not in names}
    return row, extras


def _row(value: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    nested = "inputs" in value and "decision" in value
    for key in _IDS:
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            raise RecordError(key, f"expected a string, got {describe(item)}")
    row = {
        "decision_id": value.get("decision_id"),
        "policy_id": value.get("policy_id"),
        "shape": "nested" if nested else "flat",
    }
    if nested:
        for key in ("inputs", "decision"):
            if not isinstance(value[key], dict):
                raise RecordError(key, f"expected an object, got {describe(value[key])}")
        inputs, input_extras = _section(value["inputs"], _INPUTS, "inputs.", INPUT_DEFAULTS)
        outputs, output_extras = _section(value["decision"], _OUTPUTS, "decision.", OUTPUT_DEFAULTS)
        extras = {f"inputs.{key}": item for key, item in input_extras.items()}
        extras |= {f"decision.{key}": item for key, item in output_extras.items()}
        top = {k: v for k, v in value.items() if k not in ("inputs", "decision", *_IDS)}
    else:
        inputs, _ = _section(value, _INPUTS, "", INPUT_DEFAULTS)
        outputs, _ = _section(value, _OUTPUTS, "", OUTPUT_DEFAULTS)
        extras = {}
        top = {k: v for k, v in value.items() if k not in (*_INPUTS, *_OUTPUTS, *_IDS)}
    row |= inputs
    row |= {f"recorded_{name}": item for name, item in outputs.items()}
    return row, extras | top


def _part(kept: list) -> Any:
    rows = [row for _, (row, _) in kept]
    where = [(item.source_file, item.source_line) for item, _ in kept]
    return part_from_rows(rows, where, [extra for _, (_, extra) in kept])


def build_tables(segments: Sequence[tuple]) -> KindTables:
    parts, rejected = parts_and_rejections(segments, NAME, _row, _part, text_only=True)
    return KindTables(
        {"decisions": frame_from_parts(parts, COLUMN_DTYPES, taken="extra.")}, rejected
    )


@table_loader("decisions")
def load_decisions(source: Source, **options: Unpack[LoadOptions]) -> pd.DataFrame:
    """Load routing decision records into one table.

    Examples
    --------
    >>> decisions = ea.load_decisions("data/decisions/", progress=False)
    >>> bool(decisions.recorded_escalate_to_26b.any())
    True
    """
    return load_tables(source, NAME, **options)["decisions"]
