"""Canonical-JSON dialects and the SHA-256 digests built on them.

Two upstream hashes are SHA-256 over "canonical JSON", and they do not mean
the same thing by it: arborist's ``retrieval_plan_hash`` writes Python's
``json.dumps(sort_keys=True, separators=(",", ":"))`` with the default
``ensure_ascii=True`` (every non-ASCII character as ``\\uXXXX``), while
explicit_learning's ``request_sha256`` is taken here to be the same writer with
``ensure_ascii=False`` (``docs/formats.md`` sections 2 and 3). A payload with
one Korean letter has a different digest under each. This module names each
writer once, so a digest can be rebuilt under a named dialect and a digest
that does not match can be tested against every other dialect.

The registry, :data:`DIALECTS`:

====================  =====================================================
name                  bytes written
====================  =====================================================
``python-utf8``       ``json.dumps(sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))`` as UTF-8 (request default)
``python-ascii``      the same with ``ensure_ascii=True`` (the plan hash)
``rfc8785``           RFC 8785 JSON Canonicalization Scheme (``rfc8785``)
``orjson-sorted``     ``orjson.dumps(option=OPT_SORT_KEYS)``: raw UTF-8
``python-spaced``     ``json.dumps(sort_keys=True)``: ASCII, ``", "`` and
                      ``": "`` separators (a writer that forgot ``separators``)
``unsorted-ascii``    compact, ASCII-escaped, keys in written order
``unsorted-utf8``     compact, raw UTF-8, keys in written order (what
                      ``JSON.stringify`` writes for strings and integers)
====================  =====================================================

The first four are canonical dialects; the last three are writers that are
not canonical but that real producers use by mistake, kept so a mismatch can
be explained.

NaN and Infinity are not JSON. Every dialect here refuses them with an
:class:`~explicit_audit.errors.AuditError` naming where they are, rather than
writing ``NaN`` (Python) or ``null`` (orjson): a digest over either would
commit to something no JSON reader can read back.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import orjson
import rfc8785

from .errors import AuditError

__all__ = [
    "DIALECTS",
    "PLAN_HASH_DIALECT",
    "REQUEST_HASH_DIALECT",
    "Dialect",
    "canonical_hash",
    "canonical_json",
    "is_sha256_hex",
    "matching_dialects",
]

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Dialect:
    """One named way of writing a JSON value as bytes.

    Attributes
    ----------
    name : str
        The registry key (``"python-utf8"``).
    description : str
        What the writer does, in words an auditor can quote.
    canonical : bool
        Whether the dialect is a canonical form (sorted keys, no insignificant
        whitespace) rather than a known non-canonical writer.
    dumps : callable
        ``dumps(value) -> bytes``; may raise ``TypeError`` or ``ValueError``.
    """

    name: str
    description: str
    canonical: bool
    dumps: Callable[[Any], bytes]


def _python_writer(*, sort_keys: bool, ensure_ascii: bool, compact: bool) -> Callable:
    separators = (",", ":") if compact else (", ", ": ")

    def dumps(value: Any) -> bytes:
        text = json.dumps(
            value,
            sort_keys=sort_keys,
            ensure_ascii=ensure_ascii,
            separators=separators,
            allow_nan=False,
        )
        return text.encode("utf-8")

    return dumps


def _orjson_sorted(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


_REGISTRY = (
    Dialect(
        "python-utf8",
        "Python json.dumps, sorted keys, compact separators, non-ASCII written raw "
        "(ensure_ascii=False)",
        True,
        _python_writer(sort_keys=True, ensure_ascii=False, compact=True),
    ),
    Dialect(
        "python-ascii",
        "Python json.dumps, sorted keys, compact separators, non-ASCII escaped as \\uXXXX "
        "(ensure_ascii=True)",
        True,
        _python_writer(sort_keys=True, ensure_ascii=True, compact=True),
    ),
    Dialect("rfc8785", "RFC 8785 JSON Canonicalization Scheme", True, rfc8785.dumps),
    Dialect(
        "orjson-sorted",
        "orjson with OPT_SORT_KEYS: sorted keys, compact, non-ASCII written raw",
        True,
        _orjson_sorted,
    ),
    Dialect(
        "python-spaced",
        "Python json.dumps(sort_keys=True) without separators: ', ' and ': ' between items",
        False,
        _python_writer(sort_keys=True, ensure_ascii=True, compact=False),
    ),
    Dialect(
        "unsorted-ascii",
        "Python json.dumps, compact, non-ASCII escaped, keys left in written order",
        False,
        _python_writer(sort_keys=False, ensure_ascii=True, compact=True),
    ),
    Dialect(
        "unsorted-utf8",
        "JSON.stringify-like: compact, non-ASCII written raw, keys left in written order",
        False,
        _python_writer(sort_keys=False, ensure_ascii=False, compact=True),
    ),
)

#: Every known dialect by name, canonical ones first.
DIALECTS: Mapping[str, Dialect] = MappingProxyType({d.name: d for d in _REGISTRY})

#: The dialect arborist's ``retrieval_plan_hash`` is written in (``docs/formats.md`` section 2).
PLAN_HASH_DIALECT = "python-ascii"
#: The default dialect of explicit_learning's ``request_sha256`` (``docs/formats.md`` section 3).
REQUEST_HASH_DIALECT = "python-utf8"


def _dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise AuditError(
            f"unknown canonical-JSON dialect {name!r}; choose one of {', '.join(DIALECTS)}"
        ) from None


def _non_finite_path(value: Any, path: str = "$") -> str | None:
    """The path of the first NaN or infinite float in ``value``, if any."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _non_finite_path(item, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite_path(item, f"{path}[{index}]")
            if found:
                return found
    return None


