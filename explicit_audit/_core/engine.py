"""The engine switch: the kit's pandas functions run on in-memory or Dask tables.

Kind-agnostic, and the one module that tells the engines apart. Every check,
view and computation of the kit is written once, as plain pandas over one
table (or one partition of it), and declared here by what it returns:

- :func:`each_row`: one row per input row (a verdict per plan, a replayed
  decision, the rows a filter keeps): the pandas answer, or a lazy Dask
  table of the same rows, partition by partition;
- :func:`findings`: findings of the rows of each partition, concatenated in
  partition order;
- :func:`reduce`: a reduction, computed per partition and joined by a
  combine step (sums of counts, independence across partitions);
- :func:`computed`: a few lazy scalars computed in one pass.

A table loaded with ``engine="dask"`` is a ``dask.dataframe.DataFrame`` whose
partitions are pandas DataFrames with the in-memory table's columns, dtypes
and index labels; only what each partition returns travels. :func:`deferred`
and :func:`compute_together` let :func:`~explicit_audit.verify_all` compute
every check in one pass, so that the partitions they share are read once.
Dask is imported only when a Dask table is met.

Nothing else in the kit compares an engine's name or imports Dask (the
partitioned engine, :mod:`explicit_audit.partitioned`, aside): it asks
:func:`reads_lazily` of a name and :func:`is_lazy` of a table.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..errors import AuditError
from .progress import delay, wanted

__all__ = [
    "Deferred",
    "compute_progress",
    "compute_together",
    "computed",
    "concat_parts",
    "deferred",
    "delayed_parts",
    "each_row",
    "engine_of",
    "findings",
    "is_lazy",
    "is_table",
    "persisted",
    "reads_lazily",
    "reduce",
]

#: The engine whose tables are lazy, read partition by partition when computed.
_LAZY_ENGINE = "dask"


def reads_lazily(engine: str) -> bool:
    """Whether the engine named ``engine`` (``ea.load(engine=...)``) returns lazy tables.

    Parameters
    ----------
    engine : str
        ``"pandas"`` or ``"dask"``.

    Returns
    -------
    bool
        True for ``"dask"``: tables read partition by partition when computed.
    """
    return engine == _LAZY_ENGINE


def _from_dask(obj: Any) -> bool:
    """Whether ``obj`` is an object of Dask's (checked without importing Dask)."""
    return type(obj).__module__.startswith("dask")


def is_partitioned(frame: Any) -> bool:
    """Whether ``frame`` is a Dask DataFrame or Series (checked without importing Dask)."""
    return _from_dask(frame) and hasattr(frame, "npartitions")


def is_lazy(*values: Any) -> bool:
    """Whether any of ``values`` is lazy: a Dask table, series or scalar, read when computed.

    Parameters
    ----------
    *values
        Tables, series, scalars of either engine.

    Returns
    -------
    bool
        False when every value is in memory (pandas objects, numbers).
    """
    return any(_from_dask(value) and hasattr(value, "compute") for value in values)


def is_table(frame: Any) -> bool:
    """Whether ``frame`` is a table of either engine: a pandas or a Dask DataFrame."""
    return isinstance(frame, pd.DataFrame) or (is_partitioned(frame) and hasattr(frame, "columns"))


def engine_of(*frames: Any) -> str:
    """``"dask"`` when any of ``frames`` is a Dask table, else ``"pandas"``."""
    return _LAZY_ENGINE if any(is_partitioned(frame) for frame in frames) else "pandas"


