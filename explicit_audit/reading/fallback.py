"""The exact fallback of the piece reader: spans read value by value, and refusals judged.

The spans the splitter did not find clean, and the clean ones the columnar
path refused, are read here by the exact path
(:mod:`explicit_audit.reading.exact`), which names what is wrong where. The
clean spans no kind claims are judged once per distinct text, so that a log
of millions of one junk line costs a dict look-up per line, and past
``max_rejected_rows`` their rejections are counted, not built.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.records import RawValue, RecordKind, Rejection
from .claims import UNPARSED, ReadFile, parse_span, sort_value
from .cuts import WHITESPACE
from .exact import iter_region, keyed, parse_line, too_deep, too_large
from .span_checks import digit_runs, flag_holders
from .spans import Spans, short_groups

__all__ = ["ExactFallback", "long_digit_spans"]

#: A run of digits that may be an integer beyond 64 bits (see long_digit_spans).
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


class ExactFallback:
    """The spans of one file's pieces that the columnar path does not take, read exactly.

    Parameters
    ----------
    file : ReadFile
    kinds : sequence of RecordKind
        Every kind a value may belong to, in matching order.
    room : callable, optional
        ``room()``: how many more rejections the caller keeps one by one.
    count_over : callable, optional
        ``count_over(count, first_line, last_line)``: rejections past that room, counted.
        Without both, every rejection is built.
    """

    def __init__(
        self,
        file: ReadFile,
        kinds: Sequence[RecordKind],
        room: Callable[[], int] | None = None,
        count_over: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.name, self.jsonl, self.limits = file.name, file.jsonl, file.limits
        self.kinds = kinds
        self.room = room
        self.count_over = count_over

    def dirty(self, data: bytes, spans: Spans, junk: list) -> list[RawValue | Rejection]:
        """Spans the columnar path cannot take, read value by value.

        In JSON Lines, short lines no kind can claim (``1``, ``null``) are
        judged once per distinct text and go to ``junk`` with their lines
        (see :meth:`junk`): millions of them cost no value each.
        """
        dirty = np.flatnonzero(~spans.clean)
        if not len(dirty):
            return []
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
            return [self._line(data, spans, index) for index in dirty]
        # Runs of consecutive spans are read as one stretch of the file: a value
        # may run over several of them.
        out: list[RawValue | Rejection] = []
        breaks = np.flatnonzero(np.diff(dirty) != 1) + 1
        for run in np.split(dirty, breaks):
            start, end = int(spans.starts[run[0]]), int(spans.ends[run[-1]])
            out.extend(
                iter_region(self.name, data[start:end], int(spans.lines[run[0]]), self.limits)
            )
        return out

    def _line(self, data: bytes, spans: Spans, index: int) -> RawValue | Rejection:
        start, end = int(spans.starts[index]), int(spans.ends[index])
        number = int(spans.lines[index])
        if end - start > self.limits.max_value_bytes:
            head = data[start : start + 4 * self.limits.excerpt_chars]
            return too_large(self.name, number, head, self.limits)
        return parse_line(self.name, data[start:end], number, self.limits)

    def unclaimed(
        self, data: bytes, spans: Spans, index: int, value: Any, verdicts: dict
    ) -> Rejection | None:
        """The rejection of a clean span no columnar kind took, or None when a kind claims it.

        ``verdicts`` holds the verdict of each distinct text seen in this piece
        (a rejection made at line 0, or None); the rejection is the one the
        exact path gives the value (see :meth:`_exact_span` and :func:`sort_value`).
        """
        start, end = int(spans.starts[index]), int(spans.ends[index])
        text = data[start:end].rstrip(WHITESPACE)
        if text in verdicts:
            verdict = verdicts[text]
        else:
            item = too_deep(self.name, 0, text, self.limits) or keyed(self.name, 0, value, text)
            if isinstance(item, RawValue):
                item = sort_value(item, self.kinds)
            verdict = item if isinstance(item, Rejection) else None
            verdicts[text] = verdict
        if verdict is None:
            return None
        return Rejection(
            self.name, int(spans.lines[index]), verdict.kind, verdict.reason, verdict.raw
        )

    def junk(
        self, data: bytes, spans: Spans, unclaimed: dict, junk: list[tuple[Rejection, np.ndarray]]
    ) -> list[tuple]:
        """Spans no kind claims, judged once per distinct text; returns those left to read.

        Each text's verdict (:meth:`unclaimed`) is found once; its spans'
        lines go to ``junk`` with it, as ``(verdict at line 0, lines)``, no
        row built yet (:meth:`rejected_in_bulk` builds those that are kept).
        A span that may hold an integer beyond 64 bits, or whose text no
        verdict rejects, is returned to be read as before.
        """
        asked = [index for _, members in unclaimed.values() for index in members]
        long_digits = long_digit_spans(data, spans, asked)
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
            if self.unclaimed(data, spans, first, value, verdicts) is None:
                left.extend((index, value, None) for index in indices.tolist())
                continue
            text = data[int(spans.starts[first]) : int(spans.ends[first])].rstrip(WHITESPACE)
            junk.append((verdicts[text], spans.lines[indices]))
        return left

    def rejected_in_bulk(self, junk: list[tuple[Rejection, np.ndarray]], out: list) -> int:
        """Add the rejections of ``junk`` to ``out``, but only as many as the caller keeps.

        Past the caller's room (``room()``, what ``max_rejected_rows``
        leaves), the rejections that would come after, in line order, are
        counted (``count_over``) without a row being built for each: a file
        of ten million junk lines costs one pass over their lines. Returns
        how many were counted so.
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
        name, counted = self.name, 0
        for verdict, found in junk:
            if keep_up_to is not None:
                over = found[found > keep_up_to]
                if len(over):
                    counted += len(over)
                    self.count_over(len(over), int(over.min()), int(over.max()))
                found = found[found <= keep_up_to]
            reason, raw, kind = verdict.reason, verdict.raw, verdict.kind
            out.extend(Rejection(name, line, kind, reason, raw) for line in found.tolist())
        return counted

    def leftovers(self, data: bytes, spans: Spans, leftovers: list, out: list, known: dict):
        """The clean spans the columnar path refused, as values (``known``: their kinds).

        Their values were parsed already (orjson) and are kept as they are,
        but where a span may hold an integer beyond 64 bits, which orjson
        reads as a float: such a span, and one nested deeper than the limit,
        goes through :meth:`_exact_span`.
        """
        long_digits = long_digit_spans(data, spans, [entry[0] for entry in leftovers]).tolist()
        starts, ends, lines = spans.starts.tolist(), spans.ends.tolist(), spans.lines.tolist()
        name, max_depth = self.name, self.limits.max_depth
        unclaimed: dict[bytes, Rejection | None] = {}
        for index, value, kind in leftovers:
            start, end = starts[index], ends[index]
            if kind is None and value is not UNPARSED and not long_digits[index]:
                # A value no kind claims: judged once per distinct text, so that
                # millions of one junk line cost a dict look-up each.
                rejected = self.unclaimed(data, spans, index, value, unclaimed)
                if rejected is not None:
                    out.append(rejected)
                    continue
                value = parse_span(data, spans, index)  # its own copy, for its kind
            if (
                value is UNPARSED
                or long_digits[index]  # orjson reads an integer beyond 64 bits as a float
                or data.count(b"{", start, end) + data.count(b"[", start, end) > max_depth
            ):
                value = UNPARSED if long_digits[index] else value
                items = self._exact_span(data, spans, index, value)
                if kind is not None and value is not UNPARSED:
                    known[id(items[0])] = kind
                out.extend(items)
                continue
            item = keyed(name, lines[index], value, data[start:end].rstrip(WHITESPACE))
            if kind is not None:
                known[id(item)] = kind
            out.append(item)

    def _exact_span(self, data: bytes, spans: Spans, index: int, value: Any) -> list:
        """A clean span the columnar path refused: its value, parsed exactly."""
        start, end = int(spans.starts[index]), int(spans.ends[index])
        line = int(spans.lines[index])
        if value is not UNPARSED:
            text = data[start:end].rstrip(WHITESPACE)
            return [
                too_deep(self.name, line, text, self.limits) or keyed(self.name, line, value, text)
            ]
        if self.jsonl:
            return [self._line(data, spans, index)]
        return list(iter_region(self.name, data[start:end], line, self.limits))


def long_digit_spans(data: bytes, spans: Spans, members: Sequence[int] | None = None) -> np.ndarray:
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
    runs_start, runs_end = digit_runs(np.frombuffer(data, dtype=np.uint8))
    long_runs = runs_start[(runs_end - runs_start) >= _LONG_RUN]
    flag_holders(flagged, spans.starts, spans.ends, long_runs)
    return flagged if asked is None else flagged & asked
