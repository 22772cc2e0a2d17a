"""Keys past ``max_extra_columns`` set apart from the bytes before the bulk parse.

The columnar path keeps the lines whose extra keys go past the limit (each
line a key of its own) and sets those keys apart per row; the result must be
the one of reading every value one by one: same frames, same rejections,
same key notes, same warnings.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest
from conftest import accounted, make_receipt, rows_by_path, without_columnar

import explicit_audit as ea
from explicit_audit._core import registry
from explicit_audit.reading.collect import read_all
from explicit_audit.reading.columnar import Refused
from explicit_audit.reading.limits import Limits
from explicit_audit.reading.wide_keys import set_apart

# -- the bytes ----------------------------------------------------------------------------------


def _objects(texts: list[str]) -> bytes:
    return ("\n".join(texts) + "\n").encode()


def _each(rule):
    """A ``keep`` for :func:`set_apart` that judges each key by ``rule(key, first)``."""
    return lambda keys, first: [rule(key, held) for key, held in zip(keys, first, strict=True)]


def test_members_set_apart_leave_valid_objects_of_the_kept_keys():
    texts = [
        '{"x": 1, "a": 2, "y": {"z": [1, ",", "}"]}}',
        '{"a": 1, "b": 2, "x": 3}',  # two set apart before a kept one
        '{"x": 1, "a": {"q": "\\"{,"}, "b": null}',  # a string holding a quote, braces, a comma
        "{}",
        '{ "a" : [1, 2] , "x" : "\\u00e9" }',
        '{"x": 1}',
    ]
    data = _objects(texts)
    apart = set_apart(data, len(texts), _each(lambda key, first: key in {"x", "y"}))
    assert apart is not None and len(apart.data) == len(data)
    assert apart.data.count(b"\n") == data.count(b"\n")
    lines = apart.data.decode().splitlines()
    assert [orjson.loads(line) for line in lines] == [
        {"x": 1, "y": {"z": [1, ",", "}"]}},
        {"x": 3},
        {"x": 1},
        {},
        {"x": "é"},
        {"x": 1},
    ]
    assert apart.overflow == [
        {"a": 2},
        {"a": 1, "b": 2},
        {"a": {"q": '"{,'}},  # a null is no value, as when read one by one
        None,
        {"a": [1, 2]},
        None,
    ]
    assert apart.taken == ["x", "y"]


def test_keep_is_asked_once_per_distinct_key_in_order_of_first_appearance():
    """Keys are asked about once each, the first object's flagged; a row's members set apart
    make one object, in written order (a null one leaves the key out)."""
    texts = [
        '{"x": 1, "a": 1, "b": 2}',
        '{"c": 1, "x": 2, "e": 4, "f": null}',
        '{"b": 5, "d": "e"}',
    ]
    asked = []

    def keep(keys, first):
        asked.append((keys, first))
        return [key == "x" for key in keys]

    apart = set_apart(_objects(texts), len(texts), keep)
    assert asked == [(["x", "a", "b", "c", "e", "f", "d"], [True] * 3 + [False] * 4)]
    assert apart.overflow == [{"a": 1, "b": 2}, {"c": 1, "e": 4}, {"b": 5, "d": "e"}]
    assert list(apart.overflow[1]) == ["c", "e"]  # in written order, as one object's keys
    assert apart.taken == ["x"]


@pytest.mark.parametrize(
    "second",
    [
        '{"c": 1, "x": 2, "a": 4, "c": null}',  # repeated among the members set apart
        '{"x": 2, "\\u0061": 4, "a": 5}',  # one name written two ways
        '{"x": 2, "c": {"y": 1, "y": 2}}',  # repeated inside a member set apart
    ],
)
def test_an_object_repeating_a_key_among_the_members_set_apart_is_refused(second):
    """Refused, so that the group is halved and the exact path rejects that object: no
    member set apart is merged over another of the same name."""
    texts = ['{"x": 1, "a": 1, "b": 2}', second, '{"b": 5, "d": "e"}']
    apart = set_apart(_objects(texts), len(texts), lambda keys, first: [k == "x" for k in keys])
    assert apart is Refused.NOT_CLEAN


@pytest.mark.parametrize("key", [b"a\nb", b"\xff"])
def test_a_key_that_is_no_json_string_is_left_as_it_was(key):
    """A raw line end or bytes that are not UTF-8 in a key: the exact path judges them."""
    data = b'{"x": 1}\n{"x": 2, "' + key + b'": 3}\n'
    assert set_apart(data, 2, _each(lambda key, first: key == "x")) is None


def test_nothing_set_apart_when_every_key_is_kept():
    data = _objects(['{"a": 1}', '{"b": 2}'])
    apart = set_apart(data, 2, _each(lambda key, first: True))
    assert apart is not None and apart.data == data and apart.overflow is None


@pytest.mark.parametrize(
    "texts",
    [
        ['{"a": 1}', '{"b": 123456789012345678901}'],  # orjson would read a float
        ['{"a": 1}', '{"b": "\\ud800"}'],  # a lone surrogate: judged by the exact path
        ['{"a": 1}', "[1]"],  # not an object
        ['{"a": 1}', '{"b": 1'],  # not closed
    ],
)
def test_what_the_pass_cannot_read_with_certainty_is_left_as_it_was(texts):
    assert set_apart(_objects(texts), len(texts), _each(lambda key, first: key == "a")) is None


# -- a load ----------------------------------------------------------------------------------------


def _wide_file(path, n: int, typo: bool) -> None:
    """Receipts with a logger's ``host``, each with a key of its own, and a few odd ones."""
    lines = []
    for index in range(n):
        record = {"host": f"h{index % 3}", **make_receipt(query=f"q {index}")}
        record[f"k{index}"] = index
        if index % 50 == 7 and index > 300:  # past the columns: an object column is read exactly
            record[f"nested{index}"] = {"a": [1, 2.5, None], "b": "é\u2028"}
        if index % 50 == 9:
            record[f"nothing{index}"] = None
        if index % 50 == 11:
            record[f"float{index}"] = 1e300 if index > 300 else 2.5e-300
        lines.append(json.dumps(record))
    if typo:
        # A key past the limit that is a likely typo of a declared one (noted value by value).
        typo_line = {**make_receipt(query="typo"), "relevanceTreshold": 0.5, "k_typo": 1}
        lines.insert(n // 2, json.dumps(typo_line))
    lines.insert(n // 3, "not json")
    path.write_text("\n".join(lines) + "\n")


def _load(path, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        audit = ea.load(path, progress=False, **options)
    return audit, sorted((w.category.__name__, str(w.message)) for w in caught)


def _columnar_rows(path, limits: Limits) -> int:
    reading = read_all(path, registry.kinds(), progress=False, limits=limits)
    return sum(
        segment.table.num_rows
        for segments in reading.segments.values()
        for what, segment in segments
        if what == "part"
    )


@pytest.mark.parametrize("typo", [False, True])
@pytest.mark.parametrize("limit", [5, 256])
@pytest.mark.parametrize("run_bytes", [None, 4096])
def test_keys_past_the_limit_load_in_bulk_as_they_load_one_by_one(
    tmp_path, limit, typo, run_bytes, monkeypatch
):
    """Same tables as value by value; with ``run_bytes``, members are found in runs of that many
    bytes (and keys compared in runs of 50 members), in two threads, as in a large file."""
    if run_bytes is not None:
        from explicit_audit.reading import wide_keys

        monkeypatch.setattr(wide_keys, "_CHUNK_BYTES", run_bytes)
        monkeypatch.setattr(wide_keys, "_CHUNK_MEMBERS", 50)
    path = tmp_path / "wide.jsonl"
    _wide_file(path, 700, typo)
    bulk, bulk_warnings = _load(path, limits={"max_extra_columns": limit})
    if not typo:  # every line each with a key of its own, in bulk
        assert _columnar_rows(path, Limits(max_extra_columns=limit)) == 700
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds):
        exact, exact_warnings = _load(path, limits={"max_extra_columns": limit})
    for name in ("receipts", "exposed", "rejected", "keys", "sources"):
        pd.testing.assert_frame_equal(getattr(bulk, name), getattr(exact, name), obj=name)
    assert bulk_warnings == exact_warnings
    assert any(category == "ExtraColumnsWarning" for category, _ in bulk_warnings)
    accounted(bulk)
    receipts = bulk.receipts
    assert len(receipts) == 700 + typo and bulk.rejected.source_line.tolist() == [234]
    assert receipts["extra_json"].notna().sum() > 400
    assert (bulk.keys["key"] == "relevanceTreshold").sum() == typo
    kept = [json.loads(text) for text in receipts["extra_json"].dropna()]
    assert {"a": [1, 2.5, None], "b": "é\u2028"} in [
        value for keys in kept for value in keys.values()
    ]


def test_keys_are_ranked_by_the_row_that_first_holds_them_in_file_order(tmp_path):
    """A key the exact path reads on line 1 is held before one the bulk part holds on line 2.

    The reading core emits the bulk part (lines 2 on) before the row it reads
    value by value (line 1, whose likely typo it notes). The limit keeps the
    first keys in file order, as reading value by value does, not in the
    order the parts were emitted.
    """
    lines = [{**make_receipt(query="q 0"), "early": 1, "relevanceTreshold": 0.5}]
    lines += [{**make_receipt(query=f"q {i}"), "late": i} for i in range(1, 300)]
    path = tmp_path / "ranked.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bulk, _ = _load(path, limits={"max_extra_columns": 1})
    kinds = tuple(without_columnar(kind) for kind in registry.kinds())
    with registry.replaced(kinds):
        exact, _ = _load(path, limits={"max_extra_columns": 1})
    pd.testing.assert_frame_equal(bulk.receipts, exact.receipts)
    assert "early" in bulk.receipts.columns and "late" not in bulk.receipts.columns
    assert json.loads(bulk.receipts["extra_json"].iloc[1]) == {"late": 1}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_keys_like_the_first_objects_are_found_as_a_byte_by_byte_look_finds_them(seed, monkeypatch):
    """_like_first_object compares keys in words of eight bytes: the same answer as byte by byte.

    Keys of every length around the word size, differing in their first, middle
    or last byte, and members near the end of the bytes; in one run, and in runs
    of 97 members in one and two threads.
    """
    import random

    import numpy as np

    from explicit_audit.reading import wide_keys
    from explicit_audit.reading.wide_keys import _like_first_object, _members

    rng = random.Random(seed)
    template = ["a", "schemaVersion", "k" * 8, "k" * 9, "x" * 16, "é" * 3, "y" * 23]

    def changed(key: str) -> str:
        if not rng.randrange(3) or len(key) < 2:
            return key
        at = rng.choice([0, len(key) // 2, len(key) - 1])
        return key[:at] + rng.choice("zq") + key[at + 1 :]

    texts = [json.dumps({key: 1 for key in template}, ensure_ascii=False)]
    for _ in range(300):
        keys = [changed(key) for key in template[: rng.randrange(len(template) + 1)]]
        keys += ["extra"] * rng.randrange(2)
        texts.append(json.dumps(dict.fromkeys(keys, 1), ensure_ascii=False))
    texts.append('{"a":1}')  # a key within the last eight bytes
    data = "\n".join(texts).encode()
    buffer = np.frombuffer(data, dtype=np.uint8)
    _, _, row, _, key_open, key_close, _ = _members(data, buffer, len(texts))
    first = np.searchsorted(row, row, side="left")
    found = _like_first_object(buffer, key_open + 1, key_close, first)
    monkeypatch.setattr(wide_keys, "_CHUNK_MEMBERS", 97)
    for threads in (1, 2):
        runs = _like_first_object(buffer, key_open + 1, key_close, first, threads)
        assert runs.tolist() == found.tolist()
    keys = [data[o + 1 : c] for o, c in zip(key_open.tolist(), key_close.tolist(), strict=True)]
    size = int(np.count_nonzero(row == 0))
    expected = [
        ordinal if ordinal < size and keys[index] == keys[ordinal] else -1
        for index, ordinal in enumerate((np.arange(len(row)) - first).tolist())
    ]
    assert found.tolist() == expected
    unlike = sum(place < 0 for place in expected)
    assert 100 < unlike < len(expected) - 100  # both kinds, many of each


@pytest.mark.parametrize("pretty", [False, True])
def test_members_found_in_runs_of_objects_are_the_members_of_one_pass(pretty):
    """set_apart given where the objects start looks at them in runs, in threads: same result.

    More bytes than two runs, JSON Lines and pretty objects (whose lines are no
    object boundaries), and object starts that are wrong (a run would cut an
    object: the bytes are then read in one pass).
    """
    import numpy as np

    from explicit_audit.reading import wide_keys

    texts = []
    for index in range(60_000):
        value = {"id": index, "text": 'a, {b}: [c] \\"d\\"' * (index % 5), f"k{index}": [index]}
        texts.append(json.dumps(value, indent=2 if pretty else None))
    data = "\n".join(texts).encode()
    assert len(data) > 2 * wide_keys._CHUNK_BYTES
    lengths = np.array([len(text.encode()) + 1 for text in texts])
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))

    keep = _each(lambda key, first: key in {"id", "text", "k0"})

    whole = set_apart(data, len(texts), keep)
    assert whole is not None and whole.overflow[5] == {"k5": [5]}
    for threads in (1, 2):
        runs = set_apart(data, len(texts), keep, object_starts=starts, threads=threads)
        assert runs == whole
    wrong = starts + 3  # inside each object
    assert set_apart(data, len(texts), keep, object_starts=wrong, threads=2) == whole


# -- how many fields a piece seems to hold -------------------------------------------------------


def _lines(count: int, key_of_its_own, extra=None) -> bytes:
    rows = []
    for index in range(count):
        value = {**make_receipt(query=f"q {index}")}
        held = key_of_its_own(index)
        if held or held is None:
            value[f"k{index}"] = index if held else None
        if extra is not None:
            value.update(extra(index))
        rows.append(json.dumps(value))
    return ("\n".join(rows) + "\n").encode()


@pytest.mark.parametrize(
    ("key_of_its_own", "many"),
    [
        (lambda index: False, False),  # clean records
        (lambda index: True, True),  # each line a key of its own
        (lambda index: index % 4 == 0, True),  # every 4th line
        (lambda index: index < 30, False),  # a few, at the top only
        (lambda index: None, True),  # each line a key of its own, null
    ],
)
def test_the_windows_parsed_in_one_call_judge_a_piece_as_one_call_each(key_of_its_own, many):
    """_many_fields on JSON Lines parses its windows together: same fields, same verdict."""
    from explicit_audit.reading import arrow_parse

    data = _lines(3_000, key_of_its_own)
    windows = arrow_parse._windows(data)
    assert len(windows) == arrow_parse._WINDOWS
    parsed = arrow_parse._windows_parsed(windows, None)
    found = None if parsed is None else parsed.names
    alone = [
        set(arrow_parse._parse(pa.py_buffer(window), None, multiline=True).column_names)
        for window in windows
    ]
    assert found is not None
    if key_of_its_own(0) is not None:  # no field holds null: the same names as parsed alone
        assert [names for names, _ in found] == alone
    else:  # each null key of its own seen, in one window
        own = re.compile(r"k\d+")
        seen = [name for names, _ in found for name in names if own.fullmatch(name)]
        assert sorted(seen) == sorted(
            name for names in alone for name in names if own.fullmatch(name)
        )
    together = arrow_parse._many_fields(data, None, 256, multiline=False)
    one_by_one = arrow_parse._many_fields(data, None, 256, multiline=True)  # a call per window
    assert together == one_by_one == many


def test_windows_whose_fields_change_type_are_parsed_one_by_one():
    """A field numeric in one window and text in another: no parse of them together."""
    from explicit_audit.reading import arrow_parse

    data = _lines(3_000, lambda index: False, lambda index: {"host": index if index < 9 else "h"})
    windows = arrow_parse._windows(data)
    assert len(windows) == arrow_parse._WINDOWS
    assert arrow_parse._windows_parsed(windows, None) is None
    parsed = arrow_parse._windows_parsed(windows[1:2] * 2, None)  # text in both
    assert parsed is not None
    assert all("host" in names for names, _ in parsed.names)


@pytest.mark.parametrize("from_line", [0, 1_000], ids=["from the head", "past the head"])
def test_fields_the_windows_show_are_declared_from_their_one_parse(
    tmp_path, monkeypatch, from_line
):
    """The windows parsed for the count of fields are the sample fields are declared from:
    ISO-looking logger text is read as text (then typed as times, as on every path), on the
    columnar path, with no parse of the first bytes of its own; a field first written past
    the head window, then in several windows, is declared too."""
    from explicit_audit.reading import arrow_parse

    def stamps(index: int) -> dict:
        if index < from_line:
            return {"host": f"h{index % 3}"}
        return {"ts": f"2026-12-04T22:{index % 60:02d}:00Z", "host": f"h{index % 3}"}

    path = tmp_path / "stamped.jsonl"
    path.write_bytes(_lines(3_000, lambda index: False, stamps))
    heads = []
    declared = arrow_parse._declared

    def spy(first_value, sample, schema, windows=None):
        heads.append(windows is None)
        return declared(first_value, sample, schema, windows)

    monkeypatch.setattr(arrow_parse, "_declared", spy)
    assert rows_by_path(path) == {"columnar": 3_000, "exact": 0}
    assert heads and not any(heads)  # every piece's sample was its windows
    receipts = ea.load(path, progress=False).receipts
    assert receipts["ts"].iloc[from_line + 1] == pd.Timestamp(
        f"2026-12-04T22:{(from_line + 1) % 60:02d}:00Z"
    )


def test_a_piece_of_lines_each_with_a_key_of_its_own_is_refused_before_the_parse():
    """The fields declared from the windows' parse leave out a key seen in one later window:
    such keys are still counted, and a piece of a key of its own per line is never parsed
    whole (Arrow would build as many columns as lines)."""
    from explicit_audit.reading import arrow_parse
    from explicit_audit.reading.arrow_parse import parse_piece
    from explicit_audit.reading.columnar import Refused
    from explicit_audit.receipts._arrow import BARE_LINE

    def parsed(data: bytes):
        first_value = data[: data.index(b"\n")]
        lines = np.arange(1, 3_001, dtype=np.int64)
        return parse_piece(
            data, lines, "log.jsonl", BARE_LINE, first_value, multiline=False, max_fields=256
        )

    data = _lines(3_000, lambda index: True)
    assert len(data) > arrow_parse._WINDOW_BYTES  # windows are taken
    windows = arrow_parse._windows_parsed(arrow_parse._windows(data), BARE_LINE)
    assert windows is not None  # the one parse both read
    assert parsed(data) is Refused.TOO_MANY_FIELDS
    # Clean lines of the same records are parsed, with their plain fields declared.
    piece = parsed(_lines(3_000, lambda index: False))
    assert piece.table.num_rows == 3_000
