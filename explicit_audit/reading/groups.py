"""The columnar path over one piece's clean spans: groups parsed in bulk, refusals halved.

The spans are grouped by their first key before any is parsed
(:mod:`explicit_audit.reading.grouping`); each group is made one part as the
kind and layout of its first span (:class:`~explicit_audit.reading.parts.PartMaker`).
A group refused is read record by record in bulk where its kind can, and
what is left is parsed span by span, sorted into kinds and layouts, and each
such group parsed in bulk again, halving a refused group until the spans it
refuses are found, or its halves would be too few to be worth a bulk parse.
Those go to the exact path (:mod:`explicit_audit.reading.fallback`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from .._core.records import RecordKind
from .claims import UNPARSED, Claims, parse_span, span_bytes
from .columnar import Refused
from .fast import fast_path
from .grouping import by_first_key, container_key, grouped, short_unclaimed
from .parts import Made, PartMaker
from .spans import Spans

__all__ = ["SMALLEST_HALF", "GroupReader"]

#: How many rows the columnar path may parse, as a multiple of a piece's clean
#: spans, while it halves refused groups; past it, a refused group is read
#: value by value at once (every row refused costs as much either way).
_BISECT_BUDGET = 4

#: The fewest spans a half of a refused group may hold. A bulk parse costs some
#: 3 ms whatever its size (a sample of the bytes parsed, the parse, the kind's
#: conversion), as much as some 50 receipts read value by value: a refused group
#: too small to halve into two such halves is read value by value at once.
SMALLEST_HALF = 64


@dataclass
class _Piece:
    """One piece's clean spans as they are read: what is made of them, what no kind claims."""

    data: bytes
    spans: Spans
    one_line: bool
    made: list[Made] = field(default_factory=list)
    unclaimed: dict[bytes, tuple[Any, Any]] = field(default_factory=dict)


