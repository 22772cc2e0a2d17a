"""What a load accounts for, whichever engine read it: loaded rows and rejections.

Both engines go through these functions, so ``Audit.rejected`` and
``Audit.sources`` come out the same: the rows a kind loaded per file
(:func:`loaded_lines`), the rejections in file and line order
(:func:`in_file_order`), and, for a partitioned load, the reading-level
rejections kept in reading order up to ``max_rejected_rows`` across all
partitions (:class:`RejectionTally`), as one pass over the files keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from .._core.collect import Reading
from .._core.limits import Limits
from .._core.records import KindTables, RecordKind, Rejection

__all__ = ["RejectionTally", "in_file_order", "loaded_lines"]


def loaded_lines(kind: RecordKind, built: KindTables) -> pd.DataFrame:
    """One row per value a kind loaded (its file in ``source_file``), for ``Audit.sources``.

    That is a row of its main table, but for a presentation that failed before
    retrieval: a loaded value with a ``presentations`` row and no receipt row.
    """
    main = built.tables[kind.tables[0]]
    presentations = built.tables.get("presentations")
    if presentations is None or not presentations["receipt_row"].isna().any():
        return main
    alone = presentations.loc[presentations["receipt_row"].isna(), ["source_file"]]
    return pd.concat([main[["source_file"]], alone]).astype({"source_file": "str"})


def in_file_order(rejections: list[Rejection], files: Sequence[str]) -> list[Rejection]:
    """The rejections in file order, then line order (stable: ties keep their order)."""
    rank = {name: index for index, name in enumerate(files)}
    return sorted(rejections, key=lambda r: (rank.get(r.source_file, len(rank)), r.source_line))


@dataclass
class RejectionTally:
    """Reading-level rejections of many partitions, folded in reading order.

    A one-pass load keeps the first ``max_rejected_rows`` rejections it meets
    (file-level ones always) and counts the rest per file; folding the
    partitions' own readings in file order with :meth:`add` keeps the same
    ones and counts the same rest, holding at most the cap at any time.
    """

    limits: Limits
    reading: Reading = field(init=False)

    def __post_init__(self) -> None:
        self.reading = Reading([], [], self.limits)

    def add(self, part: Reading) -> RejectionTally:
        """Fold one partition's reading in (partitions in file order); returns self."""
        for rejection in part.rejections:
            self.reading.reject(rejection)
        for name, (count, first, last) in part.overflow.items():
            seen = self.reading.overflow.setdefault(name, [0, first, 0])
            seen[0] += count
            seen[1] = min(seen[1], first)
            seen[2] = max(seen[2], last)
        for name, count in part.values_read.items():
            self.reading.values_read[name] = self.reading.values_read.get(name, 0) + count
        return self
