"""Charts a panel shows next to its table: a figure drawn once, kept as PNG, with a caption.

Each chart function takes the data and the control values a view takes, asks
the view for its result, draws it with :mod:`explicit_audit.plots` on a
figure of its own (never pyplot's current figure) and returns a
:class:`Chart`, whose caption states the numbers drawn.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from ..plots import plot_escalation_at, plot_withheld_by
from ..views import ALL, NO_AUDIENCE, escalation_curve_view, window_readout, withheld_view

__all__ = ["Chart", "escalation_chart", "withheld_chart"]


class Chart:
    """A drawn figure as a PNG, with a caption that states what it marks.

    Renders as HTML (the image and the caption under it) and as text (the
    caption), so a reader and a test read the same numbers.

    Parameters
    ----------
    png : bytes
        The image.
    caption : str
        One or two sentences naming what is drawn and the values marked.
    """

    def __init__(self, png: bytes, caption: str) -> None:
        self.png = png
        self.caption = caption

    @classmethod
    def draw(
        cls, draw: Callable[[Any], Any], caption: str, *, size: tuple[float, float] = (7, 3.2)
    ) -> Chart:
        """Draw with ``draw(ax)`` on a figure of its own and keep the PNG."""
        figure = Figure(figsize=size, dpi=80, layout="constrained")
        draw(figure.subplots())
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", metadata={"Software": None})
        return cls(buffer.getvalue(), caption)

    def __repr__(self) -> str:
        return self.caption

    def _repr_html_(self) -> str:
        source = base64.b64encode(self.png).decode("ascii")
        text = html.escape(self.caption)
        return (
            f"<figure class='ea-chart' style='margin:0'><img src='data:image/png;base64,{source}' "
            f"alt='{text}'/><figcaption>{text}</figcaption></figure>"
        )


def withheld_chart(
    data: Any,
    *,
    audience: str = ALL,
    space: str = ALL,
    by: str = "scope",
    window: tuple[Any, Any] | None = None,
) -> Chart:
    """Records withheld per group of :func:`withheld_view`, drawn, with the totals as caption.

    Parameters
    ----------
    data, audience, space, by, window
        As for :func:`withheld_view`.

    Returns
    -------
    Chart
    """
    table = withheld_view(data, audience=audience, space=space, by=by, window=window)
    groups = "; ".join(
        f"{NO_AUDIENCE if pd.isna(label) else label}: {int(row['records_withheld'])}"
        for label, row in table.iterrows()
    )
    caption = (
        f"Records withheld by {by}, audience {audience}, space {space}, days "
        f"{window_readout(window)}. {groups}."
    )
    return Chart.draw(
        lambda ax: plot_withheld_by(table, column="records_withheld", title="", ax=ax), caption
    )


def escalation_chart(data: Any, *, axis: str = "confidence_threshold", **values: Any) -> Chart:
    """The escalation rate across ``axis``, with a marker where each variant stands.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies``.
    axis : str, default "confidence_threshold"
        The threshold on the x axis.
    **values
        The other parameters of :func:`~explicit_audit.views.escalation_curve_view`.

    Returns
    -------
    Chart
        Its caption names each marker's position and rate.
    """
    curve = escalation_curve_view(data, axis=axis, **values)
    return Chart.draw(
        lambda ax: plot_escalation_at(curve.curve, curve.markers, threshold=axis, ax=ax),
        curve.caption(),
    )
