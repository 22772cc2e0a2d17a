"""The findings and the rejected rows written beside a report's pages, as CSV and Parquet.

A reviewer takes the findings away to a spreadsheet, a notebook or a
ticket: ``explicit-audit report`` writes ``findings.csv`` and
``findings.parquet`` (one row per finding, the columns of
:data:`~explicit_audit.verify.FINDING_COLUMNS`, the rows ``explicit-audit verify
--json`` lists, in its order) and ``rejected.csv`` and ``rejected.parquet``
(the input values that could not be loaded, ``Audit.rejected``), linked from
the index. They are written with the pages, into the run's staging folder,
and moved into place with them: a run that is stopped leaves the previous
run's files, never a mix.

CSV: UTF-8, a header line, a missing value as an empty field, fields quoted
where they hold a comma, a quote or a line break. A text that a spreadsheet
would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return: a logged query may hold ``=HYPERLINK(...)``) is written
after an apostrophe, which a spreadsheet shows as text and hides. Parquet:
every value as it is, the columns' types kept (categories as dictionaries,
nullable integers), read as they are by pandas, polars and DuckDB.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .._version import __version__
from ..audit import Audit
from ..verify import Verification

__all__ = [
    "DOWNLOADS",
    "FORMULA_START",
    "csv_text",
    "download_files",
    "download_tables",
    "parquet_bytes",
    "written_by_the_kit",
]

#: The files written beside the pages, each with what it holds, in the index's order.
DOWNLOADS = {
    "findings.csv": "every finding, one row each (as verify --json lists them)",
    "findings.parquet": "the same rows, with their column types",
    "rejected.csv": "every input value that could not be loaded",
    "rejected.parquet": "the same rows, with their column types",
}

#: The key of a Parquet file's metadata that says the kit wrote it.
_GENERATOR = b"generator"


def download_tables(verification: Verification, audit: Audit) -> dict[str, pd.DataFrame]:
    """The tables written beside the pages: ``{"findings": ..., "rejected": ...}``.

    Parameters
    ----------
    verification : Verification
        :func:`~explicit_audit.verify_all` of the data the pages show.
    audit : Audit
        The audit it checked, its accounting in memory
        (``verification.accounting``).

    Returns
    -------
    dict of str to DataFrame
        Their rows numbered from 0.
    """
    return {
        "findings": verification.findings.reset_index(drop=True),
        "rejected": audit.rejected.reset_index(drop=True),
    }


#: How a cell a spreadsheet runs as a formula starts (OWASP, "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text: a header line, a missing value as an empty field, and a text
    that starts as a formula does (:data:`FORMULA_START`) after an apostrophe.

    Examples
    --------
    >>> print(csv_text(pd.DataFrame({"record": ["=1+1", "-2", "q7"], "line": [1, -2, 3]})))
    record,line
    '=1+1,1
    '-2,-2
    q7,3
    <BLANKLINE>
    """
    guarded = {}
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        text = column.astype("string")
        formula = text.str.startswith(FORMULA_START).fillna(False).to_numpy(dtype=bool)
        if formula.any():
            guarded[name] = column.astype(object).where(~formula, "'" + text.astype(object))
    return frame.assign(**guarded).to_csv(index=False, lineterminator="\n")


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as the bytes of a Parquet file that names the kit as its writer."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = {**(table.schema.metadata or {}), _GENERATOR: f"explicit_audit {__version__}"}
    buffer = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(metadata), buffer)
    return buffer.getvalue()


def download_files(tables: Mapping[str, pd.DataFrame]) -> dict[str, bytes]:
    """``{file name: bytes}`` of :data:`DOWNLOADS`, from :func:`download_tables`."""
    files = {}
    for name, frame in tables.items():
        files[f"{name}.csv"] = csv_text(frame).encode("utf-8")
        files[f"{name}.parquet"] = parquet_bytes(frame)
    return files


def _csv_headers() -> frozenset[bytes]:
    from .._core.findings import FINDING_COLUMNS
    from ..reading.tables import REJECTED_COLUMNS

    return frozenset(",".join(columns).encode() for columns in (FINDING_COLUMNS, REJECTED_COLUMNS))


def written_by_the_kit(path: Path) -> bool:
    """Whether ``path``, named as one of :data:`DOWNLOADS`, is a file the kit wrote: a
    Parquet file whose metadata names the kit, a CSV file whose header is the kit's."""
    try:
        if path.suffix == ".parquet":
            metadata = pq.read_schema(path).metadata or {}
            return metadata.get(_GENERATOR, b"").startswith(b"explicit_audit ")
        with open(path, "rb") as stream:
            return stream.readline().rstrip(b"\n") in _csv_headers()
    except (OSError, pa.ArrowException):
        return False
