"""What the reading core hands to each record kind.

The reading core (:mod:`explicit_audit._reader`) turns files into
:class:`RawValue` objects (parsed JSON values with their provenance) and
:class:`Rejection` objects (input that could not be read). Each record kind
(receipts, plans, requests, decisions) is a :class:`RecordKind`: a shape test
that claims a parsed value, and a builder that turns the claimed values into
that kind's DataFrames plus the values that do not fit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = [
    "KindTables",
    "RawValue",
    "RecordKind",
    "Rejection",
    "excerpt",
    "lone_surrogate",
    "segment_values",
    "sort_out",
]


@dataclass(frozen=True, slots=True)
class RawValue:
    """One JSON value as read from a file.

    Attributes
    ----------
    source_file : str
        The file it came from, as given or found.
    source_line : int
        The 1-based line on which the value starts.
    value : Any
        The value parsed with orjson: ints stay ints, floats keep the exact
        value written, strings are not normalised. Hashes are rebuilt from
        this, never from DataFrame columns.
    text : bytes
        The raw bytes of the value as written (UTF-8), for excerpts and for
        checks that need the exact text.
    """

    source_file: str
    source_line: int
    value: Any
    text: bytes


@dataclass(frozen=True, slots=True)
class Rejection:
    """One input that was read but could not be loaded.

    Attributes
    ----------
    source_file, source_line :
        Where the value starts (``source_line`` is 0 when the whole file is at fault).
    kind : str
        The record kind it was meant for (``"receipts"``, ...), or ``"unknown"``
        when no kind claimed it, or ``"file"`` when the file itself is at fault.
    reason : str
        What is wrong, naming the field.
    raw : str
        An excerpt of the raw text (at most a few hundred characters).
    """

    source_file: str
    source_line: int
    kind: str
    reason: str
    raw: str


@dataclass(slots=True)
class KindTables:
    """What a record kind's builder returns: its tables and what did not fit."""

    tables: dict[str, pd.DataFrame]
    rejected: list[Rejection] = field(default_factory=list)


@dataclass(frozen=True)
class RecordKind:
    """One record kind the loader can sort values into.

    Attributes
    ----------
    name : str
        The kind's name, also used in the rejected table (``"receipts"``).
    tables : tuple of str
        The names of the :class:`~explicit_audit.Audit` tables it fills; the
        first is its main table.
    matches : callable
        ``matches(value) -> bool``: whether a parsed JSON value has this kind's
        shape. Shapes of different kinds must not overlap.
    build : callable
        ``build(segments) -> KindTables``. ``segments`` holds, file by file,
        ``("values", [RawValue, ...])`` read value by value and, for a kind
        with a columnar path, ``("part", ColumnarPart)``; within a file they
        come in any order, and the builder puts the rows in file order
        (by ``source_line``). A value that is claimed but does not fit goes to
        ``rejected``; nothing is dropped.
    layout : callable, optional
        ``layout(value) -> str``: the line layout of a value this kind claims
        (``"bare"``, ``"wrapped"``, ...), for grouping values in bulk.
    columnar : callable, optional
        ``columnar(layout, first_value) -> (schema, convert) | None``: the
        columnar path for values of one layout, given the bytes of the first:
        the Arrow schema expected of a value and ``convert(piece) ->
        ColumnarPart``, which raises
        :class:`~explicit_audit._core.columnar.NotClean` for anything it is
        not sure of (those values are then read exactly). None where the
        layout has no columnar path.
    """

    name: str
    tables: tuple[str, ...]
    matches: Callable[[Any], bool]
    build: Callable[[Sequence[tuple[str, Any]]], KindTables]
    layout: Callable[[Any], str] | None = None
    columnar: Callable[[str, bytes], Any] | None = None


def segment_values(segments: Sequence[tuple[str, Any]]) -> list[RawValue]:
    """Every value of ``("values", [...])`` segments, in file order.

    For a kind without a columnar path, whose segments are all values.
    """
    values = [item for what, items in segments if what == "values" for item in items]
    return _in_file_order(values)


def _in_file_order(values: list[RawValue]) -> list[RawValue]:
    rank: dict[str, int] = {}
    for item in values:
        rank.setdefault(item.source_file, len(rank))
    return sorted(values, key=lambda item: (rank[item.source_file], item.source_line))


def excerpt(text: bytes | str, limit: int = 300) -> str:
    """A short, printable excerpt of raw input for the rejected table."""
    if isinstance(text, str):
        # Text decoded with surrogateescape carries invalid bytes as lone surrogates.
        text = text[: limit * 4].encode("utf-8", errors="surrogateescape")
    text = text[: limit * 4].decode("utf-8", errors="replace")
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def sort_out(
    values: Sequence[RawValue],
    kind: str,
    parse: Callable[[Any], Any],
    misfits: type[Exception] | tuple[type[Exception], ...],
    *,
    text_only: bool = False,
) -> tuple[list[tuple[RawValue, Any]], list[Rejection]]:
    """Parse each value of a kind; one that does not fit becomes a Rejection.

    Parameters
    ----------
    values : sequence of RawValue
    kind : str
        The kind's name, for the rejected table.
    parse : callable
        ``parse(value) -> parsed``; raises one of ``misfits``, whose message
        names the field, when the value does not fit.
    misfits : exception type or tuple of them
    text_only : bool, default False
        Reject a value holding a lone surrogate anywhere (see
        :func:`lone_surrogate`): for kinds whose every string goes into a
        text column.

    Returns
    -------
    kept : list of (RawValue, parsed)
    rejected : list of Rejection
    """
    kept: list[tuple[RawValue, Any]] = []
    rejected: list[Rejection] = []
    for item in values:
        if text_only and _MAYBE_SURROGATE.search(item.text):
            where = lone_surrogate(item.value)
            if where is not None:
                rejected.append(
                    Rejection(
                        item.source_file,
                        item.source_line,
                        kind,
                        f"{where} holds a lone surrogate (an unpaired \\uD800-\\uDFFF), "
                        "which cannot be stored as text",
                        excerpt(item.text),
                    )
                )
                continue
        try:
            kept.append((item, parse(item.value)))
        except misfits as exc:
            rejected.append(
                Rejection(item.source_file, item.source_line, kind, str(exc), excerpt(item.text))
            )
    return kept, rejected
