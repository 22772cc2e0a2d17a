"""Retrieval receipts (engram): loading them into ``receipts`` and ``exposed``.

A line is any of the shapes of ``docs/formats.md`` section 1: a bare
``RetrievalReceipt`` (``shape="receipt"``), the CLI's output
``{schema_version, status, records|errors, receipt}`` (``shape="cli"``),
the internal outcome ``{kind, records|errors, receipt}`` (``shape="outcome"``),
or one of engram's presentation outcomes, whose embedded retrieval receipt is
a row here (``shape="presentation"``, ``outcome`` presented / failed) and
whose own fields are a row of ``presentations``
(:mod:`explicit_audit.receipts.presentations`; a presentation that failed
before retrieval is a row there only).
Keys a logger wrapped around a line are kept as columns of their own.

``receipts`` columns (one row per receipt; the index label is the receipt row):

=========================  ===================  ==========================================
column                     dtype                meaning
=========================  ===================  ==========================================
source_file                str                  file the value came from
source_line                int64                1-based line where the value starts
shape                      category             receipt / cli / outcome / presentation
outcome                    category             hit / miss / failed, or presented / failed
                                                for a presentation; <NA> for a bare receipt
error_codes                list<string>         ``errors[].code``; <NA> for a bare receipt
n_records                  Int64                records returned; <NA> for a bare receipt
                                                and a presentation
schema_version             Int64                ``receipt.schemaVersion`` (always 0)
scope                      category             search (a qmd query ran) / space (enumerated)
query                      str                  the query; missing for a space receipt
active_space               str                  missing when the space never resolved
collection                 str                  qmd collection; "" when unresolved
kind                       category             hit / miss
requested_source_classes   list<string>         classes the caller asked for
allowed_source_classes     list<string>         classes the policy allows
locator_uris               list<string>         ``qmd://<collection>/<path>.md`` locators
record_ids                 list<string>         ids of the records returned
relevance_threshold        Float64              threshold applied; <NA> when none was
withheld_audience          str                  ``withheld.audienceId``
withheld_count             Int64                records authorization withheld
n_exposed                  Int64                exposed results (guarded retrieval only)
=========================  ===================  ==========================================

Keys a logger wrapped around a line follow, as written: text as ``str``,
integers as ``Int64``, numbers as ``Float64``, booleans as ``boolean``,
anything else as objects; a key named like a column above is kept as
``extra.<key>``, an unknown key inside the receipt as ``receipt.<key>``.

``exposed`` columns (one row per exposed result):

==============  ============  =================================================
receipt_row     Int64         index label of its receipt in ``receipts``
position        int64         0-based position in ``exposedResults``
record_id       str           ``recordId``
source_uri      str           ``sourceUri`` (the locator)
relative_path   str           ``relativePath``
source_classes  list<string>  ``sourceClasses``
score           Float64       qmd's score; <NA> when the result was never ranked
==============  ============  =================================================

A value that does not fit (a missing or mistyped field, an unknown
``schemaVersion``, a withheld count that is not an integer) is rejected with
a reason naming the field. A field the receipt type allows to be null
(``query``, ``activeSpace``, ``relevanceThreshold``, ``withheld.audienceId``)
reads as null when absent. A negative withheld count loads, and the receipt
checks flag it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

import pandas as pd

from .._core.loaders import table_loader
from .._core.records import KindTables
from .._core.registry import load_tables
from ..reading.collect import Source
from ..reading.options import LoadOptions
from ._arrow import frames_from_parts
from ._values import normalise_values
from .presentations import presentations_table, screen_presentations

__all__ = [
    "NAME",
    "build_tables",
    "load_receipts",
    "load_receipts_and_exposed",
    "loaded_rows",
]

#: The kind's name, in the rejected table and the findings.
NAME = "receipts"


def build_tables(segments: Sequence[tuple]) -> KindTables:
    parts, rejected, presentations = [], [], []
    for what, segment in segments:
        if what == "part":
            parts.append(segment)
            continue
        # Presentation lines are read exactly (``layout`` names them "other").
        files = {item.source_file: rank for rank, item in reversed(list(enumerate(segment)))}
        segment, screened, misfits = screen_presentations(segment)
        presentations.extend(screened)
        part, more = normalise_values(segment)
        parts.append(part)
        # Both lists in file order: merged, they keep it.
        rejected.extend(
            sorted([*misfits, *more], key=lambda r: (files[r.source_file], r.source_line))
        )
    receipts, exposed = frames_from_parts(parts)
    tables = {"receipts": receipts, "exposed": exposed}
    tables["presentations"] = presentations_table(presentations, receipts)
    return KindTables(tables, rejected)


def loaded_rows(built: KindTables) -> pd.DataFrame:
    """One row per value the kind loaded (``source_file``), for ``Audit.sources``.

    That is a row of ``receipts``, but for a presentation that failed before
    retrieval: a loaded value with a ``presentations`` row and no receipt row.
    """
    main = built.tables["receipts"]
    presentations = built.tables.get("presentations")
    if presentations is None or not presentations["receipt_row"].isna().any():
        return main
    alone = presentations.loc[presentations["receipt_row"].isna(), ["source_file"]]
    return pd.concat([main[["source_file"]], alone]).astype({"source_file": "str"})


@table_loader("receipts", "exposed")
def load_receipts_and_exposed(
    source: Source, **options: Unpack[LoadOptions]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load retrieval receipts and their exposed results."""
    tables = load_tables(source, NAME, **options)
    return tables["receipts"], tables["exposed"]


@table_loader("receipts")
def load_receipts(source: Source, **options: Unpack[LoadOptions]) -> pd.DataFrame:
    """Load retrieval receipts (engram) into a DataFrame, one row per receipt.

    Examples
    --------
    >>> receipts = ea.load_receipts("data/receipts/", progress=False)
    >>> int(receipts.withheld_count.sum()) > 0
    True
    """
    return load_tables(source, NAME, **options)["receipts"]
