"""The whole text of a rejected value whose excerpt was cut, read back for a report.

A rejected row keeps an excerpt of its raw text (``excerpt_chars``, 300
characters by default), cut with "…". A report lists that row with the whole
text one click away, read again from the report's private copy of the input
(:mod:`.snapshot`), whose bytes are the very ones the audit was loaded from:

- the line the value starts on, where that line's own excerpt equals the
  row's (a JSON Lines value, or a line that is not JSON);
- else the JSON object or array that opens that line, to its closing
  bracket, where its excerpt equals the row's (a value of a JSON document
  written over several lines).

A value that starts inside a line (the second of ``[{...}, {...}]``) matches
neither: it keeps its excerpt alone and its place (file and line), never
someone else's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._core.records import excerpt
from ..reading.limits import Limits
from ..reading.sources import is_gzip_name
from ..reading.streams import GZIP_MAGIC, gunzip, read_chunks

__all__ = ["WHOLE_TEXT_BYTES", "WholeText", "whole_texts"]

#: Bytes of a value shown at most: a longer line shows its start and says how long it is.
WHOLE_TEXT_BYTES = 1 << 20
_CUT = "…"
#: The bytes that open, close or escape inside a JSON value's brackets.
_JSON_MARKS = re.compile(rb'[\\"{}\[\]]')


@dataclass(frozen=True)
class WholeText:
    """The text a cut excerpt was taken from, as the input holds it.

    Attributes
    ----------
    text : str
        The text (at most :data:`WHOLE_TEXT_BYTES` of it), decoded as UTF-8; a
        byte that is not UTF-8 is written ``\\xNN``.
    size : int
        Its length in bytes (a line's without its line break).
    shown : int
        The bytes of it that ``text`` holds: ``size`` when it holds them all.
    what : str
        ``"line"``, or ``"value"`` for a value written over several lines.
    """

    text: str
    size: int
    shown: int
    what: str = "line"

    @property
    def whole(self) -> bool:
        """Whether ``text`` is the whole of it, not only its start."""
        return self.shown >= self.size


def whole_texts(
    rejected: pd.DataFrame,
    path_of: Callable[[str], Path | None],
    *,
    max_bytes: int = WHOLE_TEXT_BYTES,
) -> dict[int, WholeText]:
    """The whole text of every row of ``rejected`` whose excerpt was cut, by row position.

    Parameters
    ----------
    rejected : DataFrame
        Rejected rows (``Audit.rejected`` or its head): ``source_file``,
        ``source_line``, ``raw``.
    path_of : callable
        ``path_of(source_file)``: where the bytes the audit read are, or None
        where they cannot be read again (a URL, standard input).
    max_bytes : int
        Bytes read from the start of a value's line at most.

    Returns
    -------
    dict
        ``{position in rejected: WholeText}`` for each cut excerpt whose text
        was read back and whose own excerpt equals it; the other rows are left
        out.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"source_file": ["data/x.jsonl"], "source_line": [3],
    ...                      "raw": ["{" + "a" * 298 + "…"]})
    >>> whole_texts(rows, snapshot.path_of)  # doctest: +SKIP
    {0: WholeText(text='{aaaa…', size=1204, shown=1204, what='line')}
    """
    wanted: dict[str, dict[int, list[int]]] = {}
    rows = zip(rejected["source_file"], rejected["source_line"], rejected["raw"], strict=True)
    for position, (name, line, raw) in enumerate(rows):
        if isinstance(raw, str) and raw.endswith(_CUT) and not pd.isna(line) and int(line) > 0:
            wanted.setdefault(str(name), {}).setdefault(int(line), []).append(position)
    found: dict[int, WholeText] = {}
    for name, lines in wanted.items():
        path = path_of(name)
        if path is None:
            continue
        for number, data, size in _windows(path, set(lines), max_bytes):
            for position in lines[number]:
                whole = _text_of(rejected["raw"].iat[position], data, size)
                if whole is not None:
                    found[position] = whole
    return found


def _text_of(raw: str, data: bytes, size: int) -> WholeText | None:
    """What ``raw`` was cut from, of ``data`` (the bytes from the start of its line on,
    whose first ``size`` are the line): the line, the value opening it, or None."""
    line = data[:size]
    if excerpt(line, len(raw)) == raw:
        text = _decoded(line)
        return None if text.strip() == raw else WholeText(text, size, len(line))
    value = _bracketed(data)
    if value is not None and excerpt(value, len(raw)) == raw:
        return WholeText(_decoded(value), len(value), len(value), "value")
    return None


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", errors="backslashreplace")


def _bracketed(data: bytes) -> bytes | None:
    """The JSON object or array that opens ``data`` (after blanks), to its closing
    bracket; None where ``data`` opens with something else or ends before it closes."""
    start = len(data) - len(data.lstrip())
    if start == len(data) or data[start] not in b"{[":
        return None
    depth, in_string, escaped = 0, False, -1
    for mark in _JSON_MARKS.finditer(data, start):
        at, byte = mark.start(), data[mark.start()]
        if in_string:
            if byte == 0x5C and at != escaped:  # a backslash escapes the next byte
                escaped = at + 1
            elif byte == 0x22 and at != escaped:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"{[":
            depth += 1
        elif byte in b"}]":
            depth -= 1
            if depth == 0:
                return data[start : at + 1]
    return None


def _windows(path: Path, numbers: set[int], max_bytes: int) -> Iterator[tuple[int, bytes, int]]:
    """``(number, the first max_bytes from the start of line number on, that line's length)``
    of each line of ``numbers``, as the loader numbers them (decompressed where gzipped)."""
    last = max(numbers)
    # number -> [bytes kept from its start, its line's length, whether that line has ended]
    open_: dict[int, list] = {}
    number, at_start = 1, True
    try:
        with open(path, "rb") as source:
            # Gzip by its name or its first bytes, as the loader reads it.
            gzipped = is_gzip_name(path) or source.read(2) == GZIP_MAGIC
            source.seek(0)
            for chunk in _chunks(source, gzipped=gzipped):
                start = 0
                while start < len(chunk):
                    end = chunk.find(b"\n", start)
                    stop = len(chunk) if end < 0 else end + 1
                    if at_start and number in numbers:
                        open_[number] = [bytearray(), 0, False]
                    for window in open_.values():
                        window[0] += chunk[start:stop][: max_bytes - len(window[0])]
                        if not window[2]:
                            window[1] += (stop if end < 0 else end) - start
                            window[2] = end >= 0
                    for done in [n for n, w in open_.items() if w[2] and len(w[0]) >= max_bytes]:
                        kept, size, _ = open_.pop(done)
                        yield done, bytes(kept), size
                    at_start = end >= 0
                    number += at_start
                    start = stop
                    if number > last and not open_:
                        return
    except OSError:
        pass
    for done, (kept, size, _) in open_.items():
        yield done, bytes(kept), size


def _chunks(source, *, gzipped: bool) -> Iterable[bytes]:
    """The bytes of ``source`` as the loader reads them: decompressed where gzipped."""
    if gzipped:
        return gunzip(source, Limits().max_gzip_ratio, lambda _: None)
    return read_chunks(source, lambda _: None)
