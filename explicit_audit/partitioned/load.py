"""A load as Dask tables: the same rows, labels, rejections and accounting, read lazily.

:func:`load_partitioned` lists the files, plans the partitions
(:mod:`~explicit_audit.partitioned.parts`) and builds a Dask graph; nothing
is read until it is computed, but for the head of each file (at most
``sample_bytes``), read at once to learn each table's columns, as
``dask.dataframe.read_csv`` samples its input. Per partition:

1. the line its bytes start on (for a byte range: the newlines of the ranges
   before it, counted in parallel and summed);
2. the partition read by the one reading pipeline and built by every kind;
3. its tables renumbered after the rows of the partitions before it and
   fitted to the meta (:mod:`~explicit_audit.partitioned.conform`).

``rejected`` and ``sources`` are one-partition tables computed from a fold of
the partitions' accounting in file order, so that they equal the in-memory
engine's. Policies (small YAML files) are read at once.

The graph is planned in one pass over the partitions
(:class:`~explicit_audit.partitioned.graph.Graph`), and
each table is made from its layer as a persisted collection is
(``dask.dataframe.from_graph``): planning is linear in the number of
partitions, where chaining ``dask.delayed`` calls (each one merging the graph
of every partition before it) was quadratic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._core.columns import EXTRA_JSON
from .._core.key_table import keys_frame
from .._core.records import RecordKind
from ..errors import InputError
from ..reading.collect import Reading, list_sources, read_files
from ..reading.limits import Limits
from ..reading.remote import has_remote, list_remote, local_source, read_url
from ..reading.tables import (
    build_kind,
    load_documents,
    rejected_frame,
    sources_frame,
    warn_extra_json,
    warn_or_raise,
)
from .conform import EXTRA_JSON_AFTER, FILE_RANKS, empty_meta
from .graph import Graph
from .parts import (
    DEFAULT_BLOCKSIZE,
    DEFAULT_SAMPLE_BYTES,
    Part,
    plan_parts,
    sample_limits,
)

__all__ = ["PartitionedLoad", "load_partitioned"]


@dataclass
class PartitionedLoad:
    """The lazy tables of one load, and what was known without reading the data."""

    tables: dict
    rejected: object
    sources: object
    files: list[str]
    documents: dict
    keys: object = None


def _metas(
    parts: Sequence[Part],
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits,
    sample_bytes: int,
) -> dict[str, pd.DataFrame]:
    head = sample_limits(limits, sample_bytes)
    segments: dict[str, list] = {}
    files = dict.fromkeys((each.path, each.name, each.url) for part in parts for each in part.files)
    ranks = {name: rank for rank, (_, name, _) in enumerate(files)}
    # The heads of the files in order, runs of local files read as a load reads them
    # (small ones in batches), a URL's on its own.
    samples: list[Reading] = []
    run: list[tuple[Path, str]] = []
    for path, name, url in [*files, (None, "", "end")]:
        if url is None:
            run.append((path, name))
            continue
        if run:
            sample = Reading([], [], head)
            paths, names = [path for path, _ in run], [name for _, name in run]
            read_files(sample, paths, kinds, keep, names=names, hash_whole=False)
            samples.append(sample)
            run = []
        if url != "end":
            samples.append(read_url(url, name, kinds, keep=keep, limits=head, whole=False))
    for sample in samples:
        for name, found in sample.segments.items():
            segments.setdefault(name, []).extend(found)
    metas: dict[str, pd.DataFrame] = {}
    for kind in kinds:
        if keep is not None and kind.name not in keep:
            continue
        built = build_kind(kind, segments.get(kind.name, []), limits=limits)
        declared = build_kind(kind, [], times=False).tables
        for name, table in built.tables.items():
            metas[name] = meta = empty_meta(table, declared.get(name))
            if EXTRA_JSON in table.columns:
                meta.attrs.update(_extra_json_after(table, declared.get(name), ranks))
    return metas


def _extra_json_after(table: pd.DataFrame, declared: pd.DataFrame | None, ranks: dict) -> dict:
    """Where, in the heads, the last extra key made a column first held a value (see conform)."""
    known = set(declared.columns) if declared is not None else set()
    files = table["source_file"].astype("str").to_numpy()
    lines = table["source_line"].to_numpy()
    after = (-1, 0)
    for column in table.columns:
        if column in known or column == EXTRA_JSON:
            continue
        held = table[column].notna().to_numpy()
        if held.any():
            row = int(held.argmax())
            after = max(after, (ranks.get(files[row], -1), int(lines[row])))
    return {EXTRA_JSON_AFTER: after, FILE_RANKS: ranks}


def load_partitioned(
    source,
    kinds: Sequence[RecordKind],
    *,
    keep: set[str] | None = None,
    strict: bool = False,
    strict_keys: bool = False,
    limits: Limits,
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> PartitionedLoad:
    """Plan a lazy load of ``source`` into Dask tables (see the module docstring).

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or URLs, as ``ea.load`` takes them.
    kinds : sequence of RecordKind
        The registered kinds, in the order a value is matched against them.
    keep : set of str, optional
        The kinds whose tables are built (every kind by default).
    strict : bool
        Raise :class:`~explicit_audit.InputError` for a partition's first
        rejection when that partition is computed; for a file that is not
        regular or a bad policy file, at once.
    strict_keys : bool
        Reject a record holding a key its kind does not declare.
    limits : Limits
    blocksize : int, optional
        Bytes per partition of a large plain JSON Lines file
        (:data:`~explicit_audit.partitioned.parts.DEFAULT_BLOCKSIZE`).
    sample_bytes : int, optional
        Bytes of each file's head read now to learn the tables' columns
        (:data:`~explicit_audit.partitioned.parts.DEFAULT_SAMPLE_BYTES`).
    """
    import dask
    import dask.dataframe as dd
    from dask.task_spec import DataNode

    source = local_source(source)
    listing = list_remote(source, limits=limits) if has_remote(source) else list_sources(source)
    problems, policy_files = listing.problems, listing.policy_files
    if strict and problems:
        first = problems[0]
        raise InputError(first.source_file, None, first.reason)
    held = Reading([], policy_files, limits)
    declared = [kind.documents for kind in kinds if keep is None and kind.documents is not None]
    documents, policy_rejections, loaded_files = load_documents(
        declared, held.hold_policy_files() if policy_files else [], limits
    )
    if strict:
        warn_or_raise(policy_rejections, True, declared)

    blocksize = DEFAULT_BLOCKSIZE if blocksize is None else int(blocksize)
    sample_bytes = DEFAULT_SAMPLE_BYTES if sample_bytes is None else int(sample_bytes)
    parts = plan_parts(listing.data_files, blocksize=blocksize, limits=limits)
    metas = _metas(parts, kinds, keep, limits, sample_bytes)
    warn_extra_json(metas, limits)
    split = {part.name: part.path for part in parts if not part.whole}
    finish = (
        listing.names,
        policy_files,
        loaded_files,
        policy_rejections,
        listing.skipped,
        split,
        held,
    )
    graph = Graph(parts, kinds, keep, limits, strict, metas, problems, finish, strict_keys)

    def table(layer: Mapping, keys: list, meta: pd.DataFrame, name: str):
        if not keys:
            key = (f"{name}-empty-{graph.token}", 0)
            layer, keys = {key: DataNode(key, meta.iloc[:0].copy())}, [key]
        # The partitions keep the kit's own dtypes: Dask would turn text into its own.
        with dask.config.set({"dataframe.convert-string": False}):
            return dd.from_graph(layer, meta, (None,) * (len(keys) + 1), keys, name)

    tables = {name: table(*graph.table(name), meta, name) for name, meta in metas.items()}
    rejected_meta = rejected_frame([])
    rejected = table(*graph.accounts(0), empty_meta(rejected_meta), "rejected")
    sources_meta = sources_frame(Reading([], []), {}, [], rejected_meta)
    sources = table(*graph.accounts(1), sources_meta, "sources")
    keys = table(*graph.accounts(2), empty_meta(keys_frame([])), "keys")
    return PartitionedLoad(tables, rejected, sources, listing.names, documents, keys)
