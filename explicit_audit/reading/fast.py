"""How a record kind is read fast: the reading engine's hooks, apart from what a kind declares.

A :class:`~explicit_audit._core.records.RecordKind` declares what a plug-in
author knows (its shape test, its builder, its tables and checks). A kind of
the kit may add a :class:`FastPath` as ``RecordKind(fast=...)``: the reading
engine then parses its values in bulk into Arrow columns, or record by record
from values parsed in bulk. A kind without one (every plug-in, unless it
wants more speed) is read value by value, with the very same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["NO_FAST_PATH", "FastPath", "fast_path"]


def _one_layout(value: Any) -> str:
    return ""


@dataclass(frozen=True)
class FastPath:
    """A kind's hooks into the reading engine; each may be left out.

    Attributes
    ----------
    layout : callable
        ``layout(value) -> str``: the line layout of a value the kind claims
        (``"bare"``, ``"wrapped"``, ...), for grouping values in bulk; by
        default one layout for all.
    columnar : callable, optional
        ``columnar(layout, first_value) -> ColumnarReader | (schema, convert) | None``:
        the columnar path for values of one layout, given the bytes of the
        first: the Arrow schema expected of a value and ``convert(piece) ->
        ColumnarPart``, which returns
        :attr:`~explicit_audit.reading.columnar.Refused.NOT_CLEAN` for a piece
        holding anything it is not sure of (those values are then read
        exactly). None where the layout has no columnar path. A
        :class:`~explicit_audit.reading.columnar.ColumnarReader` may add a
        ``beside`` step: the kind's own pass over the piece's bytes, run
        while Arrow parses them.
    bulk : callable, optional
        ``bulk(values, texts, lines, source_file, guard) -> (part, refused)``:
        for a group of spans the columnar path refused whole (one odd record
        among many), rows built record by record from values parsed in bulk
        (orjson over the group), so that only the records it refuses are read
        value by value. ``values`` are the parsed values of spans this kind
        claims (in file order), ``texts`` their bytes, ``lines`` their lines;
        ``guard(text)`` says whether a text may hold what orjson does not
        read exactly (an integer beyond 64 bits, a nesting deeper than the
        limit). It returns a
        :class:`~explicit_audit.reading.columnar.ColumnarPart` or None, and
        the positions it refuses, which are read exactly. A value is taken
        only when the exact path would load the very same row with no key note.
    """

    layout: Callable[[Any], str] = _one_layout
    columnar: Callable[[str, bytes], Any] | None = None
    bulk: Callable[..., tuple[Any, list[int]]] | None = None


#: The hooks of a kind read value by value only: a plug-in's, by default.
NO_FAST_PATH = FastPath()


def fast_path(kind: Any) -> FastPath:
    """The :class:`FastPath` of a record kind (:data:`NO_FAST_PATH` where it declares none)."""
    return kind.fast or NO_FAST_PATH
