"""JSON text written column by column with Arrow, as ``json.dumps`` writes it.

A string needs escapes only for a quote, a backslash or a control character
(and, with ``ensure_ascii``, for anything outside printable ASCII): every
other string is its text between quotes, joined in one Arrow call. The few
that need escapes are written by the standard library's own encoder, the one
``json.dumps`` calls, so each literal is byte for byte what ``json.dumps``
writes for that string.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "join_texts",
    "quoted_lists",
    "quoted_repeated",
    "quoted_strings",
    "value_text",
]

_escape_ascii = json.encoder.encode_basestring_ascii
_escape = json.encoder.encode_basestring
#: What ``json.dumps`` escapes with ``ensure_ascii=False``, and in printable ASCII with it.
_NEEDS_ESCAPE = r'["\\\x00-\x1f]'
_NEEDS_ESCAPE_ASCII = r'["\\\x00-\x1f\x7f]'


def value_text(value) -> str:
    """A value parsed from a file as compact JSON text that reads back as the same value.

    Written as ``json.dumps`` writes it, non-ASCII kept, except where the value
    holds a lone surrogate (parsed from a ``\\udXXX`` escape), which is not
    UTF-8: the whole text is then escaped. Integers beyond 64 bits, ``NaN``
    (which Python's ``json`` reads) and key order stay as they were read.

    Raises
    ------
    RecursionError
        For a value nested too deeply for the encoder.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, separators=(",", ":"))
    return text


def join_texts(*pieces, separator="") -> pa.Array:
    """Row by row, the pieces' texts one after another (a piece may be one ``str``).

    ``separator`` is a scalar of the pieces' type where they are large strings.
    """
    return pc.binary_join_element_wise(*pieces, separator)


def quoted_repeated(strings, *, ensure_ascii: bool = False) -> pa.Array:
    """:func:`quoted_strings` of strings that repeat (engines, languages, shard ids).

    Each distinct string is quoted once, and the rows take its literal.
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    encoded = pc.dictionary_encode(strings)
    return pc.take(quoted_strings(encoded.dictionary, ensure_ascii=ensure_ascii), encoded.indices)


def quoted_strings(strings, *, ensure_ascii: bool = False) -> pa.Array:
    """Each string as the JSON literal ``json.dumps(s, ensure_ascii=...)`` writes.

    Parameters
    ----------
    strings : pyarrow.Array or ChunkedArray of string, no nulls
    ensure_ascii : bool, default False
        Escape every character outside printable ASCII (``\\uXXXX``, astral
        characters as surrogate pairs), as ``json.dumps`` does by default.

    Examples
    --------
    >>> import pyarrow as pa
    >>> quoted_strings(pa.array(["a", 'say "hi"', "서울"]), ensure_ascii=True).to_pylist()
    ['"a"', '"say \\\\"hi\\\\""', '"\\\\uc11c\\\\uc6b8"']
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    needs = pc.match_substring_regex(
        strings, _NEEDS_ESCAPE_ASCII if ensure_ascii else _NEEDS_ESCAPE
    )
    if ensure_ascii:
        needs = pc.or_(needs, pc.invert(pc.string_is_ascii(strings)))
    plain = join_texts('"', strings, '"')
    if not pc.any(needs, min_count=0).as_py():
        return plain
    escape = _escape_ascii if ensure_ascii else _escape
    escaped = [escape(text) for text in pc.filter(strings, needs).to_pylist()]
    return pc.replace_with_mask(plain, needs, pa.array(escaped, type=pa.string()))


def quoted_lists(lists, *, ensure_ascii: bool = False) -> pa.Array:
    """Each list of strings (no nulls) as the JSON array ``json.dumps`` writes, ``["a","b"]``."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    items = quoted_repeated(lists.flatten(), ensure_ascii=ensure_ascii)
    offsets = pc.subtract(lists.offsets, lists.offsets[0])
    return join_texts("[", pc.binary_join(pa.ListArray.from_arrays(offsets, items), ","), "]")
