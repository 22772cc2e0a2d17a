"""Top-level keys past ``max_extra_columns``, set apart from objects' bytes before a bulk parse.

Lines that each hold a logger key of their own (``"k17": 17``) would make
Arrow's table one column per key: N lines, N columns of N rows. Instead, the
columnar path finds every object's top-level members with NumPy (strings set
aside, the commas at depth 1 cut the members), keeps the members whose key
is declared or already a column while the columns last, and turns every
other member, with a comma next to it, into white space. Arrow parses what
is left; the members set apart are parsed per row, with orjson, as the one
object they make, and go beside the part's extra columns as
:data:`~explicit_audit._core.columns.OVERFLOW` (a dict of the row's keys
holding a value, or None), exactly what the values read one by one give, so
that the limit on extra columns places them alike whichever path read them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import orjson

from .._core.lists import range_positions
from .._core.overlap import each
from .columnar import Refused
from .repeated_keys import repeated_key
from .spans import _NESTING, structure

__all__ = ["SetApart", "set_apart"]

_LBRACE, _RBRACE, _LBRACKET, _RBRACKET, _COMMA, _SPACE = 123, 125, 91, 93, 44, 32
#: Each digit as ``1``, any other byte as ``0``: a run of 19 digits is then a plain search.
_DIGITS = bytes(49 if 48 <= byte <= 57 else 48 for byte in range(256))
#: Bytes of objects :func:`_members` looks at in one pass: its arrays of a few
#: million events stay in the processor's cache, and the passes share the threads.
_CHUNK_BYTES = 1 << 21
#: Members :func:`_like_first_object` compares in one run.
_CHUNK_MEMBERS = 1 << 16


@dataclass(frozen=True, slots=True)
class SetApart:
    """Objects' bytes with some top-level members made white space, and those members.

    Attributes
    ----------
    data : bytes
        The bytes, same length and same lines, without the members set apart.
    overflow : list of (dict or None), or None
        Per object, in order: its members set apart that hold a value (not
        null), parsed, or None when it has none; None when ``keep`` took
        every key (nothing set apart).
    taken : list of str
        The keys ``keep`` took, in the order it was asked about them.
    """

    data: bytes
    overflow: list[dict | None] | None
    taken: list[str]


def _members(data: bytes, buffer: np.ndarray, rows: int):
    """Per top-level member: its object, where it starts and ends, where its key is.

    One pass finds the quotes, brackets and commas; a bracket or comma is
    structure when an even number of string quotes comes before it. None
    when the bytes are not ``rows`` objects one after another that the pass
    can read with certainty.
    """
    found = structure(data, buffer)
    if found is None:
        return None
    events, byte, quote = found  # structure (outside strings) and the string quotes, in order
    depth = np.cumsum(_NESTING[byte], dtype=np.int32)  # a quote is no step
    if not len(depth) or (depth < 0).any() or depth[-1] != 0 or (quote & (depth == 0)).any():
        return None  # not objects closed at the end, or a string outside them
    opens = (byte == _LBRACE) & (depth == 1)
    closes = (byte == _RBRACE) & (depth == 0)
    # Every top-level value must be an object, one per row.
    if not int(opens.sum()) == int(closes.sum()) == int(((depth == 0) & ~quote).sum()) == rows:
        return None
    separators = np.flatnonzero(opens | closes | ((byte == _COMMA) & (depth == 1)))
    what = byte[separators]
    begins = separators[what != _RBRACE]  # an opening brace or a comma: a member follows
    after_comma = byte[begins] == _COMMA
    row = np.cumsum(what == _LBRACE)[what != _RBRACE] - 1
    # A member's key is the string right after its separator; "{}" has no member.
    following = np.minimum(begins + 1, len(events) - 1)
    has_key = quote[following] & (begins + 1 < len(events))
    if not (has_key | ~after_comma).all() or (byte[following][~has_key] != _RBRACE).any():
        return None
    begins, after_comma, row = begins[has_key], after_comma[has_key], row[has_key]
    ends = events[separators[np.searchsorted(separators, begins) + 1]]
    key_open, key_close = events[begins + 1], events[begins + 2]
    return events[begins] + 1, ends, row, after_comma, key_open, key_close, events[begins]


def _words(buffer: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The 8 bytes from each position as one little-endian word, zero past the end."""
    if len(buffer) < 8:
        buffer = np.concatenate((buffer, np.zeros(8 - len(buffer), dtype=np.uint8)))
    last = len(buffer) - 8
    clamped = np.minimum(positions, last)
    words = np.lib.stride_tricks.sliding_window_view(buffer, 8)[clamped]
    words = np.ascontiguousarray(words).view("<u8").ravel()
    # Read from before the position near the end: the bytes wanted are the higher ones.
    return words >> ((positions - clamped).astype(np.uint64) * np.uint64(8))


