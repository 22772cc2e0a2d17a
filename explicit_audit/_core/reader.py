"""The reading core: files, folders and globs into JSON values with provenance.

What it reads (``docs/formats.md``, "Files"):

- ``.jsonl``: one JSON value per line, blank lines allowed;
- ``.json``: one array of records, one record, or several JSON values one
  after another (pretty-printed CLI outputs appended to one log included);
- either of them gzip-compressed (``.gz``);
- ``.yaml`` / ``.yml`` files are routing policies, handed to the policy loader.

Every value keeps its file and the 1-based line on which it starts. Input
that cannot be read becomes a :class:`~explicit_audit._records.Rejection`;
nothing is dropped. For a file, ``values + rejections == values read``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import AuditError
from .columns import INT64_MAX
from .records import RawValue, Rejection, excerpt

__all__ = [
    "DATA_SUFFIXES",
    "POLICY_SUFFIXES",
    "FileContent",
    "has_long_integer",
    "parse_content",
    "read_file",
    "resolve_sources",
]

DATA_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz", ".ndjson.gz", ".json.gz")
POLICY_SUFFIXES = (".yaml", ".yml")

_BOM = b"\xef\xbb\xbf"
_GZIP_CHUNK = 1 << 20
_WHITESPACE = b" \t\r\n"
_STDLIB_DECODER = json.JSONDecoder()
_COLUMN0_VALUE_START = re.compile(r"^[\[{]", re.MULTILINE)
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _suffix_of(path: Path) -> str:
    name = path.name.lower()
    for suffix in (*DATA_SUFFIXES, *POLICY_SUFFIXES):
        if name.endswith(suffix):
            return suffix
    return ""


def _readable_files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(
            Path(root, name)
            for name in files
            if not name.startswith(".") and _suffix_of(Path(name))
        )
    return sorted(found)


def resolve_sources(source: str | os.PathLike | Iterable[str | os.PathLike]) -> list[Path]:
    """Expand a file, a folder, a glob or a list of them into files to read.

    Parameters
    ----------
    source : str, path-like, or an iterable of them
        A file; a folder (every readable file below it, recursively, hidden
        files and folders skipped); or a glob pattern (``**`` allowed).

    Returns
    -------
    list of pathlib.Path
        Files in sorted order, each once.

    Raises
    ------
    AuditError
        When nothing matches, or a named file has a suffix the kit cannot read.
    """
    if isinstance(source, str | os.PathLike):
        sources = [source]
    else:
        sources = list(source)
    if not sources:
        raise AuditError("no source given: name a file, a folder or a glob to load.")
    files: list[Path] = []
    for item in sources:
        path = Path(item)
        if path.is_dir():
            found = _readable_files(path)
            if not found:
                raise AuditError(
                    f"{path}: the folder holds no file to load (looked for "
                    f"{', '.join(DATA_SUFFIXES + POLICY_SUFFIXES)}). Point the loader at the "
                    "folder that holds the logs."
                )
            files.extend(found)
        elif path.is_file():
            if not _suffix_of(path):
                raise AuditError(
                    f"{path}: cannot read this kind of file; expected one of "
                    f"{', '.join(DATA_SUFFIXES + POLICY_SUFFIXES)}."
                )
            files.append(path)
        else:
            matches = sorted(
                Path(m) for m in glob.glob(str(item), recursive=True) if Path(m).is_file()
            )
            matches = [m for m in matches if _suffix_of(m)]
            if not matches:
                raise AuditError(
                    f"{item}: no such file or folder, and no readable file matches it as a glob."
                )
            files.extend(matches)
    seen: set[Path] = set()
    unique = []
    for path in files:
        # The same file named twice (a/x.jsonl and a/b/../x.jsonl) is read once.
        real = path.resolve()
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


@dataclass(frozen=True, slots=True)
class FileContent:
    """The decompressed bytes of one file, and what went wrong reading them.

    Attributes
    ----------
    path : str
        The file, as named to the loader.
    data : bytes
        Its content (decompressed, without a leading UTF-8 byte order mark).
    lines_data : bool
        True for JSON Lines (``.jsonl``), False for ``.json``.
    problem : Rejection or None
        A file-level problem (a truncated gzip stream, an unreadable file);
        ``data`` then holds what could be read before it.
    """

    path: str
    data: bytes
    lines_data: bool
    problem: Rejection | None = None


def _gunzip(raw: bytes, path: str) -> tuple[bytes, Rejection | None]:
    """Decompress every gzip member of a file, keeping what precedes damage.

    ``gzip`` and ``cat a.gz b.gz`` make files of several members; each is
    read. A truncated or damaged stream keeps the bytes read before it, and
    says where the rest was lost.
    """
    parts: list[bytes] = []
    rest = raw
    while rest.strip(b"\0"):  # gzip tools allow zero padding after the last member
        decompressor = zlib.decompressobj(wbits=31)
        start = 0
        try:
            while start < len(rest) and not decompressor.eof:
                parts.append(decompressor.decompress(rest[start : start + _GZIP_CHUNK]))
                start += _GZIP_CHUNK
        except zlib.error as exc:
            data = b"".join(parts)
            if not data:
                return b"", Rejection(path, 0, "file", f"not a readable gzip file ({exc})", "")
            if start == 0:
                return data, _lost(path, data, "the bytes after the last gzip member are not gzip")
            return data, _lost(path, data, f"gzip data is damaged ({exc})")
        if not decompressor.eof:
            return b"".join(parts), _lost(path, b"".join(parts), "gzip stream is truncated")
        # What follows this member: the rest of the chunk read, then the rest of the file.
        rest = decompressor.unused_data + rest[start:]
    return b"".join(parts), None


def _lost(path: str, data: bytes, what: str) -> Rejection:
    """The file-level rejection for a gzip stream cut short after ``data``.

    When ``data`` ends inside a line, that line's value is the one cut, and
    the rejection names its line; otherwise it is about the file (line 0).
    """
    complete = not data or data.endswith(b"\n")
    line = 0 if complete else data.count(b"\n") + 1
    where = "after the last complete line" if complete else f"from line {line} on"
    return Rejection(
        path,
        line,
        "file",
        f"{what}: {len(data)} bytes could be read, the rest of the file is lost {where}",
        "" if complete else excerpt(data[data.rfind(b"\n") + 1 :]),
    )


def read_file(path: Path) -> FileContent:
    """Read one data file's bytes, decompressing gzip.

    Parameters
    ----------
    path : pathlib.Path
        A ``.jsonl`` (or ``.ndjson``) or ``.json`` file, possibly gzip-compressed.

    Returns
    -------
    FileContent
    """
    name = str(path)
    suffix = _suffix_of(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return FileContent(name, b"", True, Rejection(name, 0, "file", f"cannot read: {exc}", ""))
    problem = None
    if suffix.endswith(".gz") or raw[:2] == b"\x1f\x8b":
        raw, problem = _gunzip(raw, name)
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    return FileContent(name, raw, suffix.startswith((".jsonl", ".ndjson")), problem)


def _parse_error(exc: Exception, first_line: int | None = None) -> str:
    """A parser's message, with the position said in the file's own lines.

    ``first_line`` is the file line on which the parsed text starts; without
    it, the text was one line and only the column is given.
    """
    if not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    if first_line is None:
        return f"{exc.msg} (column {exc.colno})"
    return f"{exc.msg} (line {first_line + exc.lineno - 1}, column {exc.colno})"


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


_LONG_DIGITS = re.compile(rb"(?<![\d.])\d{19,}")


def has_long_integer(text: bytes | memoryview) -> bool:
    """Whether the text may hold an integer beyond the signed 64-bit range.

    orjson reads such an integer as a float, silently, and Arrow infers a
    float column for it: text that holds one is parsed by the standard
    library, which keeps every integer exact. A digit run inside a string
    may answer True too; that only costs speed.
    """
    return any(int(run.group()) > INT64_MAX for run in _LONG_DIGITS.finditer(text))


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
        raise first or json.JSONDecodeError(
            f"invalid UTF-8 ({exc.reason})", text.decode("utf-8", "replace"), exc.start
        ) from None
    try:
        return json.loads(decoded, parse_constant=_reject_constant)
    except RecursionError:
        raise first or json.JSONDecodeError("nested too deeply", decoded, 0) from None
    except json.JSONDecodeError as exc:
        raise first or exc from None
    except ValueError as exc:
        raise first or json.JSONDecodeError(str(exc), decoded, 0) from None


def _iter_lines(content: FileContent) -> Iterator[RawValue | Rejection]:
    data = content.data
    start = 0
    number = 0
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            end = size
        number += 1
        line = data[start:end]
        start = end + 1
        if not line.strip(_WHITESPACE):
            continue
        try:
            value = _loads_text(line)
        except json.JSONDecodeError as exc:
            yield Rejection(
                content.path,
                number,
                "unknown",
                f"invalid JSON: {_parse_error(exc)}",
                excerpt(line),
            )
            continue
        yield RawValue(content.path, number, value, line)


def _iter_concatenated(content: FileContent) -> Iterator[RawValue | Rejection]:
    text = content.data.decode("utf-8", errors="surrogateescape")
    position = 0
    line = 1
    size = len(text)
    while True:
        next_position = _skip_whitespace(text, position)
        line += text.count("\n", position, next_position)
        position = next_position
        if position >= size:
            return
        if text[position] == "[":
            position, line = yield from _iter_array(content.path, text, position, line)
            continue
        end, item = _decode_one(content.path, text, position, line)
        yield item
        line += text.count("\n", position, end)
        position = end


def _skip_whitespace(text: str, position: int) -> int:
    size = len(text)
    while position < size and text[position] in " \t\r\n":
        position += 1
    return position


def _resync(text: str, position: int) -> int:
    """Where to resume after a value that cannot be parsed.

    Pretty-printed values appended to a log start at column 0 with ``{`` or
    ``[``; resuming at the next such line keeps every later value.
    """
    match = _COLUMN0_VALUE_START.search(text, text.find("\n", position) + 1 or len(text))
    return match.start() if match and text.find("\n", position) != -1 else len(text)


def _element_resync(indent: int):
    """Where to resume inside an array whose elements start at column ``indent``.

    The next line that starts an object or array at that column: the next
    element of a pretty-printed array. Without one (a single-line array), the
    rest of the text is one rejected value.
    """
    start = re.compile(rf"^[ \t]{{{indent}}}[\[{{]", re.MULTILINE)

    def resync(text: str, position: int) -> int:
        newline = text.find("\n", position)
        match = start.search(text, newline + 1) if newline != -1 else None
        return match.start() + indent if match else len(text)

    return resync


def _decode_one(
    path: str, text: str, position: int, line: int, resync=_resync
) -> tuple[int, RawValue | Rejection]:
    try:
        value, end = _STDLIB_DECODER.raw_decode(text, position)
    except RecursionError:
        end = resync(text, position)
        return end, Rejection(
            path, line, "unknown", "invalid JSON: nested too deeply", excerpt(text[position:end])
        )
    except json.JSONDecodeError as exc:
        end = resync(text, position)
        return (
            end,
            Rejection(
                path,
                line,
                "unknown",
                f"invalid JSON: {_parse_error(exc, 1)}",  # raw_decode counts from the top
                excerpt(text[position:end]),
            ),
        )
    raw = text[position:end]
    if _ESCAPED_BYTE.search(raw):
        return end, Rejection(path, line, "unknown", "invalid UTF-8 in this value", excerpt(raw))
    try:
        # The standard library's decoder accepts NaN and Infinity; JSON does not.
        value = _loads_text(raw.encode("utf-8", errors="surrogatepass"))
    except json.JSONDecodeError as exc:
        return end, Rejection(
            path, line, "unknown", f"invalid JSON: {_parse_error(exc, line)}", excerpt(raw)
        )
    return end, RawValue(path, line, value, raw.encode("utf-8"))


def _iter_array(path: str, text: str, position: int, line: int):
    """Yield the elements of a top-level array, each with its own line.

    An element that cannot be read is rejected, and reading goes on at the
    next element of a pretty-printed array (see :func:`_element_resync`).
    """
    start_line = line
    position += 1
    resync = None
    while True:
        next_position = _skip_whitespace(text, position)
        line += text.count("\n", position, next_position)
        position = next_position
        if position < len(text) and text[position] == "," and resync is not None:
            # A separator left over from resuming after a rejected element.
            position = _skip_whitespace(text, position + 1)
            line += text.count("\n", next_position, position)
        if position >= len(text):
            yield Rejection(
                path, start_line, "unknown", "invalid JSON: the array is never closed", ""
            )
            return position, line
        if text[position] == "]":
            return position + 1, line
        if resync is None:
            resync = _element_resync(position - (text.rfind("\n", 0, position) + 1))
        end, item = _decode_one(path, text, position, line, resync)
        yield item
        line += text.count("\n", position, end)
        position = end
        if isinstance(item, Rejection):
            if position >= len(text):
                return position, line  # the rejection holds the rest of the text
            continue
        next_position = _skip_whitespace(text, end)
        line += text.count("\n", end, next_position)
        position = next_position
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


def parse_content(content: FileContent) -> Iterator[RawValue | Rejection]:
    """Every JSON value of one file, or a Rejection where one cannot be read.

    Parameters
    ----------
    content : FileContent

    Yields
    ------
    RawValue or Rejection
        In file order. A file-level problem (a truncated gzip stream) comes
        last, after the values read before it: with line 0 when no value was
        cut, or else as the rejection of the value it cut.
    """
    items = _iter_lines(content) if content.lines_data else _iter_concatenated(content)
    problem = content.problem
    if problem is None:
        yield from items
        return
    last = None
    for item in items:
        if last is not None:
            yield last
        last = item
    if isinstance(last, Rejection) and problem.source_line > 0:
        # The data ends inside a value: the last one rejected is the one cut
        # off (it may start lines earlier in a .json log). Say why, once.
        yield Rejection(last.source_file, last.source_line, "file", problem.reason, last.raw)
        return
    if last is not None:
        yield last
    yield problem
