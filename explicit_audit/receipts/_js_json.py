"""engram's ``canonicalJson`` (``harness/src/knowledgeRecord.ts``), byte for byte.

engram hashes a presentation's identity as ``canonicalJson``: object keys
sorted with ``String.prototype.localeCompare``, strings and numbers as
JavaScript's ``JSON.stringify`` writes them, no whitespace. Two points differ
from Python's ``json.dumps(sort_keys=True)``:

- Numbers: JavaScript writes ``1e-7``, ``0.00001``, ``1e+21`` and ``1`` where
  Python writes ``1e-07``, ``1e-05``, ``1e+21`` and ``1.0``. :func:`js_number`
  follows ECMAScript's ``Number::toString`` from the shortest round-trip
  digits, which Python's ``repr`` also gives.
- Key order: ``localeCompare`` collates (case-insensitive first), not by code
  point. For keys of ASCII letters and digits whose lower-case forms differ,
  the collation order is the order of the lower-case forms; any other key set
  (an underscore, a hyphen, two keys differing only in case) is one this
  module cannot order exactly, and :func:`canonical_json` returns None rather
  than guess.

Strings are written as ``json.dumps(..., ensure_ascii=False)`` does, which is
``JSON.stringify`` for every string without a lone surrogate (the kit rejects
those when loading).

A number JavaScript reads as an infinity (an integer of 310 digits or more,
or ``1e400``: ``JSON.parse`` rounds it to ``Infinity``) is one that
``canonicalJson`` refuses (it throws "cannot canonicalize a non-finite
number"): no presentationId can come from an identity that holds one, and
:func:`canonical_json` raises :class:`NonFiniteNumber` naming where it is.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from decimal import Decimal
from typing import Any

from .shape import PRESENTATION_RECEIPT_KEYS

__all__ = ["NonFiniteNumber", "canonical_json", "js_number", "presentation_id"]

_COLLATABLE = re.compile(r"[A-Za-z0-9]+")
#: The fields of ``presentationIdentity`` in ``presentation.ts``, all but
#: ``content`` read from the presentation receipt: every field of the receipt
#: but its schema version, its id and its retention.
IDENTITY_FIELDS = tuple(
    name
    for name in PRESENTATION_RECEIPT_KEYS
    if name not in ("schemaVersion", "presentationId", "retention")
)


class _NotExact(Exception):
    pass


class NonFiniteNumber(ValueError):
    """A number JavaScript reads as an infinity, which engram's ``canonicalJson`` refuses.

    Attributes
    ----------
    path : str
        Where it is in the value given, dotted (``pack.version``).
    """

    def __init__(self, path: str) -> None:
        super().__init__(f"{path or '(value)'} is a number JavaScript reads as an infinity")
        self.path = path


def _js_double(value: int | float) -> float:
    """The double JavaScript's ``JSON.parse`` reads for a number: an infinity past the range."""
    try:
        return float(value)
    except OverflowError:  # an integer beyond the largest double rounds to an infinity
        return math.inf if value > 0 else -math.inf


def js_number(value: int | float) -> str:
    """A number as JavaScript's ``JSON.stringify`` writes it.

    Parameters
    ----------
    value : int or float
        A number as parsed from JSON. An integer is the double JavaScript
        would parse it to.

    Returns
    -------
    str

    Raises
    ------
    NonFiniteNumber
        When JavaScript reads the number as an infinity.

    Examples
    --------
    >>> [js_number(v) for v in (1.0, 1e-7, 0.00001, 1e21, 0.95, 123456789012345678901)]
    ['1', '1e-7', '0.00001', '1e+21', '0.95', '123456789012345680000']
    """
    if isinstance(value, int) and abs(value) <= 2**53:
        return str(value)
    number = _js_double(value)
    if not math.isfinite(number):
        raise NonFiniteNumber("")
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr gives the shortest digits that round-trip, as Number::toString does.
    shortest = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, shortest.digits))
    point = shortest.exponent + len(digits)  # value = 0.<digits> * 10**point
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    shift = point - 1
    exponent_text = ("+" if shift > 0 else "-") + str(abs(shift))
    if k == 1:
        return sign + digits + "e" + exponent_text
    return sign + digits[0] + "." + digits[1:] + "e" + exponent_text


def _write(value: Any, out: list[str], path: str = "") -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, int | float):
        try:
            out.append(js_number(value))
        except NonFiniteNumber:
            raise NonFiniteNumber(path) from None
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out, f"{path}[{index}]")
        out.append("]")
    elif isinstance(value, dict):
        keys = list(value)
        lowered = [key.lower() for key in keys]
        if len(set(lowered)) != len(keys) or not all(_COLLATABLE.fullmatch(k) for k in keys):
            raise _NotExact
        out.append("{")
        for index, key in enumerate(sorted(keys, key=str.lower)):
            if index:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _write(value[key], out, f"{path}.{key}" if path else key)
        out.append("}")
    else:
        raise _NotExact


def canonical_json(value: Any) -> str | None:
    """engram's ``canonicalJson`` of a parsed JSON value, or None when not exact.

    Parameters
    ----------
    value : Any
        A value as parsed from JSON.

    Returns
    -------
    str or None
        None when an object's keys are ones whose ``localeCompare`` order this
        module cannot reproduce exactly (see the module docstring).

    Raises
    ------
    NonFiniteNumber
        When the value holds a number JavaScript reads as an infinity, which
        ``canonicalJson`` refuses.

    Examples
    --------
    >>> canonical_json({"viewId": "a", "score": 1.0, "audienceId": None})
    '{"audienceId":null,"score":1,"viewId":"a"}'
    >>> canonical_json({"snake_case": 1}) is None
    True
    """
    out: list[str] = []
    try:
        _write(value, out)
    except _NotExact:
        return None
    return "".join(out)


def presentation_id(record: dict) -> str | None:
    """The ``presentationId`` engram derives from a presented line's own fields.

    ``"presentation-"`` and the first 32 hex digits of the SHA-256 of
    ``canonicalJson(identity)``, the identity being the receipt's fields of
    :data:`IDENTITY_FIELDS` plus the line's ``content`` (``renderPresentation``
    and ``presentationIdentity`` in ``presentation.ts``).

    Parameters
    ----------
    record : dict
        A presented line as parsed: ``{schema_version, status, content, receipt}``.

    Returns
    -------
    str or None
        None when a field is missing or the identity cannot be written exactly.

    Raises
    ------
    NonFiniteNumber
        When the identity holds a number JavaScript reads as an infinity:
        engram's ``canonicalJson`` throws on it, so no presentationId comes
        from these fields. Its path names the field (``pack.size``).
    """
    receipt = record.get("receipt")
    if not isinstance(receipt, dict) or "content" not in record:
        return None
    if any(name not in receipt for name in IDENTITY_FIELDS):
        return None
    identity = {name: receipt[name] for name in IDENTITY_FIELDS}
    identity["content"] = record["content"]
    text = canonical_json(identity)
    if text is None:
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"presentation-{digest[:32]}"
