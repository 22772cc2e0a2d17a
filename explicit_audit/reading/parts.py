"""A group of clean spans made one part of its kind's rows, or refused.

Two ways, both in bulk: Arrow parses the group into columns that the kind's
columnar path converts (:meth:`PartMaker.columnar`), or orjson parses each
span and the kind builds its rows record by record (:meth:`PartMaker.bulk`).
A group is taken whole or refused with a :class:`~.columnar.Refused` value:
the piece reader (:mod:`explicit_audit.reading.groups`) then halves it, or
sends its spans to the exact path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from .._core.columns import EXTRA_JSON, OVERFLOW, overflow_column
from .._core.keys import columnar_fits, likely_typos
from .._core.overlap import both
from .._core.records import RecordKind
from .arrow_parse import parse_piece
from .claims import Claims, ReadFile, parse_all, parse_span, span_texts
from .columnar import ColumnarReader, JsonlPiece, Refused
from .exact import has_long_integer
from .fast import fast_path
from .memory import PIECE_BYTES, hand_back
from .repeated_keys import repeated_key
from .spans import Spans
from .wide_keys import set_apart

__all__ = ["Made", "PartMaker"]

#: How many spans the bulk path parses at a time (see :meth:`PartMaker.bulk`).
_BULK_RUN = 1 << 14

#: A part made: its kind's name, the part (a segment ``("part", part)``), and its rows.
Made = tuple[str, Any, int]


class PartMaker:
    """Makes parts of one file's groups of clean spans, as their kind's fast path reads them.

    Parameters
    ----------
    file : ReadFile
    claims : Claims
    extra_fields : set of str
        The extra top-level fields the columnar path has taken, shared by a
        load's files and bounded by ``max_extra_columns``; added to here.
    """

    def __init__(self, file: ReadFile, claims: Claims, extra_fields: set[str]) -> None:
        self.name, self.jsonl, self.limits = file.name, file.jsonl, file.limits
        self.claims = claims
        self.extra_fields = extra_fields
        #: Per kind, the extra top-level fields its columnar parts have taken as columns.
        self._kind_fields: dict[str, set[str]] = {}

    def columnar(
        self,
        kind: RecordKind,
        reader: Any,
        data: bytes,
        spans: Spans,
        members: np.ndarray,
        one_line: bool = False,
    ) -> Made | Refused:
        """The spans ``members`` parsed by Arrow and converted by ``reader``, or why not.

        ``one_line``: the spans are the elements of an array on one line,
        which parse as lines do.
        """
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
        first_size = int(ends[0] - starts[0])  # the first value starts the buffer
        lines = spans.lines[members]
        threads = self.limits.max_threads

        def parse(text: bytes, arrow_threads: bool, max_fields: int | None) -> JsonlPiece | Refused:
            return parse_piece(
                text,
                lines,
                self.name,
                schema,
                text[:first_size],
                multiline=not (self.jsonl or one_line),
                max_fields=max_fields,
                threads=arrow_threads,
                starts=object_starts,
            )

        most = self.limits.max_extra_columns
        if beside is None:
            piece = parse(buffer, threads > 1, most)
        else:
            # Arrow's parse and the kind's own pass over the bytes, one core each.
            piece, found = both(
                lambda: parse(buffer, False, most),
                lambda: beside(buffer, object_starts, 1),
                threads,
            )
            if not isinstance(piece, Refused):
                piece = replace(piece, found_beside=found)
        if isinstance(piece, Refused):
            refused = piece
        else:
            refused = self._few_extra_fields(schema, piece.table.column_names)
        overflow = None
        if refused is Refused.TOO_MANY_FIELDS:
            # Keys past the limit set apart from the bytes, kept per row as written.
            apart = set_apart(
                buffer,
                len(members),
                self._keeper(kind, schema),
                object_starts=object_starts,
                threads=threads,
            )
            if apart is None:
                return refused
            if isinstance(apart, Refused):  # a key set apart looks like a typo
                return apart
            piece = parse(apart.data, threads > 1, None)
            if isinstance(piece, Refused):
                return piece
            if beside is not None:
                piece = replace(piece, found_beside=beside(apart.data, object_starts, threads))
            refused = self._few_extra_fields(schema, piece.table.column_names)
            overflow = apart.overflow
        if refused is not None:
            return refused
        if not columnar_fits(kind.shapes, piece.table):
            # A key the shapes do not account for is noted value by value.
            return Refused.NOT_CLEAN
        part = convert(piece)
        if isinstance(part, Refused):
            return part
        if overflow is not None:
            part.extras[OVERFLOW] = overflow_column(overflow, part.extras.index)
        extra = set(piece.table.column_names).difference(schema.names if schema else ())
        self._kind_fields.setdefault(kind.name, set()).update(extra)
        if beside is not None and len(buffer) >= PIECE_BYTES:
            # The pass beside the parse ran in a second thread: what it and the parse
            # freed stays in two arenas unless handed back.
            del piece
            hand_back()
        return kind.name, part, len(members)

    def _keeper(self, kind: RecordKind, schema) -> Callable[[list[str], list[bool]], Any]:
        """``keep(keys, first)`` for :func:`set_apart`: declared keys, and the first object's.

        An extra key stays a column when an earlier part made it one, or the
        first object holds it and the columns last (``max_extra_columns``, the
        kind's columns of earlier parts counted). Any other is set apart,
        unless it is a likely typo of a declared key: the rows are then
        refused (None), and their values read one by one, where such a key
        is noted. (Which keys end as columns is decided over all the rows
        when the parts are joined: :func:`~explicit_audit._core.columns.limit_extra`.)
        """
        top = tuple(dict.fromkeys(field.name for shape in kind.shapes for field in shape.fields))
        known = set(top) | set(schema.names if schema is not None else ())
        columns = set(self._kind_fields.get(kind.name, ()))

        def keep(names: list[str], first: list[bool]) -> list[bool] | None:
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
                return None
            return verdicts

        return keep

    def _few_extra_fields(self, schema, names: list[str]) -> Refused | None:
        """Refuse a part that would take the load's columnar extra fields past the limit.

        The keys past ``max_extra_columns`` are then set apart from its bytes
        (see :meth:`columnar`), or its values read one by one: a column per
        key would cost rows times keys (lines each with a key of their own).
        """
        extra = set(names).difference(schema.names if schema is not None else ())
        if EXTRA_JSON in extra:
            # Never a column: set apart, kept in that text (see .columns).
            return Refused.TOO_MANY_FIELDS
        seen = self.extra_fields
        if extra <= seen:
            return None
        if len(seen) + len(extra - seen) > self.limits.max_extra_columns:
            return Refused.TOO_MANY_FIELDS
        seen.update(extra)
        return None

    def bulk(
        self, data: bytes, spans: Spans, members: np.ndarray, made: list[Made]
    ) -> np.ndarray | None:
        """Spans read by the bulk path of the kind of the first; those it refused.

        None when the first span's kind has no bulk path (see
        :attr:`FastPath.bulk <explicit_audit.reading.fast.FastPath>`). Every
        span is parsed once with orjson; the kind takes the values it claims,
        as :func:`~.claims.sort_value` would sort them (no kind before it
        claims one), and refuses what it is not sure of. Spans refused, and
        those of other kinds, are read as if no bulk path had looked at them.
        The spans go in runs of :data:`_BULK_RUN`, one part each, added to
        ``made``: the parsed values and texts of one run are let go before
        the next is parsed.
        """
        kind = self.claims.claimant(parse_span(data, spans, int(members[0])))
        if kind is None or fast_path(kind).bulk is None or not self.claims.kept(kind):
            return None
        refused = [
            self._bulk_run(kind, data, spans, members[start : start + _BULK_RUN], made)
            for start in range(0, len(members), _BULK_RUN)
        ]
        return np.concatenate(refused)

    def _bulk_run(
        self, kind: RecordKind, data: bytes, spans: Spans, members: np.ndarray, made: list[Made]
    ) -> np.ndarray:
        """One run of :meth:`bulk`: the spans of ``members`` the kind did not take."""
        texts = span_texts(data, spans, members, self.jsonl)
        values = parse_all(texts)
        claimed = np.fromiter(
            (type(value) is dict for value in values), dtype=bool, count=len(values)
        )
        kinds = self.claims.kinds
        for other in kinds[: kinds.index(kind) + 1]:
            where = np.flatnonzero(claimed)
            says = np.fromiter(
                map(other.matches, [values[i] for i in where.tolist()]),
                dtype=bool,
                count=len(where),
            )
            # A kind before this one claims it: not ours. This kind must claim it.
            claimed[where[says if other is not kind else ~says]] = False
        max_depth = self.limits.max_depth

        def guard(text: bytes) -> bool:
            return text.count(b"{") + text.count(b"[") > max_depth or has_long_integer(text)

        # A value that may nest past the limit, or repeats a key (:mod:`.repeated_keys`),
        # is the exact path's to judge and reject.
        for index in np.flatnonzero(claimed).tolist():
            text = texts[index]
            if text.count(b"{") + text.count(b"[") > max_depth:
                claimed[index] = False
            elif repeated_key(text, values[index]) is not None:
                claimed[index] = False
        taken = np.flatnonzero(claimed)
        if not len(taken):
            return members
        positions = taken.tolist()
        lines = spans.lines[members[taken]]

        part, refused = fast_path(kind).bulk(
            [values[i] for i in positions],
            [texts[i] for i in positions],
            lines,
            self.name,
            guard,
        )
        if part is not None and part.table.num_rows:
            made.append((kind.name, part, part.table.num_rows))
        claimed[taken[np.asarray(refused, dtype=np.int64)]] = False
        return members[~claimed]
