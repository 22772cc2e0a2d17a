"""Spans grouped before any is parsed: a guess at each one's record shape, checked later.

Lines of one shape start alike, so the piece reader
(:mod:`explicit_audit.reading.pipeline`) groups a piece's clean spans by
their first key (:func:`by_first_key`), where one key starts several shapes
by the key that holds their first object or array (:func:`container_key`),
and sets apart the very short ones no kind claims by their bytes
(:func:`short_unclaimed`). Every group is checked when it is parsed: a wrong
guess costs a parse, never a wrong row. An array whose elements each start a
line is read as those elements (:func:`array_as_objects`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson

from .cuts import WHITESPACE
from .spans import Spans, short_groups

__all__ = [
    "array_as_objects",
    "by_first_key",
    "container_key",
    "grouped",
    "short_unclaimed",
]

#: An object or an array opening.
_CONTAINER = re.compile(rb"[\[{]")


def by_first_key(data: bytes, spans: Spans, members: np.ndarray) -> list[tuple[bytes, np.ndarray]]:
    """Spans grouped by the first key they hold (a guess at their shape, checked later).

    ``(key, spans)`` in the order of their first span, each in file order.
    The spans that begin with the very bytes the first one begins with, up to
    the end of its first key, hold that key: they are found for all spans at
    once with numpy (a file of one shape is one pass). The others are looked
    at one by one, two ``bytes.find`` each.
    """
    if not len(members):  # every span set apart before (short lines no kind claims)
        return []
    starts = spans.starts[members]
    same = _same_opening(data, starts, spans.ends[members])
    groups: dict[bytes, list[int]] = {}
    if same is not None:
        if same.all():
            return [(_first_key(data, int(starts[0])), members)]
        groups[_first_key(data, int(starts[0]))] = members[same].tolist()
        rest = members[~same].tolist()
    else:
        rest = members.tolist()
    for index in rest:
        groups.setdefault(_first_key(data, int(spans.starts[index])), []).append(index)
    found = [(key, np.asarray(sorted(group), dtype=np.int64)) for key, group in groups.items()]
    return sorted(found, key=lambda pair: int(pair[1][0]))


def grouped(members: np.ndarray, keys: list) -> list[np.ndarray]:
    """``members`` grouped by ``keys`` (one per member), groups in order of their first member."""
    groups: dict[Any, list[int]] = {}
    for index, key in zip(members.tolist(), keys, strict=True):
        groups.setdefault(key, []).append(index)
    return [np.asarray(group, dtype=np.int64) for group in groups.values()]


def container_key(data: bytes, start: int) -> bytes:
    """The key written before a span's first nested ``{`` or ``[`` (within 512 bytes), or b"".

    A guess at the span's shape, never trusted: a bracket inside a string
    before it, or a key with an escaped quote, only makes the guess worse.
    """
    found = _CONTAINER.search(data, start + 1, start + 512)
    if found is None:
        return b""
    closing = data.rfind(b'"', start, found.start())
    opening = data.rfind(b'"', start, closing) if closing > start else -1
    return data[opening + 1 : closing] if opening != -1 else b""


def _first_key(data: bytes, start: int) -> bytes:
    opening = data.find(b'"', start, start + 256)
    closing = data.find(b'"', opening + 1, start + 256) if opening != -1 else -1
    return data[opening + 1 : closing] if closing != -1 else b""


def _same_opening(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Whether each span begins as the first does, through its first key's closing quote.

    None when the first span has no first key within its first 256 bytes.
    """
    first = int(starts[0])
    opening = data.find(b'"', first, first + 256)
    closing = data.find(b'"', opening + 1, first + 256) if opening != -1 else -1
    if closing == -1:
        return None
    prefix = np.frombuffer(data, dtype=np.uint8, count=closing + 1 - first, offset=first)
    buffer = np.frombuffer(data, dtype=np.uint8)
    same = (ends - starts) >= len(prefix)
    inside = np.flatnonzero(same)
    for offset, byte in enumerate(prefix.tolist()):
        keep = buffer[starts[inside] + offset] == byte
        inside = inside[keep]
    same[:] = False
    same[inside] = True
    return same


def array_as_objects(data: bytes) -> bytes | None:
    """An array whose elements each start a line, as its elements one after another, or None.

    The brackets and each comma that ends a line before the next element's
    line become spaces, and each element's opening ``{`` moves to column 0 in
    place of its indent (``"  {"`` becomes ``"{  "``): same length, same lines.
    None when the piece is not one array whose first element starts the line
    after ``[`` (see :meth:`PieceReader._read_array` for what is checked after).
    """
    head = len(data) - len(data.lstrip(WHITESPACE))
    tail = len(data.rstrip(WHITESPACE))
    if head >= tail or data[head : head + 1] != b"[" or data[tail - 1 : tail] != b"]":
        return None
    newline = data.find(b"\n", head)
    if newline == -1 or data[head + 1 : newline].strip(WHITESPACE):
        return None
    first = data.find(b"{", newline)
    indent = first - newline - 1
    if first == -1 or data[newline + 1 : first].strip(b" ") or indent > 64:
        return None
    opening = b"\n" + b" " * indent + b"{"
    buffer = bytearray(data)
    buffer[head] = buffer[tail - 1] = 32
    starts = np.array(_find_all(data, opening, newline), dtype=np.int64)
    view = np.frombuffer(buffer, dtype=np.uint8)
    before = starts - 1  # the byte before each element line's newline: the comma, or "\r"
    before[view[before] == 13] -= 1
    separated = view[before[1:]] == 44
    if not separated.all():
        return None
    view[before[1:]] = 32
    if indent:
        view[starts + 1] = 123
        view[starts + 1 + indent] = 32
    return bytes(buffer)


def _find_all(data: bytes, needle: bytes, start: int) -> list[int]:
    found = []
    position = data.find(needle, start)
    while position != -1:
        found.append(position)
        position = data.find(needle, position + 1)
    return found


def short_unclaimed(
    data: bytes,
    spans: Spans,
    clean: np.ndarray,
    claimant: Callable[[Any], Any],
    unclaimed: dict,
) -> np.ndarray:
    """The clean spans left once those of at most 8 bytes no kind claims are set apart.

    No record is that short, but a log may hold millions of such lines
    (``{}``): grouped by their bytes (:func:`~explicit_audit.reading.spans.short_groups`),
    each distinct text parsed and judged once (``claimant(value)``
    None: no kind claims it), and their span indices added to ``unclaimed``
    under their text (see :meth:`explicit_audit.reading.fallback.ExactFallback.junk`).
    A short text that a kind claims, or that is not JSON, stays.
    """
    taken = []
    for members in short_groups(data, spans, clean) or ():
        index = int(members[0])
        text = data[int(spans.starts[index]) : int(spans.ends[index])]
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if claimant(value) is None:
            taken.append(members)
            unclaimed[text] = (value, members)
    return np.setdiff1d(clean, np.concatenate(taken), assume_unique=True) if taken else clean
