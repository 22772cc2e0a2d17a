"""Where each value of a piece starts and ends, and which ones are plainly clean.

The splitter works on bytes with NumPy, never value by value:

- JSON Lines: every line that is not blank is one span;
- ``.json``: a span starts at the top of the piece and at every line that
  starts with ``{`` or ``[`` at column 0 (pretty-printed values appended to a
  log start there), and runs to the next span.

A span is *clean* when the columnar path may take it as one JSON object:
it starts with ``{``, its last character (white space aside) is ``}``, and,
in a ``.json`` file, the span before it also ended with ``}`` or ``]`` (outside
a string, ``}`` then white space then ``{`` is valid JSON only between two
top-level values, and a JSON string never holds a raw line end, so both ends
of such a span are value boundaries). A clean span must also pass cheap
byte checks (:mod:`.span_checks`): the columnar path's parse of clean spans
needs no check of its strings after. The columnar path then verifies that
each clean span is exactly one object of the expected shape;
everything else is read by :mod:`explicit_audit.reading.exact`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .cuts import WHITESPACE
from .limits import Limits
from .span_checks import byte_checked

__all__ = ["Spans", "array_spans", "first_solid", "short_groups", "split_piece", "structure"]

_LBRACE, _RBRACE, _LBRACKET, _RBRACKET, _NEWLINE = 123, 125, 91, 93, 10
_SPACE_BYTES = (9, 10, 13, 32)
#: A byte that is not JSON white space.
_SOLID = re.compile(rb"[^ \t\r\n]")
#: Whether each byte value is JSON white space: a table lookup, many times faster than np.isin.
_IS_SPACE = np.isin(np.arange(256), _SPACE_BYTES)


@dataclass(frozen=True, slots=True)
class Spans:
    """The spans of one piece: byte offsets, file lines and cleanliness.

    Attributes
    ----------
    starts, ends : ndarray of int64
        ``data[starts[i]:ends[i]]`` is span ``i`` (for ``.json``, white space
        after the value included).
    lines : ndarray of int64
        The file line on which span ``i`` starts.
    clean : ndarray of bool
        Whether the columnar path may take span ``i`` (see the module docstring).
    """

    starts: np.ndarray
    ends: np.ndarray
    lines: np.ndarray
    clean: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)


def first_solid(data: bytes) -> int | None:
    """Where the first byte that is not JSON white space is, or None (no copy of ``data``)."""
    found = _SOLID.search(data)
    return None if found is None else found.start()


#: Spans of at most this many bytes are grouped by their bytes (see :func:`short_groups`),
_SHORT_SPAN = 8
#: when there are at least this many of them.
_SHORT_SPANS_WORTH_IT = 1024


def short_groups(data: bytes, spans: Spans, members: np.ndarray) -> list[np.ndarray] | None:
    """The spans of ``members`` of at most 8 bytes, grouped by their bytes, with NumPy.

    No record is that short, but a log may hold millions of such lines
    (``{}``, ``1``): each group's text is then judged once for all of its
    spans. The bytes of each span are packed into one integer, so that
    grouping them is one ``np.unique`` (a span holding a NUL byte is left
    out: it would pack as a shorter text).

    Returns
    -------
    list of ndarray, or None
        Each group's span indices, in file order (the first names the
        group's text); None when fewer than 1,024 of ``members`` are short.
    """
    lengths = spans.ends[members] - spans.starts[members]
    short = members[lengths <= _SHORT_SPAN]
    if len(short) < _SHORT_SPANS_WORTH_IT:
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    starts, lengths = spans.starts[short], lengths[lengths <= _SHORT_SPAN]
    packed = np.zeros(len(short), dtype=np.uint64)
    nul = np.zeros(len(short), dtype=bool)
    for offset in range(int(lengths.max())):
        inside = lengths > offset
        byte = buffer[np.minimum(starts + offset, len(buffer) - 1)]
        nul |= inside & (byte == 0)
        packed |= np.where(inside, byte.astype(np.uint64) << np.uint64(8 * offset), 0)
    short, packed = short[~nul], packed[~nul]
    # Each group's spans in file order, cut from one stable sort (not a pass per group).
    order = np.argsort(packed, kind="stable")
    packed = packed[order]
    return np.split(short[order], np.flatnonzero(packed[1:] != packed[:-1]) + 1)


def _line_ends(buffer: np.ndarray) -> np.ndarray:
    return np.flatnonzero(buffer == _NEWLINE)


#: Bytes of each line :func:`_holds_solid` looks at in step, all lines at once.
_STEPS = 16
#: Spans past :data:`_STEPS` searched one by one, at most; more make one count over the piece.
_ONE_BY_ONE = 1024


def _holds_solid(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each span, which starts with white space, holds a byte that is not.

    The spans' bytes are looked at in step, the second of every span longer
    than one byte, then the third of those undecided, and so on, so that
    millions of short blank lines cost a few passes over their own bytes and
    never one over the piece. Spans still undecided after :data:`_STEPS`
    bytes (long runs of white space) are searched one by one when they are
    few, else by one count of the solid bytes over the whole piece.
    """
    lengths = ends - starts
    solid = np.zeros(len(starts), dtype=bool)
    undecided = np.flatnonzero(lengths > 1)
    for offset in range(1, _STEPS):
        if offset > 1:
            undecided = undecided[lengths[undecided] > offset]
        if not len(undecided):
            return solid
        found = ~_IS_SPACE[buffer[starts[undecided] + offset]]
        solid[undecided[found]] = True
        undecided = undecided[~found]
    if len(undecided) <= _ONE_BY_ONE:
        for index in undecided.tolist():
            start = int(starts[index]) + _STEPS
            solid[index] = first_solid(buffer[start : int(ends[index])].tobytes()) is not None
        return solid
    count = np.int32 if len(buffer) < 2**31 else np.int64
    running = np.zeros(len(buffer) + 1, dtype=count)
    np.cumsum(~_IS_SPACE[buffer], dtype=count, out=running[1:])
    solid[undecided] = running[ends[undecided]] > running[starts[undecided]]
    return solid


