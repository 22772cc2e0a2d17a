"""The rows kept by an audit state joined with the rows of the bytes read this run.

Tables are joined as the in-memory engine builds them over every file: rows
in file order, then line order, labelled ``0, 1, ...``; a column naming a row
of another table (``Table.references``) follows that row to its new label.
A table without ``source_file`` (``exposed``) follows the row it references.
Where the rows kept and the rows read do not fit one table as a whole load
would type it (a key beside the records first seen in the new bytes, a time
column typed on one side only), :func:`join_parts` returns None: the run
then reads every file whole, as a first run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._core import registry
from .._core.key_table import concat_keys

__all__ = ["Joined", "join_parts", "rows_of", "select_rows", "stacked_rows"]


@dataclass
class Joined:
    """Tables joined from the rows kept and the rows read.

    Attributes
    ----------
    tables : dict of str to DataFrame
    labels : dict
        Per table: one Series per entry kept, then one for the rows read, each
        from a row's label there to its label in the joined table.
    fresh : dict
        Per table: a boolean array, True for the rows read this run.
    """

    tables: dict[str, pd.DataFrame]
    labels: dict[str, list[pd.Series]]
    fresh: dict[str, np.ndarray]


def per_file(column: pd.Series, values: Mapping[str, float], default: float) -> np.ndarray:
    """``values[file]`` for each row's file (``default`` for another), looked up once per file."""
    codes, uniques = pd.factorize(column)
    looked = [values.get(str(name), default) for name in uniques]
    return np.asarray([*looked, default], dtype=np.float64)[codes]


def follow(values: pd.Series, mapping: pd.Series) -> np.ndarray:
    """Each value's image under ``mapping`` (old label -> new label); NaN where it has none."""
    at = mapping.index.get_indexer(values)
    found = mapping.to_numpy(dtype=np.float64)
    return np.where(at >= 0, found[at] if len(found) else np.nan, np.nan)


def _renamed(column: pd.Series, names: Mapping[str, str]) -> pd.Series:
    changes = {old: new for old, new in names.items() if old != new}
    if not changes:
        return column
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.rename_categories([changes.get(c, c) for c in column.cat.categories])
    return column.replace(changes)


