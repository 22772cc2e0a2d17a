"""A clean span's byte checks: what the columnar path must not be given, found in bulk.

The columnar path (pyarrow) takes a span only when cheap checks over its
bytes pass, each done with NumPy over the whole piece:

- not larger than ``max_value_bytes``;
- not more opening brackets than ``max_depth`` if it is long (the exact path
  measures the real depth);
- no ``NaN`` or ``Infinity`` anywhere in it, which pyarrow would take but the
  exact path judges;
- no run of more digits than Python turns into an integer;
- no byte that is not UTF-8, which pyarrow's parser would keep in a string or
  a key unchecked (a piece that is valid UTF-8 as a whole is checked in one
  pass).

(pyarrow itself refuses what else strict JSON refuses: an escaped lone
surrogate, a raw line end or control character in a string, a trailing
comma.) A span that fails one is read by the exact path.
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa

from .limits import Limits

__all__ = ["byte_checked", "digit_runs", "flag_holders"]

_LBRACE, _LBRACKET = 123, 91
#: Spans longer than this have their opening brackets counted (see _too_many_brackets).
_COUNTED_SPAN = 4096
#: No record kind's columnar path takes a value nested deeper than this.
_COLUMNAR_DEPTH = 16
#: Counted spans that are at least 1/4 of a piece have its brackets found in one pass
#: (fewer, and counting each on its own reads fewer bytes) ...
_COUNTED_SHARE = 4
#: ... where at most 1 byte in 8 is a bracket: their 8-byte positions then take no
#: more memory than the piece.
_BRACKET_SHARE = 8


def _doubtful(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Spans holding ``NaN`` or ``Infinity``, in a string or not.

    pyarrow reads both literals, which are not JSON; the exact path refuses
    them, and keeps them as written inside a string.
    """
    flagged = np.zeros(len(starts), dtype=bool)
    candidates = np.flatnonzero((buffer == 78) | (buffer == 73))  # "N", "I"
    if not len(candidates):
        return flagged
    first = buffer[candidates]
    hits = [_spelling(buffer, candidates[first == word[0]], word) for word in (b"NaN", b"Infinity")]
    flag_holders(flagged, starts, ends, np.concatenate(hits))
    return flagged


