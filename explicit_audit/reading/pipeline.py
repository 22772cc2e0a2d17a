"""One reading pipeline for every input shape: split, parse in bulk, reject one by one.

Each piece of a file (:mod:`explicit_audit.reading.content`) is split into
spans (:mod:`explicit_audit.reading.spans`). The clean spans go to the columnar
path in bulk (:mod:`explicit_audit.reading.groups`): grouped by their first
key (:mod:`explicit_audit.reading.grouping`), each group made one part as the
kind and layout of its first span (:mod:`explicit_audit.reading.parts`), a
refused group regrouped exactly and halved until the spans it refuses are
found, or too few are left to be worth a bulk parse
(:data:`~explicit_audit.reading.groups.SMALLEST_HALF`). Those, and the spans
that are not clean, are read by the exact path
(:mod:`explicit_audit.reading.fallback`), which names what is wrong where. No
file ever falls back to a slower path as a whole, and the rows of every path
are sorted back into file order by the kinds' builders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

import numpy as np

from .._core.records import RawValue, RecordKind, Rejection, excerpts_limited
from .claims import Claims, ReadFile, sort_value
from .cuts import WHITESPACE
from .fallback import ExactFallback
from .grouping import array_as_objects
from .groups import GroupReader
from .limits import Limits
from .parts import Made, PartMaker
from .spans import Spans, array_spans, first_solid, split_piece

__all__ = ["PieceReader", "sort_value"]


class PieceReader:
    """Reads the pieces of one file into segments per kind, rejections and a count.

    Parameters
    ----------
    name, jsonl
        The file's name and whether it is JSON Lines (see :class:`~.claims.ReadFile`).
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    keep : set of str or None
        The kinds whose rows are kept (None: all).
    limits : Limits
    emit : callable
        ``emit(kind_name, ("part", part) | ("values", [RawValue, ...]))``.
    reject : callable
        ``reject(rejection)``.
    room : callable, optional
        ``room()``: how many more rejections the caller keeps one by one.
    count_over : callable, optional
        ``count_over(count, first_line, last_line)``: rejections past that room,
        counted without a row built for each (with ``room`` only).
    extra_fields : set of str, optional
        The extra top-level fields the columnar path has taken, shared by a
        load's files (by default this file's own).

    Attributes
    ----------
    values_read : int
        Values read so far: rows of every path, and rejections of values.
    last_item : RawValue, Rejection or None
        The last piece's last value read exactly, when it is the piece's last
        span: the value a cut gzip stream ends in.
    """

    def __init__(
        self,
        name: str,
        jsonl: bool,
        kinds: Sequence[RecordKind],
        keep: set[str] | None,
        limits: Limits,
        emit: Callable[[str, tuple], None],
        reject: Callable[[Rejection], None],
        *,
        room: Callable[[], int] | None = None,
        count_over: Callable[[int, int, int], None] | None = None,
        extra_fields: set[str] | None = None,
    ) -> None:
        self.name = name
        self.jsonl = jsonl
        self.limits = limits
        self.emit = emit
        self.reject = reject
        self.values_read = 0
        self.last_item: RawValue | Rejection | None = None
        self.claims = Claims(tuple(kinds), None if keep is None else frozenset(keep))
        file = ReadFile(name, jsonl, limits)
        fields = set() if extra_fields is None else extra_fields
        self.groups = GroupReader(self.claims, PartMaker(file, self.claims, fields))
        self.fallback = ExactFallback(file, self.claims.kinds, room, count_over)

    def split(self, data: bytes, first_line: int) -> Spans | None:
        """The spans :meth:`read` would split a piece into, or None where it decides later.

        It reads nothing else of the reader (a pure function of the piece), so
        it may run for the next piece in another thread (see
        :func:`explicit_audit.reading.ahead.read_ahead`). None for a ``.json``
        piece that opens with ``[``: :meth:`read` first tries it as one array.
        """
        if not self.jsonl:
            head = first_solid(data)
            if head is not None and data[head : head + 1] == b"[":
                return None
        return split_piece(data, first_line, self.jsonl, self.limits)

    def read(self, data: bytes, first_line: int, spans: Spans | None = None) -> None:
        """Read one piece that starts on file line ``first_line``.

        ``spans``, when given, are what :meth:`split` gave for the same piece.
        Every rejection's excerpt is cut at ``limits.excerpt_chars``.
        """
        with excerpts_limited(self.limits.excerpt_chars):
            self._read(data, first_line, spans)

    def _read(self, data: bytes, first_line: int, spans: Spans | None) -> None:
        if spans is None:
            spans = self.split(data, first_line)
        if spans is None:  # a .json piece that opens an array: tried as one first
            if self._read_array(data, first_line) or self._read_line_array(data, first_line):
                return
            spans = split_piece(data, first_line, self.jsonl, self.limits)
        if not len(spans):
            return
        clean = np.flatnonzero(spans.clean)
        junk: list[tuple[Rejection, np.ndarray]] = []
        exact = self.fallback.dirty(data, spans, junk)
        known: dict[int, RecordKind] = {}
        if len(clean):
            made, leftovers, unclaimed = self.groups.read(data, spans, clean)
            self._emit_parts(made)
            if unclaimed:
                leftovers += self.fallback.junk(data, spans, unclaimed, junk)
            if leftovers:
                self.fallback.leftovers(data, spans, leftovers, exact, known)
        if junk:
            self.values_read += self.fallback.rejected_in_bulk(junk, exact)
        exact.sort(key=attrgetter("source_line"))
        # The value a cut gzip stream ends in is the piece's last span, read exactly.
        last = exact[-1] if exact else None
        self.last_item = last if last is not None and last.source_line >= spans.lines[-1] else None
        self._emit_exact(exact, known)

    def _emit_exact(self, exact: list[RawValue | Rejection], known: dict[int, RecordKind]):
        """Reject, or sort into their kinds and emit, the values read exactly, in line order.

        ``known`` holds the kind already found of a value (by its ``id``).
        """
        values: dict[str, list[RawValue]] = {}
        kept: dict[str, bool] = {}
        for item in exact:
            if isinstance(item, Rejection):
                # A file-level problem (line 0) is not a value that was read.
                self.values_read += item.source_line > 0
                self.reject(item)
                continue
            self.values_read += 1
            kind = known.get(id(item)) or sort_value(item, self.claims.kinds)
            if isinstance(kind, Rejection):
                self.reject(kind)
                continue
            name = kind.name
            if name not in kept:
                kept[name] = self.claims.kept(kind)
                values[name] = []
            if kept[name]:
                values[name].append(item)
        for kind_name, items in values.items():
            if items:
                self.emit(kind_name, ("values", items))

    def _emit_parts(self, made: list[Made]) -> None:
        for kind_name, part, rows in made:
            self.emit(kind_name, ("part", part))
            self.values_read += rows

    def _read_array(self, data: bytes, first_line: int) -> bool:
        """Whether a piece that is one array of objects, each starting a line, was read in bulk.

        ``[\\n{...},\\n{...}\\n]`` (elements at column 0 or all at one indent,
        each starting a line) is read as the objects one after another: the
        outer brackets and the commas between elements are made white space
        (same length, same lines) and the columnar path takes the whole
        piece. This holds only when every element is then a clean span and
        the columnar path takes every one of them, one object per span: a
        comma made white space inside an element would leave two values
        without a separator, which no parser takes. Anything else is read as
        written.
        """
        objects = array_as_objects(data)
        if objects is None:
            return False
        spans = split_piece(objects, first_line, False, self.limits)
        if not len(spans) or not spans.clean.all():
            return False
        # The parts wait until the columnar path has taken every span: one it
        # refuses sends the whole piece back to be read as written.
        made, leftovers, unclaimed = self.groups.read(objects, spans, np.arange(len(spans)))
        if leftovers or unclaimed:
            return False
        self._emit_parts(made)
        self.last_item = None  # every value was read: none is cut short
        return True

    def _read_line_array(self, data: bytes, first_line: int) -> bool:
        """Whether a piece that is one array of objects was read in bulk, by its elements.

        The elements are found in one pass over the bytes (:func:`array_spans`,
        ``[{...}, {...}]`` on one line or written any other way) and go to the
        columnar path as JSON Lines' lines do. This holds only when every
        element is a clean span and the columnar path takes them all as one
        part: elements that share a line keep their order only so. Anything
        else is read as written, element by element.
        """
        spans = array_spans(data, first_line, self.limits)
        if spans is None or not len(spans) or not spans.clean.all():
            return False
        # Elements that hold no line end, joined by one, are lines: parsed in blocks at once.
        one_line = b"\n" not in data.strip(WHITESPACE)
        made, leftovers, unclaimed = self.groups.read(data, spans, np.arange(len(spans)), one_line)
        if leftovers or unclaimed or len(made) != 1:
            return False
        self._emit_parts(made)
        self.last_item = None  # every value was read: none is cut short
        return True
