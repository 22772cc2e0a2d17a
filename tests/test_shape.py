"""The declared record shapes: their JSON Schema, the tables of docs/formats.md, the loaders.

The schema ``explicit-audit schema KIND`` prints must accept what producers
really write: engram's own fixtures, and every record of the bundled data
that the kit loads and finds nothing wrong with.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import jsonschema
import pyarrow as pa
import pytest
from exact_values import read_exactly

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit._core.shape import (
    Field,
    Shape,
    json_schema,
    published,
    shape_problems,
)
from explicit_audit._core.shape_arrow import arrow_struct, arrow_type
from explicit_audit._core.shape_table import markdown_table
from explicit_audit.decisions import shape as decision_shape
from explicit_audit.decisions.routing import INPUT_COLUMNS, REPLAY_COLUMNS
from explicit_audit.receipts._values import is_presentation
from scripts.formats_tables import FORMATS, filled

ROOT = Path(__file__).resolve().parent.parent
ENGRAM = ROOT / "tests" / "data" / "engram"
KINDS = [kind.name for kind in registry.kinds() if kind.shapes]


PUBLISHED = published(registry.kinds())


def _validator(kind_name: str) -> jsonschema.Draft202012Validator:
    schema = json_schema(kind_name, PUBLISHED[kind_name])
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("kind", list(PUBLISHED))
def test_each_kinds_schema_is_a_valid_json_schema(kind):
    _validator(kind)


def test_the_published_names_are_the_kinds_and_what_they_fill_from_lines_of_their_own():
    assert list(PUBLISHED) == [*KINDS[:1], "presentations", *KINDS[1:], "policies"]
    assert {shape.kind for name, shapes in PUBLISHED.items() for shape in shapes} == set(PUBLISHED)


def _kind_of(value) -> str | None:
    for kind in registry.kinds():
        if isinstance(value, dict) and kind.matches(value):
            return kind.name
    return None


def test_engrams_fixtures_fit_the_receipt_schema():
    validator = _validator("receipts")
    checked = 0
    for path in (ENGRAM / "outcomes.jsonl", ENGRAM / "recall_log.json"):
        for item in read_exactly(path):
            assert _kind_of(item.value) == "receipts"
            errors = [error.message for error in validator.iter_errors(item.value)]
            assert not errors, f"{path.name}:{item.source_line}: {errors}"
            checked += 1
    assert checked == 27


def test_every_clean_record_of_the_bundled_data_fits_its_kinds_schema():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        audit = ea.load(ROOT / "data", progress=False)
    found = ea.verify_all(audit).findings
    flagged = set(zip(found["source_file"], found["source_line"], strict=True))
    # A plan value the seed coerces (top_k "5") loads, noted in seed_coercions:
    # arborist's own canonical() accepts it, but its dataclass writes an integer.
    coerced = audit.plans[audit.plans["seed_coercions"].notna()]
    flagged |= set(zip(coerced["source_file"], coerced["source_line"], strict=True))
    validators = {kind: _validator(kind) for kind in PUBLISHED}
    checked = dict.fromkeys([*KINDS, "presentations"], 0)
    for path in audit.files:
        if path.endswith((".yaml", ".yml")):
            continue
        for item in read_exactly(Path(ROOT / path)):
            kind = _kind_of(getattr(item, "value", None))
            if kind not in validators or (path, item.source_line) in flagged:
                continue
            if is_presentation(item.value):
                kind = "presentations"
            errors = [error.message for error in validators[kind].iter_errors(item.value)]
            assert not errors, f"{path}:{item.source_line}: {errors}"
            checked[kind] += 1
    assert all(checked.values()), checked


def test_a_record_that_breaks_its_shape_fails_the_schema():
    validator = _validator("decisions")
    record = {
        "decision_id": "d-1",
        "policy_id": "baseline",
        "inputs": {"subject_domain": "legal", "content_chars": 10, "confidance": 0.5},
        "decision": {
            "escalate_to_26b": False,
            "escalation_reasons": [],
            "risk_flags": [],
            "high_impact_task": False,
            "synthesis_directives": [],
            "subject_domain_used": "legal",
        },
    }
    messages = [error.message for error in validator.iter_errors(record)]
    assert messages, "an unknown key inside inputs must not validate"
    del record["inputs"]["confidance"]
    assert not list(validator.iter_errors(record))
    record["inputs"]["confidence"] = 1.5
    assert list(validator.iter_errors(record))


def test_the_formats_tables_are_the_declarations():
    text = FORMATS.read_text(encoding="utf-8")
    assert filled(text) == text, "run: python -m scripts.formats_tables"
    # Every shape has its table, but a flat decision: the nested one's fields, side by side.
    shown = {(name, shape.name) for name, shapes in PUBLISHED.items() for shape in shapes}
    shown.discard(("decisions", "flat"))
    for kind, shape in sorted(shown):
        assert f"<!-- fields {kind} {shape} -->" in text, f"no table of {kind} {shape}"


def test_a_table_follows_its_shape():
    shape = Shape("toys", "plain", "a toy", (
        Field("id", "string", "the id"),
        Field("level", "count", "how high", default=1),
        Field("meta", "object", "more", required=False, fields=(
            Field("tag", "string", "a tag | another", nullable=True),
        )),
    ))  # fmt: skip
    assert markdown_table(shape).splitlines()[2:] == [
        "| `id` | string | required | the id |",
        "| `level` | count | default `1` | how high |",
        "| `meta` | object | optional | more |",
        "| `meta.tag` | string or null | required | a tag \\| another |",
    ]


def test_the_decision_loader_reads_its_types_and_defaults_off_the_declaration():
    assert [f.name for f in decision_shape.INPUT_FIELDS] == list(INPUT_COLUMNS)
    assert [f.name for f in decision_shape.OUTPUT_FIELDS] == list(REPLAY_COLUMNS)
    assert decision_shape.INPUT_DEFAULTS == {
        "deterministic_keyword_hits": [],
        "self_declared_high_impact": False,
        "self_declared_risk_flags": [],
        "confidence": 1.0,
        "evidence_doc_count": 0,
    }
    assert decision_shape.OUTPUT_DEFAULTS == {"used_fallback": False}
    assert decision_shape.FIELD_TYPES["confidence"] == pa.float64()
    assert decision_shape.FIELD_TYPES["risk_flags"] == pa.list_(pa.string())


def test_schema_command_prints_the_kinds_schema():
    command = [sys.executable, "-m", "explicit_audit.cli", "schema", "plans"]
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert finished.returncode == 0, finished.stderr
    kind = registry.kind("plans")
    assert json.loads(finished.stdout) == json.loads(json.dumps(json_schema("plans", kind.shapes)))
    unknown = subprocess.run(
        [*command[:-1], "nothing"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert unknown.returncode == 2


def test_a_shapes_problems_with_keys_are_its_json_schemas():
    shape = Shape("toys", "closed", "a toy", (
        Field("id", "name", "the id"),
        Field("tags", "object", "tag -> its weight", items=Field("weight", "probability")),
        Field("n", "integer", "a count", default=0, accepts=("string",)),
    ), open=False)  # fmt: skip
    validator = jsonschema.Draft202012Validator(json_schema("toys", [shape]))
    for value, problems in [
        ({"id": "a", "tags": {"x": 0.5}}, []),
        ({"id": "", "tags": {}}, ['id: must be a string that is not empty, got ""']),
        ({"id": "a", "tags": {"x": 2}}, ["tags.x: must be a number from 0 to 1, got 2"]),
        ({"id": "a", "tags": {}, "more": 1}, ["more: not a declared key"]),
        ({"id": "a", "tags": {}, "n": "5"}, ['n: must be a whole number, got "5"']),
    ]:
        assert shape_problems(shape, value, keys=True) == problems
        # The schema allows what the field accepts (marked deprecated), and nothing else.
        assert validator.is_valid(value) == (not problems or "n" in value)
    assert "accepted, noted: string" in markdown_table(shape)
    assert "| `tags` | object of probability by name |" in markdown_table(shape)


def test_the_arrow_type_of_objects_arrays_and_two_shapes_read_as_one():
    """An object of declared fields is a struct of theirs, an array of declared items a list of
    them; a map or an array of any values has no Arrow type; two shapes' fields make one
    struct, a name declared twice at its first place."""
    item = Field("item", "object", "an item", fields=(Field("id", "string", "its id"),))
    listed = Field("items", "array", "items", items=item)
    assert arrow_type(listed) == pa.list_(pa.struct([("id", pa.string())]))
    assert arrow_type(Field("outer", "object", "o", fields=(listed,))) == pa.struct(
        [("items", pa.list_(pa.struct([("id", pa.string())])))]
    )
    for untyped in (
        Field("anything", "array", "any values", items=Field("any", "any")),
        Field("by_name", "object", "a map", items=Field("count", "count", "a count")),
    ):
        with pytest.raises(ValueError, match=untyped.name):
            arrow_type(untyped)
    one = (Field("a", "string", "a"), Field("b", "integer", "b"))
    other = (Field("a", "string", "a again"), Field("c", "boolean", "c"))
    assert arrow_struct((*one, *other)) == pa.struct(
        [("a", pa.string()), ("b", pa.int64()), ("c", pa.bool_())]
    )
