"""engram's presentation outcomes: the ``presentations`` table.

engram's presentation rendering (``renderPresentation`` in
``harness/src/presentation.ts``; ``engram render`` prints it) writes one of:

- ``{schema_version: 0, status: "presented", content, receipt[, retained]}``,
  whose presentation receipt embeds the retrieval receipt at
  ``receipt.retrievalReceipt``;
- ``{schema_version: 0, status: "failed", errors, retrieval}``, when the
  rendering failed at or after retrieval (the retrieval receipt may be of kind
  ``hit``: a later step failed);
- ``{schema_version: 0, status: "failed", errors}``, when it failed before any
  retrieval ran.

The embedded retrieval receipt is a row of ``receipts`` (``shape``
"presentation", ``outcome`` the rendering's status). This module builds one
``presentations`` row per line, presented or failed, keyed to that receipt
row. Keys a logger wrapped around a line follow as columns, as in ``receipts``.

``presentations`` columns (the index label is the presentation row):

===================  ==================  ================================================
column               dtype               meaning
===================  ==================  ================================================
source_file          str                 file the line came from
source_line          int64               1-based line where the value starts
receipt_row          Int64               index label of its retrieval receipt in
                                         ``receipts``; <NA> when the line carries none
status               category            presented / failed
presentation_id      str                 ``receipt.presentationId``; <NA> when failed
active_space         str                 ``receipt.activeSpace``
view_id              str                 ``receipt.viewId``
view_version         Int64               ``receipt.viewVersion``
audience_id          str                 ``receipt.audienceId``: who it was rendered for
audience_version     Int64               ``receipt.audienceVersion``
delivery_id          str                 ``receipt.deliveryId``
delivery_version     Int64               ``receipt.deliveryVersion``
source_record_ids    list<string>        ``receipt.sourceRecordIds``
source_references    list<struct>        ``receipt.sourceReferences`` (``recordId``,
                                         ``sourceUri``, ``relativePath``)
pack_id              str                 ``receipt.pack.id``
pack_version         str                 ``receipt.pack.version``
model                category            ``receipt.model``
recommendation_ids   list<string>        ``receipt.recommendationIds``
generated_at         datetime64[ns, UTC] ``receipt.generatedAt`` as a UTC time
generated_at_unparsed str                the text where it is not an ISO 8601 time
content              str                 the rendered text; <NA> when failed
retained             boolean             the line carries ``retained`` (files written)
error_codes          list<string>        ``errors[].code``; empty when presented
record               object              the line exactly as written (parsed), for
                                         the checks and the ``presentationId`` rebuild
===================  ==================  ================================================

The receipt fields are <NA> on a failed line, which carries none of them.
``generated_at`` is typed by the loader, as every time column is
(:mod:`explicit_audit._core.times`); ``record`` keeps the text as written.
A line is rejected, naming the field, when a field the table holds is missing
or of another type (a version that is not an integer, a source reference
without ``sourceUri``), or when its retrieval receipt is (see
:mod:`explicit_audit.receipts.loader`). What engram guarantees beyond types
is left to :func:`~explicit_audit.check_presentations`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .._core.columns import beside, extra_columns, text_safe_series
from .._core.records import RawValue, Rejection, sort_out
from .._core.shape_arrow import arrow_type
from ..errors import RecordError
from ._schema import PRESENTATION_STATUSES
from ._values import (
    PRESENTATION_KEYS,
    _integer,
    _misfit,
    _object,
    _objects,
    _row,
    _string,
    _strings,
    is_presentation,
)
from .shape import PRESENTATION_SHAPES

__all__ = ["PRESENTATION_COLUMNS", "presentations_table", "screen_presentations"]

_REFERENCE = arrow_type(PRESENTATION_SHAPES[0].field("receipt.sourceReferences").items)
_REFERENCE_KEYS = tuple(_REFERENCE.names)
_LIST_OF_STRINGS = pd.ArrowDtype(pa.list_(pa.string()))
#: Columns of ``presentations`` and their dtypes (meanings in the module docstring).
PRESENTATION_COLUMNS = {
    "source_file": "str",
    "source_line": "int64",
    "receipt_row": "Int64",
    "status": pd.CategoricalDtype(PRESENTATION_STATUSES),
    "presentation_id": "str",
    "active_space": "str",
    "view_id": "str",
    "view_version": "Int64",
    "audience_id": "str",
    "audience_version": "Int64",
    "delivery_id": "str",
    "delivery_version": "Int64",
    "source_record_ids": _LIST_OF_STRINGS,
    "source_references": pd.ArrowDtype(pa.list_(_REFERENCE)),
    "pack_id": "str",
    "pack_version": "str",
    "model": "category",
    "recommendation_ids": _LIST_OF_STRINGS,
    "generated_at": "str",
    "content": "str",
    "retained": "boolean",
    "error_codes": _LIST_OF_STRINGS,
    "record": object,
}
_TEXT = {
    "presentation_id": "presentationId",
    "active_space": "activeSpace",
    "view_id": "viewId",
    "audience_id": "audienceId",
    "delivery_id": "deliveryId",
    "model": "model",
    "generated_at": "generatedAt",
}
_VERSIONS = {
    "view_version": "viewVersion",
    "audience_version": "audienceVersion",
    "delivery_version": "deliveryVersion",
}
_LISTS = {"source_record_ids": "sourceRecordIds", "recommendation_ids": "recommendationIds"}


def _required(mapping: dict, key: str, at: str) -> Any:
    if key not in mapping:
        raise _misfit(f"{at}{key}", "is missing")
    return mapping[key]


def _references(value: Any, field: str) -> list[dict]:
    return [
        {key: _string(_required(item, key, f"{at}."), f"{at}.{key}") for key in _REFERENCE_KEYS}
        for at, item in _objects(value, field)
    ]


def _error_codes(value: dict) -> list[str]:
    errors = value.get("errors")
    if errors is None:
        return []
    return [_string(error.get("code"), f"{at}.code") for at, error in _objects(errors, "errors")]


def _presentation_row(value: dict) -> dict[str, Any]:
    """The ``presentations`` fields of one line; raises a misfit naming the field."""
    status = value.get("status")
    row: dict[str, Any] = dict.fromkeys(PRESENTATION_COLUMNS)
    row.update(status=status, error_codes=_error_codes(value), retained="retained" in value)
    if status == "failed":
        if "retrieval" in value:
            _object(value["retrieval"], "retrieval")
        return row
    row["content"] = _string(_required(value, "content", ""), "content")
    receipt = _object(_required(value, "receipt", ""), "receipt")
    for column, key in _TEXT.items():
        row[column] = _string(_required(receipt, key, "receipt."), f"receipt.{key}")
    for column, key in _VERSIONS.items():
        row[column] = _integer(_required(receipt, key, "receipt."), f"receipt.{key}")
    for column, key in _LISTS.items():
        row[column] = _strings(_required(receipt, key, "receipt."), f"receipt.{key}")
    row["source_references"] = _references(
        _required(receipt, "sourceReferences", "receipt."), "receipt.sourceReferences"
    )
    pack = _object(_required(receipt, "pack", "receipt."), "receipt.pack")
    row["pack_id"] = _string(_required(pack, "id", "receipt.pack."), "receipt.pack.id")
    row["pack_version"] = _string(
        _required(pack, "version", "receipt.pack."), "receipt.pack.version"
    )
    return row


def _carries_receipt(value: dict) -> bool:
    return value.get("status") == "presented" or value.get("retrieval") is not None


def screen_presentations(
    values: Sequence[RawValue],
) -> tuple[list[RawValue], list[tuple[RawValue, dict]], list[Rejection]]:
    """Sort the presentation lines out of receipt values, and check their fields.

    Parameters
    ----------
    values : sequence of RawValue
        Values the receipts kind claimed, in file order.

    Returns
    -------
    for_receipts : list of RawValue
        The values whose retrieval receipt goes to the ``receipts`` table:
        every value that is not a presentation line, and each presentation
        line that fits and carries a retrieval receipt, in order.
    presentations : list of (RawValue, dict)
        Every presentation line that fits, with its ``presentations`` fields.
    rejected : list of Rejection
        The presentation lines that do not fit, naming the field.
    """
    lines = [item for item in values if is_presentation(item.value)]
    if not lines:
        return list(values), [], []
    kept, rejected = sort_out(lines, "receipts", _presentation_row, RecordError, text_only=True)
    fitting = {id(item) for item, _ in kept}
    for_receipts = [
        item
        for item in values
        if not is_presentation(item.value) or (id(item) in fitting and _carries_receipt(item.value))
    ]
    return for_receipts, kept, rejected


def _receipt_fits(value: dict) -> bool:
    try:
        _row(value)
    except RecordError:
        return False
    return True


def presentations_table(
    presentations: Sequence[tuple[RawValue, dict]], receipts: pd.DataFrame
) -> pd.DataFrame:
    """The ``presentations`` table, each row keyed to its retrieval receipt row.

    Parameters
    ----------
    presentations : sequence of (RawValue, dict)
        What :func:`screen_presentations` kept, file by file (the rows of one
        file in any order: they are put in file order here).
    receipts : DataFrame
        The ``receipts`` table built from the same values. A line's receipt
        row is found by ``(source_file, source_line)`` among the
        ``presentation``-shaped rows, in order within one line.

    Returns
    -------
    DataFrame
        Columns of :data:`PRESENTATION_COLUMNS`, then the logger's keys. A
        line whose retrieval receipt did not fit (it is in the rejected rows)
        has no row here either.
    """
    shaped = receipts.index[(receipts["shape"] == "presentation").to_numpy(dtype=bool)]
    rows_at: dict[tuple[str, int], list[int]] = defaultdict(list)
    files = receipts["source_file"].astype("str").reindex(shaped)
    for label, source_file, line in zip(
        shaped, files, receipts["source_line"].reindex(shaped), strict=True
    ):
        rows_at[(source_file, int(line))].append(int(label))
    rank: dict[str, int] = {}
    for item, _ in presentations:
        rank.setdefault(item.source_file, len(rank))
    # Segments come file by file, a file's values in any order: rows go in file order.
    in_order = sorted(
        presentations, key=lambda kept: (rank[kept[0].source_file], kept[0].source_line)
    )
    # A line's receipt row is there when its receipt fitted. Only where several
    # presentations share a line (an array's elements) is each receipt checked again,
    # so that one that did not fit takes no other's row.
    sharing = Counter((item.source_file, item.source_line) for item, _ in presentations)
    rows, extras = [], []
    for item, fields in in_order:
        row = dict(fields)
        if _carries_receipt(item.value):
            where = (item.source_file, item.source_line)
            if sharing[where] > 1 and not _receipt_fits(item.value):
                continue
            labels = rows_at.get(where)
            if not labels:
                continue
            row["receipt_row"] = labels.pop(0)
        row.update(source_file=item.source_file, source_line=item.source_line, record=item.value)
        rows.append(row)
        extras.append({k: v for k, v in item.value.items() if k not in PRESENTATION_KEYS})
    index = pd.RangeIndex(len(rows))
    frame = pd.DataFrame(
        {
            name: _column([row[name] for row in rows], dtype, index)
            for name, dtype in PRESENTATION_COLUMNS.items()
        },
        index=index,
    )
    if any(extras):
        frame = beside(frame, extra_columns(extras, index), "extra.")
    return frame


def _column(values: list, dtype: Any, index: pd.Index) -> pd.Series:
    if dtype is object:
        held = np.empty(len(values), dtype=object)
        held[:] = values
        return pd.Series(held, dtype=object, index=index)
    if isinstance(dtype, pd.ArrowDtype):
        array = pa.array(values, type=dtype.pyarrow_dtype)
        return pd.Series(pd.arrays.ArrowExtensionArray(array), index=index)
    return text_safe_series(values, dtype, index)
