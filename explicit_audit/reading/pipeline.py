"""One reading pipeline for every input shape: split, parse in bulk, reject one by one.

Each piece of a file (:mod:`explicit_audit.reading.content`) is split into
spans (:mod:`explicit_audit.reading.spans`). The clean spans go to the columnar
path in bulk: first all of them as the kind and layout of the first one
(a file of one record shape costs one pyarrow parse per piece); when that is
refused, each clean span is parsed on its own, sorted into its kind and
layout, and each group is parsed in bulk again, halving a refused group until
the spans it refuses are found. Those, and the spans that are not clean, are
read by the exact path (:mod:`explicit_audit.reading.exact`), which names what
is wrong where. No file ever falls back to a slower path as a whole, and the
rows of every path are sorted back into file order by the kinds' builders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import orjson

from .._core.columns import EXTRA_JSON, OVERFLOW, overflow_column
from .._core.describe import FORMATS_DOC, json_type
from .._core.keys import columnar_fits, likely_typos, nearest_shape
from .._core.overlap import both
from .._core.records import RawValue, RecordKind, Rejection, excerpt
from .columnar import ColumnarReader, JsonlPiece, NotClean, TooManyFields, parse_piece
from .exact import has_long_integer, iter_region, parse_line, too_deep_reason, too_large
from .limits import Limits
from .memory import PIECE_BYTES, hand_back
from .spans import Spans, array_spans, first_solid, short_groups, split_piece
from .wide_keys import set_apart

__all__ = ["PieceReader", "sort_value"]

#: How many rows the columnar path may parse, as a multiple of a piece's clean
#: spans, while it halves refused groups; past it, a refused group is read
#: value by value at once (every row refused costs as much either way).
_BISECT_BUDGET = 4

#: A run of digits that may be an integer beyond 64 bits (see _long_digit_spans).
_LONG_RUN = 19
#: Each digit written as ``0``: a span holds a run of ``_LONG_RUN`` digits exactly
#: where, so written, it holds ``_LONG_ZEROS`` (no other byte becomes ``0``), which
#: ``in`` finds many times faster than a regular expression's search for the run.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_ZEROS = b"0" * _LONG_RUN
#: Spans asked about whose bytes are under 1/8 of the piece are searched one by one,
_WHOLE_SCAN_SHARE = 8
#: while they number under one per this many bytes of the piece (each search is a
#: Python call; the scan costs a few NumPy passes over every byte).
_BYTES_PER_SEARCH = 256

#: An object or an array opening.
_CONTAINER = re.compile(rb"[\[{]")

#: How many spans the bulk path parses at a time (see ``PieceReader._bulk_values``).
_BULK_RUN = 1 << 14


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


class PieceReader:
    """Reads the pieces of one file into segments per kind, rejections and a count.

    Parameters
    ----------
    name : str
        The file's name as shown in tables.
    jsonl : bool
        Whether the file is JSON Lines.
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    keep : set of str or None
        The kinds whose rows are kept (None: all).
    limits : Limits
    emit : callable
        ``emit(kind_name, ("part", part) | ("values", [RawValue, ...]))``.
    reject : callable
        ``reject(rejection)``.

    Attributes
    ----------
    values_read : int
        Values read so far: rows of every path, and rejections of values.
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
    ) -> None:
        self.name = name
        self.jsonl = jsonl
        self.kinds = list(kinds)
        self.keep = keep
        self.limits = limits
        self.emit = emit
        self.reject = reject
        self.values_read = 0
        self.last_item: RawValue | Rejection | None = None
        self._mixed_keys: set[bytes] = set()
        # First keys whose spans the columnar path refused in an earlier piece, of a
        # kind that reads record by record in bulk: their later spans go there at once.
        self._bulk_keys: set[bytes] = set()
        #: ``room()``: how many more rejections the caller keeps one by one (None: all).
        self.room: Callable[[], int] | None = None
        #: ``count_over(count, first_line, last_line)``: rejections past that room, counted.
        self.count_over: Callable[[int, int, int], None] | None = None
        #: The extra top-level fields the columnar path has taken (shared by a load's files).
        self.extra_fields: set[str] = set()
        #: Per kind, the extra top-level fields its columnar parts have taken as columns.
        self._kind_fields: dict[str, set[str]] = {}
        #: Reading an array on one line: its elements, joined by line ends, are lines.
        self._one_line = False

    # -- one piece -------------------------------------------------------------------

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
        """
        if spans is None:
            spans = self.split(data, first_line)
        if spans is None:  # a .json piece that opens an array: tried as one first
            if self._read_array(data, first_line) or self._read_line_array(data, first_line):
                return
            spans = split_piece(data, first_line, self.jsonl, self.limits)
        if not len(spans):
            return
        exact: list[RawValue | Rejection] = []
        clean = np.flatnonzero(spans.clean)
        junk: list[tuple[Rejection, np.ndarray]] = []
        self._read_dirty(data, spans, exact, junk)
        known: dict[int, RecordKind] = {}
        if len(clean):
            leftovers, unclaimed = self._columnar(data, spans, clean)
            if unclaimed:
                leftovers += self._junk(data, spans, unclaimed, junk)
            if leftovers:
                self._leftovers(data, spans, leftovers, exact, known)
        if junk:
            self._rejected_in_bulk(junk, exact)
        exact.sort(key=_line_of)
        # The value a cut gzip stream ends in is the piece's last span, read exactly.
        last = exact[-1] if exact else None
        self.last_item = last if last is not None and last.source_line >= spans.lines[-1] else None
        values: dict[str, list[RawValue]] = {}
        kept: dict[str, bool] = {}
        for item in exact:
            if isinstance(item, Rejection):
                self._count(item)
                self.reject(item)
                continue
            self.values_read += 1
            kind = known.get(id(item)) or sort_value(item, self.kinds)
            if isinstance(kind, Rejection):
                self.reject(kind)
                continue
            name = kind.name
            if name not in kept:
                kept[name] = self._kept(kind)
                values[name] = []
            if kept[name]:
                values[name].append(item)
        for kind_name, items in values.items():
            if not items:
                continue
            self.emit(kind_name, ("values", items))

    def _read_array(self, data: bytes, first_line: int) -> bool:
        """Whether a piece that is one array of objects, each starting a line, was read in bulk.

        ``[\n{...},\n{...}\n]`` (elements at column 0 or all at one indent, each
        starting a line) is read as the objects one after another: the outer
        brackets and the commas between elements are made white space (same
        length, same lines) and the columnar path takes the whole piece. This
        holds only when every element is then a clean span and the columnar
        path takes every one of them, one object per span: a comma made white
        space inside an element would leave two values without a separator,
        which no parser takes. Anything else is read as written.
        """
        objects = _array_as_objects(data)
        if objects is None:
            return False
        spans = split_piece(objects, first_line, False, self.limits)
        if not len(spans) or not spans.clean.all():
            return False
        # The columnar path's parts wait until it has taken every span: one it
        # refuses sends the whole piece back to be read as written.
        parts: list[tuple[str, tuple]] = []
        emit, values_read = self.emit, self.values_read
        self.emit = lambda kind, segment: parts.append((kind, segment))
        try:
            leftovers, unclaimed = self._columnar(objects, spans, np.arange(len(spans)))
        finally:
            self.emit = emit
        if leftovers or unclaimed:
            self.values_read = values_read
            return False
        for kind, segment in parts:
            self.emit(kind, segment)
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
        parts: list[tuple[str, tuple]] = []
        emit, values_read = self.emit, self.values_read
        self.emit = lambda kind, segment: parts.append((kind, segment))
        # Elements that hold no line end, joined by one, are lines: parsed in blocks at once.
        self._one_line = b"\n" not in data.strip(_WHITESPACE)
        try:
            leftovers, unclaimed = self._columnar(data, spans, np.arange(len(spans)))
        finally:
            self.emit = emit
            self._one_line = False
        if leftovers or unclaimed or len(parts) != 1:
            self.values_read = values_read
            return False
        self.emit(*parts[0])
        self.last_item = None  # every value was read: none is cut short
        return True

    def _unclaimed(
        self, data: bytes, spans: Spans, index: int, value: Any, verdicts: dict
    ) -> Rejection | None:
        """The rejection of a clean span no columnar kind took, or None when a kind claims it.

        ``verdicts`` holds the verdict of each distinct text seen in this piece
        (a rejection made at line 0, or None); the rejection is the one the
        exact path gives the value (see :meth:`_exact_span` and :func:`sort_value`).
        """
        start, end = int(spans.starts[index]), int(spans.ends[index])
        text = data[start:end].rstrip(b" \t\r\n")
        if text in verdicts:
            verdict = verdicts[text]
        else:
            too_deep = too_deep_reason(text, self.limits)
            if too_deep:
                verdict = Rejection(self.name, 0, "unknown", too_deep, excerpt(text))
            else:
                kind = sort_value(RawValue(self.name, 0, value, text), self.kinds)
                verdict = kind if isinstance(kind, Rejection) else None
            verdicts[text] = verdict
        if verdict is None:
            return None
        return Rejection(
            self.name, int(spans.lines[index]), verdict.kind, verdict.reason, verdict.raw
        )

    def _junk(
        self, data: bytes, spans: Spans, unclaimed: dict, junk: list[tuple[Rejection, np.ndarray]]
    ) -> list[tuple]:
        """Spans no kind claims, judged once per distinct text; returns those left to read.

        Each text's verdict (:meth:`_unclaimed`) is found once; its spans'
        lines go to ``junk`` with it, as ``(verdict at line 0, lines)``, no
        row built yet (:meth:`_rejected_in_bulk` builds those that are kept).
        A span that may hold an integer beyond 64 bits, or whose text no
        verdict rejects, is returned to be read as before.
        """
        asked = [index for _, members in unclaimed.values() for index in members]
        long_digits = _long_digit_spans(data, spans, asked)
        left: list[tuple] = []
        verdicts: dict[bytes, Rejection | None] = {}
        for value, members in unclaimed.values():
            indices = np.asarray(members, dtype=np.int64)
            exact = long_digits[indices]
            left.extend((index, value, None) for index in indices[exact].tolist())
            indices = indices[~exact]
            if not len(indices):
                continue
            first = int(indices[0])
            if self._unclaimed(data, spans, first, value, verdicts) is None:
                left.extend((index, value, None) for index in indices.tolist())
                continue
            text = data[int(spans.starts[first]) : int(spans.ends[first])].rstrip(b" \t\r\n")
            junk.append((verdicts[text], spans.lines[indices]))
        return left

    def _rejected_in_bulk(self, junk: list[tuple[Rejection, np.ndarray]], out: list) -> None:
        """Add the rejections of ``junk`` to ``out``, but only as many as the caller keeps.

        Past the caller's room (:attr:`room`, what ``max_rejected_rows``
        leaves), the rejections that would come after, in line order, are
        counted (:attr:`count_over`) without a row being built for each:
        a file of ten million junk lines costs one pass over their lines.
        """
        lines = np.concatenate([found for _, found in junk])
        room = self.room() if self.room is not None and self.count_over is not None else None
        earlier = [item.source_line for item in out if isinstance(item, Rejection)]
        keep_up_to = None
        if room is not None and len(lines) + len(earlier) > room:
            # Lines of distinct spans differ: the first ``room`` rejections in line order
            # are those up to the room-th line.
            ordered = np.sort(np.concatenate([lines, np.asarray(earlier, dtype=np.int64)]))
            keep_up_to = int(ordered[room - 1]) if room > 0 else 0
        name = self.name
        for verdict, found in junk:
            if keep_up_to is not None:
                over = found[found > keep_up_to]
                if len(over):
                    self.values_read += len(over)
                    self.count_over(len(over), int(over.min()), int(over.max()))
                found = found[found <= keep_up_to]
            reason, raw, kind = verdict.reason, verdict.raw, verdict.kind
            out.extend(Rejection(name, line, kind, reason, raw) for line in found.tolist())

    def _count(self, item: RawValue | Rejection) -> None:
        # A file-level problem (line 0) is not a value that was read.
        self.values_read += isinstance(item, RawValue) or item.source_line > 0

    def _kept(self, kind: RecordKind) -> bool:
        return self.keep is None or kind.name in self.keep

    # -- the exact path ----------------------------------------------------------------

    def _read_dirty(self, data: bytes, spans: Spans, out: list, junk: list) -> None:
        """Spans the columnar path cannot take, read value by value.

        In JSON Lines, short lines no kind can claim (``1``, ``null``) are
        judged once per distinct text and go to ``junk`` with their lines
        (see :meth:`_junk`): millions of them cost no value each.
        """
        dirty = np.flatnonzero(~spans.clean)
        if not len(dirty):
            return
        if self.jsonl:
            taken = []
            for members in short_groups(data, spans, dirty) or ():
                first = self._line(data, spans, int(members[0]))
                verdict = first if isinstance(first, Rejection) else sort_value(first, self.kinds)
                if isinstance(verdict, Rejection):
                    junk.append((verdict, spans.lines[members]))
                    taken.append(members)
            if taken:
                dirty = np.setdiff1d(dirty, np.concatenate(taken), assume_unique=True)
            for index in dirty:
                out.append(self._line(data, spans, index))
            return
        # Runs of consecutive spans are read as one stretch of the file: a value
        # may run over several of them.
        breaks = np.flatnonzero(np.diff(dirty) != 1) + 1
        for run in np.split(dirty, breaks):
            start, end = int(spans.starts[run[0]]), int(spans.ends[run[-1]])
            out.extend(
                iter_region(self.name, data[start:end], int(spans.lines[run[0]]), self.limits)
            )

    def _line(self, data: bytes, spans: Spans, index: int) -> RawValue | Rejection:
        start, end = int(spans.starts[index]), int(spans.ends[index])
        number = int(spans.lines[index])
        if end - start > self.limits.max_value_bytes:
            head = data[start : start + 4 * self.limits.excerpt_chars]
            return too_large(self.name, number, head, self.limits)
        return parse_line(self.name, data[start:end], number, self.limits)

    def _leftovers(self, data: bytes, spans: Spans, leftovers: list, out: list, known: dict):
        """The clean spans the columnar path refused, as values (``known``: their kinds).

        Their values were parsed already (orjson) and are kept as they are,
        but where a span may hold an integer beyond 64 bits, which orjson
        reads as a float: such a span, and one nested deeper than the limit,
        goes through :meth:`_exact_span`.
        """
        long_digits = _long_digit_spans(data, spans, [entry[0] for entry in leftovers]).tolist()
        starts, ends, lines = spans.starts.tolist(), spans.ends.tolist(), spans.lines.tolist()
        name, max_depth = self.name, self.limits.max_depth
        unclaimed: dict[bytes, Rejection | None] = {}
        for index, value, kind in leftovers:
            start, end = starts[index], ends[index]
            if kind is None and value is not _UNPARSED and not long_digits[index]:
                # A value no kind claims: judged once per distinct text, so that
                # millions of one junk line cost a dict look-up each.
                rejected = self._unclaimed(data, spans, index, value, unclaimed)
                if rejected is not None:
                    out.append(rejected)
                    continue
                value = _parse_span(data, spans, index)  # its own copy, for its kind
            if (
                value is _UNPARSED
                or long_digits[index]  # orjson reads an integer beyond 64 bits as a float
                or data.count(b"{", start, end) + data.count(b"[", start, end) > max_depth
            ):
                value = _UNPARSED if long_digits[index] else value
                items = self._exact_span(data, spans, index, value)
                if kind is not None and value is not _UNPARSED:
                    known[id(items[0])] = kind
                out.extend(items)
                continue
            item = RawValue(name, lines[index], value, data[start:end].rstrip(b" \t\r\n"))
            if kind is not None:
                known[id(item)] = kind
            out.append(item)

    def _exact_span(self, data: bytes, spans: Spans, index: int, value: Any) -> list:
        """A clean span the columnar path refused: its value, parsed exactly."""
        start, end = int(spans.starts[index]), int(spans.ends[index])
        line = int(spans.lines[index])
        if value is not _UNPARSED:
            text = data[start:end].rstrip(b" \t\r\n")
            too_deep = too_deep_reason(text, self.limits)
            if too_deep:
                return [Rejection(self.name, line, "unknown", too_deep, excerpt(text))]
            return [RawValue(self.name, line, value, text)]
        if self.jsonl:
            return [self._line(data, spans, index)]
        return list(iter_region(self.name, data[start:end], line, self.limits))

    # -- the columnar path ---------------------------------------------------------------

    def _columnar(self, data: bytes, spans: Spans, clean: np.ndarray) -> list[tuple]:
        """Read the clean spans in bulk; return those left for the exact path.

        The spans are grouped by their first key before any is parsed (lines
        of one shape start alike), so that a piece of several shapes is not
        parsed whole only to be refused: each group is parsed in bulk as the
        kind and layout of its first span; a group refused is read record by
        record in bulk where its kind can (:attr:`RecordKind.bulk`), as are
        the later spans of its first key, and what is left is parsed span by
        span and regrouped exactly. A first key whose spans held several
        kinds or layouts in an earlier piece (``"schema_version"`` starts
        both engram's CLI outcomes and its presentations) is regrouped at
        once, without a bulk parse bound to be refused.

        Returns
        -------
        leftovers : list of (span index, parsed value or _UNPARSED, the kind that claims it or None)
        unclaimed : dict
            ``{text: (value, [span index, ...])}``: the spans no kind claims, by
            their text (see :meth:`_junk`).
        """
        leftovers: list[tuple] = []
        unclaimed: dict[bytes, tuple[Any, Any]] = {}
        clean = self._short_unclaimed(data, spans, clean, unclaimed)
        for key, members in _by_first_key(data, spans, clean):
            if key in self._mixed_keys:
                leftovers.extend(self._by_container_key(data, spans, members, key, unclaimed))
                continue
            if key not in self._bulk_keys and self._bulk(data, spans, members):
                continue
            # Refused whole: a kind that also reads record by record in bulk takes
            # what it can, and only what it refuses is parsed span by span.
            refused = self._bulk_values(data, spans, members)
            if refused is None:
                refused = members
            else:
                self._bulk_keys.add(key)
            if len(refused):
                leftovers.extend(self._classified(data, spans, refused, key, unclaimed))
        return leftovers, unclaimed

    def _by_container_key(
        self, data: bytes, spans: Spans, members: np.ndarray, key: bytes, unclaimed: dict
    ) -> list[tuple]:
        """Spans of a first key that holds several shapes, grouped again before any is parsed.

        Engram's CLI outcomes, its failures and its presentations all start
        with ``"schema_version"``; the key that holds their first object or
        array (``"records"``, ``"errors"``, ``"receipt"``) tells them apart
        (:func:`_container_key`, a guess checked as every group is). Each
        group is taken in bulk as the kind and layout of its first span;
        what is refused is parsed span by span and regrouped exactly
        (:meth:`_classified`), as the whole key's spans were before.
        """
        groups = _grouped(
            members, [_container_key(data, start) for start in spans.starts[members].tolist()]
        )
        if len(groups) == 1:
            return self._classified(data, spans, members, key, unclaimed)
        refused = [group for group in groups if not self._bulk(data, spans, group)]
        if not refused:
            return []
        return self._classified(data, spans, np.sort(np.concatenate(refused)), key, unclaimed)

    def _short_unclaimed(
        self, data: bytes, spans: Spans, clean: np.ndarray, unclaimed: dict
    ) -> np.ndarray:
        """The clean spans left once those of at most 8 bytes no kind claims are set apart.

        Each distinct short text (:func:`short_groups`) is parsed and judged
        once, and its span indices added to ``unclaimed`` under their text
        (see :meth:`_junk`). A short text that a kind claims, or that is not
        JSON, stays.
        """
        groups = short_groups(data, spans, clean)
        taken = []
        for members in groups or ():
            text = _span_bytes(data, spans, int(members[0]))
            try:
                value = orjson.loads(text)
            except orjson.JSONDecodeError:
                continue
            if self._claimant(value) is None:
                taken.append(members)
                unclaimed[text] = (value, members)
        return np.setdiff1d(clean, np.concatenate(taken), assume_unique=True) if taken else clean

    def _bulk_values(self, data: bytes, spans: Spans, members: np.ndarray) -> np.ndarray | None:
        """Spans read by the bulk path of the kind of the first; those it refused.

        None when the first span's kind has no bulk path (see
        :attr:`RecordKind.bulk`). Every span is parsed once with orjson; the
        kind takes the values it claims, as :func:`sort_value` would sort them
        (no kind before it claims one), and refuses what it is not sure of.
        Spans refused, and those of other kinds, are read as if no bulk path
        had looked at them. The spans go in runs of :data:`_BULK_RUN`, one
        part each: the parsed values and texts of one run are let go before
        the next is parsed.
        """
        first = _parse_span(data, spans, int(members[0]))
        kind = self._claimant(first)
        if kind is None or kind.bulk is None or not self._kept(kind):
            return None
        refused = [
            self._bulk_run(kind, data, spans, members[start : start + _BULK_RUN])
            for start in range(0, len(members), _BULK_RUN)
        ]
        return np.concatenate(refused)

    def _bulk_run(self, kind: RecordKind, data: bytes, spans: Spans, members: np.ndarray):
        """One run of :meth:`_bulk_values`: the spans of ``members`` the kind did not take."""
        texts = _span_texts(data, spans, members, self.jsonl)
        values = _parse_all(texts)
        claimed = np.fromiter(
            (type(value) is dict for value in values), dtype=bool, count=len(values)
        )
        for other in self.kinds[: self.kinds.index(kind) + 1]:
            where = np.flatnonzero(claimed)
            says = np.fromiter(
                map(other.matches, [values[i] for i in where.tolist()]),
                dtype=bool,
                count=len(where),
            )
            # A kind before this one claims it: not ours. This kind must claim it.
            claimed[where[says if other is not kind else ~says]] = False
        taken = np.flatnonzero(claimed)
        if not len(taken):
            return members
        positions = taken.tolist()
        lines = spans.lines[members[taken]]
        max_depth = self.limits.max_depth

        def guard(text: bytes) -> bool:
            return text.count(b"{") + text.count(b"[") > max_depth or has_long_integer(text)

        part, refused = kind.bulk(
            [values[i] for i in positions],
            [texts[i] for i in positions],
            lines,
            self.name,
            guard,
        )
        if part is not None and part.table.num_rows:
            self.emit(kind.name, ("part", part))
            self.values_read += part.table.num_rows
        claimed[taken[np.asarray(refused, dtype=np.int64)]] = False
        return members[~claimed]

    def _bulk(self, data: bytes, spans: Spans, members: np.ndarray) -> bool:
        """Whether the columnar path took all ``members`` as the kind of the first."""
        first = _parse_span(data, spans, int(members[0]))
        kind = self._columnar_kind(first)
        if kind is None:
            return False
        reader = kind.columnar(kind.layout(first), _span_bytes(data, spans, int(members[0])))
        if reader is None:
            return False
        try:
            self._emit_part(kind, reader, data, spans, members)
        except NotClean:
            return False
        return True

    def _classified(
        self, data: bytes, spans: Spans, members: np.ndarray, key: bytes, unclaimed: dict
    ) -> list[tuple]:
        """Spans parsed one by one, grouped by kind and layout, each group in bulk.

        ``key`` is their first key, remembered when they hold several groups.
        A span parsed but claimed by no kind is added to ``unclaimed`` under
        its text, not returned: a million copies of one junk line are one
        entry and a list of span indices.
        """
        starts, ends = spans.starts.tolist(), spans.ends.tolist()
        # Each distinct text is parsed and claimed once: a file of millions of one
        # line costs a dict look-up per line. A value a kind claims is parsed again
        # for each line that repeats it, so that no two rows share one.
        seen: dict[bytes, tuple[Any, RecordKind | None]] = {}
        values: dict[int, Any] = {}
        groups: dict[tuple[str, str], list[int]] = {}
        leftovers: list[tuple] = []
        by_name = {kind.name: kind for kind in self.kinds}
        for index in members.tolist():
            text = data[starts[index] : ends[index]]
            known = seen.get(text)
            if known is None:
                try:  # as _parse_span, without its lookups per span
                    value = orjson.loads(text)
                except orjson.JSONDecodeError:
                    value = _UNPARSED
                # The kind that claims it is kept for the exact path too, so that
                # it is not matched against every kind a second time there.
                known = seen[text] = (value, self._claimant(value))
            elif known[1] is not None:
                known = (orjson.loads(text), known[1])
            value, kind = known
            if kind is None and value is not _UNPARSED:
                unclaimed.setdefault(text, (value, []))[1].append(index)
                continue
            if kind is None or kind.columnar is None or not self._kept(kind):
                leftovers.append((index, value, kind))
                continue
            values[index] = value
            groups.setdefault((kind.name, kind.layout(value)), []).append(index)
        if len(groups) > 1:
            self._mixed_keys.add(key)
        budget = [_BISECT_BUDGET * len(members)]
        for (kind_name, layout), group in groups.items():
            kind = by_name[kind_name]
            reader = kind.columnar(layout, _span_bytes(data, spans, group[0]))
            if reader is None:
                refused = group
            elif kind.bulk is not None:
                # Record by record in bulk, not halved: what the columnar path refused
                # here is odd records among good ones, not a piece to cut down.
                refused = self._bulk_values(data, spans, np.asarray(group))
                refused = group if refused is None else refused
            else:
                refused = self._bisect(kind, reader, data, spans, np.asarray(group), budget)
            leftovers.extend((int(index), values[int(index)], kind) for index in refused)
        return leftovers

    def _claimant(self, value: Any) -> RecordKind | None:
        """The kind that claims a parsed value (as :func:`sort_value` finds it), if any."""
        if value is _UNPARSED or not isinstance(value, dict):
            return None
        for kind in self.kinds:
            if kind.matches(value):
                return kind
        return None

    def _columnar_kind(self, value: Any) -> RecordKind | None:
        """The kind whose columnar path may take a parsed value, if any."""
        kind = self._claimant(value)
        if kind is None or kind.columnar is None or not self._kept(kind):
            return None
        return kind

    def _bisect(self, kind, reader, data, spans, members: np.ndarray, budget: list) -> list:
        """Parse a group in bulk, halving it where refused; return the refused spans."""
        if budget[0] <= 0:
            return list(members)
        budget[0] -= len(members)
        try:
            self._emit_part(kind, reader, data, spans, members)
            return []
        except TooManyFields:
            return list(members)
        except NotClean:
            if len(members) == 1:
                return list(members)
        middle = len(members) // 2
        return self._bisect(kind, reader, data, spans, members[:middle], budget) + self._bisect(
            kind, reader, data, spans, members[middle:], budget
        )

    def _emit_part(self, kind, reader, data: bytes, spans: Spans, members: np.ndarray) -> None:
        schema, convert, beside = ColumnarReader(*reader)
        starts, ends = spans.starts[members], spans.ends[members]
        if len(members) > 1 and np.all(starts[1:] == ends[:-1] + (1 if self.jsonl else 0)):
            end = int(ends[-1])
            if self.jsonl and end + 1 == len(data):
                end += 1  # with the piece's last line end: the whole piece is not copied
            buffer = data[int(starts[0]) : end]  # contiguous: the spans not joined
            object_starts = starts - starts[0]
        else:
            # Views joined: each span's bytes copied once, into the joined buffer.
            view = memoryview(data)
            pairs = zip(starts.tolist(), ends.tolist(), strict=True)
            buffer = b"\n".join([view[s:e] for s, e in pairs])
            object_starts = np.concatenate(([0], np.cumsum(ends - starts + 1)[:-1]))
        first_value = data[int(starts[0]) : int(ends[0])]
        lines = spans.lines[members]
        multiline = not (self.jsonl or self._one_line)
        overflow = None
        threads = self.limits.max_threads

        def parse(arrow_threads: bool) -> JsonlPiece:
            return parse_piece(
                buffer,
                lines,
                self.name,
                schema,
                first_value,
                multiline=multiline,
                max_fields=self.limits.max_extra_columns,
                threads=arrow_threads,
                starts=object_starts,
            )

        try:
            if beside is None:
                piece = parse(threads > 1)
            else:
                # Arrow's parse and the kind's own pass over the bytes, one core each.
                piece, found = both(
                    lambda: parse(False),
                    lambda: beside(buffer, object_starts, 1),
                    threads,
                )
                piece = replace(piece, found_beside=found)
            self._few_extra_fields(schema, piece.table.column_names)
        except TooManyFields:
            # Keys past the limit set apart from the bytes, kept per row as written.
            apart = set_apart(
                buffer,
                len(members),
                self._keeper(kind, schema),
                object_starts=object_starts,
                threads=self.limits.max_threads,
            )
            if apart is None:
                raise
            piece = parse_piece(
                apart.data,
                lines,
                self.name,
                schema,
                apart.data[: len(first_value)],
                multiline=multiline,
                threads=self.limits.max_threads > 1,
                starts=object_starts,
            )
            if beside is not None:
                piece = replace(piece, found_beside=beside(apart.data, object_starts, threads))
            self._few_extra_fields(schema, piece.table.column_names)
            overflow = apart.overflow
        if not columnar_fits(kind.shapes, piece.table):
            # A key the shapes do not account for is noted value by value.
            raise NotClean
        part = convert(piece)
        if overflow is not None:
            part.extras[OVERFLOW] = overflow_column(overflow, part.extras.index)
        extra = set(piece.table.column_names).difference(schema.names if schema else ())
        self._kind_fields.setdefault(kind.name, set()).update(extra)
        self.emit(kind.name, ("part", part))
        self.values_read += len(members)
        if beside is not None and len(buffer) >= PIECE_BYTES:
            # The pass beside the parse ran in a second thread: what it and the parse
            # freed stays in two arenas unless handed back.
            del piece
            hand_back()

    def _keeper(self, kind: RecordKind, schema) -> Callable[[list[str], list[bool]], list[bool]]:
        """``keep(keys, first)`` for :func:`set_apart`: declared keys, and the first object's.

        An extra key stays a column when an earlier part made it one, or the
        first object holds it and the columns last (``max_extra_columns``, the
        kind's columns of earlier parts counted). Any other is set apart,
        unless it is a likely typo of a declared key: the values are then read
        one by one, where such a key is noted. (Which keys end as columns is
        decided over all the rows when the parts are joined:
        :func:`~explicit_audit._core.columns.limit_extra`.)
        """
        top = tuple(dict.fromkeys(field.name for shape in kind.shapes for field in shape.fields))
        known = set(top) | set(schema.names if schema is not None else ())
        columns = set(self._kind_fields.get(kind.name, ()))

        def keep(names: list[str], first: list[bool]) -> list[bool]:
            room = self.limits.max_extra_columns - len(columns)
            verdicts = []
            for name, in_first in zip(names, first, strict=True):
                verdict = name in known or name in columns
                if not verdict and in_first and room > 0 and name != EXTRA_JSON:
                    room -= 1
                    verdict = True
                verdicts.append(verdict)
            apart = [name for name, verdict in zip(names, verdicts, strict=True) if not verdict]
            if top and any(typo is not None for typo in likely_typos(apart, top)):
                raise NotClean
            return verdicts

        return keep

    def _few_extra_fields(self, schema, names: list[str]) -> None:
        """Refuse a part that would take the load's columnar extra fields past the limit.

        The keys past ``max_extra_columns`` are then set apart from its bytes
        (see :meth:`_emit_part`), or its values read one by one: a column per
        key would cost rows times keys (lines each with a key of their own).
        """
        extra = set(names).difference(schema.names if schema is not None else ())
        if EXTRA_JSON in extra:
            raise TooManyFields  # never a column: set apart, kept in that text (see .columns)
        seen = self.extra_fields
        if extra <= seen:
            return
        if len(seen) + len(extra - seen) > self.limits.max_extra_columns:
            raise TooManyFields
        seen.update(extra)


class _Unparsed:
    def __repr__(self) -> str:
        return "<unparsed>"


_UNPARSED = _Unparsed()


def _line_of(item: RawValue | Rejection) -> int:
    return item.source_line


def _span_bytes(data: bytes, spans: Spans, index: int) -> bytes:
    return data[int(spans.starts[index]) : int(spans.ends[index])]


def _parse_span(data: bytes, spans: Spans, index: int) -> Any:
    """A clean span's value (orjson), or _UNPARSED when orjson does not read one value.

    orjson is exact but for integers beyond 64 bits, which it reads as floats
    (see :func:`_long_digit_spans`); it refuses what the exact path judges on its
    own (a lone surrogate), which then goes there.
    """
    try:
        return orjson.loads(_span_bytes(data, spans, index))
    except orjson.JSONDecodeError:
        return _UNPARSED


def _span_texts(data: bytes, spans: Spans, members: np.ndarray, jsonl: bool) -> list[bytes]:
    """The bytes of each member span; lines one after another are split in one call."""
    starts, ends = spans.starts[members], spans.ends[members]
    if jsonl and len(members) > 1 and np.all(starts[1:] == ends[:-1] + 1):
        return data[int(starts[0]) : int(ends[-1])].split(b"\n")
    return [data[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]


def _parse_all(texts: list[bytes]) -> list[Any]:
    """Each text's value (orjson), _UNPARSED where orjson does not read one value."""
    try:
        return list(map(orjson.loads, texts))
    except orjson.JSONDecodeError:
        pass
    values = []
    for text in texts:
        try:
            values.append(orjson.loads(text))
        except orjson.JSONDecodeError:
            values.append(_UNPARSED)
    return values


def _by_first_key(data: bytes, spans: Spans, members: np.ndarray) -> list[tuple[bytes, np.ndarray]]:
    """Spans grouped by the first key they hold (a guess at their shape, checked later).

    ``(key, spans)`` in the order of their first span, each in file order.
    The spans that begin with the very bytes the first one begins with, up to
    the end of its first key, hold that key: they are found for all spans at
    once with numpy (a file of one shape is one pass). The others are looked
    at one by one, two ``bytes.find`` each.
    """
    if not len(members):  # every span set apart before (short lines no kind claims)
        return []
    starts = spans.starts[members]
    same = _same_opening(data, starts, spans.ends[members])
    groups: dict[bytes, list[int]] = {}
    if same is not None:
        if same.all():
            return [(_first_key(data, int(starts[0])), members)]
        groups[_first_key(data, int(starts[0]))] = members[same].tolist()
        rest = members[~same].tolist()
    else:
        rest = members.tolist()
    for index in rest:
        groups.setdefault(_first_key(data, int(spans.starts[index])), []).append(index)
    found = [(key, np.asarray(sorted(group), dtype=np.int64)) for key, group in groups.items()]
    return sorted(found, key=lambda pair: int(pair[1][0]))


def _grouped(members: np.ndarray, keys: list) -> list[np.ndarray]:
    """``members`` grouped by ``keys`` (one per member), groups in order of their first member."""
    groups: dict[Any, list[int]] = {}
    for index, key in zip(members.tolist(), keys, strict=True):
        groups.setdefault(key, []).append(index)
    return [np.asarray(group, dtype=np.int64) for group in groups.values()]


def _container_key(data: bytes, start: int) -> bytes:
    """The key written before a span's first nested ``{`` or ``[`` (within 512 bytes), or b"".

    A guess at the span's shape, never trusted: a bracket inside a string
    before it, or a key with an escaped quote, only makes the guess worse.
    """
    found = _CONTAINER.search(data, start + 1, start + 512)
    if found is None:
        return b""
    closing = data.rfind(b'"', start, found.start())
    opening = data.rfind(b'"', start, closing) if closing > start else -1
    return data[opening + 1 : closing] if opening != -1 else b""


def _first_key(data: bytes, start: int) -> bytes:
    opening = data.find(b'"', start, start + 256)
    closing = data.find(b'"', opening + 1, start + 256) if opening != -1 else -1
    return data[opening + 1 : closing] if closing != -1 else b""


def _same_opening(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    """Whether each span begins as the first does, through its first key's closing quote.

    None when the first span has no first key within its first 256 bytes.
    """
    first = int(starts[0])
    opening = data.find(b'"', first, first + 256)
    closing = data.find(b'"', opening + 1, first + 256) if opening != -1 else -1
    if closing == -1:
        return None
    prefix = np.frombuffer(data, dtype=np.uint8, count=closing + 1 - first, offset=first)
    buffer = np.frombuffer(data, dtype=np.uint8)
    same = (ends - starts) >= len(prefix)
    inside = np.flatnonzero(same)
    for offset, byte in enumerate(prefix.tolist()):
        keep = buffer[starts[inside] + offset] == byte
        inside = inside[keep]
    same[:] = False
    same[inside] = True
    return same


def _long_digit_spans(
    data: bytes, spans: Spans, members: Sequence[int] | None = None
) -> np.ndarray:
    """Spans holding a run of 19 or more digits: maybe an integer beyond 64 bits.

    orjson reads such an integer as a float; those spans are parsed again by
    the exact path, which keeps every integer exact. Only ``members`` (span
    indices; all by default) are looked at, and of them only those long
    enough to hold such a run: when they are few and their bytes a small
    part of the piece, each is searched on its own (a piece of many records
    with a few left for the exact path is not scanned whole); otherwise the
    piece is scanned once with NumPy. Both find the same runs: a span starts
    with ``{`` and ends with ``}``, so no run of digits crosses its ends.
    """
    flagged = np.zeros(len(spans), dtype=bool)
    asked = None
    if members is not None:
        indices = np.asarray(members, dtype=np.int64)
        lengths = spans.ends[indices] - spans.starts[indices]
        # A span shorter than the run cannot hold one (a million lines of ``{}``).
        long_enough = lengths >= _LONG_RUN
        indices = indices[long_enough]
        size = int(lengths[long_enough].sum())
        if size * _WHOLE_SCAN_SHARE < len(data) and len(indices) * _BYTES_PER_SEARCH < len(data):
            for index, start, end in zip(
                indices.tolist(),
                spans.starts[indices].tolist(),
                spans.ends[indices].tolist(),
                strict=True,
            ):
                flagged[index] = _LONG_ZEROS in data[start:end].translate(_DIGITS_AS_ZERO)
            return flagged
        asked = np.zeros(len(spans), dtype=bool)
        asked[indices] = True
    buffer = np.frombuffer(data, dtype=np.uint8)
    digit = (buffer - np.uint8(48)) < 10
    edges = np.flatnonzero(digit[1:] != digit[:-1]) + 1
    if len(digit) and digit[0]:
        edges = np.concatenate(([0], edges))
    if len(digit) and digit[-1]:
        edges = np.concatenate((edges, [len(digit)]))
    runs_start, runs_end = edges[::2], edges[1::2]
    long_runs = runs_start[(runs_end - runs_start) >= _LONG_RUN]
    if len(long_runs):
        owner = np.searchsorted(spans.starts, long_runs, side="right") - 1
        inside = (owner >= 0) & (long_runs < spans.ends[np.maximum(owner, 0)])
        flagged[owner[inside]] = True
    return flagged if asked is None else flagged & asked


def _array_as_objects(data: bytes) -> bytes | None:
    """An array whose elements each start a line, as its elements one after another, or None.

    The brackets and each comma that ends a line before the next element's
    line become spaces, and each element's opening ``{`` moves to column 0 in
    place of its indent (``"  {"`` becomes ``"{  "``): same length, same lines.
    None when the piece is not one array whose first element starts the line
    after ``[`` (see :meth:`PieceReader._read_array` for what is checked after).
    """
    head = len(data) - len(data.lstrip(_WHITESPACE))
    tail = len(data.rstrip(_WHITESPACE))
    if head >= tail or data[head : head + 1] != b"[" or data[tail - 1 : tail] != b"]":
        return None
    newline = data.find(b"\n", head)
    if newline == -1 or data[head + 1 : newline].strip(_WHITESPACE):
        return None
    first = data.find(b"{", newline)
    indent = first - newline - 1
    if first == -1 or data[newline + 1 : first].strip(b" ") or indent > 64:
        return None
    opening = b"\n" + b" " * indent + b"{"
    buffer = bytearray(data)
    buffer[head] = buffer[tail - 1] = 32
    starts = np.array(_find_all(data, opening, newline), dtype=np.int64)
    view = np.frombuffer(buffer, dtype=np.uint8)
    before = starts - 1  # the byte before each element line's newline: the comma, or "\r"
    before[view[before] == 13] -= 1
    separated = view[before[1:]] == 44
    if not separated.all():
        return None
    view[before[1:]] = 32
    if indent:
        view[starts + 1] = 123
        view[starts + 1 + indent] = 32
    return bytes(buffer)


def _find_all(data: bytes, needle: bytes, start: int) -> list[int]:
    found = []
    position = data.find(needle, start)
    while position != -1:
        found.append(position)
        position = data.find(needle, position + 1)
    return found


_WHITESPACE = b" \t\r\n"
