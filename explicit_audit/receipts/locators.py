"""Locator safety, exactly as engram decides it.

engram only ever writes a locator ``qmd://<collection>/<relative path>.md`` into
a receipt after its ``safeRelativeMarkdownPath`` accepted it for the receipt's
collection. This module ports that function to Python, together with the two
pieces of Node's ``path.posix`` it leans on (``normalize`` and ``basename``),
so a receipt's locators can be re-judged without Node.

Rules of ``safeRelativeMarkdownPath(uri, collection)``, in the order engram
applies them (the first that fails names the error code):

========================  =====================================================
code                      the locator fails when
========================  =====================================================
``foreign_locator``       it does not start with ``qmd://<collection>/``
``locator_invalid``       the relative path (after that prefix) is empty, holds
                          a backslash, a NUL or a ``%``, starts with ``/``, or
                          does not end with ``.md``
``locator_escape``        a ``/``-separated segment is empty, ``.`` or ``..``;
                          or ``posix.normalize(path) != path``; or the path is
                          absolute
========================  =====================================================

JavaScript strings are UTF-16 and Python strings are code points; every test
above compares ASCII characters only, and a surrogate never equals one, so the
two agree on every input.

:func:`safe_relative_markdown_path` judges one locator; :func:`locator_safety`
judges an Arrow array of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "LOCATOR_ERROR_CODES",
    "UnsafeLocator",
    "locator_record_id",
    "locator_safety",
    "safe_relative_markdown_path",
]

LOCATOR_ERROR_CODES = ("foreign_locator", "locator_invalid", "locator_escape")
"""The error codes of ``safeRelativeMarkdownPath``, in the order it tests them."""

# A segment that is empty, "." or "..": engram's `parts.some(...)` test.
_UNSAFE_SEGMENT = r"(^|/)\.{0,2}(/|$)"


@dataclass(frozen=True, slots=True)
class UnsafeLocator:
    """Why engram would refuse a locator.

    Attributes
    ----------
    code : str
        One of :data:`LOCATOR_ERROR_CODES`.
    message : str
        engram's own message for it, the locator written as JSON.
    """

    code: str
    message: str


def _js_json_string(text: str) -> str:
    # JSON.stringify of a string: escapes quote, backslash and controls, keeps
    # every other character as is.
    out = []
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char in "\b\f\n\r\t":
            out.append({"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _normalize_string(path: str, allow_above_root: bool) -> str:
    # Node's lib/path.js normalizeString for posix, step for step.
    res = ""
    last_segment_length = 0
    last_slash = -1
    dots = 0
    code = ""
    for i in range(len(path) + 1):
        if i < len(path):
            code = path[i]
        elif code == "/":
            break
        else:
            code = "/"
        if code == "/":
            if last_slash == i - 1 or dots == 1:
                pass
            elif dots == 2:
                if len(res) < 2 or last_segment_length != 2 or not res.endswith(".."):
                    if len(res) > 2:
                        last_slash_index = res.rfind("/")
                        if last_slash_index == -1:
                            res = ""
                            last_segment_length = 0
                        else:
                            res = res[:last_slash_index]
                            last_segment_length = len(res) - 1 - res.rfind("/")
                        last_slash = i
                        dots = 0
                        continue
                    if len(res) != 0:
                        res = ""
                        last_segment_length = 0
                        last_slash = i
                        dots = 0
                        continue
                if allow_above_root:
                    res += "/.." if len(res) > 0 else ".."
                    last_segment_length = 2
            else:
                segment = path[last_slash + 1 : i]
                res = f"{res}/{segment}" if len(res) > 0 else segment
                last_segment_length = i - last_slash - 1
            last_slash = i
            dots = 0
        elif code == "." and dots != -1:
            dots += 1
        else:
            dots = -1
    return res


def _posix_normalize(path: str) -> str:
    """Node's ``path.posix.normalize``."""
    if len(path) == 0:
        return "."
    is_absolute = path[0] == "/"
    trailing_separator = path[-1] == "/"
    path = _normalize_string(path, not is_absolute)
    if len(path) == 0:
        if is_absolute:
            return "/"
        return "./" if trailing_separator else "."
    if trailing_separator:
        path += "/"
    return f"/{path}" if is_absolute else path