class GroupReader:
    """Reads the clean spans of one file's pieces in bulk, group by group.

    Parameters
    ----------
    claims : Claims
    parts : PartMaker
        Makes each group one part, or refuses it.
    """

    def __init__(self, claims: Claims, parts: PartMaker) -> None:
        self.claims = claims
        self.parts = parts
        #: First keys whose spans held several kinds or layouts in an earlier piece.
        self._mixed_keys: set[bytes] = set()
        # First keys whose spans the columnar path refused in an earlier piece, of a
        # kind that reads record by record in bulk: their later spans go there at once.
        self._bulk_keys: set[bytes] = set()

    def read(
        self, data: bytes, spans: Spans, clean: np.ndarray, one_line: bool = False
    ) -> tuple[list[Made], list[tuple], dict]:
        """Read the clean spans in bulk; return the parts made and the spans left.

        Each group of a first key is parsed in bulk as the kind and layout of
        its first span, so that a piece of several shapes is not parsed whole
        only to be refused; a group refused is read record by record in bulk
        where its kind can (:attr:`FastPath.bulk <.fast.FastPath>`), as are
        the later spans of its first key, and what is left is parsed span by
        span and regrouped exactly. A first key whose spans held several
        kinds or layouts in an earlier piece (``"schema_version"`` starts
        both engram's CLI outcomes and its presentations) is regrouped at
        once, without a bulk parse bound to be refused. ``one_line``: the
        spans are the elements of an array on one line.

        Returns
        -------
        made : list of (kind name, part, rows)
        leftovers : list of (span index, parsed value or UNPARSED, the kind that claims it or None)
        unclaimed : dict
            ``{text: (value, [span index, ...])}``: the spans no kind claims, by
            their text (see :meth:`~.fallback.ExactFallback.junk`).
        """
        piece = _Piece(data, spans, one_line)
        leftovers: list[tuple] = []
        clean = short_unclaimed(data, spans, clean, self.claims.claimant, piece.unclaimed)
        for key, members in by_first_key(data, spans, clean):
            if key in self._mixed_keys:
                leftovers += self._by_container_key(piece, members, key)
                continue
            whole = False if key in self._bulk_keys else self._whole(piece, members)
            if whole is True:
                continue
            why = whole if isinstance(whole, Refused) else None  # of all the members
            # Refused whole: a kind that also reads record by record in bulk takes
            # what it can, and only what it refuses is parsed span by span.
            refused = self.parts.bulk(data, spans, members, piece.made)
            if refused is None:
                refused = members
            else:
                self._bulk_keys.add(key)
                why = None
            if len(refused):
                leftovers += self._classified(piece, refused, key, why)
        return piece.made, leftovers, piece.unclaimed

    def _by_container_key(self, piece: _Piece, members: np.ndarray, key: bytes) -> list[tuple]:
        """Spans of a first key that holds several shapes, grouped again before any is parsed.

        Engram's CLI outcomes, its failures and its presentations all start
        with ``"schema_version"``; the key that holds their first object or
        array (``"records"``, ``"errors"``, ``"receipt"``) tells them apart
        (:func:`~.grouping.container_key`, a guess checked as every group
        is). Each group is taken in bulk as the kind and layout of its first
        span; what is refused is parsed span by span and regrouped exactly
        (:meth:`_classified`), as the whole key's spans were before.
        """
        starts = piece.spans.starts[members].tolist()
        groups = grouped(members, [container_key(piece.data, start) for start in starts])
        if len(groups) == 1:
            return self._classified(piece, members, key)
        refused = [group for group in groups if self._whole(piece, group) is not True]
        if not refused:
            return []
        return self._classified(piece, np.sort(np.concatenate(refused)), key)

    def _whole(self, piece: _Piece, members: np.ndarray) -> bool | Refused:
        """Whether the columnar path took all ``members`` as the kind and layout of the
        first: True, or its refusal, or False when the first has no columnar reader."""
        data, spans = piece.data, piece.spans
        first = parse_span(data, spans, int(members[0]))
        kind = self.claims.columnar_kind(first)
        if kind is None:
            return False
        fast = fast_path(kind)
        reader = fast.columnar(fast.layout(first), span_bytes(data, spans, int(members[0])))
        if reader is None:
            return False
        part = self.parts.columnar(kind, reader, data, spans, members, piece.one_line)
        if isinstance(part, Refused):
            return part
        piece.made.append(part)
        return True

    def _classified(
        self, piece: _Piece, members: np.ndarray, key: bytes, why: Refused | None = None
    ) -> list[tuple]:
        """Spans parsed one by one, grouped by kind and layout, each group in bulk.

        ``key`` is their first key, remembered when they hold several groups.
        ``why``: the refusal of all ``members`` parsed in bulk as the kind and
        layout of the first (:meth:`_whole`); when they are one group, that
        parse, which would be refused alike, is not made again.
        A span parsed but claimed by no kind is added to ``unclaimed`` under
        its text, not returned: a million copies of one junk line are one
        entry and a list of span indices.
        """
        data, spans, unclaimed = piece.data, piece.spans, piece.unclaimed
        starts, ends = spans.starts.tolist(), spans.ends.tolist()
        # Each distinct text is parsed and claimed once: a file of millions of one
        # line costs a dict look-up per line. A value a kind claims is parsed again
        # for each line that repeats it, so that no two rows share one.
        seen: dict[bytes, tuple[Any, RecordKind | None]] = {}
        values: dict[int, Any] = {}
        groups: dict[tuple[str, str], list[int]] = {}
        leftovers: list[tuple] = []
        by_name = {kind.name: kind for kind in self.claims.kinds}
        claimant, kept = self.claims.claimant, self.claims.kept
        for index in members.tolist():
            text = data[starts[index] : ends[index]]
            known = seen.get(text)
            if known is None:
                try:  # as parse_span, without its lookups per span
                    value = orjson.loads(text)
                except orjson.JSONDecodeError:
                    value = UNPARSED
                # The kind that claims it is kept for the exact path too, so that
                # it is not matched against every kind a second time there.
                known = seen[text] = (value, claimant(value))
            elif known[1] is not None:
                known = (orjson.loads(text), known[1])
            value, kind = known
            if kind is None and value is not UNPARSED:
                unclaimed.setdefault(text, (value, []))[1].append(index)
                continue
            fast = None if kind is None else fast_path(kind)
            if fast is None or fast.columnar is None or not kept(kind):
                leftovers.append((index, value, kind))
                continue
            values[index] = value
            groups.setdefault((kind.name, fast.layout(value)), []).append(index)
        if len(groups) > 1:
            self._mixed_keys.add(key)
        budget = [_BISECT_BUDGET * len(members)]
        for (kind_name, layout), group in groups.items():
            kind = by_name[kind_name]
            fast = fast_path(kind)
            reader = fast.columnar(layout, span_bytes(data, spans, group[0]))
            if reader is None:
                refused = group
            elif fast.bulk is not None:
                # Record by record in bulk, not halved: what the columnar path refused
                # here is odd records among good ones, not a piece to cut down.
                refused = self.parts.bulk(data, spans, np.asarray(group), piece.made)
                refused = group if refused is None else refused
            else:
                done = why if len(group) == len(members) else None  # the spans _whole parsed
                refused = self._bisect(piece, kind, reader, np.asarray(group), budget, done)
            leftovers.extend((int(index), values[int(index)], kind) for index in refused)
        return leftovers

    def _bisect(
        self,
        piece: _Piece,
        kind,
        reader,
        members: np.ndarray,
        budget: list,
        part: Refused | None = None,
    ) -> list:
        """Parse a group in bulk, halving it where refused; return the refused spans.

        ``part``: the group's refusal, where it was parsed so already."""
        if budget[0] <= 0:
            return list(members)
        budget[0] -= len(members)
        if part is None:
            part = self.parts.columnar(
                kind, reader, piece.data, piece.spans, members, piece.one_line
            )
        if not isinstance(part, Refused):
            piece.made.append(part)
            return []
        if part is Refused.TOO_MANY_FIELDS or len(members) < 2 * SMALLEST_HALF:
            return list(members)
        middle = len(members) // 2
        halves = (members[:middle], members[middle:])
        return [
            index for half in halves for index in self._bisect(piece, kind, reader, half, budget)
        ]