def _like_first_object(
    buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: np.ndarray, threads: int = 1
) -> np.ndarray:
    """Per member, the member of the first object at its place whose key is the same, or -1.

    Objects of a log mostly hold the keys of the first one in its order: those
    keys are compared with NumPy, eight bytes at a time (runs of members in
    ``threads``), and only the others are read one by one.
    """
    lengths = ends - starts
    ordinal = np.arange(len(starts)) - first
    template = int(np.count_nonzero(first == 0))
    if not template:
        return np.full(len(starts), -1, dtype=np.int64)
    place = np.minimum(ordinal, template - 1)
    same = (ordinal < template) & (lengths == lengths[place])
    longest = int(lengths[:template].max())

    # The first object's keys, word by word: read once, not once per member like them.
    template_words = [_words(buffer, starts[:template] + offset) for offset in range(0, longest, 8)]

    def compare(bounds: tuple[int, int]) -> None:
        at = np.flatnonzero(same[bounds[0] : bounds[1]]) + bounds[0]
        for step, offset in enumerate(range(0, longest, 8)):
            at = at[lengths[at] > offset]
            if not len(at):
                return
            left = lengths[at] - offset  # bytes of the key from here on, at least 1
            mask = np.full(len(at), np.uint64(0xFFFFFFFFFFFFFFFF))
            short = left < 8
            bits = left[short].astype(np.uint64) * np.uint64(8)
            mask[short] = (np.uint64(1) << bits) - np.uint64(1)
            differ = _words(buffer, starts[at] + offset) ^ template_words[step][place[at]]
            unlike = (differ & mask) != 0
            same[at[unlike]] = False  # each run writes its own members only
            at = at[~unlike]

    size = len(starts)
    runs = [(start, min(start + _CHUNK_MEMBERS, size)) for start in range(0, size, _CHUNK_MEMBERS)]
    each(compare, runs or [(0, 0)], threads)  # each run of members in a thread
    return np.where(same, place, -1)


def _name(key: bytes) -> str | None:
    if b"\\" not in key:
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        name = orjson.loads(b'"' + key + b'"')
    except orjson.JSONDecodeError:
        return None  # a lone surrogate: the exact path judges it
    return name


def _chunked_members(data: bytes, rows: int, object_starts: np.ndarray | None, threads: int):
    """:func:`_members` of ``data``, computed over runs of whole objects and joined.

    ``object_starts`` are where the objects start in ``data`` (the spans the
    caller found); the runs are cut there only, each run must hold its own
    objects, and the members found are the ones one pass over ``data``
    finds. Without them, or when a run cannot be read with certainty, the
    bytes are read in one pass.
    """
    buffer = np.frombuffer(data, dtype=np.uint8)
    if object_starts is None or len(object_starts) != rows or len(data) <= 2 * _CHUNK_BYTES:
        return _members(data, buffer, rows)
    cuts = np.searchsorted(object_starts, np.arange(_CHUNK_BYTES, len(data), _CHUNK_BYTES))
    cuts = np.unique(np.concatenate(([0], cuts[(cuts > 0) & (cuts < rows)], [rows])))
    offsets = [int(object_starts[i]) if i < rows else len(data) for i in cuts.tolist()]
    offsets[0] = 0

    def run(index: int):
        start, stop = offsets[index], offsets[index + 1]
        return _members(data[start:stop], buffer[start:stop], int(cuts[index + 1] - cuts[index]))

    found = each(run, list(range(len(offsets) - 1)), threads)
    if any(part is None for part in found):
        return _members(data, buffer, rows)
    # Per field of _members: the row (2) moves by the run's first row, the flag (3)
    # stays, every other field is a byte offset and moves by the run's first byte.
    joined = []
    for field in range(7):
        pieces = []
        for index, part in enumerate(found):
            shift = int(cuts[index]) if field == 2 else offsets[index]
            pieces.append(part[field] + shift if field != 3 else part[field])
        joined.append(np.concatenate(pieces))
    return tuple(joined)


