"""Every key of a record accounted for, against its kind's declared shapes.

Kind-agnostic: what a kind declares once (:mod:`explicit_audit._core.shape`)
is all this module reads. For each value a kind claims it finds

- ``unknown_key``: a key the value's shape does not declare, at any level of
  the objects the shape declares (an ``open`` object and an ``any`` value
  hold any key). At the top level of a line a logger adds its own keys
  (``timestamp``, ``request_id``, ``host``): those stay extra columns and are
  not noted, but for a key so close to a declared one that it is most likely
  a typo of it (``relevanceTreshold``, ``relevance_threshold`` for
  ``relevanceThreshold``);
- ``defaulted_field``: a declared field that is absent and that the
  producer fills in with its default (named in the note); the kind's replay
  still uses that default, as the producer does.

A note names the key's dotted path (``inputs.confidance``; an item of an
array as ``exposedResults[].scroe``) and, for an unknown key, the closest
declared key when one is near. :func:`settle` joins the notes of a value
that was rejected anyway into its rejection, with every other problem the
shape finds in it (:func:`shape_problems`), so that a rejection lists every
problem of the record, not only the first its builder met; under
``strict_keys`` an unknown key is itself a reason to reject the value.

The notes become ``Audit.keys`` (:data:`KEY_COLUMNS`), and
:data:`KEYS_CHECKER` turns them into ``notice`` findings of the check
``record_keys`` for every kind that declares shapes, with no code of its own.
:func:`key_counts` counts them per key, for the verdict.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from .findings import NOTICE, Rule, RuleTable, _typed
from .records import Check, Checker, KindTables, RawValue, Rejection, excerpt
from .shape import Field, Shape

__all__ = [
    "KEYS_CHECKER",
    "KEY_COLUMNS",
    "KEY_COUNT_COLUMNS",
    "KEY_RULES",
    "KeyNote",
    "closest_key",
    "columnar_fits",
    "concat_keys",
    "key_counts",
    "key_findings",
    "key_notes",
    "keys_frame",
    "likely_typo",
    "nearest_shape",
    "settle",
    "shape_of",
    "shape_problems",
]

UNKNOWN_KEY = "unknown_key"
DEFAULTED_FIELD = "defaulted_field"

#: Columns of ``Audit.keys``: one row per key a record holds that its shape
#: does not declare, or per declared field it leaves to the producer's default.
KEY_COLUMNS = {
    "source_file": "file of the record",
    "source_line": "1-based line where the record starts",
    "kind": "the record kind",
    "record": "the record's id where it has one",
    "note": "unknown_key or defaulted_field",
    "key": "the key's dotted path (an array's items as `name[]`)",
    "suggestion": "for an unknown key, the closest declared key when one is near",
    "default": "for a defaulted field, the producer's default as JSON",
    "detail": "the note in words, as its finding says it",
}

#: Columns of :func:`key_counts`.
KEY_COUNT_COLUMNS = ("key", "kind", "note", "count", "files", "suggestion")

#: The rules of the check ``record_keys``; each finding names its own kind.
KEY_RULES = RuleTable(
    [
        Rule(
            UNKNOWN_KEY,
            "Every key of a record is one its kind declares, at every level of the objects "
            "it declares; a logger's own keys at the top level of a line are extra columns, "
            "but one within a small edit distance of a declared key is a likely typo.",
            check="record_keys",
            kind="",
            severity=NOTICE,
        ),
        Rule(
            DEFAULTED_FIELD,
            "A declared field the record leaves out takes the producer's default, which the "
            "kit uses as the producer does; the record does not say what it held.",
            check="record_keys",
            kind="",
            severity=NOTICE,
        ),
    ]
)


@dataclass(frozen=True, slots=True)
class KeyNote:
    """One key of one record that its shape does not account for as written.

    Attributes
    ----------
    note : str
        ``"unknown_key"`` or ``"defaulted_field"``.
    key : str
        The dotted path (``inputs.confidance``; ``exposedResults[].scroe``).
    suggestion : str or None
        For an unknown key, the closest declared key (its dotted path).
    default : str or None
        For a defaulted field, the producer's default as JSON.
    where : str
        Where in an array the key is (``exposedResults[2]``); empty otherwise.
    """

    note: str
    key: str
    suggestion: str | None = None
    default: str | None = None
    where: str = ""

    def text(self) -> str:
        """The note in words, as a finding's detail and a rejection's reason say it."""
        at = f" (in {self.where})" if self.where else ""
        if self.note == UNKNOWN_KEY:
            near = f"; did you mean `{self.suggestion}`?" if self.suggestion else ""
            return f"unknown key `{self.key}`{at}: not a key this record kind declares{near}"
        return f"`{self.key}` is absent{at}: the producer's default {self.default} is used"


# -- how near a key is to a declared one -------------------------------------------------


def _folded(name: str) -> str:
    # camelCase, snake_case and kebab-case spellings of one name fold together.
    return re.sub(r"[_\-\s]", "", name).lower()


def _distance(left: str, right: str, bound: int) -> int:
    """Edit distance with adjacent transpositions (optimal string alignment), capped."""
    if abs(len(left) - len(right)) > bound:
        return bound + 1
    previous2: list[int] = []
    previous = list(range(len(right) + 1))
    for i, a in enumerate(left, 1):
        current = [i] + [0] * len(right)
        for j, b in enumerate(right, 1):
            cost = a != b
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == right[j - 2] and left[i - 2] == b:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def likely_typo(key: str, declared: Iterable[str]) -> str | None:
    """The declared key ``key`` is most likely a typo of, or None.

    Spelled alike once case, ``_`` and ``-`` are set aside (``audienceID``,
    ``relevance_threshold``), or within one edit (five to seven characters)
    or two edits (eight or more) of it, a transposition counting as one.
    Shorter names must fold to the same spelling: a logger's ``ts`` or
    ``id`` is no typo of anything.
    """
    return _likely_typo(key, tuple(declared))


@functools.lru_cache(maxsize=8192)
def _likely_typo(key: str, declared: tuple[str, ...]) -> str | None:
    # A log repeats its keys on every line: each pair is judged once.
    folded = _folded(key)
    best: tuple[int, str] | None = None
    for name in declared:
        other = _folded(name)
        if other == folded:
            return name
        shorter = min(len(folded), len(other))
        bound = 0 if shorter < 5 else 1 if shorter < 8 else 2
        if bound and (found := _distance(folded, other, bound)) <= bound:
            if best is None or found < best[0]:
                best = (found, name)
    return best[1] if best else None


def closest_key(key: str, declared: Iterable[str]) -> str | None:
    """The declared key nearest to ``key`` (a likely typo, else difflib's closest), or None."""
    declared = list(declared)
    typo = likely_typo(key, declared)
    if typo is not None:
        return typo
    folded = {_folded(name): name for name in declared}
    found = difflib.get_close_matches(_folded(key), list(folded), n=1, cutoff=0.75)
    return folded[found[0]] if found else None


# -- which shape a value has, and what its keys are ---------------------------------------


def shape_of(shapes: Sequence[Shape], value: Any) -> Shape | None:
    """The declared shape that fits ``value`` best: the fewest of its required keys
    missing, then the most top-level keys it declares, then the fewest unknown keys at
    any level.

    None when ``value`` is not an object or no shape is declared.
    """
    if not isinstance(value, dict) or not shapes:
        return None
    if len(shapes) == 1:
        return shapes[0]

    def fit(shape: Shape) -> tuple[int, int]:
        names = {field.name for field in shape.fields}
        missing = sum(1 for field in shape.fields if field.required and field.name not in value)
        return (missing, -sum(1 for key in value if key in names))

    fits = [fit(shape) for shape in shapes]
    best = min(fits)
    tied = [shape for shape, found in zip(shapes, fits, strict=True) if found == best]
    if len(tied) == 1:
        return tied[0]
    # Alike at the top level (a plan canonical or flat): the fewest unknown keys below it.
    return min(tied, key=lambda shape: _unknown_count(_level(shape.fields), value, True))


def nearest_shape(shapes: Iterable[Shape], value: dict) -> str | None:
    """For a value no kind claims: the declared shape sharing most of its top-level keys,
    and the required keys it lacks (``"requests (request), which needs payload"``).

    None when no shape shares two keys with it, or none lacks a required key.
    """
    best: tuple[int, int, Shape, list[str]] | None = None
    for shape in shapes:
        names = {field.name for field in shape.fields}
        shared = sum(1 for key in value if key in names)
        missing = [f.name for f in shape.fields if f.required and f.name not in value]
        if shared >= 2 and missing and (best is None or (shared, -len(missing)) > best[:2]):
            best = (shared, -len(missing), shape, missing)
    if best is None:
        return None
    shape, missing = best[2], best[3]
    others = [key for key in value if key not in {field.name for field in shape.fields}]
    needs = []
    for name in missing:
        typo = likely_typo(name, others)
        needs.append(f"{name} (is `{typo}` a typo of it?)" if typo else name)
    return f"{shape.kind} ({shape.name}), which needs {', '.join(needs)}"


def _record_id(shape: Shape, value: dict) -> str | None:
    for path in (*shape.record, "request_id"):
        found: Any = value
        for part in path.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if isinstance(found, str | int) and not isinstance(found, bool):
            return str(found)
    return None


def _checked_object(field: Field) -> bool:
    return field.type == "object" and not field.open


class _Level:
    """One declared object level, prepared once: its names, and what to look at below it."""

    __slots__ = ("arrays", "declared", "defaults", "names", "objects")

    def __init__(self, fields: Sequence[Field]) -> None:
        self.declared = frozenset(field.name for field in fields)
        self.names = tuple(field.name for field in fields)
        self.defaults = tuple(
            (field.name, orjson.dumps(field.default).decode())
            for field in fields
            if field.has_default
        )
        self.objects = tuple(
            (field.name, _level(field.fields)) for field in fields if _checked_object(field)
        )
        self.arrays = tuple(
            (field.name, _level(field.items.fields))
            for field in fields
            if field.type == "array" and field.items is not None and _checked_object(field.items)
        )


_LEVELS: dict[int, tuple[Sequence[Field], _Level]] = {}


def _level(fields: Sequence[Field]) -> _Level:
    # By identity: declarations are module constants (or their copies in a worker).
    found = _LEVELS.get(id(fields))
    if found is None or found[0] is not fields:
        found = _LEVELS[id(fields)] = (fields, _Level(fields))
    return found[1]


def _walk_keys(level: _Level, value: dict, prefix: str, where: str, top: bool, notes: list) -> None:
    declared = level.declared
    for key in value:
        if key in declared:
            continue
        if top:
            typo = _likely_typo(key, level.names)
            if typo is not None:
                notes.append(KeyNote(UNKNOWN_KEY, f"{prefix}{key}", f"{prefix}{typo}"))
            continue
        near = closest_key(key, level.names)
        notes.append(
            KeyNote(UNKNOWN_KEY, f"{prefix}{key}", f"{prefix}{near}" if near else None, where=where)
        )
    for name, default in level.defaults:
        if name not in value:
            notes.append(KeyNote(DEFAULTED_FIELD, f"{prefix}{name}", default=default, where=where))
    for name, below in level.objects:
        item = value.get(name)
        if isinstance(item, dict):
            _walk_keys(below, item, f"{prefix}{name}.", where, False, notes)
    for name, below in level.arrays:
        item = value.get(name)
        if isinstance(item, list):
            for index, element in enumerate(item):
                if isinstance(element, dict):
                    at = f"{where + ' ' if where else ''}{prefix}{name}[{index}]"
                    _walk_keys(below, element, f"{prefix}{name}[].", at, False, notes)


def _unknown_count(level: _Level, value: dict, top: bool) -> int:
    """How many keys :func:`key_notes` would say are unknown (no suggestion looked for)."""
    count = 0
    for key in value:
        if key not in level.declared:
            count += 1 if not top else _likely_typo(key, level.names) is not None
    for name, below in level.objects:
        item = value.get(name)
        if isinstance(item, dict):
            count += _unknown_count(below, item, False)
    for name, below in level.arrays:
        item = value.get(name)
        if isinstance(item, list):
            count += sum(_unknown_count(below, e, False) for e in item if isinstance(e, dict))
    return count


def key_notes(shape: Shape, value: dict) -> list[KeyNote]:
    """Every unknown key and defaulted field of ``value``, read as ``shape``, in key order."""
    notes: list[KeyNote] = []
    _walk_keys(_level(shape.fields), value, "", "", True, notes)
    # Level by level: its unknown keys in key order, its defaulted fields, then below.
    return notes


# -- every problem a shape finds in a value -----------------------------------------------


def _type_problem(field: Field, value: Any) -> str | None:
    kind = field.type
    whole = isinstance(value, int) and not isinstance(value, bool)
    number = whole or isinstance(value, float)
    if kind == "string" and not isinstance(value, str):
        return "must be a string"
    if kind == "integer" and not whole:
        return "must be a whole number"
    if kind == "count" and not (whole and 0 <= value <= 2**63 - 1):
        return "must be a whole number from 0 to 2**63-1"
    if kind == "number" and not number:
        return "must be a number"
    if kind == "probability" and not (number and 0 <= value <= 1):
        return "must be a number from 0 to 1"
    if kind == "boolean" and not isinstance(value, bool):
        return "must be true or false"
    if kind == "strings" and not (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    ):
        return "must be an array of strings"
    if kind == "object" and not isinstance(value, dict):
        return "must be an object"
    if kind == "array" and not isinstance(value, list):
        return "must be an array"
    return None


def _quoted(value: Any) -> str:
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _problems(fields: Sequence[Field], value: dict, prefix: str, out: list[str]) -> None:
    for field in fields:
        path = f"{prefix}{field.name}"
        if field.name not in value:
            if field.required:
                out.append(f"{path}: missing")
            continue
        item = value[field.name]
        if item is None:
            if not field.nullable:
                out.append(f"{path}: must not be null")
            continue
        problem = _type_problem(field, item)
        if problem is None and field.values and item not in field.values:
            problem = "must be " + " or ".join(_quoted(v) for v in field.values)
        if problem is not None:
            out.append(f"{path}: {problem}, got {_quoted(item)}")
            continue
        if _checked_object(field):
            _problems(field.fields, item, path + ".", out)
        elif field.type == "array" and field.items is not None and _checked_object(field.items):
            for index, element in enumerate(item):
                if not isinstance(element, dict):
                    out.append(f"{path}[{index}]: must be an object, got {_quoted(element)}")
                else:
                    _problems(field.items.fields, element, f"{path}[{index}].", out)


def shape_problems(shape: Shape, value: dict) -> list[str]:
    """Every field of ``value`` that does not fit ``shape`` (missing, null, type, values)."""
    out: list[str] = []
    _problems(shape.fields, value, "", out)
    return out


# -- the notes of built values --------------------------------------------------------------


def _values(segments: Sequence[tuple[str, Any]]) -> list[RawValue]:
    return [item for what, items in segments if what == "values" for item in items]


def settle(
    kind_name: str,
    shapes: Sequence[Shape],
    shape_for: Any,
    segments: list[tuple[str, Any]],
    build: Any,
    *,
    strict_keys: bool,
) -> KindTables:
    """Build a kind's tables from its segments, its key notes kept beside them.

    Parameters
    ----------
    kind_name : str
    shapes : sequence of Shape
        The kind's declared shapes; with none, the kind is built as it is.
    shape_for : callable
        ``shape_for(value) -> Shape | None``: the shape a value is read as
        (None: a value no shape declares, such as a receipt's presentation).
    segments : list
        The kind's segments (``RecordKind.build``'s argument).
    build : callable
        The kind's builder.
    strict_keys : bool
        Reject a value holding an unknown key, naming every key.

    Returns
    -------
    KindTables
        With ``notes``: ``(RawValue, Shape, [KeyNote, ...])`` of every value
        loaded that has one. A value the builder rejected has its notes and
        every problem its shape finds joined into its rejection's reason.
    """
    if not shapes:
        return build(segments)
    # A .json array may hold several values on one line: each place keeps a list.
    found: dict[tuple[str, int], list[tuple[RawValue, Shape, list[KeyNote]]]] = {}
    refused: list[Rejection] = []
    kept_segments: list[tuple[str, Any]] = []
    for what, items in segments:
        if what != "values":
            kept_segments.append((what, items))
            continue
        kept = []
        for item in items:
            shape = shape_for(item.value)
            notes = key_notes(shape, item.value) if shape is not None else []
            unknown = [note for note in notes if note.note == UNKNOWN_KEY]
            if strict_keys and unknown:
                reasons = [note.text() for note in notes]
                reasons += shape_problems(shape, item.value)
                refused.append(
                    Rejection(
                        item.source_file,
                        item.source_line,
                        kind_name,
                        "strict_keys: " + "; ".join(reasons),
                        excerpt(item.text),
                    )
                )
                continue
            kept.append(item)
            if shape is not None:
                entry = (item, shape, notes)
                found.setdefault((item.source_file, item.source_line), []).append(entry)
        kept_segments.append((what, kept))
    built = build(kept_segments)
    rejected = []
    for rejection in built.rejected:
        entries = found.get((rejection.source_file, rejection.source_line))
        if not entries:
            rejected.append(rejection)
            continue
        item, shape, notes = entries.pop(0)
        # The builder's own message first; then what else the shape finds, but
        # for the field the builder already named.
        problems = shape_problems(shape, item.value)
        more = [p for p in problems if p.split(":")[0] not in rejection.reason]
        more += [note.text() for note in notes]
        reason = rejection.reason + "".join(f"; also {problem}" for problem in more)
        where = (rejection.source_file, rejection.source_line, rejection.kind)
        rejected.append(Rejection(*where, reason, rejection.raw))
    built.rejected = [*rejected, *refused]
    built.notes = sorted(
        (entry for entries in found.values() for entry in entries if entry[2]),
        key=lambda entry: (entry[0].source_file, entry[0].source_line),
    )
    return built


def keys_frame(
    kind_notes: Iterable[tuple[str, Sequence[tuple[RawValue, Shape, list[KeyNote]]]]],
    files: Sequence[str] = (),
) -> pd.DataFrame:
    """``Audit.keys``: one row per note (:data:`KEY_COLUMNS`), given ``(kind, notes)`` pairs.

    Rows in file order (``files``, then any other file by name), then line order.
    """
    rows: list[tuple] = []
    for kind_name, entries in kind_notes:
        for item, shape, notes in entries:
            record = _record_id(shape, item.value) if isinstance(item.value, dict) else None
            for note in notes:
                rows.append(
                    (item.source_file, item.source_line, kind_name, record, note.note,
                     note.key, note.suggestion, note.default, note.text())
                )  # fmt: skip
    names = list(KEY_COLUMNS)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    rank = {name: index for index, name in enumerate(files)}
    order = sorted(
        range(len(rows)),
        key=lambda i: (rank.get(rows[i][0], len(rank)), rows[i][0], rows[i][1]),
    )
    columns = [[values[i] for i in order] for values in columns]
    return pd.DataFrame(
        {
            name: pd.Series(values, dtype="int64" if name == "source_line" else "str")
            for name, values in zip(names, columns, strict=True)
        }
    )


def concat_keys(frames: Sequence[pd.DataFrame], files: Sequence[str]) -> pd.DataFrame:
    """Several ``Audit.keys`` frames (one per partition) as one, in file then line order."""
    frames = [frame for frame in frames if len(frame)]
    if not frames:
        return keys_frame([])
    frame = pd.concat(frames, ignore_index=True)
    rank = {name: index for index, name in enumerate(files)}
    order = frame["source_file"].map(lambda name: rank.get(name, len(rank)))
    frame = frame.assign(_rank=order).sort_values(
        ["_rank", "source_file", "source_line"], kind="stable"
    )
    return frame.drop(columns="_rank").reset_index(drop=True)


def key_findings(keys: pd.DataFrame) -> pd.DataFrame:
    """One ``notice`` finding per row of ``Audit.keys`` (the check ``record_keys``)."""
    n = len(keys)
    kinds = keys["kind"].astype("str").tolist()
    notes = keys["note"].astype("str").tolist()
    columns = {
        "check": ["record_keys"] * n,
        "kind": kinds,
        "source_file": keys["source_file"].tolist(),
        "source_line": keys["source_line"].tolist(),
        "row": [pd.NA] * n,
        "record": keys["record"].tolist(),
        "rule": notes,
        "severity": [NOTICE] * n,
        "field": keys["key"].tolist(),
        "detail": keys["detail"].tolist(),
    }
    return _typed(columns, KEY_RULES.dtypes(kinds=sorted(set(kinds))))


#: The check of every record's keys against its kind's shapes; every kind that
#: declares shapes has it, with no code of its own.
KEYS_CHECKER = Checker(
    run=key_findings,
    reads=("keys",),
    checks=(
        Check(
            "record_keys",
            "keys the record kinds declare: unknown keys, fields left to a default",
            examines=None,
        ),
    ),
    rules=KEY_RULES,
    order=1,
)


_SUGGESTION = re.compile(r"did you mean `([^`]*)`\?$")


def key_counts(findings: pd.DataFrame) -> pd.DataFrame:
    """The ``record_keys`` findings counted per key, so that schema drift shows at a glance.

    Parameters
    ----------
    findings : DataFrame
        Findings in the kit's shape (``Verification.findings``); those of
        other checks are left aside.

    Returns
    -------
    DataFrame
        One row per key, kind and note (:data:`KEY_COUNT_COLUMNS`): ``key``
        (its dotted path), ``kind``, ``note`` (``unknown_key`` or
        ``defaulted_field``), ``count`` (records), ``files`` (the files it is
        in, comma-separated, in verdict order) and ``suggestion`` (the
        closest declared key, or None). The most frequent first, then by
        kind and key.
    """
    found = findings.loc[findings["check"].astype("str") == "record_keys"]
    rows = []
    if len(found):
        frame = found.astype({"kind": "str", "rule": "str", "field": "str", "source_file": "str"})
        for (kind, note, key), group in frame.groupby(["kind", "rule", "field"], sort=False):
            suggestions = group["detail"].astype("str").str.extract(_SUGGESTION)[0].dropna()
            rows.append(
                (key, kind, note, len(group), ", ".join(dict.fromkeys(group["source_file"])),
                 suggestions.iloc[0] if len(suggestions) else None)
            )  # fmt: skip
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(KEY_COUNT_COLUMNS)
    table = pd.DataFrame(
        {
            name: pd.Series(list(values), dtype="int64" if name == "count" else "str")
            for name, values in zip(KEY_COUNT_COLUMNS, columns, strict=True)
        }
    )
    table = table.sort_values(["count", "kind", "key"], ascending=[False, True, True])
    return table.reset_index(drop=True)


# -- the columnar path: whole pieces whose keys are all accounted for ---------------------


def _declared_paths(shapes: Sequence[Shape]) -> tuple[set[str], set[str], set[str]]:
    """Every declared path, the paths below which any key is allowed, the top-level names."""
    declared: set[str] = set()
    free: set[str] = set()
    top: set[str] = set()
    for shape in shapes:
        top |= {field.name for field in shape.fields}
        stack = [(field, field.name) for field in shape.fields]
        while stack:
            field, path = stack.pop()
            declared.add(path)
            target = field.items if field.type == "array" and field.items is not None else field
            if target.type == "any" or (target.type == "object" and target.open):
                free.add(path)
            stack.extend((child, f"{path}.{child.name}") for child in target.fields)
    return declared, free, top


def _arrow_paths(type_: pa.DataType, path: str) -> Iterable[str]:
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        type_ = type_.value_type
    if pa.types.is_struct(type_):
        for child in type_:
            yield f"{path}.{child.name}"
            yield from _arrow_paths(child.type, f"{path}.{child.name}")


def columnar_fits(shapes: Sequence[Shape], table: pa.Table) -> bool:
    """Whether a piece parsed in bulk holds no key its kind's shapes leave unaccounted for.

    Every nested key must be declared (or below an open object), and a
    top-level key that is not declared must not be a likely typo of one. A
    piece that does not fit is read value by value, where each key is noted.
    """
    if not shapes:
        return True
    declared, free, top = _declared_paths(shapes)
    for column in table.schema:
        if column.name not in top:
            if likely_typo(column.name, top) is not None:
                return False
            continue
        for path in _arrow_paths(column.type, column.name):
            if any(path == f or path.startswith(f + ".") for f in free):
                continue
            if path not in declared:
                return False
    return True
