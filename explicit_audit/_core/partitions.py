"""Running the kit's pandas functions over partitioned (Dask) tables.

Kind-agnostic. A table loaded with ``engine="dask"`` is a
``dask.dataframe.DataFrame`` whose partitions are pandas DataFrames with the
in-memory table's columns, dtypes and index labels. A public function given
such a table runs its pandas code on every partition, where the partition
lives, and combines what the partitions return (findings, counts, partial
sums) into the in-memory answer:

- :func:`is_partitioned` tells a Dask table from a pandas one without
  importing Dask;
- :func:`per_partition` plans one call per partition (aligned partitions of
  several tables go together) and returns a :class:`Deferred`: the tasks and
  the function that combines their results;
- :func:`compute_together` computes several deferred results in one pass, so
  that the partitions they share are read once.

Nothing here calls ``.compute()`` on a table: only what each partition
returns travels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..errors import AuditError

__all__ = [
    "Deferred",
    "compute_together",
    "concat_parts",
    "is_partitioned",
    "lazy_rows",
    "per_partition",
]


def is_partitioned(frame: Any) -> bool:
    """Whether ``frame`` is a Dask DataFrame or Series (checked without importing Dask)."""
    module = type(frame).__module__
    return module.startswith("dask.") and hasattr(frame, "npartitions")


@dataclass(frozen=True)
class Deferred:
    """A result still to compute: one task per partition, and how to combine them.

    Attributes
    ----------
    tasks : list of dask.delayed.Delayed
        One per partition (or any tasks).
    combine : callable
        Takes the computed list, in task order, and returns the answer.
    """

    tasks: list
    combine: Callable[[list], Any]

    def result(self) -> Any:
        """Compute the tasks and combine them."""
        return compute_together(self)[0]


def compute_together(*deferred: Deferred) -> list:
    """Compute several deferred results in one Dask pass; their answers, in order.

    Tasks the results share (reading a partition, say) run once.
    """
    import dask

    tasks = [list(item.tasks) for item in deferred]
    computed = dask.compute(*tasks) if tasks else ()
    return [item.combine(list(values)) for item, values in zip(deferred, computed, strict=True)]


def _aligned(frames: Sequence[Any], what: str) -> list[list]:
    counts = {frame.npartitions for frame in frames}
    if len(counts) > 1:
        raise AuditError(
            f"{what}: the tables have {sorted(counts)} partitions; pass tables of one "
            "ea.load(..., engine='dask') call, whose partitions line up"
        )
    return [frame.to_delayed() for frame in frames]


def per_partition(
    func: Callable[..., Any],
    frames: Sequence[Any],
    combine: Callable[[list], Any],
    *,
    what: str,
    **kwargs: Any,
) -> Deferred:
    """Plan ``func(partition_a, partition_b, ..., **kwargs)`` for every partition.

    Parameters
    ----------
    func : callable
        A pandas function; called with the i-th partition of every frame.
    frames : sequence of Dask DataFrames
        Tables of one load, whose partitions line up (a receipt's exposed
        results are in the partition of the same number).
    combine : callable
        Turns the list of per-partition results into the answer.
    what : str
        The public function's name, for an error message.
    **kwargs
        Passed to every call (small values: policies, a grid).
    """
    import dask

    parts = _aligned(frames, what)
    call = dask.delayed(func, pure=True)
    tasks = [call(*row, **kwargs) for row in zip(*parts, strict=True)]
    return Deferred(tasks, combine)


def concat_parts(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Per-partition results (findings, say) as one table, in partition order.

    Each part keeps the dtypes it was built with (findings have declared
    categories), so the concatenation has them too.
    """
    if len(parts) == 1:
        return parts[0].reset_index(drop=True)
    return pd.concat(parts, ignore_index=True)


def lazy_rows(func: Callable[..., pd.DataFrame], frame: Any, **kwargs: Any) -> Any:
    """``func`` applied to every partition, as a lazy Dask table (one row per input row).

    The meta is ``func`` applied to the empty meta of ``frame``, so the lazy
    table has exactly the columns and dtypes of the in-memory answer.
    """
    meta = func(frame._meta, **kwargs)
    return frame.map_partitions(func, meta=meta, **kwargs)
