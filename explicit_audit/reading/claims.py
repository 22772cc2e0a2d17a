"""Spans parsed one by one with orjson, and the record kinds that claim their values.

What every stage of the piece reader (:mod:`explicit_audit.reading.pipeline`)
asks of a span before it is parsed in bulk or read exactly: its bytes, its
value (:data:`UNPARSED` where orjson reads none), the kind that claims the
value (:class:`Claims`), and how that kind is read fast
(:mod:`explicit_audit.reading.fast`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from .._core.describe import FORMATS_DOC, json_type
from .._core.keys import nearest_shape
from .._core.records import RawValue, RecordKind, Rejection, excerpt
from .fast import fast_path
from .limits import Limits
from .spans import Spans

__all__ = [
    "UNPARSED",
    "Claims",
    "ReadFile",
    "parse_all",
    "parse_span",
    "sort_value",
    "span_bytes",
    "span_texts",
]


class _Unparsed:
    def __repr__(self) -> str:
        return "<unparsed>"


#: The value of a span orjson does not read as one value (the exact path judges it).
UNPARSED: Any = _Unparsed()


def sort_value(item: RawValue, kinds: Sequence[RecordKind]) -> RecordKind | Rejection:
    """The kind that claims a value, or the rejection of a value no kind claims."""
    value = item.value
    if not isinstance(value, dict):
        return Rejection(
            item.source_file,
            item.source_line,
            "unknown",
            f"expected a JSON object (a record), got a JSON {json_type(value)}",
            excerpt(item.text),
        )
    for kind in kinds:
        if kind.matches(value):
            return kind
    keys = ", ".join(list(value)[:8])
    nearest = nearest_shape((shape for kind in kinds for shape in kind.shapes), value)
    near = f"; the nearest shape is {nearest}" if nearest else ""
    return Rejection(
        item.source_file,
        item.source_line,
        "unknown",
        f"not a record of any known kind (keys: {keys}){near}; see {FORMATS_DOC} for the "
        "record shapes",
        excerpt(item.text),
    )


@dataclass(frozen=True)
class ReadFile:
    """The file whose pieces are read, as every stage of the piece reader names it.

    Attributes
    ----------
    name : str
        The file's name as shown in tables.
    jsonl : bool
        Whether the file is JSON Lines.
    limits : Limits
    """

    name: str
    jsonl: bool
    limits: Limits


@dataclass(frozen=True)
class Claims:
    """The kinds a value may belong to, in matching order, and those whose rows are kept.

    Attributes
    ----------
    kinds : tuple of RecordKind
    keep : frozenset of str or None
        The kinds whose rows are kept (None: all).
    """

    kinds: tuple[RecordKind, ...]
    keep: frozenset[str] | None

    def claimant(self, value: Any) -> RecordKind | None:
        """The kind that claims a parsed value (as :func:`sort_value` finds it), if any."""
        if value is UNPARSED or not isinstance(value, dict):
            return None
        for kind in self.kinds:
            if kind.matches(value):
                return kind
        return None

    def kept(self, kind: RecordKind) -> bool:
        """Whether the rows of ``kind`` are kept."""
        return self.keep is None or kind.name in self.keep

    def columnar_kind(self, value: Any) -> RecordKind | None:
        """The kind whose columnar path may take a parsed value, if any."""
        kind = self.claimant(value)
        if kind is None or fast_path(kind).columnar is None or not self.kept(kind):
            return None
        return kind


def span_bytes(data: bytes, spans: Spans, index: int) -> bytes:
    """The bytes of span ``index``."""
    return data[int(spans.starts[index]) : int(spans.ends[index])]


def parse_span(data: bytes, spans: Spans, index: int) -> Any:
    """A clean span's value (orjson), or :data:`UNPARSED` when orjson does not read one value.

    orjson is exact but for integers beyond 64 bits, which it reads as floats
    (see :func:`explicit_audit.reading.fallback.long_digit_spans`); it refuses
    what the exact path judges on its own (a lone surrogate), which then goes there.
    """
    try:
        return orjson.loads(span_bytes(data, spans, index))
    except orjson.JSONDecodeError:
        return UNPARSED


def span_texts(data: bytes, spans: Spans, members: np.ndarray, jsonl: bool) -> list[bytes]:
    """The bytes of each member span; lines one after another are split in one call."""
    starts, ends = spans.starts[members], spans.ends[members]
    if jsonl and len(members) > 1 and np.all(starts[1:] == ends[:-1] + 1):
        return data[int(starts[0]) : int(ends[-1])].split(b"\n")
    return [data[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def parse_all(texts: list[bytes]) -> list[Any]:
    """Each text's value (orjson), :data:`UNPARSED` where orjson does not read one value."""
    try:
        return list(map(orjson.loads, texts))
    except orjson.JSONDecodeError:
        pass
    values = []
    for text in texts:
        try:
            values.append(orjson.loads(text))
        except orjson.JSONDecodeError:
            values.append(UNPARSED)
    return values
