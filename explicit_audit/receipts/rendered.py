"""The retrieval receipt of each rendered view: receipts keyed by view and audience.

engram's presentation rendering embeds the retrieval receipt of every view it
renders; ``presentations`` names it by ``receipt_row``. :func:`view_receipts`
gives those receipts with the view's ``view_id`` and ``audience_id``, so that
:func:`~explicit_audit.withheld_summary` can count what each view withheld.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .._core import engine

__all__ = ["view_receipts"]


def _view_receipts(receipts: pd.DataFrame, presentations: pd.DataFrame) -> pd.DataFrame:
    rendered = presentations[(presentations["status"] == "presented").to_numpy(dtype=bool)]
    return receipts.loc[rendered["receipt_row"].to_numpy()].assign(
        view_id=rendered["view_id"].to_numpy(),
        audience_id=rendered["audience_id"].to_numpy(),
    )


def view_receipts(data: Any) -> pd.DataFrame:
    """The receipt of every presented view, with its ``view_id`` and ``audience_id``.

    Parameters
    ----------
    data : Audit
        Anything with ``receipts`` and ``presentations`` from one load.

    Returns
    -------
    DataFrame
        One row per presented rendering, in ``presentations`` order: its
        receipt's row of ``receipts`` (index label kept, so a receipt two
        renderings embed appears twice), then ``view_id`` and ``audience_id``.
        Failed renderings have no receipt to count and are left out. On Dask
        tables, a lazy table: a rendering's receipt is in the partition of
        the rendering, as both come from its line.

    Examples
    --------
    >>> audit = ea.load("data/")  # doctest: +SKIP
    >>> ea.withheld_summary(ea.view_receipts(audit), by="view_id")  # doctest: +SKIP
    """
    return engine.each_row(_view_receipts, [data.receipts, data.presentations])
