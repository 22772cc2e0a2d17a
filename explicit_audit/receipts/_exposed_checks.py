"""The receipt checks on exposed results (see :mod:`explicit_audit.receipts.checks`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._core.describe import quote
from .._core.findings import FindingsBuilder
from .._core.lists import (
    list_column,
    list_lengths,
    pair_keys,
    starts_of,
    string_array,
)

__all__ = ["exposed_findings"]


class _Results(NamedTuple):
    """The exposed results of the receipts in the table: rows, receipt of each, position in it."""

    table: pd.DataFrame
    owners: np.ndarray
    positions: np.ndarray


def _at_positions(
    values: pa.ListArray, owners: np.ndarray, positions: np.ndarray
) -> tuple[np.ndarray, pa.Array]:
    """values[owner][position] where it exists, and a mask of where it does."""
    lengths = list_lengths(values)
    flat = pc.list_flatten(values)
    exists = (positions >= 0) & (positions < lengths[owners])
    index = np.where(exists, starts_of(lengths)[owners] + positions, 0)
    if len(flat) == 0:
        return exists, pa.nulls(len(owners), pa.string())
    taken = flat.take(pa.array(index, pa.int64()))
    return exists, pc.if_else(pa.array(exists), taken, pa.scalar(None, pa.string()))


def _equal(left: pa.Array, right: pa.Array) -> np.ndarray:
    return pc.fill_null(pc.equal(left, right), False).to_numpy(zero_copy_only=False)


def exposed_findings(
    receipts: pd.DataFrame,
    exposed: pd.DataFrame | None,
    locator_verdicts: pa.Table,
    found: FindingsBuilder,
) -> None:
    """Add the findings of every ``exposed_*`` rule to ``found``."""
    record_ids = list_column(receipts, "record_ids")
    n_ids = list_lengths(record_ids)
    n_exposed = receipts["n_exposed"].to_numpy(dtype="float64", na_value=np.nan)
    guarded = receipts["withheld_audience"].notna().to_numpy() | (n_exposed > 0)
    for pos in np.flatnonzero(guarded & (n_exposed != n_ids)):
        found.add(
            pos,
            "exposed_count",
            f"{_count(n_exposed[pos])} exposed result(s) for {n_ids[pos]} record id(s)"
            + ("" if receipts["withheld_audience"].notna().iat[pos] else " (null audience)"),
        )
    if exposed is None or len(exposed) == 0:
        return

    owners_all = receipts.index.get_indexer(exposed["receipt_row"])
    keep = owners_all >= 0
    exposed = exposed[keep]
    owners = owners_all[keep].astype(np.int64)
    positions = exposed["position"].to_numpy(dtype=np.int64)
    exposed_ids = string_array(exposed["record_id"])
    source_uris = string_array(exposed["source_uri"])
    relative_paths = string_array(exposed["relative_path"])

    # Exposed result i is record i: same id, same locator, same safe path.
    _, id_there = _at_positions(record_ids, owners, positions)
    same_id = _equal(id_there, exposed_ids)
    stray = np.flatnonzero(~same_id)
    if len(stray):
        flat_ids = pc.list_flatten(record_ids)
        id_owners = pc.list_parent_indices(record_ids).to_numpy()
        wanted = np.isin(id_owners, owners[stray])
        stray_keys, id_keys = pair_keys(
            (owners[stray], exposed_ids.take(pa.array(stray))),
            (id_owners[wanted], flat_ids.filter(pa.array(wanted))),
        )
        member = np.isin(stray_keys, id_keys)
        for j, is_member in zip(stray, member, strict=True):
            rule = "exposed_misaligned" if is_member else "exposed_not_in_records"
            detail = (
                f"exposed result {positions[j]} is record {quote(exposed_ids[int(j)].as_py())}"
                + (
                    f", where record_ids has {quote(id_there[int(j)].as_py())}"
                    if is_member
                    else ", which is not among record_ids"
                )
            )
            found.add(owners[j], rule, detail)

    locators = list_column(receipts, "locator_uris")
    _, uri_there = _at_positions(locators, owners, positions)
    safe_paths = locator_verdicts.column("relative_path").combine_chunks()
    loc_lengths = list_lengths(locators)
    loc_exists = (positions >= 0) & (positions < loc_lengths[owners])
    loc_index = np.where(loc_exists, starts_of(loc_lengths)[owners] + positions, 0)
    path_there = (
        safe_paths.take(pa.array(loc_index, pa.int64()))
        if len(safe_paths)
        else pa.nulls(len(owners), pa.string())
    )
    same_uri = _equal(uri_there, source_uris)
    path_known = loc_exists & pc.is_valid(path_there).to_numpy(zero_copy_only=False)
    same_path = _equal(path_there, relative_paths)
    for j in np.flatnonzero(same_id & ~same_uri):
        found.add(
            owners[j],
            "exposed_misaligned",
            f"exposed result {positions[j]} has source_uri {quote(source_uris[int(j)].as_py())}, "
            f"where locator_uris has {quote(uri_there[int(j)].as_py())}",
            field="exposed.source_uri",
        )
    for j in np.flatnonzero(same_id & same_uri & path_known & ~same_path):
        found.add(
            owners[j],
            "exposed_misaligned",
            f"exposed result {positions[j]} has relative_path "
            f"{quote(relative_paths[int(j)].as_py())}, where its locator gives "
            f"{quote(path_there[int(j)].as_py())}",
            field="exposed.relative_path",
        )

    results = _Results(exposed, owners, positions)
    _class_findings(receipts, results, found)
    _score_findings(receipts, results, found)


def _class_findings(receipts: pd.DataFrame, results: _Results, found: FindingsBuilder) -> None:
    exposed, owners, positions = results
    classes = list_column(exposed, "source_classes")
    for j in np.flatnonzero(list_lengths(classes) == 0):
        found.add(owners[j], "exposed_source_class", f"exposed result {positions[j]} has no class")
    flat = pc.list_flatten(classes)
    if len(flat) == 0:
        return
    result_of = pc.list_parent_indices(classes).to_numpy()
    involved = np.zeros(len(receipts), dtype=bool)
    involved[owners] = True
    missing = {}
    for column, word in (
        ("allowed_source_classes", "not allowed"),
        ("requested_source_classes", "not requested"),
    ):
        listed = list_column(receipts, column)
        listed_owners = pc.list_parent_indices(listed).to_numpy()
        wanted = involved[listed_owners]
        class_keys, keys = pair_keys(
            (owners[result_of], flat),
            (listed_owners[wanted], pc.list_flatten(listed).filter(pa.array(wanted))),
        )
        inside = np.isin(class_keys, keys)
        for k in np.flatnonzero(~inside):
            missing.setdefault(int(result_of[k]), {}).setdefault(word, []).append(
                flat[int(k)].as_py()
            )
    for j, words in sorted(missing.items()):
        parts = "; ".join(f"{word}: {quote(names)}" for word, names in words.items())
        found.add(owners[j], "exposed_source_class", f"exposed result {positions[j]} {parts}")
    is_presentation = pc.equal(flat, "presentation").to_numpy(zero_copy_only=False)
    for j in np.unique(result_of[is_presentation]):
        found.add(
            owners[j],
            "exposed_presentation",
            f"exposed result {positions[j]} has source class 'presentation'",
        )


def _score_findings(receipts: pd.DataFrame, results: _Results, found: FindingsBuilder) -> None:
    exposed, owners, positions = results
    score = exposed["score"].to_numpy(dtype="float64", na_value=np.nan)
    threshold = receipts["relevance_threshold"].to_numpy(dtype="float64", na_value=np.nan)[owners]
    scope = receipts["scope"].to_numpy(dtype=object, na_value=None)[owners]
    search = scope == "search"
    with np.errstate(invalid="ignore"):
        below = search & ~np.isnan(threshold) & (np.isnan(score) | (score < threshold))
    for j in np.flatnonzero(below):
        found.add(
            owners[j],
            "exposed_below_threshold",
            f"exposed result {positions[j]} has score "
            f"{'null' if np.isnan(score[j]) else repr(float(score[j]))} under threshold "
            f"{float(threshold[j])!r}",
        )
    for j in np.flatnonzero((scope == "space") & ~np.isnan(score)):
        found.add(
            owners[j],
            "exposed_enumerated_score",
            f"exposed result {positions[j]} of a space receipt has score {float(score[j])!r}",
        )


def _count(value: float) -> str:
    return "null" if np.isnan(value) else str(int(value))
