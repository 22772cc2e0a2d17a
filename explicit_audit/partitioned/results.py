"""A small part of a table in memory, the same on both engines: what a notebook shows.

The public functions return pandas objects on either engine. What a notebook
takes from a table itself (counts, the rows a filter keeps, the first row, the
rows some findings name) is lazy on Dask; :func:`collect` brings such a small
result into memory and leaves an in-memory one as it is, so one cell reads
the same on both engines.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from .._core.engine import is_lazy

__all__ = ["collect"]


def collect(obj: Any, *, head: int | None = None, rows: Iterable[Any] | None = None) -> Any:
    """A small result in memory: itself for pandas objects, computed for Dask ones.

    Meant for what is small by construction (counts, the rows a filter
    keeps, a table's first rows, the rows findings name); a whole table of a
    larger-than-memory log does not fit, on any engine.

    Parameters
    ----------
    obj : DataFrame, Series, scalar, or their Dask counterparts
        What to bring into memory.
    head : int, optional
        Only the first ``head`` rows, in table order. On Dask, partitions are
        read in order until that many rows are found, so an empty first
        partition (a file without rows of this table) is passed over.
    rows : labels, optional
        Only the rows with these index labels, in this order (labels repeat
        as given). On Dask, every partition keeps the rows it holds.

    Returns
    -------
    pandas object or scalar

    Raises
    ------
    KeyError
        When a label of ``rows`` is not in the table, on both engines.

    Examples
    --------
    >>> import pandas as pd
    >>> collect(pd.Series([3, 1, 2]), head=2).tolist()
    [3, 1]
    >>> collect(pd.DataFrame({"x": [5, 6, 7]}), rows=[2, 0])["x"].tolist()
    [7, 5]
    >>> collect(ea.load("data", engine="dask").plans["plan"], head=1)  # doctest: +SKIP
    """
    if head is not None and rows is not None:
        raise ValueError("collect: give head or rows, not both")
    labels = None if rows is None else list(rows)
    if not is_lazy(obj):
        if head is not None:
            return obj.head(head)
        return obj if labels is None else obj.loc[labels]
    if head is not None:
        return _lazy_head(obj, head)
    if labels is None:
        return obj.compute()
    kept = obj.map_partitions(_holding, labels=pd.Index(labels).unique(), meta=obj._meta)
    return kept.compute().loc[labels]


def _holding(part: Any, labels: pd.Index) -> Any:
    """The rows of one partition whose labels are among ``labels``."""
    return part[part.index.isin(labels)]


def _lazy_head(frame: Any, n: int) -> Any:
    """The first ``n`` rows of a Dask table, reading partitions in order until they are found."""
    found = []
    count = 0
    for index in range(frame.npartitions):
        if count >= n:
            break
        part = frame.partitions[index].compute()
        found.append(part.head(n - count))
        count += len(found[-1])
    if not found:
        return frame._meta.head(0)
    # Dask's own concatenation: categories of the partitions joined, as compute() joins them.
    from dask.dataframe.dispatch import concat

    return concat(found) if len(found) > 1 else found[0]