def set_apart(
    data: bytes,
    rows: int,
    keep: Callable[[list[str], list[bool]], list[bool] | None],
    *,
    object_starts: np.ndarray | None = None,
    threads: int = 1,
) -> SetApart | Refused | None:
    """Set apart the top-level members whose key ``keep`` refuses.

    Parameters
    ----------
    data : bytes
        ``rows`` JSON objects one after another (white space between them),
        each a clean span.
    rows : int
    keep : callable
        ``keep(keys, first) -> verdicts``, asked once, with every distinct key
        in the order the keys first appear and, per key, whether the first
        object holds it: whether each key stays in the bytes (a column); or
        None, which refuses the rows.
    object_starts : ndarray of int64, optional
        Where each of the ``rows`` objects starts in ``data``: the objects are
        then looked at in runs (see :func:`_chunked_members`).
    threads : int, default 1
        Threads the runs are looked at in.

    Returns
    -------
    SetApart, Refused or None
        :attr:`Refused.NOT_CLEAN <.columnar.Refused>` where ``keep`` refused
        the rows, or an object repeats a key among its members set apart (or
        writes one name two ways): the group is then halved and the object
        that repeats it rejected by the exact path. None when the members
        cannot be found with certainty, or a member set apart cannot be
        parsed as the exact path would parse it (an integer beyond 64 bits, a
        lone surrogate): the caller then reads the rows as before.
    """
    buffer = np.frombuffer(data, dtype=np.uint8)
    found = _chunked_members(data, rows, object_starts, threads)
    if found is None:
        return None
    starts, ends, row, after_comma, key_open, key_close, before = found
    # Each member's object's first member (the rows are in order).
    run_starts = np.concatenate(([0], np.flatnonzero(row[1:] != row[:-1]) + 1))
    first = np.repeat(run_starts, np.diff(np.append(run_starts, len(row))))
    like_first = _like_first_object(buffer, key_open + 1, key_close, first, threads)
    other = np.flatnonzero(like_first < 0)
    template = int(np.count_nonzero(row == row[0])) if len(row) else 0
    asked = np.concatenate((np.arange(template), other))
    keys = _keys(buffer, key_open[asked] + 1, key_close[asked])
    if keys is None:
        return None
    distinct = list(dict.fromkeys(keys))  # in order of first appearance
    names = _names(distinct) if distinct else []
    if names is None:
        return None
    if len(set(names)) < len(names):
        return Refused.NOT_CLEAN  # a name written two ways (``"a"``, ``"\\u0061"``)
    in_first = set(keys[:template])
    verdicts = keep(names, [key in in_first for key in distinct])
    if verdicts is None:
        return Refused.NOT_CLEAN
    taken = [name for name, verdict in zip(names, verdicts, strict=True) if verdict]
    decided = np.fromiter(
        map(dict(zip(distinct, verdicts, strict=True)).__getitem__, keys),
        dtype=bool,
        count=len(keys),
    )
    kept = np.empty(len(row), dtype=bool)
    same = like_first >= 0
    kept[same] = decided[like_first[same]]
    kept[other] = decided[template:]
    if kept.all():
        return SetApart(data, None, taken)
    # A comma before a member stays when the member stays and one before it in its object does.
    held = np.concatenate(([0], np.cumsum(kept)))
    kept_before = held[np.arange(len(row))] - held[first]
    blank_comma = after_comma & ~(kept & (kept_before > 0))
    blank_starts = np.concatenate((starts[~kept], before[blank_comma]))
    blank_ends = np.concatenate((ends[~kept], before[blank_comma] + 1))
    blank, _ = range_positions(blank_starts, blank_ends - blank_starts)
    blanked = buffer.copy()
    # Line ends stay: a line's members never hold one in JSON Lines, and lines keep their count.
    blanked[blank[buffer[blank] != 10]] = _SPACE
    out = (~kept).nonzero()[0]
    # Every member set apart as an object of its own, the objects as one array: one parse.
    text = b"[{" + _joined(buffer, starts[out], ends[out]) + b"}]"
    if b"1" * 19 in text.translate(_DIGITS):
        return None  # an integer orjson would read as a float (beyond 64 bits): read exactly
    try:
        values = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if _repeats_a_key(text, values, row[out]):
        return Refused.NOT_CLEAN  # halved: the exact path rejects the object that repeats it
    return SetApart(blanked.tobytes(), _per_row(values, row[out], rows, b"null" in text), taken)


