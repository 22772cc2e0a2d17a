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
import os
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import make_decision, make_receipt, without_columnar
from exact_values import read_exactly
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.reading import collect
from explicit_audit.reading.names import display_name
from explicit_audit.reading.pipeline import sort_value
from explicit_audit.reading.sources import scan_sources
from explicit_audit.reading.tables import build_kind

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


@st.composite
def values(draw) -> dict | list | str | int | None:
    kind = draw(st.sampled_from(["receipt", "receipt", "decision", "plan", "junk"]))
    if kind == "receipt":
        return draw(receipts())
    if kind == "decision":
        index = draw(st.integers(0, 99))
        confidence = draw(st.sampled_from([0.7, 0.3, 1, 1.5, None]))
        return make_decision(f"d{index}", confidence=confidence, keyword_hits=["contract"])
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


def _built_from(items: list) -> tuple[dict[str, pd.DataFrame], list]:
    """Tables built from values read one by one, and the rejected ``(file, line)`` pairs.

    Built as every load builds a kind (its time columns typed): the reference
    is independent in how it reads, not in what a kind's tables are.
    """
    by_kind: dict[str, list] = {}
    rejected = []
    for item in items:
        if not hasattr(item, "value"):
            rejected.append((item.source_file, item.source_line))
            continue
        kind = sort_value(item, registry.kinds())
        if hasattr(kind, "reason"):
            rejected.append((item.source_file, item.source_line))
        else:
            by_kind.setdefault(kind.name, []).append(item)
    tables = {}
    for kind in registry.kinds():
        built = build_kind(kind, [("values", by_kind.get(kind.name, []))])
        tables.update(built.tables)
        rejected.extend((r.source_file, r.source_line) for r in built.rejected)
    return tables, sorted(rejected)


def _reference(path: Path) -> tuple[dict[str, pd.DataFrame], list[int]]:
    """The tables built from the file read value by value as a whole, and the rejected lines.

    Independent of pieces, spans and grouping: :func:`read_exactly` reads
    JSON Lines line by line and a ``.json`` file as values one after another.
    """
    tables, rejected = _built_from(read_exactly(path))
    return tables, [line for _, line in rejected]


def _layout_free(frame: pd.DataFrame) -> pd.DataFrame:
    """A table without what its file's layout decides: where each record stands, and
    the white space of a plan, whose text is its bytes as written (a pretty log keeps
    its line breaks); the plan's keys, order and values are compared."""
    frame = frame.drop(columns=["source_file", "source_line"], errors="ignore")
    if "plan" in frame.columns:
        compact = [
            json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
            for text in frame["plan"].tolist()
        ]
        frame = frame.assign(plan=pd.Series(compact, index=frame.index, dtype=object))
    return frame


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
        a, b = _layout_free(left.tables[name]), _layout_free(right.tables[name])
        pd.testing.assert_frame_equal(a, b, obj=name)
    assert len(left.rejected) == len(right.rejected)


# -- many files: every layout, hostile values, names as bytes -----------------------

#: Layouts a file of the folder is written in (``pretty``: ``>>`` outputs one after
#: another, a cut one glued to the next; the arrays: elements on one line, pretty,
#: at column 0, and arrays of arrays), each also gzipped.
_LAYOUTS = ["jsonl", "pretty", "array_line", "array_pretty", "array_col0", "array_nested"]
_DIGITS = "__DIGITS__"


@st.composite
def hostile_values(draw, index: int) -> tuple[object, int | None]:
    """A value, and the length of a digit run written in place of its ``__DIGITS__``."""
    value = draw(values())
    digits = None
    if isinstance(value, dict) and draw(st.booleans()):
        # A unique key per line: one per value, far below any column limit.
        value[f"only_here_{index}"] = draw(_SCALAR)
    if isinstance(value, dict) and draw(st.integers(0, 3)) == 0:
        digits = draw(st.sampled_from([18, 19, 20, 400, 4_300, 4_301, 6_000]))
        value[draw(st.sampled_from(["top_k", "n", "retrieval_keywords"]))] = _DIGITS
    return value, digits


