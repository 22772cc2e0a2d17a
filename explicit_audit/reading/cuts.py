"""Where a file's content may be cut between two values, found in its bytes alone.

- JSON Lines: after a line end;
- ``.json``: before a line that starts at column 0 with ``{`` or ``[`` and
  follows a line whose last character (white space aside) is ``}`` or ``]``.
  Outside a string, ``}`` or ``]`` followed by white space and ``{`` or ``[`` is
  valid JSON only between two top-level values, and a JSON string never holds
  a raw line end: such a cut never falls inside a value of a valid file.

A top-level array larger than a value may be is read element by element
(:func:`unarray`): its elements become values one after another, same bytes
but for white space, so that the same cuts fall between them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "NEWLINE",
    "WHITESPACE",
    "array_head",
    "count_line_ends",
    "cut_after_last_line_end",
    "first_cut",
    "last_cut",
    "unarray",
]

#: The line end's byte.
NEWLINE = 10
#: JSON's white space (RFC 8259), as bytes.
WHITESPACE = b" \t\r\n"


def count_line_ends(data: bytes) -> int:
    """How many line ends ``data`` holds (NumPy's count: faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == NEWLINE))


def cut_after_last_line_end(carry: bytes, chunks: list[bytes]) -> tuple[bytes, bytes] | None:
    """``carry`` and ``chunks`` joined, split after their last line end; None without one.

    The same two parts as joining them all and cutting after the last line
    end, each byte copied once: the chunk that holds the line end goes into
    both parts as views of it. (None where no chunk holds one: the caller
    joins them and decides, as for any piece.)
    """
    for index in range(len(chunks) - 1, -1, -1):
        end = chunks[index].rfind(b"\n") + 1
        if end:
            last = memoryview(chunks[index])
            head = b"".join([carry, *chunks[:index], last[:end]])
            return head, b"".join([last[end:], *chunks[index + 1 :]])
    return None


def last_cut(data: bytes, jsonl: bool, start: int = 0) -> int | None:
    """Where the last whole value of ``data`` ends, or None when none does.

    Only boundaries at ``start`` or after are looked for (the bytes before
    were searched already, and held none).
    """
    if jsonl:
        cut = data.rfind(b"\n") + 1
        return cut or None
    # Each kind of line start is searched for once from where its last one
    # was found: searching both from each candidate anew is quadratic when
    # one of them is rare (``[\n{...},\n{...}`` has one "\n[").
    brace, bracket = data.rfind(b"\n{", start), data.rfind(b"\n[", start)
    while True:
        cut = max(brace, bracket)
        if cut == -1:
            return None
        if _ends_a_value(data, cut):
            return cut + 1
        if cut == brace:
            brace = data.rfind(b"\n{", start, cut)
        else:
            bracket = data.rfind(b"\n[", start, cut)


def first_cut(data: bytes, jsonl: bool) -> int | None:
    """Where the first value boundary of ``data`` is, or None."""
    if jsonl:
        cut = data.find(b"\n") + 1
        return cut or None
    # As in last_cut, each kind of line start is searched for once onwards.
    brace, bracket = data.find(b"\n{"), data.find(b"\n[")
    while True:
        found = [i for i in (brace, bracket) if i != -1]
        if not found:
            return None
        cut = min(found)
        if _ends_a_value(data, cut):
            return cut + 1
        if cut == brace:
            brace = data.find(b"\n{", cut + 1)
        else:
            bracket = data.find(b"\n[", cut + 1)


def array_head(data: bytes) -> int | None:
    """The indent of an array's elements when ``data`` opens one with ``[`` alone on its line.

    None unless the first element starts the next line with ``{``, after an
    indent or whole on its line: written pretty with no indent
    (``json.dumps(indent=0)``), the values nested in an element start lines
    at column 0 too, and where one element ends cannot be told from the lines.
    """
    head = len(data) - len(data.lstrip(WHITESPACE))
    if data[head : head + 1] != b"[":
        return None
    newline = data.find(b"\n", head)
    if newline == -1 or data[head + 1 : newline].strip(WHITESPACE):
        return None
    first = data.find(b"{", newline)
    if first == -1 or data[newline + 1 : first].strip(b" ") or first - newline - 1 > 64:
        return None
    indent = first - newline - 1
    if not indent:  # one element a line, or pretty with no indent: its line ends it
        end = data.find(b"\n", first)
        line = data[first:end].rstrip(WHITESPACE).rstrip(b",") if end != -1 else b""
        if len(line) < 2 or line[-1:] != b"}":
            return None
    return indent


def unarray(data: bytes, indent: int, opening: bool = False) -> tuple[bytes, bool]:
    """``data`` of a top-level array with its elements made values one after another.

    The same bytes but for white space: the array's ``[`` (with
    ``opening``), each comma that ends a line before an element, and the
    ``]`` that closes the array at column 0 become spaces, and each
    element's ``{`` (at column ``indent``) moves to column 0 in place of its
    indent; the lines stay where they are. Applied again to bytes already
    rewritten, it changes nothing. The array ends at its ``]``: what follows
    is read as written.

    Returns
    -------
    bytes, bool
        The bytes rewritten, and whether the array closed in them.
    """
    buffer = bytearray(data)
    if opening:
        buffer[len(data) - len(data.lstrip(WHITESPACE))] = 32
    closing = _closing_bracket(data)
    end = len(data) if closing is None else closing
    for separator in (b",\n", b",\r\n"):
        element = separator + b" " * indent + b"{"
        position = data.find(element, 0, end)
        while position != -1:
            buffer[position] = 32
            brace = position + len(separator) + indent
            if indent:
                buffer[brace - indent] = 123
                buffer[brace] = 32
            position = data.find(element, position + 1, end)
    if closing is not None:
        buffer[closing] = 32
    return bytes(buffer), closing is not None


def _closing_bracket(data: bytes) -> int | None:
    """Where a ``]`` at column 0 after a line ending with ``}`` closes the array, if in ``data``."""
    position = data.find(b"\n]")
    while position != -1:
        if _ends_a_value(data, position):
            return position + 1
        position = data.find(b"\n]", position + 1)
    return None


def _ends_a_value(data: bytes, end: int) -> bool:
    """Whether the last byte before ``end``, white space aside, closes a value."""
    index = end - 1
    while index >= 0 and data[index] in WHITESPACE:
        index -= 1
    return index >= 0 and data[index] in b"}]"
