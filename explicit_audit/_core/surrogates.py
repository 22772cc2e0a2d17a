"""Lone surrogates: strings JSON may carry that pandas cannot store as text.

JSON may escape one (``"\\ud800"``), and Python and JavaScript producers
write them raw; an Arrow string column holds UTF-8 only. A kind whose every
string goes into a text column rejects a record holding one
(:func:`explicit_audit._core.records.sort_out`), naming where it is.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["lone_surrogate", "may_hold_surrogate"]

_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def lone_surrogate(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (key or value) holding a lone surrogate.

    JSON may escape one (``"\\ud800"``), and Python and JavaScript producers
    write them, but pandas cannot store such a string as text.
    """
    if isinstance(value, str):
        return path or "(value)" if not value.isascii() and _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if _has_surrogate(str(key)):
                return where
            found = lone_surrogate(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = lone_surrogate(item, f"{path}[{index}]")
            if found:
                return found
    return None


def may_hold_surrogate(text: bytes) -> bool:
    """Whether ``text`` may hold a lone surrogate: an escape of one, or one encoded raw.

    Each starts with bytes found fast (a backslash and ``u``, or ``0xED``):
    only a text holding one is searched with :data:`_MAYBE_SURROGATE`.
    """
    return (b"\\u" in text or b"\xed" in text) and _MAYBE_SURROGATE.search(text) is not None


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)
