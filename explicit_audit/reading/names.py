"""A file's name shown as text: one-to-one with the bytes the system holds, printable.

Every table, finding and message names a file by :func:`display_name`; SARIF
names it by its bytes again (:func:`name_bytes`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["STDIN_NAME", "display_name", "name_bytes"]

#: The name standard input is shown by (``explicit-audit verify -``).
STDIN_NAME = "<stdin>"


def display_name(path: Path | str | bytes) -> str:
    """The file's name as text that names it alone, printable.

    A name as the system holds it is bytes; this text is one-to-one with
    them: a byte that is not UTF-8 is written ``\\xNN``, a control character
    of one byte (ESC, CR, LF, ...) ``\\xNN`` too, one of two bytes (U+0080 to
    U+009F) ``\\uNNNN``, and a backslash ``\\\\``, so that a file named
    ``r\\xe9.jsonl`` in letters is never shown as the file whose name holds
    the byte 0xE9. Any other name is shown as it is; :func:`name_bytes` gives
    the bytes back.

    Examples
    --------
    >>> import os
    >>> display_name(os.fsdecode(b"logs/caf\\xe9.jsonl"))
    'logs/caf\\\\xe9.jsonl'
    >>> display_name("logs/caf\\\\xe9.jsonl")
    'logs/caf\\\\\\\\xe9.jsonl'
    >>> display_name("a\\x1b[2Kb.jsonl")
    'a\\\\x1b[2Kb.jsonl'
    """
    name = os.fsdecode(os.fspath(path))
    if not _NEEDS_ESCAPES.search(name):
        return name
    shown = []
    for char in name:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or code == 0x7F:  # a character of one byte, whichever it was
            shown.append(f"\\x{code:02x}")
        elif 0x80 <= code < 0xA0 or 0xD800 <= code < 0xE000:  # not the byte: U+0085 is 2 bytes
            shown.append(f"\\u{code:04x}")
        elif char == "\\":
            shown.append("\\\\")
        else:
            shown.append(char)
    return "".join(shown)


def name_bytes(shown: str) -> bytes:
    """The name as the system holds it, from the text :func:`display_name` shows.

    Examples
    --------
    >>> name_bytes("logs/caf\\\\xe9.jsonl"), name_bytes("a\\\\\\\\b\\\\u0085.jsonl")
    (b'logs/caf\\xe9.jsonl', b'a\\\\b\\xc2\\x85.jsonl')
    """
    if "\\" not in shown:
        return os.fsencode(shown)
    out = bytearray()
    for part in _ESCAPE.split(shown):
        if part == "\\\\":
            out += b"\\"
        elif part.startswith("\\x"):
            out.append(int(part[2:], 16))
        elif part.startswith("\\u"):
            out += chr(int(part[2:], 16)).encode("utf-8", "surrogatepass")
        else:
            out += os.fsencode(part)
    return bytes(out)


_ESCAPE = re.compile(r"(\\\\|\\x[0-9a-f]{2}|\\u[0-9a-f]{4})")

# What makes a name need escapes: a byte that is not UTF-8, a control
# character, a surrogate, or a backslash (so that escapes stay one-to-one).
_NEEDS_ESCAPES = re.compile("[\\x00-\\x1f\\x7f-\\x9f\\ud800-\\udfff\\\\]")