def _posix_basename(path: str, suffix: str) -> str:
    """Node's ``path.posix.basename(path, suffix)`` for a non-empty suffix."""
    if not suffix or len(suffix) > len(path):
        raise ValueError("only the suffix form with 0 < len(suffix) <= len(path) is ported")
    if suffix == path:
        return ""
    start = 0
    end = -1
    matched_slash = True
    ext_idx = len(suffix) - 1
    first_non_slash_end = -1
    for i in range(len(path) - 1, -1, -1):
        char = path[i]
        if char == "/":
            if not matched_slash:
                start = i + 1
                break
        else:
            if first_non_slash_end == -1:
                matched_slash = False
                first_non_slash_end = i + 1
            if ext_idx >= 0:
                if char == suffix[ext_idx]:
                    ext_idx -= 1
                    if ext_idx == -1:
                        end = i
                else:
                    ext_idx = -1
                    end = first_non_slash_end
    if start == end:
        end = first_non_slash_end
    elif end == -1:
        end = len(path)
    return path[start:end]


def safe_relative_markdown_path(uri: str, collection: str) -> str | UnsafeLocator:
    """Judge one locator as engram's ``safeRelativeMarkdownPath`` does.

    Parameters
    ----------
    uri : str
        The locator, e.g. ``"qmd://notes/risk-note.md"``.
    collection : str
        The qmd collection the locator must name (the receipt's ``collection``).

    Returns
    -------
    str or UnsafeLocator
        The safe relative path (``"risk-note.md"``), or why engram refuses it.

    Examples
    --------
    >>> safe_relative_markdown_path("qmd://notes/a/b.md", "notes")
    'a/b.md'
    >>> safe_relative_markdown_path("qmd://notes/a/../b.md", "notes").code
    'locator_escape'
    """
    prefix = f"qmd://{collection}/"
    quoted = _js_json_string(uri)
    if not uri.startswith(prefix):
        return UnsafeLocator(
            "foreign_locator", f"qmd locator does not name the active collection: {quoted}"
        )
    relative_path = uri[len(prefix) :]
    if (
        len(relative_path) == 0
        or "\\" in relative_path
        or "\u0000" in relative_path
        or "%" in relative_path
        or relative_path.startswith("/")
        or not relative_path.endswith(".md")
    ):
        return UnsafeLocator(
            "locator_invalid", f"qmd locator is not a safe relative Markdown path: {quoted}"
        )
    if any(part in ("", ".", "..") for part in relative_path.split("/")):
        return UnsafeLocator(
            "locator_escape", f"qmd locator contains an unsafe path segment: {quoted}"
        )
    if _posix_normalize(relative_path) != relative_path or relative_path.startswith("/"):
        return UnsafeLocator(
            "locator_escape", f"qmd locator is not normalized and relative: {quoted}"
        )
    return relative_path


def locator_record_id(relative_path: str) -> str:
    """The record id engram requires at a safe relative path.

    engram reads the record at the locator and refuses it unless its id equals
    ``basename(relativePath, ".md")`` (Node's basename, quirks included:
    ``".md"`` gives ``""`` while ``"dir/.md"`` gives ``".md"``).

    Parameters
    ----------
    relative_path : str
        A path accepted by :func:`safe_relative_markdown_path`.

    Returns
    -------
    str
        The id the record stored there must carry.

    Examples
    --------
    >>> locator_record_id("notes/risk-note.md")
    'risk-note'
    """
    return _posix_basename(relative_path, ".md")


def _string_array(values) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        values = pa.array(values, type=pa.string())
    if pa.types.is_large_string(values.type) or pa.types.is_string_view(values.type):
        values = values.cast(pa.string())
    return values


