"""Receipts read value by value: shape test, validation, normalisation.

This is the exact path: every value is checked field by field, and one that
does not fit becomes a Rejection naming the field. The columnar path in
:mod:`explicit_audit.receipts._arrow` must give the same rows for clean input.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from .._core.columns import extra_columns, fits_int64
from .._core.describe import describe
from .._core.records import RawValue, sort_out
from ..errors import RecordError
from ._schema import NORMAL_SCHEMA, PRESENTATION_STATUSES, RECEIPT_KEYS, WRAPPER_KEYS
from .shape import EXPOSED_FIELDS, PRESENTATION_KEYS, RECEIPT_FIELDS, SHAPES

__all__ = ["PRESENTATION_KEYS", "is_presentation", "matches", "normalise_values"]

_RECEIPT, _CLI, _OUTCOME = SHAPES
#: The receipt's keys it may leave out: those it may write null.
_NULLABLE = frozenset(field.name for field in RECEIPT_FIELDS if not field.required)
_EXPOSED_KEYS = tuple(field.name for field in EXPOSED_FIELDS if field.required)
_OUTCOMES = {"hit": "hit", "miss": "miss", "failed": "failed", "failure": "failed"}


#: The values each enumerated field may hold, as its shape declares them (looked up
#: once here: a field is found by walking its shape, too slow to do per record).
_SCOPES = _RECEIPT.field("scope").values
_RECEIPT_KINDS = _RECEIPT.field("kind").values
_CLI_STATUSES = _CLI.field("status").values
_OUTCOME_KINDS = _OUTCOME.field("kind").values


def _misfit(field: str, problem: str) -> RecordError:
    """The error for a receipt field that does not fit: ``"<field> <problem>"``."""
    return RecordError(field, problem, sep=" ")


def is_presentation(value: dict) -> bool:
    """Whether a parsed JSON object is one of engram's presentation outcomes.

    ``{schema_version, status: "presented", content, receipt}``, or
    ``{schema_version, status: "failed", errors[, retrieval]}``: unlike a CLI
    failure, a failed presentation never carries a ``receipt`` key.
    """
    status = value.get("status")
    if status == "presented":
        return True
    return (
        status == "failed"
        and "receipt" not in value
        and "schema_version" in value
        and ("retrieval" in value or "errors" in value)
    )


def matches(value: dict) -> bool:
    """Whether a parsed JSON object has a receipt line shape (a presentation included)."""
    if isinstance(value.get("receipt"), dict):
        return "status" in value or "kind" in value or "schema_version" in value
    if is_presentation(value):
        return True
    return "schemaVersion" in value and (
        "scope" in value or "withheld" in value or "locatorUris" in value
    )


def _string(value: Any, field: str, nullable: bool = False) -> str | None:
    if isinstance(value, str) or (nullable and value is None):
        return value
    raise _misfit(field, f"must be a string{' or null' if nullable else ''}, got {describe(value)}")


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise _misfit(field, f"must be an array of strings, got {describe(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):  # the item's field is named only when it is wrong
            _string(item, f"{field}[{index}]")
    return value


def _integer(value: Any, field: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        if fits_int64(value):
            return value
        raise _misfit(field, f"is {value}, beyond the 64-bit integers the table holds")
    raise _misfit(field, f"must be an integer, got {describe(value)}")


def _number(value: Any, field: str, nullable: bool = False) -> float | None:
    if value is None and nullable:
        return None
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        # An integer past a double's range (310 digits or more) is an infinity
        # to a JavaScript producer: math.isfinite and float() refuse it.
        try:
            return float(value)
        except OverflowError:
            raise _misfit(
                field,
                f"must be a finite number{' or null' if nullable else ''}, got an integer of "
                f"{len(str(abs(value)))} digits, beyond a 64-bit float",
            ) from None
    raise _misfit(
        field, f"must be a finite number{' or null' if nullable else ''}, got {describe(value)}"
    )


def _choice(value: Any, field: str, allowed: Sequence[str]) -> str:
    if value in allowed and isinstance(value, str):
        return value
    raise _misfit(field, f"must be one of {', '.join(allowed)}, got {describe(value)}")


def _object(value: Any, field: str) -> dict:
    if not isinstance(value, dict):
        raise _misfit(field, f"must be an object, got {describe(value)}")
    return value


def _objects(value: Any, field: str) -> Iterator[tuple[str, dict]]:
    """Each object of the array ``value`` with its field (``exposed[2]``), in order.

    Raises a misfit for a value that is not an array, and for an element that is
    not an object when the loop reaches it (what comes before is checked first).
    """
    if not isinstance(value, list):
        raise _misfit(field, f"must be an array, got {describe(value)}")
    for index, item in enumerate(value):
        at = f"{field}[{index}]"
        yield at, _object(item, at)


def _exposed(value: Any, field: str) -> list[dict]:
    out = []
    for at, item in _objects(value, field):
        for key in _EXPOSED_KEYS:
            if key not in item:
                raise _misfit(f"{at}.{key}", "is missing")
        out.append(
            {
                "recordId": _string(item["recordId"], f"{at}.recordId"),
                "sourceUri": _string(item["sourceUri"], f"{at}.sourceUri"),
                "relativePath": _string(item["relativePath"], f"{at}.relativePath"),
                "sourceClasses": _strings(item["sourceClasses"], f"{at}.sourceClasses"),
                "score": _number(item.get("score"), f"{at}.score", nullable=True),
            }
        )
    return out


def _receipt(receipt: Any, prefix: str) -> dict[str, Any]:
    if not isinstance(receipt, dict):
        raise _misfit(prefix.rstrip("."), f"must be an object, got {describe(receipt)}")
    for key in RECEIPT_KEYS:
        if key not in receipt and key not in _NULLABLE:
            raise _misfit(f"{prefix}{key}", "is missing")
    version = _integer(receipt["schemaVersion"], f"{prefix}schemaVersion")
    if version != 0:
        raise _misfit(
            f"{prefix}schemaVersion",
            f"is {version}, a receipt schema this kit does not know (it reads version 0)",
        )
    withheld = receipt["withheld"]
    if not isinstance(withheld, dict):
        raise _misfit(f"{prefix}withheld", f"must be an object, got {describe(withheld)}")
    if "count" not in withheld:
        raise _misfit(f"{prefix}withheld.count", "is missing")
    return {
        "schema_version": version,
        "scope": _choice(receipt["scope"], f"{prefix}scope", _SCOPES),
        "query": _string(receipt.get("query"), f"{prefix}query", nullable=True),
        "active_space": _string(receipt.get("activeSpace"), f"{prefix}activeSpace", True),
        "collection": _string(receipt["collection"], f"{prefix}collection"),
        "kind": _choice(receipt["kind"], f"{prefix}kind", _RECEIPT_KINDS),
        "requested_source_classes": _strings(
            receipt["requestedSourceClasses"], f"{prefix}requestedSourceClasses"
        ),
        "allowed_source_classes": _strings(
            receipt["allowedSourceClasses"], f"{prefix}allowedSourceClasses"
        ),
        "locator_uris": _strings(receipt["locatorUris"], f"{prefix}locatorUris"),
        "record_ids": _strings(receipt["recordIds"], f"{prefix}recordIds"),
        "relevance_threshold": _number(
            receipt.get("relevanceThreshold"), f"{prefix}relevanceThreshold", nullable=True
        ),
        "withheld_audience": _string(
            withheld.get("audienceId"), f"{prefix}withheld.audienceId", nullable=True
        ),
        "withheld_count": _integer(withheld["count"], f"{prefix}withheld.count"),
        "exposed": _exposed(receipt["exposedResults"], f"{prefix}exposedResults"),
    }, [key for key in receipt if key not in RECEIPT_KEYS]


def _wrapper(value: dict) -> dict[str, Any]:
    # A wrapper field that is null reads as absent, as in the columnar path,
    # where the two cannot be told apart.
    if value.get("status") is not None or value.get("schema_version") is not None:
        shape = "cli"
        version = _integer(value.get("schema_version"), "schema_version")
        if version != 0:
            raise _misfit(
                "schema_version", f"is {version}, a CLI schema this kit does not know (it reads 0)"
            )
        outcome = _choice(value.get("status"), "status", _CLI_STATUSES)
    else:
        shape = "outcome"
        outcome = _OUTCOMES[_choice(value.get("kind"), "kind", _OUTCOME_KINDS)]
    records = value.get("records")
    records = [] if records is None else records
    if not isinstance(records, list):
        raise _misfit("records", f"must be an array, got {describe(records)}")
    errors = value.get("errors")
    errors = [] if errors is None else errors
    if not isinstance(errors, list):
        raise _misfit("errors", f"must be an array, got {describe(errors)}")
    codes = []
    for index, error in enumerate(errors):
        if not isinstance(error, dict):
            raise _misfit(f"errors[{index}]", f"must be an object, got {describe(error)}")
        codes.append(_string(error.get("code"), f"errors[{index}].code"))
    return {"shape": shape, "outcome": outcome, "error_codes": codes, "n_records": len(records)}


def _presentation(value: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    """The retrieval receipt a presentation line embeds, as a ``presentation`` row.

    A presented line carries it at ``receipt.retrievalReceipt``, a failed one
    at ``retrieval``. The outcome is the rendering's status; errors are read as
    for a CLI line; ``n_records`` is <NA>: a presentation returns no records.
    """
    version = _integer(value.get("schema_version"), "schema_version")
    if version != 0:
        raise _misfit(
            "schema_version",
            f"is {version}, a presentation schema this kit does not know (it reads 0)",
        )
    status = _choice(value.get("status"), "status", PRESENTATION_STATUSES)
    if status == "presented":
        receipt = value.get("receipt")
        if not isinstance(receipt, dict):
            raise _misfit("receipt", f"must be an object, got {describe(receipt)}")
        if "retrievalReceipt" not in receipt:
            raise _misfit("receipt.retrievalReceipt", "is missing")
        embedded, prefix = receipt["retrievalReceipt"], "receipt.retrievalReceipt."
    else:
        if value.get("retrieval") is None:
            raise _misfit("retrieval", "is missing: this presentation carries no receipt")
        embedded, prefix = value["retrieval"], "retrieval."
    row = _wrapper({"schema_version": version, "status": "failed", "errors": value.get("errors")})
    row.update(shape="presentation", outcome=status, n_records=None)
    fields, unknown = _receipt(embedded, prefix)
    row.update(fields)
    extras = {key: item for key, item in value.items() if key not in PRESENTATION_KEYS}
    extras.update({f"{prefix}{key}": embedded[key] for key in unknown})
    return row, extras


def _row(value: dict) -> tuple[dict[str, Any], dict[str, Any]]:
    if is_presentation(value):
        return _presentation(value)
    if isinstance(value.get("receipt"), dict):
        row = _wrapper(value)
        fields, unknown = _receipt(value["receipt"], "receipt.")
        row.update(fields)
        extras = {key: item for key, item in value.items() if key not in WRAPPER_KEYS}
        extras.update({f"receipt.{key}": value["receipt"][key] for key in unknown})
    else:
        row = {"shape": "receipt", "outcome": None, "error_codes": None, "n_records": None}
        fields, unknown = _receipt(value, "")
        row.update(fields)
        extras = {key: value[key] for key in unknown}
    return row, extras


def normalise_values(values: Sequence[RawValue]):
    """Validate receipt values and put them in the normal Arrow layout.

    Parameters
    ----------
    values : sequence of RawValue
        Values that :func:`matches` claimed.

    Returns
    -------
    part : tuple of (pyarrow.Table, DataFrame)
        The rows in :data:`~explicit_audit.receipts._schema.NORMAL_SCHEMA` and
        the extra (logger) columns, row-aligned.
    rejected : list of Rejection
    """
    kept, rejected = sort_out(values, "receipts", _row, RecordError, text_only=True)
    rows, extras = [], []
    for item, (row, extra) in kept:
        row["source_file"] = item.source_file
        row["source_line"] = item.source_line
        rows.append(row)
        extras.append(extra)
    columns = {
        field.name: pa.array([row[field.name] for row in rows], type=field.type)
        for field in NORMAL_SCHEMA
    }
    table = pa.Table.from_pydict(columns, schema=NORMAL_SCHEMA)
    # Past max_extra_columns, the later keys wait as dicts: placed when the parts are joined.
    return (table, extra_columns(extras, pd.RangeIndex(len(rows)), as_text=False)), rejected
