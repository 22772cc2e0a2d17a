"""Property tests of the reading pipeline: every layout and every path load the same.

Random valid and damaged records of each kind and shape are written as JSON
Lines, as pretty-printed values appended to one ``.json`` log, and gzipped;
each file is loaded by the pipeline (columnar in bulk where it can), by the
exact path alone (every kind's columnar path switched off), and built from
the file read as a whole value by value (:func:`read_exactly`). The tables,
the rejected rows and the per-file accounting must be equal; every loaded row
starts on the line its value was written on; and nothing but an
:class:`~explicit_audit.AuditError` ever escapes ``ea.load``.
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_receipt, without_columnar
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit._core.collect import build_kind
from explicit_audit._core.pipeline import sort_value
from explicit_audit._core.reader import read_exactly

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=0, max_size=12
) | st.sampled_from(["NaN", "Infinity", "}\n{", '"quoted"', "back\\slash", "서울", "😀", ""])
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    _TEXT,
)


@st.composite
def receipts(draw) -> dict:
    receipt = make_receipt(query=draw(_TEXT))
    count = draw(st.sampled_from([0, 1, 3, -2, 2**64, 1.0, "2", None]))
    receipt["withheld"] = {"audienceId": draw(st.sampled_from(["peer", None])), "count": count}
    receipt["relevanceThreshold"] = draw(st.sampled_from([0.5, None, 1, 0.1 + 0.2]))
    shape = draw(st.sampled_from(["bare", "cli", "outcome"]))
    if shape == "cli":
        value = {"schema_version": 0, "status": "hit", "records": [{"x": 1}], "receipt": receipt}
    elif shape == "outcome":
        value = {"kind": "hit", "records": [{}], "receipt": receipt}
    else:
        value = receipt
    for key in draw(st.lists(st.sampled_from(["host", "ts", "n", "ctx"]), max_size=2)):
        value[key] = draw(_SCALAR | st.dictionaries(st.just("a"), _SCALAR, max_size=1))
    return value


def _decision(index: int, confidence) -> dict:
    return {
        "decision_id": f"d{index}",
        "policy_id": "baseline",
        "inputs": {
            "subject_domain": "legal",
            "content_chars": 5400,
            "deterministic_keyword_hits": ["contract"],
            "self_declared_high_impact": False,
            "self_declared_risk_flags": [],
            "confidence": confidence,
            "evidence_doc_count": 2,
        },
        "decision": {
            "escalate_to_26b": True,
            "escalation_reasons": ["low_confidence"],
            "risk_flags": [],
            "high_impact_task": False,
            "synthesis_directives": [],
            "subject_domain_used": "legal",
            "used_fallback": False,
        },
    }


@st.composite
def values(draw) -> dict | list | str | int | None:
    kind = draw(st.sampled_from(["receipt", "receipt", "decision", "plan", "junk"]))
    if kind == "receipt":
        return draw(receipts())
    if kind == "decision":
        index = draw(st.integers(0, 99))
        return _decision(index, draw(st.sampled_from([0.7, 0.3, 1, 1.5, None])))
    if kind == "plan":
        plan = {"retrieval_keywords": draw(_TEXT), "top_k": draw(st.sampled_from([8, "8", 2**65]))}
        return {"run_id": "r1", "retrieval_plan": plan, "retrieval_plan_hash": "ab" * 32}
    return draw(st.sampled_from([{"hello": "world"}, [1, 2], "text", 3, None, {}]))


@st.composite
def documents(draw) -> list[tuple[str, object]]:
    """Values to write, each either a value or a damaged text."""
    items = []
    for value in draw(st.lists(values(), min_size=1, max_size=8)):
        damage = draw(st.sampled_from(["none"] * 6 + ["cut", "nan", "garbage"]))
        items.append((damage, value))
    return items


def _text_of(damage: str, value, indent: int | None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if damage == "cut":
        return text[: max(1, len(text) // 2)]
    if damage == "nan" and "0.5" in text:
        return text.replace("0.5", "NaN", 1)
    if damage == "garbage":
        return "{not json at all"
    return text


def _write(folder: Path, items, layout: str) -> tuple[Path, list[int]]:
    """Write the items in a layout; return the file and each item's first line."""
    lines, starts = [], []
    pretty = layout.startswith("pretty")
    for damage, value in items:
        starts.append(len(lines) + 1)
        text = _text_of(damage, value, 2 if pretty else None)
        lines.extend(text.split("\n"))
    body = ("\n".join(lines) + "\n").encode()
    name = {"jsonl": "log.jsonl", "pretty": "log.json"}[layout.removesuffix(".gz")]
    if layout.endswith(".gz"):
        path = folder / f"{name}.gz"
        path.write_bytes(gzip.compress(body))
    else:
        path = folder / name
        path.write_bytes(body)
    return path, starts


