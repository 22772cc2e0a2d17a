"""The written text of one top-level member of each object, found with NumPy.

A kind that keeps a value exactly as written (the plans kind keeps each
``retrieval_plan`` so that hashes are rebuilt from it) takes its bytes from
the buffer the objects were read from: the same pass that finds every
object's top-level members for :mod:`~explicit_audit.reading.wide_keys`
(strings and escaped quotes set aside) gives each member's key and where its
value ends, and the value is the bytes after the key's colon, trimmed of
white space. Nothing is parsed or written again, so the text keeps the
writer's key order, spacing and escapes.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .cuts import WHITESPACE
from .wide_keys import _chunked_members, _words

__all__ = ["member_texts"]

#: JSON's white space, and the colon between a key and its value.
_BEFORE_VALUE = b" \t\r\n:"


def member_texts(
    data: bytes,
    rows: int,
    key: str,
    *,
    object_starts: np.ndarray | None = None,
    threads: int = 1,
) -> pa.Array | None:
    """Per object of ``data``, the written text of its top-level member ``key``.

    Parameters
    ----------
    data : bytes
        ``rows`` JSON objects one after another (white space between them),
        valid UTF-8.
    rows : int
    key : str
        The member's key, as it must be written (an escape in the key, such
        as ``"retrieval\\u005fplan"``, is not recognised).
    object_starts : ndarray of int64, optional
        Where each object starts in ``data``, to find the members in runs
        (see :func:`~explicit_audit.reading.wide_keys._chunked_members`).
    threads : int, default 1

    Returns
    -------
    pyarrow.StringArray or None
        The value's text of each object, in order; None when the bytes
        cannot be read with certainty or an object holds the key written
        that way not exactly once (the caller then reads the values another
        way).

    Examples
    --------
    >>> member_texts(b'{"a": 1, "p": {"y": 2, "x": [1]}}\\n{"p":{}}', 2, "p").to_pylist()
    ['{"y": 2, "x": [1]}', '{}']
    """
    found = _chunked_members(data, rows, object_starts, threads)
    if found is None:
        return None
    _starts, ends, row, _after_comma, key_open, key_close, _separator = found
    name = f'"{key}"'.encode()
    buffer = np.frombuffer(data, dtype=np.uint8)
    hits = np.flatnonzero(key_close - key_open + 1 == len(name))
    # Eight bytes at a time: windows at every eighth byte, and one ending the name.
    windows = sorted({*range(0, max(len(name) - 8, 0), 8), max(len(name) - 8, 0)})
    for offset in windows:
        piece = name[offset : offset + 8]
        wanted = int.from_bytes(piece.ljust(8, b"\0"), "little")
        mask = (1 << (8 * len(piece))) - 1
        words = _words(buffer, key_open[hits] + offset) & np.uint64(mask)
        hits = hits[words == np.uint64(wanted)]
    if len(hits) != rows or (np.bincount(row[hits], minlength=rows) != 1).any():
        return None
    if _escaped_twin(data, buffer, key_open, key_close, key):
        return None
    order = np.argsort(row[hits], kind="stable")
    after_key, member_ends = key_close[hits][order] + 1, ends[hits][order]
    value_starts = _past(buffer, after_key, member_ends, _BEFORE_VALUE, 1)
    value_ends = _past(buffer, member_ends - 1, value_starts, WHITESPACE, -1) + 1
    return _slices(data, value_starts, value_ends)


def _escaped_twin(
    data: bytes, buffer: np.ndarray, key_open: np.ndarray, key_close: np.ndarray, key: str
) -> bool:
    """Whether a member's key, written with an escape, reads as ``key`` all the same.

    JSON keeps the last of two equal keys: ``"retrieval\\u005fplan"`` after
    ``"retrieval_plan"`` is the plan a reader reads, and the bytes found
    would be the wrong ones.
    """
    if b"\\" not in data:
        return False
    backslashes = np.flatnonzero(buffer == ord("\\"))
    inside = np.searchsorted(backslashes, key_close) - np.searchsorted(backslashes, key_open)
    for member in np.flatnonzero(inside).tolist():
        written = data[int(key_open[member]) : int(key_close[member]) + 1]
        try:
            if json.loads(written) == key:
                return True
        except ValueError:  # not a key that reads at all: not certain
            return True
    return False


#: Steps taken for every position at once; a position still on white space after
#: them is looked at on its own, so that a long run costs its length, not steps.
_STEPS = 16


def _past(
    buffer: np.ndarray, positions: np.ndarray, bounds: np.ndarray, skipped: bytes, step: int
) -> np.ndarray:
    """From each position, stepping by ``step``, the first byte not in ``skipped``.

    A step per byte skipped, over the positions still on one (a colon and a
    space after a key, an indent before a closing brace); past
    :data:`_STEPS`, each remaining position is found in one pass over its
    bytes up to its bound, where a value is known to start or end.
    """
    positions = positions.copy()
    table = np.zeros(256, dtype=bool)
    table[list(skipped)] = True
    moving = np.arange(len(positions))
    for _ in range(_STEPS):
        moving = moving[table[buffer[positions[moving]]]]
        if not len(moving):
            return positions
        positions[moving] += step
    for index in moving.tolist():
        at, bound = int(positions[index]), int(bounds[index])
        if step > 0:
            positions[index] = at + int(np.argmin(table[buffer[at:bound]]))
        else:
            positions[index] = bound + int(np.flatnonzero(~table[buffer[bound : at + 1]])[-1])
    return positions


def _slices(data: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """``data[starts[i]:ends[i]]`` for each ``i`` (ordered, apart), as Arrow strings.

    The slices and the gaps between them make one binary array over ``data``
    without a copy; taking every other element gathers the slices in one
    Arrow call.
    """
    if not len(starts):
        return pa.array([], type=pa.string())
    bounds = np.empty(2 * len(starts), dtype=np.int64)
    bounds[0::2], bounds[1::2] = starts, ends
    bounds -= bounds[0]
    small = bounds[-1] < 2**31
    whole = (pa.BinaryArray if small else pa.LargeBinaryArray).from_buffers(
        pa.binary() if small else pa.large_binary(),
        len(bounds) - 1,
        [
            None,
            pa.py_buffer(bounds.astype(np.int32 if small else np.int64)),
            pa.py_buffer(data).slice(int(starts[0])),
        ],
    )
    # The system allocator hands the gathered copy's memory back once it is let go.
    taken = pc.take(
        whole,
        pa.array(np.arange(0, len(bounds) - 1, 2, dtype=np.int64)),
        memory_pool=pa.system_memory_pool(),
    )
    return taken.cast(pa.string() if small else pa.large_string()).cast(pa.string())