def _order(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """Tables with ``source_file`` first: the others follow a row of one of them."""
    return sorted(tables, key=lambda name: "source_file" not in tables[name].columns)


def select_rows(
    tables: Mapping[str, pd.DataFrame],
    lines: Mapping[str, tuple[int, int]],
    names: Mapping[str, str],
) -> dict[str, pd.DataFrame]:
    """The rows of the files ``lines`` names, from a first to a last line, files renamed.

    ``lines`` is ``{file: (first, last)}`` and ``names`` ``{file: new name}``.
    Row labels are left as they are (references still hold); a table without
    ``source_file`` keeps the rows whose referenced row is kept.
    """
    references = _references()
    kept: dict[str, pd.DataFrame] = {}
    for name in _order(tables):
        frame = tables[name]
        if "source_file" in frame.columns:
            line = frame["source_line"].to_numpy(dtype=np.float64)
            # Each row's file's (first, last), the files looked up once.
            codes, files = pd.factorize(frame["source_file"])
            found = [lines.get(str(file), (np.nan, np.nan)) for file in files]
            bounds = np.asarray([*found, (np.nan, np.nan)], dtype=np.float64)[codes]
            mask = (line >= bounds[:, 0]) & (line <= bounds[:, 1])
        else:
            mask = np.zeros(len(frame), dtype=bool)
            for column, target in references.get(name, {}).items():
                if target in kept:
                    mask |= frame[column].isin(kept[target].index).to_numpy()
        chosen = rows_of(frame, mask)
        if "source_file" in chosen.columns:
            chosen = chosen.assign(source_file=_renamed(chosen["source_file"], names))
        kept[name] = chosen
    return {name: kept[name] for name in tables}


def _references() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for (table, column), target in registry.references().items():
        found.setdefault(table, {})[column] = target
    return found


def _union(old: pd.Series, new: pd.Series) -> pd.CategoricalDtype | None:
    if not (
        isinstance(old.dtype, pd.CategoricalDtype) and isinstance(new.dtype, pd.CategoricalDtype)
    ):
        return None
    first, second = list(old.cat.categories), list(new.cat.categories)
    merged = list(dict.fromkeys(first + second))
    if first == sorted(first) and second == sorted(second):
        merged = sorted(merged)
    return pd.CategoricalDtype(pd.Index(merged, dtype=old.cat.categories.dtype), old.cat.ordered)


def stacked_rows(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame | None:
    """``old`` above ``new``, dtypes as one load gives them; None when they do not fit."""
    if not len(old):
        return new.copy()
    if not len(new):
        return old.copy()
    if list(old.columns) != list(new.columns):
        new = _widened(new, old)
        if new is None:
            return None
    unions = {}
    for column in old.columns:
        union = _union(old[column], new[column])
        if union is not None:
            if union != old[column].dtype or union != new[column].dtype:
                unions[column] = union
        elif old[column].dtype != new[column].dtype:
            return None
    if unions:
        old, new = old.astype(unions), new.astype(unions)
    return pd.concat([old, new], ignore_index=True)


def _holds_missing(dtype) -> bool:
    """Whether a column of this dtype holds a missing value as it is (a load keeps its dtype)."""
    if isinstance(dtype, pd.api.extensions.ExtensionDtype):
        return True  # str, category, datetime with a zone, Int64, boolean ...
    return dtype.kind in "OfmM"


def _widened(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame | None:
    """``new`` with the columns ``old`` holds beyond it (keys beside the records that no new
    record holds), missing; None when ``new`` holds one ``old`` lacks, or out of order."""
    present = [column for column in old.columns if column in new.columns]
    if present != list(new.columns):
        return None
    missing = [column for column in old.columns if column not in new.columns]
    if not all(_holds_missing(old[column].dtype) for column in missing):
        return None
    added = {
        column: pd.Series([None] * len(new), index=new.index, dtype=old[column].dtype)
        for column in missing
    }
    return pd.concat([new, pd.DataFrame(added, index=new.index)], axis=1)[list(old.columns)]


def join_parts(
    kept: Sequence[Mapping[str, pd.DataFrame]],
    read: Mapping[str, pd.DataFrame],
    files: Sequence[str],
) -> Joined | None:
    """Every table: the rows kept (one mapping per entry, files renamed already) and the
    rows read, as one load's.

    Returns None when a table's rows do not fit together (see the module's docstring).
    """
    rank = {name: index for index, name in enumerate(files)}
    references = _references()
    labels: dict[str, list[pd.Series]] = {}  # per table: old label -> new label, per origin
    joined: dict[str, pd.DataFrame] = {}
    fresh: dict[str, np.ndarray] = {}
    sides = len(kept)
    for name in _order(read):
        frames = [entry.get(name, read[name].iloc[:0]) for entry in kept] + [read[name]]
        stacked = frames[0]
        for frame in frames[1:]:
            stacked = stacked_rows(stacked, frame)
            if stacked is None:
                return None
        stacked = stacked.reset_index(drop=True)
        origin = np.repeat(np.arange(sides + 1), [len(frame) for frame in frames])
        before = np.concatenate([frame.index.to_numpy() for frame in frames])
        refs = references.get(name, {})
        for column, target in refs.items():
            if column in stacked.columns and target in labels:
                stacked[column] = _followed(stacked[column], origin, labels[target])
        if "source_file" in stacked.columns:
            file_rank = per_file(stacked["source_file"], rank, len(rank))
            keys = (file_rank, stacked["source_line"].to_numpy())
        else:
            column = next((c for c in refs if c in stacked.columns), None)
            keys = (stacked[column].to_numpy(),) if column is not None else ()
        order = np.lexsort((np.arange(len(stacked)), *reversed(keys)))
        stacked = stacked.take(order).reset_index(drop=True)
        origin, before = origin[order], before[order]
        labels[name] = [
            pd.Series(np.flatnonzero(origin == side), index=before[origin == side])
            for side in range(sides + 1)
        ]
        joined[name] = stacked
        fresh[name] = origin == sides
    return Joined({name: joined[name] for name in read}, labels, fresh)


def _followed(column: pd.Series, origin: np.ndarray, maps: list[pd.Series]) -> pd.Series:
    """A reference column whose labels are mapped to the referenced rows' new labels."""
    values = column.copy()
    for side, mapping in enumerate(maps):
        at = origin == side
        if at.any():
            values.iloc[np.flatnonzero(at)] = follow(column.iloc[np.flatnonzero(at)], mapping)
    return values.astype(column.dtype)


def join_rejected(
    kept: Sequence[pd.DataFrame], read: pd.DataFrame, files: Sequence[str]
) -> pd.DataFrame | None:
    """The rejected rows kept (one frame per entry) and read, in file order then line order."""
    stacked = read.iloc[:0]
    for frame in [*kept, read]:
        stacked = stacked_rows(stacked, frame)
        if stacked is None:
            return None
    stacked = stacked.reset_index(drop=True)
    rank = {name: index for index, name in enumerate(files)}
    file_rank = per_file(stacked["source_file"], rank, len(rank))
    order = np.lexsort((np.arange(len(stacked)), stacked["source_line"].to_numpy(), file_rank))
    return stacked.take(order).reset_index(drop=True)


def join_keys(
    kept: Sequence[pd.DataFrame], read: pd.DataFrame, files: Sequence[str]
) -> pd.DataFrame:
    """The key notes kept (one frame per entry) and read, in file order then line order."""
    return concat_keys([*kept, read], files)


#: Runs of rows taken as slices at most; more are taken by one boolean selection.
_MAX_RUNS = 64


def rows_of(frame: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    """``frame.loc[mask]``, taken as slices where the rows are a few runs.

    The rows a state keeps of a file, and those read this run, are each a run
    of a table's rows (most often all of them). A slice of Arrow-backed
    columns is a view, where a boolean selection copies the rows, and every
    chunk of a column of many first.
    """
    at = np.flatnonzero(mask)
    if not len(at):
        return frame.iloc[:0]
    breaks = np.flatnonzero(np.diff(at) != 1)
    starts = [int(at[0]), *(int(at[b + 1]) for b in breaks)]
    stops = [*(int(at[b]) + 1 for b in breaks), int(at[-1]) + 1]
    if len(starts) > _MAX_RUNS:
        return frame.loc[mask]
    parts = [frame.iloc[start:stop] for start, stop in zip(starts, stops, strict=True)]
    return parts[0] if len(parts) == 1 else pd.concat(parts)