def _load(path: Path) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        # Generated logger keys named as times (``ts``) may hold any text.
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        try:
            return ea.load(path, progress=False)
        except ea.AuditError:
            raise
        except Exception as exc:  # the property: nothing else escapes
            pytest.fail(f"{type(exc).__name__} escaped ea.load: {exc}")


def _exactly(path: Path, monkeypatch) -> ea.Audit:
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds):
        return _load(path)


def _reference(path: Path) -> tuple[dict[str, pd.DataFrame], list[int]]:
    """The tables built from the file read value by value as a whole, and the rejected lines.

    Independent of pieces, spans and grouping: :func:`read_exactly` reads
    JSON Lines line by line and a ``.json`` file as values one after another.
    """
    items = read_exactly(path)
    by_kind: dict[str, list] = {}
    rejected = []
    for item in items:
        if not hasattr(item, "value"):
            rejected.append(item.source_line)
            continue
        kind = sort_value(item, registry.kinds())
        if hasattr(kind, "reason"):
            rejected.append(item.source_line)
        else:
            by_kind.setdefault(kind.name, []).append(item)
    tables = {}
    for kind in registry.kinds():
        # Built as every load builds a kind (its time columns typed): the reference
        # is independent in how it reads, not in what a kind's tables are.
        built = build_kind(kind, [("values", by_kind.get(kind.name, []))])
        tables.update(built.tables)
        rejected.extend(r.source_line for r in built.rejected)
    return tables, sorted(rejected)


def _same(left: ea.Audit, right: ea.Audit) -> None:
    for name in left.tables:
        pd.testing.assert_frame_equal(left.tables[name], right.tables[name], obj=name)
    pd.testing.assert_frame_equal(left.rejected, right.rejected, obj="rejected")
    pd.testing.assert_frame_equal(left.sources, right.sources, obj="sources")


@pytest.mark.parametrize("layout", ["jsonl", "pretty", "jsonl.gz", "pretty.gz"])
@SETTINGS
@given(items=documents())
def test_every_path_loads_the_same_and_lines_are_where_values_start(
    tmp_path_factory, monkeypatch, layout, items
):
    folder = tmp_path_factory.mktemp("layout")
    path, starts = _write(folder, items, layout)
    audit = _load(path)
    _same(audit, _exactly(path, monkeypatch))
    tables, rejected_lines = _reference(path)
    for name, frame in tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], frame, obj=f"reference {name}")
    assert sorted(audit.rejected.source_line) == rejected_lines
    sources = audit.sources
    assert (sources.loaded + sources.rejected == sources.values_read).all(), sources
    written = set(starts)
    for name in ("receipts", "plans", "decisions"):
        assert set(audit.tables[name]["source_line"]) <= written, name
    # A value that was not damaged is loaded or rejected on its own line. In a
    # .json log, a top-level array's elements are values of their own, and
    # reading resumes after a broken value at the next object or array: a
    # scalar right after one is part of what is rejected.
    pretty = layout.startswith("pretty")
    intact = [
        line
        for line, (damage, value) in zip(starts, items, strict=True)
        if damage == "none" and (not pretty or isinstance(value, dict))
    ]
    seen = set(audit.rejected.source_line)
    for name in ("receipts", "plans", "decisions"):
        seen |= set(audit.tables[name]["source_line"])
    assert set(intact) <= seen


@SETTINGS
@given(items=documents())
def test_json_lines_and_pretty_logs_give_the_same_rows(tmp_path_factory, items):
    # A top-level array is one value in JSON Lines, its elements in a .json log.
    intact = [(d, value) for d, value in items if d == "none" and not isinstance(value, list)]
    if not intact:
        return
    folder = tmp_path_factory.mktemp("same")
    compact, _ = _write(folder, intact, "jsonl")
    pretty, _ = _write(folder, intact, "pretty.gz")
    left, right = _load(compact), _load(pretty)
    for name in left.tables:
        a = left.tables[name].drop(columns=["source_file", "source_line"], errors="ignore")
        b = right.tables[name].drop(columns=["source_file", "source_line"], errors="ignore")
        pd.testing.assert_frame_equal(a, b, obj=name)
    assert len(left.rejected) == len(right.rejected)
