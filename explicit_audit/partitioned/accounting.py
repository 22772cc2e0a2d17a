"""What a partitioned load accounts for: the rejections of every partition, folded.

The reading-level rejections are kept in reading order up to
``max_rejected_rows`` across all partitions (:class:`RejectionTally`), as one
pass over the files keeps them, so that ``Audit.rejected`` and
``Audit.sources`` come out as the in-memory engine's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..reading.collect import Reading
from ..reading.limits import Limits

__all__ = ["RejectionTally"]


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
        # A whole-file partition hashed its file as it read it.
        self.reading.digests.update(part.digests)
        return self