def _too_many_digits(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Spans holding a run of more digits than Python turns into an integer (4,300).

    Such a number is rejected by the exact path (a digit run in a string is
    read there as written); sent there at once, it does not make the columnar
    path refuse, and split, the group it would fall in.
    """
    flagged = np.zeros(len(starts), dtype=bool)
    limit = sys.get_int_max_str_digits()
    if len(buffer) <= limit or not _may_hold_run(buffer, limit):
        return flagged
    runs_start, runs_end = digit_runs(buffer)
    flag_holders(flagged, starts, ends, runs_start[(runs_end - runs_start) > limit])
    return flagged


def digit_runs(buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each run of ASCII digits in ``buffer`` starts, and where it ends."""
    digit = (buffer - np.uint8(48)) < 10
    edges = np.flatnonzero(digit[1:] != digit[:-1]) + 1
    if len(digit) and digit[0]:
        edges = np.concatenate(([0], edges))
    if len(digit) and digit[-1]:
        edges = np.concatenate((edges, [len(digit)]))
    return edges[::2], edges[1::2]


def flag_holders(
    flagged: np.ndarray, starts: np.ndarray, ends: np.ndarray, positions: np.ndarray
) -> None:
    """Flag each span (``starts``, ``ends`` in order) that holds one of ``positions``."""
    if len(positions):
        owner = np.searchsorted(starts, positions, side="right") - 1
        inside = (owner >= 0) & (positions < ends[np.maximum(owner, 0)])
        flagged[owner[inside]] = True


def _may_hold_run(buffer: np.ndarray, limit: int) -> bool:
    """Whether the buffer may hold a run of more than ``limit`` digits, looking at few bytes.

    Such a run covers at least ``2 * step + 1`` bytes (``step = limit // 2``),
    so two consecutive multiples of ``step`` and every byte between them: only
    where two such sampled bytes are digits is the stretch between them read.
    """
    step = max(limit // 2, 1)
    sampled = (buffer[::step] - np.uint8(48)) < 10
    for index in np.flatnonzero(sampled[:-1] & sampled[1:]).tolist():
        stretch = buffer[index * step : (index + 1) * step + 1]
        if bool(((stretch - np.uint8(48)) < 10).all()):
            return True
    return False


def _spelling(buffer: np.ndarray, positions: np.ndarray, word: bytes) -> np.ndarray:
    """The positions, of those given (where ``word[0]`` is), at which ``word`` is written.

    Each next byte is compared at the positions still left: few are after two.
    """
    positions = positions[positions + len(word) <= len(buffer)]
    for offset in range(1, len(word)):
        positions = positions[buffer[positions + offset] == word[offset]]
    return positions


def _too_many_brackets(
    data: bytes, buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, limits: Limits
) -> np.ndarray:
    """Spans with more opening brackets than ``max_depth``: maybe too deep.

    Only spans longer than :data:`_COUNTED_SPAN` bytes are counted: a shorter
    one cannot nest deeply enough to trouble a parser, and a record kind's
    columnar path takes no value nested more than a few levels (deeper
    logger values are refused and read exactly, where the real depth is
    measured against ``max_depth``). Where the counted spans are most of the
    piece and its brackets few (:data:`_BRACKET_SHARE`), every bracket of
    the piece is found in one pass and each span's are counted between two
    of their positions; otherwise each span is counted on its own. Both
    give each span's number of ``{`` and ``[`` bytes.
    """
    flagged = np.zeros(len(starts), dtype=bool)
    # Under a limit below what a columnar value may nest, every span is counted.
    counted = _COUNTED_SPAN if limits.max_depth >= _COLUMNAR_DEPTH else limits.max_depth
    long = np.flatnonzero(ends - starts > counted)
    if not len(long):
        return flagged
    long_starts, long_ends = starts[long], ends[long]
    openings = None
    if int((long_ends - long_starts).sum()) * _COUNTED_SHARE >= len(buffer):
        opening = buffer == _LBRACE
        opening |= buffer == _LBRACKET
        if int(np.count_nonzero(opening)) * _BRACKET_SHARE <= len(buffer):
            positions = np.flatnonzero(opening)
            openings = np.searchsorted(positions, long_ends) - np.searchsorted(
                positions, long_starts
            )
    if openings is None:
        openings = np.fromiter(
            (
                data.count(b"{", start, end) + data.count(b"[", start, end)
                for start, end in zip(long_starts.tolist(), long_ends.tolist(), strict=True)
            ),
            dtype=np.int64,
            count=len(long),
        )
    flagged[long] = openings > limits.max_depth
    return flagged


def _valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (Arrow's validator, over the bytes without a copy)."""
    bounds = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    whole = pa.Array.from_buffers(pa.large_binary(), 1, [None, bounds, pa.py_buffer(data)])
    try:
        whole.cast(pa.large_string())
    except pa.ArrowInvalid:
        return False
    return True


def _valid_utf8_spans(
    data: bytes, starts: np.ndarray, ends: np.ndarray, asked: np.ndarray
) -> np.ndarray:
    """Whether each span is valid UTF-8; only those ``asked`` are looked at (True elsewhere).

    Called for a piece that is not valid UTF-8 as a whole (a log with a line
    in Latin-1, say), so that the spans holding a byte that is not go to the
    exact path, which rejects them, and the rest stay clean.
    """
    valid = np.ones(len(starts), dtype=bool)
    view = memoryview(data)
    for index in np.flatnonzero(asked).tolist():
        try:
            str(view[int(starts[index]) : int(ends[index])], "utf-8")
        except UnicodeDecodeError:
            valid[index] = False
    return valid


def byte_checked(
    data: bytes,
    buffer: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    clean: np.ndarray,
    limits: Limits,
) -> np.ndarray:
    """``clean`` with the spans that fail a clean span's byte checks taken out (module docstring).

    UTF-8 is checked over the whole piece at once; only in a piece that is
    not valid UTF-8 are the spans still clean checked one by one.
    """
    clean = clean & ((ends - starts) <= limits.max_value_bytes)
    clean &= ~_too_many_brackets(data, buffer, starts, ends, limits)
    clean &= ~_doubtful(buffer, starts, ends)
    clean &= ~_too_many_digits(buffer, starts, ends)
    if clean.any() and not _valid_utf8(data):
        clean &= _valid_utf8_spans(data, starts, ends, clean)
    return clean
