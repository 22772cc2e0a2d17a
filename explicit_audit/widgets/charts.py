"""Charts a panel shows next to its table: the data to draw, a caption, and a PNG on demand.

Each chart function takes the data and the control values a view takes, asks
the view for its result and returns a :class:`Chart`: its caption states the
numbers drawn, its *spec* holds what to draw as plain values (for
:class:`~explicit_audit.widgets.live_chart.LiveChart`, which the browser draws
and updates in place), and its PNG is drawn with :mod:`explicit_audit.plots`
on a figure of its own (never pyplot's current figure) the first time it is
asked for: by a plain cell's output and a panel's static twin, never by a
control's move.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Callable
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from .._plot_style import (
    ALL_LABEL,
    AXIS_LABELS,
    PALETTE,
    group_label,
    thousands,
    threshold_name,
)
from ..plots import plot_escalation_at, plot_withheld_by
from ..views import ALL, NO_AUDIENCE, escalation_curve_view, window_readout, withheld_view

__all__ = ["Chart", "escalation_chart", "withheld_chart"]


class Chart:
    """A chart: its caption, its data as a spec, and its PNG (drawn when first asked for).

    Renders as HTML (the image, named by :attr:`alt`, and the caption under
    it) and as text (the caption), so a reader and a test read the same
    numbers.

    Parameters
    ----------
    png : bytes or None
        The image; None to draw it with ``draw`` when first asked for.
    caption : str
        One or two sentences naming what is drawn and the values marked.
    spec : dict, optional
        What the browser draws (see :mod:`~explicit_audit.widgets.live_chart`).
    draw : callable, optional
        ``draw(ax)`` draws the chart on a matplotlib Axes.
    description : str, optional
        What kind of chart it is, its title and its axes; with the caption, the alt text.
    """

    def __init__(
        self,
        png: bytes | None,
        caption: str,
        *,
        spec: dict[str, Any] | None = None,
        draw: Callable[[Any], Any] | None = None,
        description: str = "",
    ) -> None:
        if png is None and draw is None:
            raise ValueError("a Chart needs its png or a draw function")
        self._png = png
        self._draw = draw
        self.caption = caption
        self.spec = spec
        self.description = description

    @classmethod
    def draw(
        cls, draw: Callable[[Any], Any], caption: str, *, size: tuple[float, float] = (7, 3.2)
    ) -> Chart:
        """Draw with ``draw(ax)`` on a figure of its own now and keep the PNG."""
        return cls(_png(draw, size), caption)

    @property
    def png(self) -> bytes:
        """The image, drawn on first use."""
        if self._png is None:
            assert self._draw is not None
            self._png = _png(self._draw)
        return self._png

    @property
    def alt(self) -> str:
        """The text that stands for the image: what is drawn, on which axes, and the caption."""
        return f"{self.description} {self.caption}".strip()

    def __repr__(self) -> str:
        return self.caption

    def _repr_html_(self) -> str:
        source = base64.b64encode(self.png).decode("ascii")
        return (
            f"<figure class='ea-chart' style='margin:0'><img src='data:image/png;base64,{source}' "
            f"alt='{html.escape(self.alt)}'/><figcaption>{html.escape(self.caption)}"
            "</figcaption></figure>"
        )


def _png(draw: Callable[[Any], Any], size: tuple[float, float] = (7, 3.2)) -> bytes:
    figure = Figure(figsize=size, dpi=80, layout="constrained")
    draw(figure.subplots())
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _label(value: Any) -> str:
    """A group's label as the browser writes it (no escape for matplotlib's ``$``)."""
    return group_label(value).replace(r"\$", "$")


def _plain(value: Any) -> float | None:
    """A number as JSON takes it: a float, or None for a missing one."""
    number = float(value)
    return None if math.isnan(number) else number


def _bars_spec(table: pd.DataFrame, column: str, grouping: str) -> dict[str, Any]:
    """The spec of :func:`~explicit_audit.plots.plot_withheld_by`'s bars for ``table``."""
    rows = table[[group_label(v) != ALL_LABEL for v in table.index]]
    values = rows[column].astype("Float64").fillna(0).to_numpy(dtype=float)
    return {
        "kind": "bars",
        "title": "",
        "xlabel": AXIS_LABELS.get(column, column),
        "ylabel": grouping,
        "color": PALETTE[0],
        "bars": [
            {"label": _label(label), "value": float(value), "text": thousands(value)}
            for label, value in zip(rows.index, values, strict=True)
        ],
    }


