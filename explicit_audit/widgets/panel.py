"""The panel: controls above the outputs of views, refreshed when a control changes."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell

from ..errors import AuditError
from .charts import Chart
from .keyboard import CONTROLS_CLASS, ControlAttributes
from .live_chart import LiveChart
from .tables import CompactTable
from .twin import control_text, output_html, twin_html

__all__ = ["UPDATING", "LastCall", "Panel"]

#: What the panel's status line says while its views run for new values.
UPDATING = "updating… (the views below still show the values before)"


def _parameters(view: Callable[..., Any]) -> set[str] | None:
    """The keyword parameters ``view`` takes; None when it takes any (``**kwargs``)."""
    signature = inspect.signature(view)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return set(list(signature.parameters)[1:])


def _display_data(result: Any) -> dict[str, Any]:
    """``result`` as one output of an :class:`ipywidgets.Output`."""
    data, metadata = InteractiveShell.instance().display_formatter.format(result)
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def _same(values: Mapping[str, Any], before: Mapping[str, Any] | None) -> bool:
    """Whether a view would run with the values it last ran with."""
    if before is None or values.keys() != before.keys():
        return False
    try:
        return all(bool(values[name] == before[name]) for name in values)
    except (TypeError, ValueError):  # a value that does not compare as one bool: run again
        return False


class LastCall:
    """A view that remembers its last call: called again with the same data and values, it
    returns the same result without computing it again.

    Two views of one panel that need the same result (a table, and the chart of
    that table) share one, computed once per change of the controls. A value
    left to its default and the same value given are the same call.

    Parameters
    ----------
    view : callable
        ``view(data, **values)``; its signature is kept, so a panel passes it
        the values it names.

    Examples
    --------
    >>> calls = []
    >>> def view(data, *, k=1):
    ...     calls.append(k)
    ...     return data * k
    >>> once = LastCall(view)
    >>> once(2, k=3), once(2, k=3), once(2, k=4), calls
    (6, 6, 8, [3, 4])
    """

    def __init__(self, view: Callable[..., Any]) -> None:
        functools.update_wrapper(self, view)
        self.view = view
        self._signature = inspect.signature(view)
        self._last: tuple[Any, dict[str, Any], Any] | None = None

    def __call__(self, data: Any, **values: Any) -> Any:
        # A value left to its default and the same value given count as one call.
        bound = self._signature.bind(data, **values)
        bound.apply_defaults()
        arguments = dict(list(bound.arguments.items())[1:])
        if self._last is not None:
            last_data, last_arguments, result = self._last
            if last_data is data and _same(arguments, last_arguments):
                return result
        result = self.view(data, **values)
        self._last = (data, arguments, result)
        return result


class Panel(widgets.VBox):
    """Controls above the output of one or more views, refreshed on every change.

    Displayed, a panel carries its static twin beside the live widget (its
    ``text/html``, :meth:`twin_html`): what an untrusted notebook and any
    notebook viewer show. Its controls keep their keys from the notebook's
    shortcuts and name their parts for a screen reader
    (:class:`~explicit_audit.widgets.keyboard.ControlAttributes`).

    Parameters
    ----------
    views : sequence of callables
        Each is called as ``view(data, **values)``, ``values`` holding the
        value of every control the view names among its parameters (every
        control, for a view taking ``**kwargs``).
    data : object
        The first argument of every view.
    controls : mapping of str to ipywidgets.ValueWidget
        The controls, named after the views' parameters.
    title : str, default "panel"
        What the panel is, for its text form.
    readouts : mapping of str to callable, optional
        For a control name, a function of its value giving the text shown
        next to it (a readout that does not cut its text).
    link : callable, optional
        ``link(panel, name, change)``, called when control ``name`` changes
        and before the views run: it may set other controls (the views run
        once, after it).
    above : int, optional
        The index of the view shown above the controls (a chart, so that it
        stays in sight while a slider moves); the others follow the controls.
    shown : mapping of int to callable, optional
        For a view's index, a function of its result giving what the panel
        and its twin show instead (a compact table,
        :mod:`~explicit_audit.widgets.tables`); :attr:`results` keeps the result.

    Attributes
    ----------
    controls : dict
        The controls by name; set ``panel.controls["top_k"].value = "5"`` to drive it.
    results : list
        What each view returned for the current values.
    outputs : list of ipywidgets.Output
        Where each result is displayed. A
        :class:`~explicit_audit.widgets.Chart` is shown in a
        :class:`~explicit_audit.widgets.live_chart.LiveChart` and a table in
        an :class:`ipywidgets.HTML`, each displayed once and updated in place
        (the page replaces their content, not the output); anything else is
        displayed anew.
    live : list
        For each view, the LiveChart or HTML widget showing its result (None
        for a view showing anything else).
    labels : dict
        The readout label of each control that has one.
    status : ipywidgets.Label
        Says :data:`UPDATING` while the views run, nothing otherwise.
    attributes : ControlAttributes
        The invisible widget that sets the controls' keyboard and accessibility attributes.
    """

    def __init__(
        self,
        views: Sequence[Callable[..., Any]],
        data: Any,
        controls: Mapping[str, widgets.ValueWidget],
        *,
        title: str = "panel",
        readouts: Mapping[str, Callable[[Any], str]] | None = None,
        link: Callable[[Panel, str, Any], None] | None = None,
        above: int | None = None,
        shown: Mapping[int, Callable[[Any], Any]] | None = None,
    ) -> None:
        self.views = list(views)
        self.shown = dict(shown or {})
        self.data = data
        self.title = title
        self.controls = dict(controls)
        self.readouts = dict(readouts or {})
        self.link = link
        # Each view in a box of its own that scrolls sideways when wide: nothing is cut.
        self.outputs = [
            widgets.Output(
                layout=widgets.Layout(overflow="auto", max_width="100%"),
                _dom_classes=("ea-view", f"ea-view-{index}"),
            )
            for index in range(len(self.views))
        ]
        self.results: list[Any] = []
        self.live: list[LiveChart | widgets.HTML | None] = [None] * len(self.views)
        self.labels = {
            name: widgets.Label(layout=widgets.Layout(width="auto"), _dom_classes=("ea-readout",))
            for name in self.readouts
        }
        self._accepts = [_parameters(view) for view in self.views]
        # The values each view last ran with: a view whose values did not change is not
        # run again and its output is not redrawn.
        self._ran_with: list[dict[str, Any] | None] = [None] * len(self.views)
        self._held = 0
        self._stale = False
        rows = [
            widgets.HBox([control, self.labels[name]]) if name in self.labels else control
            for name, control in self.controls.items()
        ]
        self.attributes = ControlAttributes(self.controls)
        # Said while the views run, so that a slow update never passes for the new values'.
        self.status = widgets.Label(
            layout=widgets.Layout(min_height="1.4em"), _dom_classes=("ea-status",)
        )
        box = widgets.VBox(
            [*rows, self.status, self.attributes],
            layout=widgets.Layout(max_width="100%"),
            _dom_classes=(CONTROLS_CLASS,),
        )
        first = [self.outputs[above]] if above is not None else []
        rest = [output for index, output in enumerate(self.outputs) if index != above]
        super().__init__(children=[*first, box, *rest], _dom_classes=("ea-panel",))
        for name, control in self.controls.items():
            control.observe(functools.partial(self._changed, name), names="value")
        self._refresh()

    def __repr__(self) -> str:
        return (
            f"{self.title}: interactive panel with controls {', '.join(self.controls)}; "
            "run the notebook to use it"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs)
        data["text/html"] = self.twin_html()
        return data

    def twin_html(self) -> str:
        """The panel as plain HTML: its controls' values and its views' outputs, as they stand.

        Returns
        -------
        str
            See :func:`~explicit_audit.widgets.twin.twin_html`; a control
            with a readout is written out as its readout.
        """
        values = {}
        for name, control in self.controls.items():
            description = getattr(control, "description", "") or name
            if name in self.labels:
                values[description] = self.labels[name].value
            else:
                values[description] = control_text(control)
        outputs = [output_html(self._form(index, r)) for index, r in enumerate(self.results)]
        return twin_html(self.title, values, outputs)

    @property
    def values(self) -> dict[str, Any]:
        """The controls' current values, by name."""
        return {name: control.value for name, control in self.controls.items()}

    @property
    def result(self) -> Any:
        """What the first view returned for the current values."""
        return self.results[0]

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Set several controls at once: the views run once, when the block ends."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._stale:
                self._refresh()

    def _changed(self, name: str, change: Any) -> None:
        with self.hold():
            if self.link is not None:
                self.link(self, name, change)
            self._stale = True

    def _refresh(self) -> None:
        if self._held:
            self._stale = True
            return
        self._stale = False
        self.status.value = UPDATING
        values = self.values
        for name, label in self.labels.items():
            label.value = self.readouts[name](values[name])
        results, redrawn = [], []
        for index, (view, accepts) in enumerate(zip(self.views, self._accepts, strict=True)):
            chosen = values if accepts is None else {k: values[k] for k in values if k in accepts}
            if _same(chosen, self._ran_with[index]):
                results.append(self.results[index])
                continue
            try:
                results.append(view(self.data, **chosen))
            except (AuditError, ValueError) as exc:  # show why, keep the panel alive
                results.append(f"cannot show this view for these values: {exc}")
            self._ran_with[index] = chosen
            redrawn.append(index)
        self.results = results
        for index in redrawn:
            self._show(index, results[index])
        self.status.value = ""

    def _form(self, index: int, result: Any) -> Any:
        """What the panel shows for view ``index``'s ``result``."""
        form = self.shown.get(index)
        if form is None or isinstance(result, str):  # a message why the view failed
            return result
        return form(result)

    def _show(self, index: int, result: Any) -> None:
        """Show ``result`` in output ``index``: a chart or a table in place, anything else anew."""
        result = self._form(index, result)
        live = self.live[index]
        if isinstance(result, Chart) and result.spec is not None:
            if isinstance(live, LiveChart):
                live.show(result)  # the same elements, new coordinates: no new output
                return
            shown = LiveChart()
            shown.show(result)
        elif isinstance(result, pd.DataFrame | CompactTable):
            # A table: its HTML in one HTML widget, shown once, its markup replaced in place.
            # Styled as the notebook styles a table output (JupyterLab's and Notebook 7's class).
            markup = (
                "<div class='jp-RenderedHTMLCommon jp-RenderedHTML' style='line-height:normal'>"
                f"{output_html(result)}</div>"
            )
            if isinstance(live, widgets.HTML):
                live.value = markup
                return
            shown = widgets.HTML(markup, _dom_classes=("ea-table-view",))
        else:
            shown = None
        self.live[index] = shown
        self.outputs[index].outputs = (_display_data(result if shown is None else shown),)
        if live is not None:  # replaced in the output: closed, so that no model is left behind
            live.close()