def _dumped(value, digits: int | None, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if digits is None:
        return text
    # Written in place: json.dumps will not write an integer past Python's limit.
    return text.replace(f'"{_DIGITS}"', "1" + "7" * (digits - 1), 1)


@st.composite
def folders(draw) -> list[dict]:
    """Files to write: each a name (maybe not UTF-8), a layout, gzip or not, and values."""
    files = []
    counter = 0
    for number in range(draw(st.integers(1, 5))):
        layout = draw(st.sampled_from(_LAYOUTS))
        items = []
        for _ in range(draw(st.integers(0 if layout == "jsonl" else 1, 6))):
            value, digits = draw(hostile_values(counter))
            counter += 1
            if layout == "pretty" and not isinstance(value, dict):
                # In a .json log a top-level array's elements are values of their own, and
                # a scalar right after a broken value is read as part of it.
                value = {"hello": "world"}
            damage = "none"
            if layout in ("jsonl", "pretty"):
                damage = draw(st.sampled_from(["none"] * 5 + ["cut", "garbage"]))
            items.append((damage, value, digits))
        stem = draw(st.sampled_from([b"log", b"caf\xe9", b"r\xe9\xff", b"plain"]))
        files.append(
            {
                "stem": stem + b"-%d" % number,
                "layout": layout,
                "gzip": draw(st.booleans()),
                "items": items,
            }
        )
    return files


def _damaged(damage: str, text: str) -> str:
    if damage == "cut":
        return text[: max(1, len(text) // 2)]
    if damage == "garbage":
        return "{not json at all"
    return text


def _file_text(layout: str, items: list) -> tuple[bytes, list[int]]:
    """The bytes of one file and the line each value written in it starts on."""
    if layout == "jsonl":
        texts = [_damaged(damage, _dumped(v, d)) for damage, v, d in items]
        return "".join(text + "\n" for text in texts).encode(), list(range(1, len(texts) + 1))
    if layout == "pretty":
        out, starts, line = "", [], 1
        for damage, value, digits in items:
            # A writer killed mid-value ("cut"): the next output follows on the same line.
            text = _damaged(damage, _dumped(value, digits, 2))
            starts.append(line)
            glued = damage == "cut"
            out += text + ("" if glued else "\n")
            line += text.count("\n") + (0 if glued else 1)
        return out.encode(), starts
    elements = [_dumped(value, digits) for _, value, digits in items]
    if layout == "array_line":
        return ("[" + ", ".join(elements) + "]\n").encode(), [1] * len(elements)
    if layout == "array_col0":
        body = "[\n" + ",\n".join(elements) + "\n]\n"
        return body.encode(), [index + 2 for index in range(len(elements))]
    if layout == "array_nested":
        # An array of arrays: each inner array is one value (not a record).
        body = "[\n" + ",\n".join(f"  [{e}]" for e in elements) + "\n]\n"
        return body.encode(), [index + 2 for index in range(len(elements))]
    out, starts, line = "[\n", [], 2
    for index, (_, value, digits) in enumerate(items):
        text = "  " + _dumped(value, digits, 2).replace("\n", "\n  ")
        starts.append(line)
        out += text + (",\n" if index < len(items) - 1 else "\n")
        line += text.count("\n") + 1
    return (out + "]\n").encode(), starts


def _write_folder(folder: Path, files: list[dict]) -> dict[str, list[int]]:
    """Write the files (names as bytes); each file's name as tables show it, and its lines."""
    written = {}
    for file in files:
        data, starts = _file_text(file["layout"], file["items"])
        suffix = b".jsonl" if file["layout"] == "jsonl" else b".json"
        name = file["stem"] + suffix + (b".gz" if file["gzip"] else b"")
        with open(os.path.join(os.fsencode(folder), name), "wb") as handle:
            handle.write(gzip.compress(data) if file["gzip"] else data)
        path = Path(folder, os.fsdecode(name))
        written[display_name(path)] = starts
    return written


def _folder_reference(folder: Path) -> tuple[dict[str, pd.DataFrame], list[tuple[str, int]]]:
    """The folder's tables built from every file read value by value, in the load's order."""
    return _built_from([item for path in scan_sources(folder).files for item in read_exactly(path)])


#: Few examples, not shrunk: the whole set runs in well under a minute.
MANY_FILES = settings(
    SETTINGS, max_examples=12, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)


@MANY_FILES
@given(files=folders())
def test_a_folder_of_every_layout_loads_each_value_once_on_its_line(
    tmp_path_factory, monkeypatch, files
):
    folder = tmp_path_factory.mktemp("many")
    written = _write_folder(folder, files)
    audit = _load(folder)
    sources = audit.sources.set_index("source_file")
    assert (sources.loaded + sources.rejected == sources.values_read).all(), sources
    for name, starts in written.items():
        # Every value written is read: loaded or rejected, none lost, none made up.
        assert sources.loc[name, "values_read"] == len(starts), (name, sources)
    loaded = {
        (row.source_file, row.source_line)
        for table in ("receipts", "plans", "decisions")
        for row in audit.tables[table][["source_file", "source_line"]].itertuples()
    }
    for source_file, line in loaded | set(
        zip(audit.rejected.source_file, audit.rejected.source_line, strict=True)
    ):
        assert line == 0 or line in written[source_file], (source_file, line)
    # The same tables and rejections as each file read value by value on its own...
    tables, rejected = _folder_reference(folder)
    for name, frame in tables.items():
        pd.testing.assert_frame_equal(audit.tables[name], frame, obj=f"reference {name}")
    got = sorted(zip(audit.rejected.source_file, audit.rejected.source_line, strict=True))
    assert got == rejected
    # ... and as with every file read on its own, small JSON Lines files not batched.
    monkeypatch.setattr(collect, "SMALL_FILE_BYTES", -1)
    _same(audit, _load(folder))


@MANY_FILES
@given(items=st.lists(st.tuples(st.just("none"), values(), st.none()), min_size=1, max_size=6))
def test_every_layout_and_its_gzip_give_the_same_rows_and_rejections(tmp_path_factory, items):
    # A top-level array is one value in JSON Lines, its elements in a .json log.
    items = [item for item in items if not isinstance(item[1], list)]
    if not items:
        return
    loads = {}
    for layout in ["jsonl", "pretty", "array_line", "array_pretty", "array_col0"]:
        for compressed in (False, True):
            folder = tmp_path_factory.mktemp(layout)
            _write_folder(
                folder, [{"stem": b"x", "layout": layout, "gzip": compressed, "items": items}]
            )
            loads[(layout, compressed)] = _load(folder)
    first = loads.pop(("jsonl", False))
    for where, audit in loads.items():
        for name in first.tables:
            a, b = _layout_free(first.tables[name]), _layout_free(audit.tables[name])
            pd.testing.assert_frame_equal(a, b, obj=f"{where} {name}")
        assert sorted(first.rejected.reason) == sorted(audit.rejected.reason), where