def withheld_chart(
    data: Any,
    *,
    audience: str = ALL,
    space: str = ALL,
    by: str = "scope",
    window: tuple[Any, Any] | None = None,
    view: Callable[..., pd.DataFrame] = withheld_view,
) -> Chart:
    """Records withheld per group of :func:`withheld_view`, drawn, with the totals as caption.

    Parameters
    ----------
    data, audience, space, by, window
        As for :func:`withheld_view`.
    view : callable, default :func:`withheld_view`
        What computes the table; a panel passes the one its table view
        remembers (:class:`~explicit_audit.widgets.panel.LastCall`), so that
        the table is computed once for both.

    Returns
    -------
    Chart
    """
    table = view(data, audience=audience, space=space, by=by, window=window)
    groups = "; ".join(
        f"{NO_AUDIENCE if pd.isna(label) else label}: {int(row['records_withheld']):,}"
        for label, row in table.iterrows()
    )
    caption = (
        f"Records withheld by {by}, audience {audience}, space {space}, days "
        f"{window_readout(window)}. {groups}."
    )
    grouping = " / ".join(str(name) for name in table.index.names if name) or "group"
    spec = _bars_spec(table, "records_withheld", grouping)
    description = f"Bar chart: x axis {spec['xlabel']}, y axis {grouping}, one bar per {grouping}."
    return Chart(
        None,
        caption,
        spec=spec,
        draw=lambda ax: plot_withheld_by(table, column="records_withheld", title="", ax=ax),
        description=description,
    )


def _lines_spec(curve: Any) -> dict[str, Any]:
    """The spec of :func:`~explicit_audit.plots.plot_escalation_at` for an escalation curve."""
    axis = curve.axis
    series, colours = [], {}
    groups = curve.curve.groupby("policy_id", observed=True, sort=False)
    for index, (policy_id, rows) in enumerate(groups):
        rows = rows.sort_values(axis)
        colour = colours[_label(policy_id)] = PALETTE[index % len(PALETTE)]
        series.append(
            {
                "name": _label(policy_id),
                "color": colour,
                "x": [float(v) for v in rows[axis]],
                "y": [_plain(v * 100) for v in rows["escalation_rate"]],
            }
        )
    markers = []
    for policy_id, row in curve.markers.iterrows():
        rate = float(row["escalation_rate"])
        markers.append(
            {
                "name": _label(policy_id),
                "color": colours.get(_label(policy_id), "black"),
                "x": float(row[axis]),
                "y": _plain(rate * 100),
                "text": f"{rate:.1%}",
            }
        )
    values = sorted({float(v) for v in curve.markers[axis]})
    at = f" (marker at {thousands(values[0])})" if len(values) == 1 else ""
    return {
        "kind": "lines",
        "title": f"Escalation rate across the {threshold_name(axis)}{at}",
        "xlabel": AXIS_LABELS.get(axis, axis),
        "ylabel": AXIS_LABELS["escalation_rate"],
        "ylim": [-2, 102],
        "y_percent": True,
        "legend": "policy",
        "series": series,
        "markers": markers,
        "vlines": values,
    }


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
    spec = _lines_spec(curve)
    description = (
        f"Line chart: {spec['title']}; x axis {spec['xlabel']}, y axis {spec['ylabel']}, "
        "one line per policy variant."
    )
    return Chart(
        None,
        curve.caption(),
        spec=spec,
        draw=lambda ax: plot_escalation_at(curve.curve, curve.markers, threshold=axis, ax=ax),
        description=description,
    )
