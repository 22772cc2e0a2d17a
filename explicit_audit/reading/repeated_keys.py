"""Repeated keys: an object that names one member twice is not one record but two readings.

JSON leaves a repeated name's meaning open and I-JSON (RFC 7493, section
2.3) forbids it: one reader keeps the first value, another the last
(orjson, Python's ``json``, pyarrow refuses the object). A record that holds
``{"question": "EVIL", ..., "question": "..."}`` inside a hashed payload
hashes as the kit reads it while another reader sees ``EVIL``: two readers
of one record disagree on what it says. Such a value is rejected on every
reading path, naming the first repeated key's dotted path, so that no
reading of it is ever loaded.

Found without a second parse for almost every value: an object's members
each have one ``:`` outside strings, so a value whose text holds no more
colons than its parse holds members repeats no key
(:func:`repeated_key`). Only a text with more colons (a colon in a string,
or a repeated key) has its colons outside strings counted, and only one
whose count is still higher is parsed again, keeping every member, to name
the key.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["repeated_key", "repeated_key_reason"]

#: A JSON string (escapes kept) or a colon: the colons outside strings are the matches ``:``.
_STRING_OR_COLON = re.compile(rb'"(?:[^"\\]|\\.)*"|:')


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
    members = _members(value)
    if text.count(b":") <= members:
        return None
    written = sum(1 for match in _STRING_OR_COLON.finditer(text) if match.group() == b":")
    if written <= members:
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