def _repeats_a_key(text: bytes, values: list[dict], rows_of: np.ndarray) -> bool:
    """Whether the members set apart repeat a key: one row's, or within one's value."""
    if repeated_key(text, values) is not None:
        return True
    if len(rows_of) < 2 or (rows_of[1:] != rows_of[:-1]).all():
        return False
    pairs = [(row, next(iter(value))) for row, value in zip(rows_of.tolist(), values, strict=True)]
    return len(set(pairs)) < len(pairs)


def _per_row(values: list[dict], rows_of: np.ndarray, rows: int, nulls: bool) -> list[dict | None]:
    """Per row, its members' objects as one (later keys win, as in one object), nulls left out."""
    if not nulls and (len(rows_of) < 2 or (rows_of[1:] != rows_of[:-1]).all()):
        # A member per row, none null: each object is the row's as parsed.
        held = np.empty(len(values), dtype=object)
        held[:] = values
        overflow = np.full(rows, None, dtype=object)
        overflow[rows_of] = held
        return overflow.tolist()
    merged: list[dict | None] = [None] * rows
    for index, value in zip(rows_of.tolist(), values, strict=True):
        row = merged[index]
        if row is None:
            merged[index] = value
        else:
            row.update(value)
    return [
        ({key: item for key, item in row.items() if item is not None} or None)
        if row is not None
        else None
        for row in merged
    ]


def _joined(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, separator=b"},{") -> bytes:
    """The bytes of each range, ``separator`` between them: ``separator.join`` in one gather."""
    if not len(starts):
        return b""
    lengths = ends - starts
    step = len(separator)
    at = np.cumsum(lengths + step) - lengths - step  # where each range goes
    source, offsets = range_positions(starts, lengths)
    out = np.empty(int(lengths.sum()) + step * (len(starts) - 1), dtype=np.uint8)
    out[np.repeat(at, lengths) + offsets] = buffer[source]
    for index, byte in enumerate(separator):
        out[at[1:] - step + index] = byte
    return out.tobytes()


def _keys(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[bytes] | None:
    """Each key's bytes as written (between its quotes); None if a key holds a raw line end.

    A raw line end is no JSON in a string: such bytes are the exact path's to judge.
    """
    if not len(starts):
        return []
    keys = _joined(buffer, starts, ends, b"\n").split(b"\n")
    return keys if len(keys) == len(starts) else None


def _names(keys: list[bytes]) -> list[str] | None:
    """Each key as its JSON string reads; None when one does not read (a lone surrogate)."""
    joined = b"\n".join(keys)
    if b"\\" not in joined:
        try:
            return joined.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            return None
    names = [_name(key) for key in keys]
    return None if None in names else names
