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
byte checks: not larger than ``max_value_bytes``, not more opening brackets
than ``max_depth`` (the exact path measures the real depth), and no ``NaN``,
``Infinity`` or escaped surrogate (``\\uD800``) anywhere in it, which the
columnar parser would take but the exact path judges. The columnar path then
verifies that each clean span is exactly one object of the expected shape;
everything else is read by :mod:`explicit_audit._core.exact`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .limits import Limits

__all__ = ["Spans", "split_piece"]

_LBRACE, _RBRACE, _LBRACKET, _RBRACKET, _NEWLINE = 123, 125, 91, 93, 10
_WHITESPACE = b" \t\r\n"
_DOUBTFUL = re.compile(rb"NaN|Infinity|\\u[dD][89abAB]")


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


def _line_ends(buffer: np.ndarray) -> np.ndarray:
    return np.flatnonzero(buffer == _NEWLINE)


def _last_byte_is(data: bytes, buffer: np.ndarray, ends: np.ndarray, wanted: int) -> np.ndarray:
    """Whether each span's last byte, trailing white space aside, is ``wanted``."""
    if not len(ends):
        return np.zeros(0, dtype=bool)
    last = buffer[np.maximum(ends - 1, 0)]
    result = last == wanted
    # A span ending in white space (a CR, spaces) is looked at one by one: rare.
    for index in np.flatnonzero(np.isin(last, (9, 10, 13, 32))):
        stripped = data[: ends[index]].rstrip(_WHITESPACE)
        result[index] = stripped[-1:] == bytes([wanted])
    return result


def _ends_value(data: bytes, buffer: np.ndarray, ends: np.ndarray) -> np.ndarray:
    return _last_byte_is(data, buffer, ends, _RBRACE) | _last_byte_is(data, buffer, ends, _RBRACKET)


def _doubtful(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Spans holding NaN, Infinity or an escaped surrogate, in a string or not."""
    flagged = np.zeros(len(starts), dtype=bool)
    if b"NaN" not in data and b"Infinity" not in data and b"\\u" not in data:
        return flagged
    positions = np.fromiter((m.start() for m in _DOUBTFUL.finditer(data)), dtype=np.int64)
    if len(positions):
        owner = np.searchsorted(starts, positions, side="right") - 1
        inside = (owner >= 0) & (positions < ends[np.maximum(owner, 0)])
        flagged[owner[inside]] = True
    return flagged


def _too_many_brackets(buffer: np.ndarray, starts: np.ndarray, limits: Limits) -> np.ndarray:
    """Spans with more opening brackets than ``max_depth``: maybe too deep."""
    if len(buffer) <= limits.max_depth or not len(starts):
        return np.zeros(len(starts), dtype=bool)
    opening = (buffer == _LBRACE) | (buffer == _LBRACKET)
    counts = np.add.reduceat(opening, starts, dtype=np.int64) if len(buffer) else opening
    return counts > limits.max_depth


def split_piece(data: bytes, first_line: int, jsonl: bool, limits: Limits) -> Spans:
    """The spans of a piece of a file (see the module docstring).

    Parameters
    ----------
    data : bytes
        Whole values of one file (a :class:`~explicit_audit._core.content.Piece`).
    first_line : int
        The file line ``data`` starts on.
    jsonl : bool
        JSON Lines (a span per line) or ``.json`` (a span per column-0 value start).
    limits : Limits

    Returns
    -------
    Spans
    """
    buffer = np.frombuffer(data, dtype=np.uint8)
    newlines = _line_ends(buffer)
    if jsonl:
        starts = np.concatenate(([0], newlines + 1)).astype(np.int64)
        ends = np.concatenate((newlines, [len(data)])).astype(np.int64)
        lines = np.arange(len(starts), dtype=np.int64) + first_line
        keep = ends > starts
        if keep.any():
            # A line starting with white space is blank or not, looked at one by one.
            first = buffer[np.minimum(starts, max(len(data) - 1, 0))]
            for index in np.flatnonzero(keep & np.isin(first, (9, 13, 32))):
                keep[index] = bool(data[starts[index] : ends[index]].strip(_WHITESPACE))
        starts, ends, lines = starts[keep], ends[keep], lines[keep]
        opens = buffer[starts] == _LBRACE if len(starts) else np.zeros(0, dtype=bool)
        clean = opens & _last_byte_is(data, buffer, ends, _RBRACE)
    else:
        begins = newlines[newlines + 1 < len(data)] + 1
        begins = begins[np.isin(buffer[begins], (_LBRACE, _LBRACKET))]
        head = len(data) - len(data.lstrip(_WHITESPACE))
        starts = begins if len(begins) and begins[0] == head else np.concatenate(([head], begins))
        starts = starts.astype(np.int64)
        if head >= len(data):
            starts = np.zeros(0, dtype=np.int64)
        ends = np.concatenate((starts[1:], [len(data)])).astype(np.int64)
        lines = np.searchsorted(newlines, starts).astype(np.int64) + first_line
        opens = buffer[starts] == _LBRACE if len(starts) else np.zeros(0, dtype=bool)
        ended = _ends_value(data, buffer, ends)
        after_a_value = np.concatenate(([True], ended[:-1])) if len(ended) else ended
        clean = opens & _last_byte_is(data, buffer, ends, _RBRACE) & after_a_value
    if len(starts):
        clean &= (ends - starts) <= limits.max_value_bytes
        clean &= ~_too_many_brackets(buffer, starts, limits)
        clean &= ~_doubtful(data, starts, ends)
    return Spans(starts, ends, lines, clean)
