"""JSON that every reader reads alike (I-JSON, RFC 7493), or an error naming where it is not.

The logs are read so by the reading engine (:mod:`explicit_audit.reading.exact`,
:mod:`explicit_audit.reading.repeated_keys`); :func:`loads_alike` reads so the
JSON the kit takes whole from elsewhere: a baseline, the manifests of a Parquet
folder and of the load cache, and the JSON cells of a Parquet folder's tables.
Python's ``json`` reads two things that other readers read otherwise, so
that a file tampered with could say one thing to the kit and another to its
reviewer:

- an object that names one key twice: Python keeps the last value, other
  readers the first, or refuse it;
- ``NaN``, ``Infinity`` and ``-Infinity``: Python's tokens, not JSON.

Each is refused with a :class:`json.JSONDecodeError` at the key or value (its
line and column), naming its dotted path, as the logs refuse them. Text
without them parses as ``json.loads`` parses it, integers of any length exact
and an escaped lone surrogate kept, as the logs keep it where a kind holds
values as written (a C2 request's payload, which the kit writes back so).
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import Any

__all__ = ["loads_alike"]


def loads_alike(text: str) -> Any:
    """The JSON value of ``text``, refused where two readers would read it apart.

    Parameters
    ----------
    text : str

    Returns
    -------
    any
        As :func:`json.loads` returns it.

    Raises
    ------
    json.JSONDecodeError
        When ``text`` is not JSON, or is JSON that readers read apart: a key
        repeated in one object, ``NaN`` or ``Infinity``. The message names the
        key's or the value's dotted path.

    Examples
    --------
    >>> loads_alike('{"a": [1, "\\\\ud83d\\\\ude00"]}')
    {'a': [1, '😀']}
    >>> loads_alike('{"a": 1, "b": {"c": 2, "c": 3}}')
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: the key `b.c` is repeated ...: line 1 column 24 (char 23)
    >>> loads_alike('[1, NaN]')
    Traceback (most recent call last):
    ...
    json.decoder.JSONDecodeError: `[1]` is NaN, which is not JSON ...: line 1 column 5 (char 4)
    """
    try:
        return json.loads(text, object_pairs_hook=_one_value_per_key, parse_constant=_not_json)
    except _NotAlike:
        at, said = _first_fault(text) or (0, f"not JSON that every reader reads alike {_SAID}")
    raise json.JSONDecodeError(said, text, at)


_WHITE_SPACE = re.compile(r"[ \t\n\r]*")
_NOT_JSON = ("-Infinity", "Infinity", "NaN")


class _NotAlike(ValueError):
    """Raised by the parser's hooks: the text is valid to Python but not I-JSON."""


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _NotAlike
    return value


def _not_json(token: str) -> Any:
    raise _NotAlike


def _first_fault(text: str) -> tuple[int, str] | None:
    """Where the first key or value of ``text`` that readers read apart is, and what it is.

    Walks the text in its order, only once the parser's hooks found a fault
    (the text is JSON up to it).
    """
    scalar = json.JSONDecoder().raw_decode

    def skip(at: int) -> int:
        return _WHITE_SPACE.match(text, at).end()

    def walk(at: int, path: str) -> int:
        at = skip(at)
        opening = text[at]
        if opening in "{[":
            closing, index, seen = "}]"[opening == "["], 0, set()
            at = skip(at + 1)
            while text[at] != closing:
                if opening == "{":
                    key, after = scanstring(text, at + 1)
                    inner = f"{path}.{key}" if path else key
                    if key in seen:
                        raise _Fault(at, f"the key `{inner}` is repeated in one object {_SAID}")
                    seen.add(key)
                    at = skip(after) + 1  # past the colon
                else:
                    inner, index = f"{path}[{index}]", index + 1
                at = skip(walk(at, inner))
                at = skip(at + 1) if text[at] == "," else at
            return at + 1
        if text.startswith(_NOT_JSON, at):
            token = next(token for token in _NOT_JSON if text.startswith(token, at))
            where = f"`{path}`" if path else "the value"
            raise _Fault(at, f"{where} is {token}, which is not JSON {_SAID}")
        return scalar(text, at)[1]  # a string, a number, true, false or null

    try:
        walk(0, "")
    except _Fault as fault:
        return fault.args
    return None


_SAID = "(I-JSON, RFC 7493: readers disagree on what it holds)"


class _Fault(Exception):
    """Where :func:`_first_fault` stopped, and why."""
