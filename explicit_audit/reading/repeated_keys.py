"""Repeated keys: an object that names one member twice is not one record but two readings.

JSON leaves a repeated name's meaning open and I-JSON (RFC 7493, section
2.3) forbids it: one reader keeps the first value, another the last
(orjson, Python's ``json``, pyarrow refuses the object). A record that holds
``{"question": "EVIL", ..., "question": "..."}`` inside a hashed payload
hashes as the kit reads it while another reader sees ``EVIL``: two readers
of one record disagree on what it says. Such a value is rejected on every
reading path, naming the first repeated key's dotted path, so that no
reading of it is ever loaded.

Found without a second parse for almost every value: every member of an
object has one ``:`` outside strings, and the strings keep theirs. So a text
holding no more colons (those escaped as ``\\u003a`` counted too) than the
parse written back by orjson holds repeats no key, since writing it back
keeps every string and one colon per member left (:func:`repeated_key`).
Only a value that fails this is parsed again, every member kept, to name the
key; a value orjson cannot write (an integer beyond 64 bits, a lone
surrogate) has its colons outside strings counted against its members first.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["repeated_key", "repeated_key_reason"]

#: A JSON string, escapes and all (a loop unrolled: no alternation per character).
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def _members(value: Any) -> int:
    """How many object members ``value`` holds, at every depth."""
    if isinstance(value, dict):
        return len(value) + sum(_members(item) for item in value.values() if type(item) in _NESTS)
    if isinstance(value, list):
        return sum(_members(item) for item in value if type(item) in _NESTS)
    return 0


_NESTS = (dict, list)


class _Members(list):
    """An object's members as written, in order, repeated names kept."""


def _first_repeat(value: Any, path: str) -> str | None:
    if isinstance(value, _Members):
        seen: set[str] = set()
        for key, _ in value:
            where = f"{path}.{key}" if path else key
            if key in seen:
                return where
            seen.add(key)
        for key, item in value:
            found = _first_repeat(item, f"{path}.{key}" if path else key)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_repeat(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def repeated_key(text: bytes, value: Any) -> str | None:
    """The dotted path of the first key an object of ``text`` repeats, or None.

    Parameters
    ----------
    text : bytes
        One JSON value as written (valid JSON: ``value`` was parsed from it).
    value : any
        Its parse, by a reader that keeps one member per name.

    Returns
    -------
    str or None
        ``payload.question`` for a payload naming ``question`` twice;
        ``[2].id`` below a top-level array; None when no object repeats a key.

    Examples
    --------
    >>> text = b'{"a": 1, "b": {"c": ":", "c": 2}}'
    >>> repeated_key(text, json.loads(text))
    'b.c'
    >>> repeated_key(b'{"a": "x:y"}', {"a": "x:y"}) is None
    True
    """
    if type(value) not in _NESTS:
        return None
    colons = text.count(b":") + text.count(b"\\u003a") + text.count(b"\\u003A")
    try:
        if colons <= orjson.dumps(value).count(b":"):
            return None
    except TypeError:  # orjson.JSONEncodeError: an integer beyond 64 bits, a lone surrogate
        if _STRINGS.sub(b"", text).count(b":") <= _members(value):
            return None
    # Parsed again only here: the standard library reads every valid JSON text
    # (integers of any length, lone surrogates), and the hook keeps each member.
    return _first_repeat(json.loads(text, object_pairs_hook=_Members), "")


def repeated_key_reason(path: str) -> str:
    """The rejection's reason for a value whose object repeats the key at ``path``."""
    return (
        f"invalid JSON: the key `{path}` is repeated in one object (I-JSON, RFC 7493: "
        "readers disagree on which value it holds, so the record is not loaded)"
    )