def compute_progress() -> contextlib.AbstractContextManager:
    """Dask's progress bar for a compute on a local scheduler, when wanted; else nothing.

    Shown under the rule of :mod:`explicit_audit._core.progress`, after its delay.
    """
    if not wanted(jupyter=False):
        return contextlib.nullcontext()
    from dask.diagnostics import ProgressBar

    return ProgressBar(minimum=delay(), out=sys.stderr)


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

    Tasks the results share (reading a partition, say) run once. Each result's
    tasks are gathered by one task of its own, the graph's only outputs: Dask's
    ordering keeps, per task, the set of outputs it leads to, and a partition's
    line count leads to every later partition's (through the chain of first
    lines), so that with one output per partition those sets grew with the
    square of the partitions (220 MB at 600 partitions).
    """
    import dask

    outputs = gathered(*deferred)
    with compute_progress():
        computed = dask.compute(*outputs, optimize_graph=False) if outputs else ()
    return [item.combine(list(values)) for item, values in zip(deferred, computed, strict=True)]


def gathered(*deferred: Deferred) -> list:
    """One task per result, gathering its tasks into a list: what :func:`compute_together`
    computes (``dask.delayed.Delayed`` objects)."""
    import dask

    return [dask.delayed(_listed, pure=True)(*item.tasks) for item in deferred]


def _listed(*parts: Any) -> list:
    """The computed tasks of one result, as one list."""
    return list(parts)


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


def _as_list(frames: Any) -> list:
    return list(frames) if isinstance(frames, list | tuple) else [frames]


def each_row(func: Callable[..., pd.DataFrame], frames: Any, **kwargs: Any) -> Any:
    """``func(*frames, **kwargs)``, declared as one row per input row.

    Parameters
    ----------
    func : callable
        A pandas function of one table (or of aligned tables: a partition of
        each) returning one row per input row, index labels kept.
    frames : DataFrame or list of them
        The table(s); Dask tables of one load, whose partitions line up.
    **kwargs
        Passed to every call.

    Returns
    -------
    DataFrame
        ``func``'s answer; on Dask tables a lazy table of the same rows whose
        meta is ``func`` applied to the empty metas, so it has exactly the
        columns and dtypes of the in-memory answer.
    """
    frames = _as_list(frames)
    if not any(is_partitioned(frame) for frame in frames):
        return func(*frames, **kwargs)
    first, *others = frames
    meta = func(first._meta, *[other._meta for other in others], **kwargs)
    return first.map_partitions(func, *others, meta=meta, **kwargs)


def findings(
    func: Callable[..., pd.DataFrame], frames: Any, *, what: str, **kwargs: Any
) -> pd.DataFrame:
    """``func(*frames, **kwargs)``, declared as findings of each partition's own rows.

    On Dask tables ``func`` runs on every partition (aligned partitions of
    several tables together) and the findings are concatenated in partition
    order, which is the in-memory answer's order.
    """
    frames = _as_list(frames)
    if not any(is_partitioned(frame) for frame in frames):
        return func(*frames, **kwargs)
    return per_partition(func, frames, concat_parts, what=what, **kwargs).result()


def reduce(
    part: Callable[..., Any],
    combine: Callable[[list], Any],
    frames: Any,
    *,
    what: str,
    whole: Callable[..., Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A reduction: ``part`` over each partition, ``combine`` over their list.

    Parameters
    ----------
    part : callable
        A pandas function of one partition of each of ``frames``.
    combine : callable
        Turns the list of ``part``'s results (in partition order) into the answer.
    frames : DataFrame or list of them
    what : str
        The public function's name, for an error message.
    whole : callable, optional
        The same answer computed over whole in-memory tables at once, where
        that is quicker than ``combine([part(...)])`` (the default).
    **kwargs
        Passed to every call of ``part`` (and ``whole``).
    """
    frames = _as_list(frames)
    if not any(is_partitioned(frame) for frame in frames):
        if whole is not None:
            return whole(*frames, **kwargs)
        return combine([part(*frames, **kwargs)])
    return per_partition(part, frames, combine, what=what, **kwargs).result()


def deferred(
    part: Callable[..., Any],
    combine: Callable[[list], Any],
    frames: Any,
    *,
    what: str,
    **kwargs: Any,
) -> Deferred:
    """The reduction of :func:`reduce` over Dask tables, still to compute.

    For :func:`compute_together`, which computes several in one pass.
    """
    return per_partition(part, _as_list(frames), combine, what=what, **kwargs)


def computed(*values: Any) -> tuple:
    """``values`` in memory: computed together in one pass where any is lazy, else as given."""
    if not is_lazy(*values):
        return values
    import dask

    with compute_progress():
        return dask.compute(*values)


def persisted(*values: Any) -> tuple:
    """``values`` read once and kept in the workers' memory where lazy, else as given."""
    if not is_lazy(*values):
        return values
    import dask

    return dask.persist(*values)


def delayed_parts(frame: Any) -> Deferred:
    """A Dask table's partitions, still to compute, concatenated into one pandas table."""
    return Deferred(frame.to_delayed(), concat_parts)