def canonical_json(value: Any, dialect: str = REQUEST_HASH_DIALECT) -> bytes:
    """Write ``value`` as bytes in a named canonical-JSON dialect.

    Parameters
    ----------
    value : JSON-compatible value
        Dicts with string keys, lists, strings, ints, finite floats, bools, None.
    dialect : str, default "python-utf8"
        A name from :data:`DIALECTS`.

    Returns
    -------
    bytes

    Raises
    ------
    AuditError
        For an unknown dialect, NaN or Infinity anywhere in ``value``, or a
        value the dialect cannot write (a non-string key, an integer outside
        RFC 8785's range, an unpaired surrogate in a raw-UTF-8 dialect).

    Examples
    --------
    >>> canonical_json({"b": 1, "a": "é"})
    b'{"a":"\\xc3\\xa9","b":1}'
    >>> canonical_json({"b": 1, "a": "é"}, "python-ascii")
    b'{"a":"\\\\u00e9","b":1}'
    """
    writer = _dialect(dialect)
    where = _non_finite_path(value)
    if where is not None:
        raise AuditError(
            f"{where} is NaN or infinite, which JSON cannot hold; no canonical-JSON digest "
            "exists for it. Replace the number (or drop the field) before hashing."
        )
    try:
        return writer.dumps(value)
    except (TypeError, ValueError) as exc:
        raise AuditError(f"cannot write this value in dialect {dialect!r}: {exc}") from None


def canonical_hash(value: Any, dialect: str = REQUEST_HASH_DIALECT) -> str:
    """SHA-256 hex digest of ``value`` written in a named dialect.

    Parameters
    ----------
    value : JSON-compatible value
    dialect : str, default "python-utf8"
        A name from :data:`DIALECTS`.

    Returns
    -------
    str
        64 lowercase hex characters.

    Raises
    ------
    AuditError
        As :func:`canonical_json`.

    Examples
    --------
    >>> canonical_hash({}) == hashlib.sha256(b"{}").hexdigest()
    True
    """
    return hashlib.sha256(canonical_json(value, dialect)).hexdigest()


def matching_dialects(value: Any, digest: str, dialects: Iterable[str] | None = None) -> list[str]:
    """Names of the dialects under which ``value`` hashes to ``digest``.

    Parameters
    ----------
    value : JSON-compatible value
    digest : str
        A recorded SHA-256 hex digest.
    dialects : iterable of str, optional
        The dialects to try, in order; all of :data:`DIALECTS` by default.
        A dialect that cannot write ``value`` is skipped.

    Returns
    -------
    list of str
        In the order tried; empty when none reproduces ``digest``.

    Examples
    --------
    >>> matching_dialects({"a": "é"}, canonical_hash({"a": "é"}, "python-ascii"))
    ['python-ascii', 'unsorted-ascii']
    """
    found = []
    for name in DIALECTS if dialects is None else dialects:
        try:
            if canonical_hash(value, name) == digest:
                found.append(name)
        except AuditError:
            continue
    return found


def is_sha256_hex(text: Any) -> bool:
    """Whether ``text`` is a string of exactly 64 lowercase hex characters.

    Examples
    --------
    >>> is_sha256_hex("ab" * 32), is_sha256_hex("AB" * 32), is_sha256_hex("ab")
    (True, False, False)
    """
    return isinstance(text, str) and _SHA256_HEX.fullmatch(text) is not None