def _trimmed(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each span's end with its trailing white space left out."""
    ends = ends.copy()
    for _ in range(8):
        inside = np.flatnonzero(ends > starts)
        spaced = inside[_IS_SPACE[buffer[ends[inside] - 1]]]
        if not len(spaced):
            return ends
        ends[spaced] -= 1
    # Longer runs of white space, span by span.
    data = buffer.tobytes() if len(spaced) else b""
    for index in spaced:
        start = int(starts[index])
        ends[index] = start + len(data[start : int(ends[index])].rstrip(WHITESPACE))
    return ends


def _last_byte_is(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, wanted) -> np.ndarray:
    """Whether each span's last byte, trailing white space aside, is one of ``wanted``."""
    if not len(ends):
        return np.zeros(0, dtype=bool)
    ends = _trimmed(buffer, starts, ends)
    return (ends > starts) & np.isin(buffer[np.maximum(ends - 1, 0)], wanted)


def split_piece(data: bytes, first_line: int, jsonl: bool, limits: Limits) -> Spans:
    """The spans of a piece of a file (see the module docstring).

    Parameters
    ----------
    data : bytes
        Whole values of one file (a :class:`~explicit_audit.reading.content.Piece`).
    first_line : int
        The file line ``data`` starts on.
    jsonl : bool
        JSON Lines (a span per line) or ``.json`` (a span per column-0 value start).
    limits : Limits

    Returns
    -------
    Spans
    """
    head = first_solid(data)
    if head is None:  # blank lines only: nothing to split
        empty = np.zeros(0, dtype=np.int64)
        return Spans(empty, empty, empty, np.zeros(0, dtype=bool))
    buffer = np.frombuffer(data, dtype=np.uint8)
    newlines = _line_ends(buffer)
    if jsonl:
        # Line i runs from starts[i] to ends[i]; every line but the last ends with a line end.
        count = len(newlines) + 1
        starts = np.empty(count, dtype=np.int64)
        starts[0] = 0
        np.add(newlines, 1, out=starts[1:])
        ends = np.empty(count, dtype=np.int64)
        ends[:-1] = newlines
        ends[-1] = len(data)
        lengths = ends - starts
        first = np.empty(count, dtype=np.uint8)
        first[:-1] = buffer[starts[:-1]]  # each starts at or before the line end after it
        first[-1] = buffer[starts[-1]] if starts[-1] < len(data) else _NEWLINE
        spaced = _IS_SPACE[first]
        keep = (lengths > 0) & ~spaced
        # A line starting with white space is kept when it holds another byte: one
        # byte long, it is blank (millions of " " lines cost no look at their bytes).
        doubtful = np.flatnonzero(spaced & (lengths > 1))
        if len(doubtful):
            keep[doubtful] = _holds_solid(buffer, starts[doubtful], ends[doubtful])
        kept = np.flatnonzero(keep)
        starts, ends, lines = starts[kept], ends[kept], kept + first_line
        opens = buffer[starts] == _LBRACE if len(starts) else np.zeros(0, dtype=bool)
        clean = opens & _last_byte_is(buffer, starts, ends, (_RBRACE,))
    else:
        begins = newlines[newlines + 1 < len(data)] + 1
        begins = begins[np.isin(buffer[begins], (_LBRACE, _LBRACKET))]
        starts = begins if len(begins) and begins[0] == head else np.concatenate(([head], begins))
        starts = starts.astype(np.int64)
        if head >= len(data):
            starts = np.zeros(0, dtype=np.int64)
        ends = np.concatenate((starts[1:], [len(data)])).astype(np.int64)
        lines = np.searchsorted(newlines, starts).astype(np.int64) + first_line
        opens = buffer[starts] == _LBRACE if len(starts) else np.zeros(0, dtype=bool)
        ended = _last_byte_is(buffer, starts, ends, (_RBRACE, _RBRACKET))
        after_a_value = np.concatenate(([True], ended[:-1])) if len(ended) else ended
        clean = opens & _last_byte_is(buffer, starts, ends, (_RBRACE,)) & after_a_value
    if len(starts):
        clean = byte_checked(data, buffer, starts, ends, clean, limits)
    return Spans(starts, ends, lines, clean)


_QUOTE, _BACKSLASH, _COMMA = 34, 92, 44
#: Whether each byte value opens (+1) or closes (-1) an array or object.
_NESTING = np.zeros(256, dtype=np.int8)
_NESTING[[_LBRACE, _LBRACKET]] = 1
_NESTING[[_RBRACE, _RBRACKET]] = -1


#: Bytes the structure pass looks at: quotes, and brackets and commas.
_EVENT = bytes(byte in b'"{}[],' for byte in range(256))


def _real_quotes(buffer: np.ndarray, quotes: np.ndarray) -> np.ndarray:
    """Whether each quote opens or closes a string (an escaped one does not)."""
    real = np.ones(len(quotes), dtype=bool)
    after_backslash = np.flatnonzero(buffer == _BACKSLASH) + 1
    for at in np.flatnonzero(np.isin(quotes, after_backslash, assume_unique=True)).tolist():
        position, run = int(quotes[at]), 0
        while position - run - 1 >= 0 and buffer[position - run - 1] == _BACKSLASH:
            run += 1
        real[at] = run % 2 == 0
    return real


def structure(data: bytes, buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The brackets and commas outside strings, and the quotes of strings, in order.

    One pass finds the quotes, brackets and commas; a bracket or comma is
    structure when an even number of string quotes comes before it.

    Returns
    -------
    tuple of ndarray, or None
        Where each is, its byte, and whether it is a quote; None when a
        string is left open at the end.
    """
    events = np.flatnonzero(np.frombuffer(data.translate(_EVENT), dtype=bool))
    byte = buffer[events]
    quote = byte == _QUOTE
    if quote.any() and b"\\" in data:  # an escaped quote is no event (rare in logs)
        quote[quote] = _real_quotes(buffer, events[quote])
        keep = quote | (byte != _QUOTE)
        events, byte, quote = events[keep], byte[keep], quote[keep]
    inside = np.bitwise_xor.accumulate(quote)  # a string's opening quote on: inside it
    if len(inside) and inside[-1]:
        return None
    inside &= ~quote  # a closing quote is no longer inside
    if inside.any():
        kept = ~inside
        events, byte, quote = events[kept], byte[kept], quote[kept]
    return events, byte, quote


def array_spans(data: bytes, first_line: int, limits: Limits) -> Spans | None:
    """The elements of a piece that is one top-level array, as spans, found in one pass.

    The bytes are looked at with NumPy, strings set aside: the commas at the
    array's own depth cut it into its elements, each a span with the file
    line it starts on and the checks of :func:`split_piece` (an element is a
    value: ``max_value_bytes`` applies to it). None when the piece is not
    one array that the pass can read with certainty (then it is read as
    written, value by value).
    """
    head = len(data) - len(data.lstrip(WHITESPACE))
    tail = len(data.rstrip(WHITESPACE))
    if head >= tail or data[head] != _LBRACKET or data[tail - 1] != _RBRACKET:
        return None
    buffer = np.frombuffer(data, dtype=np.uint8)
    found = structure(data, buffer)
    if found is None:
        return None
    events, byte, quote = found
    outside, byte = events[~quote], byte[~quote]
    depth = np.cumsum(_NESTING[byte], dtype=np.int64)
    if not len(outside) or outside[0] != head or outside[-1] != tail - 1:
        return None
    if depth[-1] != 0 or (depth[:-1] < 1).any():
        return None  # not one array closed at the end
    commas = outside[(byte == _COMMA) & (depth == 1)]
    starts = np.concatenate(([head + 1], commas + 1)).astype(np.int64)
    ends = np.concatenate((commas, [tail - 1])).astype(np.int64)
    # Each element's white space set aside: its span starts and ends with its value.
    lead = buffer[np.minimum(starts, len(data) - 1)]
    for _ in range(64):
        spaced = (starts < ends) & _IS_SPACE[lead]
        if not spaced.any():
            break
        starts[spaced] += 1
        lead = buffer[np.minimum(starts, len(data) - 1)]
    else:
        return None
    ends = _trimmed(buffer, starts, ends)
    if (ends <= starts).any():
        return None  # an empty element ("[1,,2]") or an empty array
    newlines = _line_ends(buffer)
    lines = np.searchsorted(newlines, starts).astype(np.int64) + first_line
    clean = (buffer[starts] == _LBRACE) & (buffer[ends - 1] == _RBRACE)
    return Spans(starts, ends, lines, byte_checked(data, buffer, starts, ends, clean, limits))
