"""The per-kind loaders: one record kind's table(s) from files, folders or globs.

Each reads only its own kind (values of other kinds are recognised and
skipped) through :func:`explicit_audit.audit.load_kind`, with every option of
:func:`explicit_audit.load`; ``ea.load`` reads every kind at once.
"""

from __future__ import annotations

import pandas as pd

from ._core.collect import Source
from ._core.limits import Limits
from .audit import engine_options, load_kind, reading_options
from .decisions import KIND as DECISIONS_KIND
from .plans import KIND as PLANS_KIND
from .receipts import KIND as RECEIPTS_KIND
from .requests import KIND as REQUESTS_KIND

__all__ = [
    "load_decisions",
    "load_plans",
    "load_receipts",
    "load_receipts_and_exposed",
    "load_requests",
]


@reading_options
def load_plans(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> pd.DataFrame:
    """Load arborist retrieval-plan records into a DataFrame, one row per run.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    {reading_options}

    Returns
    -------
    DataFrame
        The ``plans`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> plans = ea.load_plans("data/plans/")  # doctest: +SKIP
    >>> ea.verify_plans(plans).status.value_counts()  # doctest: +SKIP
    """

    return load_kind(
        source,
        PLANS_KIND,
        strict=strict,
        progress=progress,
        limits=limits,
        **engine_options(engine, blocksize, sample_bytes),
    ).tables["plans"]


@reading_options
def load_requests(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> pd.DataFrame:
    """Load explicit_learning C2 compile requests, one row per request sent.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    {reading_options}

    Returns
    -------
    DataFrame
        The ``requests`` table (columns in the module docstring).

    Examples
    --------
    >>> import explicit_audit as ea
    >>> requests = ea.load_requests("data/requests/")  # doctest: +SKIP
    >>> ea.verify_requests(requests).finding.value_counts()  # doctest: +SKIP
    """

    return load_kind(
        source,
        REQUESTS_KIND,
        strict=strict,
        progress=progress,
        limits=limits,
        **engine_options(engine, blocksize, sample_bytes),
    ).tables["requests"]


@reading_options
def load_receipts_and_exposed(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Load retrieval receipts and their exposed results.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs.
    strict : bool, default False
        Raise at the first input that cannot be loaded.
    {reading_options}

    Returns
    -------
    receipts, exposed : DataFrame
        See the module docstring for their columns.
    """

    built = load_kind(
        source,
        RECEIPTS_KIND,
        strict=strict,
        progress=progress,
        limits=limits,
        **engine_options(engine, blocksize, sample_bytes),
    )
    return built.tables["receipts"], built.tables["exposed"]


@reading_options
def load_receipts(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> pd.DataFrame:
    """Load retrieval receipts (engram) into a DataFrame, one row per receipt.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs; ``.jsonl``, ``.json``, either gzip-compressed.
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` naming file and line at the
        first input that cannot be loaded.
    {reading_options}

    Returns
    -------
    DataFrame
        The ``receipts`` table (columns in the module docstring). Rejected
        inputs are announced by a :class:`~explicit_audit.RejectedRowsWarning`;
        ``ea.load(source).rejected`` lists them.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> receipts = ea.load_receipts("data/receipts/")  # doctest: +SKIP
    >>> receipts.groupby("withheld_audience").withheld_count.sum()  # doctest: +SKIP
    """
    return load_receipts_and_exposed(
        source,
        strict=strict,
        progress=progress,
        limits=limits,
        **engine_options(engine, blocksize, sample_bytes),
    )[0]


@reading_options
def load_decisions(
    source: Source,
    *,
    strict: bool = False,
    progress: bool = True,
    limits: Limits | dict | None = None,
    engine: str = "pandas",
    blocksize: int | None = None,
    sample_bytes: int | None = None,
) -> pd.DataFrame:
    """Load routing decision records into one table.

    Parameters
    ----------
    source : str, path-like, or iterable of them
        Files, folders or globs of ``.jsonl``/``.json`` (optionally ``.gz``).
    strict : bool, default False
        Raise :class:`~explicit_audit.InputError` at the first record that does not fit.
    {reading_options}

    Returns
    -------
    DataFrame
        The ``decisions`` table (columns in the module docstring). Rejected
        records are only reported; load with :func:`explicit_audit.load` to
        keep them in ``audit.rejected``.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> decisions = ea.load_decisions("data/decisions/")  # doctest: +SKIP
    >>> decisions.recorded_escalate_to_26b.mean()  # doctest: +SKIP
    """

    return load_kind(
        source,
        DECISIONS_KIND,
        strict=strict,
        progress=progress,
        limits=limits,
        **engine_options(engine, blocksize, sample_bytes),
    ).tables["decisions"]
