"""The exact reading of JSON values, one by one: what every other path must agree with.

A value that the columnar path is not sure of (or cannot take) is read here:
each JSON Lines line on its own (:func:`parse_line`), and each stretch of a
``.json`` file that is not plainly one object after another as a whole
(:func:`iter_region`: values one after another, top-level arrays split into
their elements, a broken value rejected and reading resumed at the next line
that starts a value at column 0). Every value is checked against the nesting
limit before a parser sees it, and parsed exactly as written: integers beyond
64 bits stay integers, NaN and Infinity are refused, invalid UTF-8 is refused,
an object that repeats a key is refused (:mod:`.repeated_keys`).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import orjson

from .._core.columns import INT64_MAX
from .._core.records import RawValue, Rejection, excerpt
from .limits import Limits
from .repeated_keys import repeated_key, repeated_key_reason

__all__ = [
    "has_long_integer",
    "iter_region",
    "keyed",
    "long_digit_reason",
    "nesting_depth",
    "parse_line",
    "too_deep",
    "too_large",
]

_STDLIB_DECODER = json.JSONDecoder()
_COLUMN0_VALUE_START = re.compile(r"^[\[{]", re.MULTILINE)
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def nesting_depth(text: bytes) -> int:
    """How deeply a JSON text nests (objects and arrays), brackets in strings aside.

    Examples
    --------
    >>> nesting_depth(b'{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in (b"{", b"["):
            depth += 1
            deepest = max(deepest, depth)
        elif token in (b"}", b"]"):
            depth -= 1
    return deepest


def too_deep(path: str, line: int, text: str | bytes, limits: Limits) -> Rejection | None:
    """The rejection of a value for its nesting, or None: no parser sees a deeper one."""
    raw = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text
    if raw.count(b"{") + raw.count(b"[") <= limits.max_depth:
        return None
    depth = nesting_depth(raw)
    if depth <= limits.max_depth:
        return None
    reason = f"invalid JSON: nested {depth} levels deep, deeper than max_depth ({limits.max_depth})"
    return Rejection(path, line, "unknown", reason, excerpt(text))


def keyed(path: str, line: int, value: Any, text: bytes) -> RawValue | Rejection:
    """A value parsed, as every path gives it: rejected if it names a member twice."""
    repeated = repeated_key(text, value)
    if repeated is not None:
        return Rejection(path, line, "unknown", repeated_key_reason(repeated), excerpt(text))
    return RawValue(path, line, value, text)


def _parse_error(exc: Exception, first_line: int | None = None) -> str:
    """A parser's message, with the position said in the file's own lines.

    ``first_line`` is the file line on which the parsed text starts; without
    it, the text was one line and only the column is given.
    """
    if not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    if exc.msg == long_digit_reason():
        return exc.msg
    if first_line is None:
        return f"{exc.msg} (column {exc.colno})"
    return f"{exc.msg} (line {first_line + exc.lineno - 1}, column {exc.colno})"


class _NotJsonNumber(ValueError):
    """NaN or Infinity: the standard library reads them, JSON does not allow them."""


def _reject_constant(name: str) -> None:
    raise _NotJsonNumber(f"{name} is not a JSON number")


_LONG_DIGITS = re.compile(rb"(?<![\d.])\d{19,}")


def has_long_integer(text: bytes | memoryview) -> bool:
    """Whether the text may hold an integer beyond the signed 64-bit range.

    orjson reads such an integer as a float, silently, and Arrow infers a
    float column for it: text that holds one is parsed by the standard
    library, which keeps every integer exact. A digit run inside a string
    may answer True too; that only costs speed.
    """
    for run in _LONG_DIGITS.finditer(text):
        # Compared as text: int() refuses a run longer than Python's integer-string
        # limit (4,300 digits), and such a run may be anywhere, a string included.
        digits = bytes(run.group()).lstrip(b"0")
        if len(digits) > len(_INT64_MAX_DIGITS) or (
            len(digits) == len(_INT64_MAX_DIGITS) and digits > _INT64_MAX_DIGITS
        ):
            return True
    return False


_INT64_MAX_DIGITS = str(INT64_MAX).encode()


def long_digit_reason() -> str:
    """Why a value holding an integer longer than Python reads is refused.

    The standard library's JSON reader refuses an integer of more digits than
    ``sys.get_int_max_str_digits()`` (4,300 by default) with a ``ValueError``.
    No JSON producer writes one (JavaScript writes at most 21 digits, and
    Python's own writer has the same limit), so the value is rejected, on
    every reading path alike.
    """
    return (
        f"an integer of more than {sys.get_int_max_str_digits()} digits, "
        "longer than any JSON writer produces"
    )


def _masked_long_runs(text: str) -> str:
    """``text`` with each digit run too long for ``int()`` written as ``0`` and spaces.

    Same length and same lines: decoding it finds where the value that holds
    the run ends, without converting the run.
    """
    limit = sys.get_int_max_str_digits()
    return re.sub(rf"\d{{{limit + 1},}}", lambda run: "0" + " " * (len(run.group()) - 1), text)


def _loads_text(text: bytes) -> object:
    """Parse one JSON value exactly as written.

    orjson where it is exact; the standard library for integers beyond 64 bits
    (see :func:`has_long_integer`) and for what orjson refuses but JSON allows
    (lone surrogate escapes). NaN and Infinity are refused by both.

    Raises
    ------
    json.JSONDecodeError
        When the text is not one JSON value, naming the position.
    """
    first = None
    if not has_long_integer(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            first = exc
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as exc:
        # Said here, not as orjson says it: the byte and its column.
        column = len(bytes(text[: exc.start]).decode("utf-8", "replace"))
        raise json.JSONDecodeError(
            f"invalid UTF-8: byte 0x{text[exc.start]:02X} ({exc.reason})",
            text.decode("utf-8", "replace"),
            column,
        ) from None
    try:
        return json.loads(decoded, parse_constant=_reject_constant)
    except RecursionError:
        raise first or json.JSONDecodeError("nested too deeply", decoded, 0) from None
    except json.JSONDecodeError as exc:
        raise first or exc from None
    except _NotJsonNumber as exc:
        raise first or json.JSONDecodeError(str(exc), decoded, 0) from None
    except ValueError:
        # Any other ValueError is an integer beyond Python's integer-string limit.
        raise first or json.JSONDecodeError(long_digit_reason(), decoded, 0) from None


def _skip_whitespace(text: str, position: int, line: int) -> tuple[int, int]:
    """Where the white space at ``position`` ends, and the line there (from ``line``)."""
    size = len(text)
    start = position
    while position < size and text[position] in " \t\r\n":
        position += 1
    return position, line + text.count("\n", start, position)


def _resync(text: str, position: int) -> int:
    """Where to resume after a value that cannot be parsed.

    Pretty-printed values appended to a log start at column 0 with ``{`` or
    ``[``; resuming at the next such line keeps every later value. A writer
    killed mid-value may be followed at once by the next pretty output, whose
    ``{`` then ends the line the cut value left unfinished: such an output
    is resumed at too (see :func:`_cut_then_pretty`).
    """
    newline = text.find("\n", position)
    match = _COLUMN0_VALUE_START.search(text, newline + 1 or len(text))
    end = match.start() if match and newline != -1 else len(text)
    return _cut_then_pretty(text, position, end)


#: An opening brace that ends a line it does not start: maybe a pretty output
#: written straight after a value cut short.
_LINE_ENDING_BRACE = re.compile(r"(?<=[^\n])\{[ \t]*\r?\n")
#: How many such braces are tried within one rejected stretch.
_PRETTY_TRIES = 64


def _cut_then_pretty(text: str, position: int, end: int) -> int:
    """The start of a whole pretty output inside ``text[position:end]``, or ``end``.

    A candidate is a ``{`` that ends a line after other text; it is taken when
    it opens one value that closes with ``}`` at column 0, as a pretty output
    closes, ending at ``end`` (white space aside). An object nested in the cut
    value closes indented, so it is never taken for a value of its own.
    """
    for tries, match in enumerate(_LINE_ENDING_BRACE.finditer(text, position + 1, end)):
        if tries >= _PRETTY_TRIES:
            break
        start = match.start()
        try:
            _, stop = _STDLIB_DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        except ValueError:
            # A digit run past Python's integer-string limit: the output still ends
            # where it would without the run (it is rejected on its own after).
            try:
                _, stop = _STDLIB_DECODER.raw_decode(_masked_long_runs(text), start)
            except (ValueError, RecursionError):
                continue
        if stop <= end and text[stop - 2 : stop] == "\n}" and not text[stop:end].strip():
            return start
    return end


def _element_resync(indent: int, *, up_to: bool = False):
    """Where to resume inside an array whose elements start at column ``indent``.

    The next line that starts an object or array at that column, after white
    space or a leading comma (``,{`` in an array written comma first): the
    next element of a pretty-printed array. With ``up_to``, at that column or
    before it (the elements after one that shares the ``[``'s line). Without
    one (a single-line array), the rest of the text is one rejected value.
    """
    before = rf"[ \t,]{{0,{indent}}}" if up_to else rf"[ \t,]{{{indent}}}"
    start = re.compile(rf"^{before}[\[{{]", re.MULTILINE)

    def resync(text: str, position: int) -> int:
        newline = text.find("\n", position)
        match = start.search(text, newline + 1) if newline != -1 else None
        return match.end() - 1 if match else len(text)

    return resync


def _decode_one(
    path: str, text: str, position: int, line: int, base: int, limits: Limits, resync=_resync
) -> tuple[int, RawValue | Rejection]:
    why = None  # where the value ends is found first, by the standard library's decoder
    try:
        _, end = _STDLIB_DECODER.raw_decode(text, position)
    except RecursionError:
        end, why = resync(text, position), "nested too deeply"
    except json.JSONDecodeError as exc:
        end, why = resync(text, position), _parse_error(exc, base)  # counted from the top
    except ValueError:
        # json.JSONDecodeError is a ValueError too, caught above: this is an
        # integer longer than Python's integer-string limit. The value ends
        # where it would end without the run; only it is rejected.
        why = long_digit_reason()
        try:
            _, end = _STDLIB_DECODER.raw_decode(_masked_long_runs(text), position)
        except (ValueError, RecursionError):
            end = resync(text, position)
    if why is not None:
        reason = f"invalid JSON: {why}"
        return end, Rejection(path, line, "unknown", reason, excerpt(text[position:end]))
    raw = text[position:end]
    if _larger_than(raw, limits.max_value_bytes):
        return end, too_large(path, line, raw, limits)
    deep = too_deep(path, line, raw, limits)
    if deep is not None:
        return end, deep
    try:
        # The bytes as written (``raw`` was decoded with ``surrogateescape``): a byte
        # that is not UTF-8 is named by _loads_text, as in JSON Lines. The standard
        # library's decoder accepts NaN and Infinity; JSON does not.
        value = _loads_text(raw.encode("utf-8", errors="surrogateescape"))
    except json.JSONDecodeError as exc:
        # Placed in ``text``, as raw_decode's errors above: a value may start mid-line
        # (an element of an array written on one line).
        where = json.JSONDecodeError(exc.msg, text, position + exc.pos)
        return end, Rejection(
            path, line, "unknown", f"invalid JSON: {_parse_error(where, base)}", excerpt(raw)
        )
    return end, keyed(path, line, value, raw.encode("utf-8"))


def too_large(path: str, line: int, text: str | bytes, limits: Limits) -> Rejection:
    """The rejection of a value larger than ``max_value_bytes``, which is not read."""
    return Rejection(
        path,
        line,
        "unknown",
        f"the value is larger than max_value_bytes ({limits.max_value_bytes} bytes) "
        "and is not read",
        excerpt(text[: 4 * limits.excerpt_chars], limits.excerpt_chars),
    )


def _larger_than(raw: str, limit: int) -> bool:
    """Whether a value's UTF-8 text is longer than ``limit`` bytes (a character is 1-4)."""
    if len(raw) > limit:
        return True
    if 4 * len(raw) <= limit:
        return False
    return len(raw.encode("utf-8", errors="surrogateescape")) > limit


def _iter_array(path: str, text: str, position: int, line: int, base: int, limits: Limits):
    """Yield the elements of a top-level array, each with its own line.

    An element that cannot be read is rejected, and reading goes on at the
    next element of a pretty-printed array (see :func:`_element_resync`).
    """
    start_line = line
    opened_line_start = text.rfind("\n", 0, position) + 1
    position += 1
    # The column of the first element on a line after the "[" is the others' column; an
    # element on the "[" line (a compact array) says only that they start no later.
    resync, settled = None, False
    while True:
        position, line = _skip_whitespace(text, position, line)
        if position < len(text) and text[position] == "," and resync is not None:
            # A separator left over from resuming after a rejected element.
            position, line = _skip_whitespace(text, position + 1, line)
        if position >= len(text):
            yield Rejection(
                path, start_line, "unknown", "invalid JSON: the array is never closed", ""
            )
            return position, line
        if text[position] == "]":
            return position + 1, line
        if not settled:
            settled = line > start_line
            if settled:
                resync = _element_resync(position - (text.rfind("\n", 0, position) + 1))
            elif resync is None:
                resync = _element_resync(position - opened_line_start, up_to=True)
        end, item = _decode_one(path, text, position, line, base, limits, resync)
        yield item
        line += text.count("\n", position, end)
        position = end
        if isinstance(item, Rejection):
            if position >= len(text):
                return position, line  # the rejection holds the rest of the text
            continue
        position, line = _skip_whitespace(text, end, line)
        if position < len(text) and text[position] == ",":
            position += 1
        elif position < len(text) and text[position] != "]":
            # The next element is read all the same; the missing separator is
            # reported where it should have been.
            yield Rejection(
                path,
                line,
                "unknown",
                "invalid JSON: expected ',' or ']' between array elements (the next "
                "element is read as if it were there)",
                "",
            )


def parse_line(path: str, line: bytes, number: int, limits: Limits) -> RawValue | Rejection:
    """One JSON Lines line, not blank, as a value or a rejection naming its line."""
    deep = too_deep(path, number, line, limits)
    if deep is not None:
        return deep
    try:
        value = _loads_text(line)
    except json.JSONDecodeError as exc:
        return Rejection(
            path,
            number,
            "unknown",
            f"invalid JSON: {_parse_error(exc)}",
            excerpt(line),
        )
    return keyed(path, number, value, line)


def iter_region(
    path: str, data: bytes, first_line: int, limits: Limits
) -> Iterator[RawValue | Rejection]:
    """The values of a stretch of a ``.json`` file that starts on ``first_line``.

    Values one after another; a top-level array yields its elements, each
    with its own line. A value that cannot be read is rejected, and reading
    resumes at the next line that starts a value at column 0.
    """
    text = data.decode("utf-8", errors="surrogateescape")
    position = 0
    line = first_line
    size = len(text)
    while True:
        position, line = _skip_whitespace(text, position, line)
        if position >= size:
            return
        if text[position] == "[":
            position, line = yield from _iter_array(path, text, position, line, first_line, limits)
            continue
        end, item = _decode_one(path, text, position, line, first_line, limits)
        yield item
        line += text.count("\n", position, end)
        position = end