def locator_safety(uris, collections) -> pa.Table:
    """Judge many locators at once, as :func:`safe_relative_markdown_path` would.

    Parameters
    ----------
    uris : array-like of str
        Locators (an Arrow array, or anything ``pyarrow.array`` accepts).
    collections : array-like of str
        The collection each locator must name, aligned with ``uris``.

    Returns
    -------
    pyarrow.Table
        One row per locator: ``relative_path`` (null unless safe), ``error``
        (null when safe, else one of :data:`LOCATOR_ERROR_CODES`) and
        ``record_id`` (the id :func:`locator_record_id` requires; null unless
        safe). A null locator or collection gives a null row.

    Examples
    --------
    >>> t = locator_safety(["qmd://c/x.md", "qmd://d/x.md"], ["c", "c"])
    >>> t.column("error").to_pylist()
    [None, 'foreign_locator']
    """
    uris = _string_array(uris)
    collections = _string_array(collections)
    if len(uris) != len(collections):
        raise ValueError("uris and collections must have the same length")
    n = len(uris)
    # Each locator is tested against its own prefix; sorting by collection lets
    # each distinct prefix be tested on one contiguous slice.
    encoded = pc.dictionary_encode(collections)
    codes = encoded.indices.fill_null(-1)
    order = pc.sort_indices(codes)
    sorted_codes = codes.take(order).to_numpy(zero_copy_only=False)
    sorted_uris = uris.take(order)
    starts = sorted_codes.searchsorted(range(-1, len(encoded.dictionary)), side="left")
    stops = sorted_codes.searchsorted(range(-1, len(encoded.dictionary)), side="right")
    foreign_parts, relative_parts = [], []
    for code, start, stop in zip(range(-1, len(encoded.dictionary)), starts, stops, strict=True):
        part = sorted_uris.slice(start, stop - start)
        if code == -1:
            foreign_parts.append(pa.nulls(len(part), pa.bool_()))
            relative_parts.append(pa.nulls(len(part), pa.string()))
            continue
        prefix = f"qmd://{encoded.dictionary[code].as_py()}/"
        foreign_parts.append(pc.invert(pc.starts_with(part, prefix)))
        relative_parts.append(pc.utf8_slice_codeunits(part, len(prefix)))
    inverse = pc.sort_indices(order)
    foreign = pa.concat_arrays(foreign_parts).take(inverse) if n else pa.array([], pa.bool_())
    relative = pa.concat_arrays(relative_parts).take(inverse) if n else pa.array([], pa.string())

    invalid = pc.or_(
        pc.or_(pc.equal(relative, ""), pc.match_substring(relative, "\\")),
        pc.or_(
            pc.or_(pc.match_substring(relative, "\u0000"), pc.match_substring(relative, "%")),
            pc.or_(pc.starts_with(relative, "/"), pc.invert(pc.ends_with(relative, ".md"))),
        ),
    )
    # Once no segment is empty, "." or "..", and the path does not start with
    # "/", posix.normalize returns it unchanged: engram's last test adds
    # nothing here (tests/test_locators.py checks this against the port).
    escape = pc.match_substring_regex(relative, _UNSAFE_SEGMENT)
    error = pc.case_when(
        pc.make_struct(foreign, invalid, escape),
        *(pa.scalar(code) for code in LOCATOR_ERROR_CODES),
    )
    error = pc.if_else(pc.is_null(foreign), pa.scalar(None, pa.string()), error)
    safe = pc.and_(pc.is_valid(foreign), pc.is_null(error))
    relative_path = pc.if_else(safe, relative, pa.scalar(None, pa.string()))
    return pa.table(
        {
            "relative_path": relative_path,
            "error": error,
            "record_id": _record_ids(relative_path),
        }
    )


def _record_ids(relative_paths: pa.Array) -> pa.Array:
    # Node's basename(path, ".md") on safe paths (no trailing "/", ending in ".md").
    # (?s): a folder name may hold a newline, and basename strips it all the same.
    last = pc.replace_substring_regex(relative_paths, r"(?s)^.*/", "")
    stripped = pc.utf8_slice_codeunits(last, 0, -3)
    return pc.if_else(
        pc.equal(relative_paths, ".md"),
        pa.scalar("", pa.string()),
        pc.if_else(pc.equal(last, ".md"), last, stripped),
    )
