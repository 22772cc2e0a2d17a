"""A record's keys read against its kind's declared shapes: what is unknown, what defaulted.

Kind-agnostic: what a kind declares once (:mod:`explicit_audit._core.shape`)
is all this module reads. For a value a kind claims, :func:`key_notes` finds

- ``unknown_key``: a key the value's shape does not declare, at any level of
  the objects the shape declares (an ``open`` object and an ``any`` value
  hold any key). At the top level of a line a logger adds its own keys
  (``timestamp``, ``request_id``, ``host``): those stay extra columns and are
  not noted, but for a key so close to a declared one that it is most likely
  a typo of it (``relevanceTreshold``, ``relevance_threshold`` for
  ``relevanceThreshold``, :func:`likely_typo`);
- ``defaulted_field``: a declared field that is absent and that the
  producer fills in with its default (named in the note); the kind's replay
  still uses that default, as the producer does;
- ``undeclared_value``: a value of a type its field does not declare but
  ``accepts`` (:class:`~explicit_audit._core.shape.Field`): the producer's
  own code reads it (arborist's ``int("5")``), so the kit loads it as that
  code does, and the JSON Schema allows it, marked ``deprecated``.

A note names the key's dotted path (``inputs.confidance``; an item of an
array as ``exposedResults[].scroe``) and, for an unknown key, the closest
declared key when one is near (:func:`closest_key`). :func:`shape_of` tells
which of a kind's shapes a value has; :func:`columnar_fits` keeps a piece
parsed in bulk off the columnar path when a key in it is not accounted for,
so that it is read value by value and noted. The notes become ``Audit.keys``
(:mod:`explicit_audit._core.key_table`) and the findings of the check
``record_keys`` (:mod:`explicit_audit._core.key_check`).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import pyarrow as pa

from .shape import Field, Shape, quoted, type_fits

__all__ = [
    "DEFAULTED_FIELD",
    "UNDECLARED_VALUE",
    "UNKNOWN_KEY",
    "KeyNote",
    "closest_key",
    "columnar_fits",
    "key_notes",
    "likely_typo",
    "likely_typos",
    "nearest_shape",
    "shape_of",
]

UNKNOWN_KEY = "unknown_key"
DEFAULTED_FIELD = "defaulted_field"
UNDECLARED_VALUE = "undeclared_value"


@dataclass(frozen=True, slots=True)
class KeyNote:
    """One key of one record that its shape does not account for as written.

    Attributes
    ----------
    note : str
        ``"unknown_key"``, ``"defaulted_field"`` or ``"undeclared_value"``.
    key : str
        The dotted path (``inputs.confidance``; ``exposedResults[].scroe``).
    suggestion : str or None
        For an unknown key, the closest declared key (its dotted path).
    default : str or None
        For a defaulted field, the producer's default as JSON.
    where : str
        Where in an array the key is (``exposedResults[2]``); empty otherwise.
    value : str or None
        For an undeclared value, the value (short JSON) and the declared type.
    """

    note: str
    key: str
    suggestion: str | None = None
    default: str | None = None
    where: str = ""
    value: str | None = None

    def text(self) -> str:
        """The note in words, as a finding's detail and a rejection's reason say it."""
        at = f" (in {self.where})" if self.where else ""
        if self.note == UNKNOWN_KEY:
            near = f"; did you mean `{self.suggestion}`?" if self.suggestion else ""
            return f"unknown key `{self.key}`{at}: not a key this record kind declares{near}"
        if self.note == UNDECLARED_VALUE:
            return (
                f"`{self.key}`{at} is {self.value}: the kit reads it as the producer's own "
                "code does, but the producer's type does not declare it"
            )
        return f"`{self.key}` is absent{at}: the producer's default {self.default} is used"


# -- how near a key is to a declared one -------------------------------------------------


_SEPARATORS = re.compile(r"[_\-\s]")


def _folded(name: str) -> str:
    # camelCase, snake_case and kebab-case spellings of one name fold together. A
    # name of letters and digits holds no separator (none is alphanumeric).
    return name.lower() if name.isalnum() else _SEPARATORS.sub("", name).lower()


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
        if min(current) > bound and min(previous) > bound:
            return bound + 1  # every later row only grows from these two
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
    return likely_typos([key], declared)[0]


def likely_typos(keys: Iterable[str], declared: Iterable[str]) -> list[str | None]:
    """:func:`likely_typo` of each of ``keys``: a log may hold a million distinct keys."""
    declared = declared if type(declared) is tuple else tuple(declared)
    exact, _, every_char = _folded_names(declared)
    typos: list[str | None] = []
    for key in keys:
        folded = _folded(key)
        if folded in exact:
            typos.append(exact[folded])
        elif len(folded) < 5 or len(set(folded) - every_char) > 2:
            # No bound but 0 (same spelling) for so short a name; or more than two of
            # its characters are in no declared name: each edit brings at most one.
            # Decided here, uncached: a log may hold a million distinct short keys.
            typos.append(None)
        else:
            typos.append(_within_two_edits(folded, declared))
    return typos


@functools.lru_cache(maxsize=8192)
def _within_two_edits(folded: str, declared: tuple[str, ...]) -> str | None:
    # A log repeats its keys on every line: each pair is searched once.
    _, by_length, _ = _folded_names(declared)
    chars = set(folded)
    # Within two edits (the largest bound) only, in declared order.
    sizes = range(len(folded) - 2, len(folded) + 3)
    near = sorted(entry for size in sizes for entry in by_length.get(size, ()))
    best: tuple[int, str] | None = None
    for _, name, other, other_chars in near:
        shorter = min(len(folded), len(other))
        bound = 0 if shorter < 5 else 1 if shorter < 8 else 2
        # Each edit brings at most one character the other name lacks: a cheap test first.
        if not bound or len(chars - other_chars) > bound:
            continue
        if (found := _distance(folded, other, bound)) <= bound:
            if best is None or found < best[0]:
                best = (found, name)
    return best[1] if best else None


@functools.lru_cache(maxsize=64)
def _folded_names(
    declared: tuple[str, ...],
) -> tuple[dict[str, str], dict[int, list[tuple]], frozenset[str]]:
    """The declared names by folded spelling (the first of each), by folded length, their chars."""
    exact: dict[str, str] = {}
    by_length: dict[int, list[tuple]] = {}
    for index, name in enumerate(declared):
        other = _folded(name)
        exact.setdefault(other, name)
        by_length.setdefault(len(other), []).append((index, name, other, frozenset(other)))
    return exact, by_length, frozenset("".join(exact))


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


def _checked_object(field: Field) -> bool:
    return field.type == "object" and not field.open


#: The Python type of a value of a declared type, where that alone tells it fits.
_EXACT = {"string": str, "integer": int, "boolean": bool, "number": float}


class _Level:
    """One declared object level, prepared once: its names, and what to look at below it."""

    __slots__ = ("accepting", "arrays", "declared", "defaults", "names", "objects")

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
        # A value of the exact Python type (where that alone tells it fits) is declared.
        self.accepting = tuple(
            (field.name, None if field.values else _EXACT.get(field.type), field)
            for field in fields
            if field.accepts
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
            typo = likely_typo(key, level.names)
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
    for name, exact, field in level.accepting:
        if name in value and type(item := value[name]) is not exact:
            if found := _undeclared(field, item):
                notes.append(KeyNote(UNDECLARED_VALUE, f"{prefix}{name}", where=where, value=found))
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


def _undeclared(field: Field, item: Any) -> str | None:
    """``item`` and the type it is not, where ``field`` accepts it without declaring it."""
    if type_fits("null" if item is None and field.nullable else field.type, item):
        if not field.values or item in field.values:
            return None
    if not any(type_fits(type_, item) for type_ in field.accepts):
        return None
    return f"{quoted(item)}, not {'a' if field.type != 'integer' else 'an'} {field.type}"


def _unknown_count(level: _Level, value: dict, top: bool) -> int:
    """How many keys :func:`key_notes` would say are unknown (no suggestion looked for)."""
    count = 0
    for key in value:
        if key not in level.declared:
            count += 1 if not top else likely_typo(key, level.names) is not None
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
    top-level key that the shape its keys fit best does not declare must not
    be a likely typo of one it does. A piece that does not fit is read value
    by value, where each key is noted.
    """
    if not shapes:
        return True
    declared, free, top = _declared_paths(shapes)
    # The shape the piece's records are read as, by their top-level keys: a key
    # another shape declares may still be a typo of one of its own
    # (``schema_version`` beside a bare receipt's ``schemaVersion``).
    names = tuple(column.name for column in table.schema)
    shape = shape_of(shapes, dict.fromkeys(names))
    own = {field.name for field in shape.fields}
    own_names = tuple(own)
    for column in table.schema:
        if column.name not in own and likely_typo(column.name, own_names) is not None:
            return False
        if column.name not in top:
            continue
        for path in _arrow_paths(column.type, column.name):
            if any(path == f or path.startswith(f + ".") for f in free):
                continue
            if path not in declared:
                return False
    return True
