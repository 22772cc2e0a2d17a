"""A panel's static twin: what its controls hold and what its views show, as plain HTML.

A saved notebook opens untrusted, and JupyterLab, Notebook 7 and every
notebook viewer then skip the widget view (its renderer is not "safe") and
show the first safe representation of the output: its ``text/html``. The
twin is that representation: the panel's title, each control's current value
written out, and each view's output as the notebook shows it (the table, the
chart as an embedded PNG with its caption), for the state the panel was
displayed in. It has no script and no style sheet, so a sanitizer keeps it
whole; a running kernel shows the live panel in its place. Saved, the
notebook keeps the twin and leaves out the widget view that could not be
drawn again (:mod:`explicit_audit.saved_panels`), so that it also shows when
the notebook is reopened, trusted.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from ..saved_panels import TWIN_CLASS

__all__ = ["control_text", "output_html", "twin_html"]


def control_text(control: Any) -> str:
    """A control's current value as its reader sees it.

    Parameters
    ----------
    control : ipywidgets.ValueWidget
        A dropdown, toggle buttons or range slider shows its option's label
        (a range slider both, joined with "→"); a checkbox "yes" or "no"; a
        text box its text in quotes (so that spaces show); anything else its
        value.

    Returns
    -------
    str

    Examples
    --------
    >>> import ipywidgets as widgets
    >>> control_text(widgets.Dropdown(options=[("scope", "scope"), ("space", "active_space")]))
    'scope'
    >>> control_text(widgets.Checkbox(value=False))
    'no'
    >>> control_text(widgets.Text(value="  "))
    "'  '"
    """
    label = getattr(control, "label", None)
    if isinstance(label, str):
        return label
    if isinstance(label, tuple):
        return " → ".join(map(str, label))
    value = control.value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def output_html(result: Any) -> str:
    """``result`` as HTML, as the notebook displays it.

    Parameters
    ----------
    result : object
        What a view returned. In a running IPython the shell's own HTML
        formatter renders it (so a table looks as every other table of the
        notebook); elsewhere its ``_repr_html_``; failing both, its text.

    Returns
    -------
    str

    Examples
    --------
    >>> output_html("no <data>")
    '<pre>no &lt;data&gt;</pre>'
    """
    markup = None
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        shell = None
    if shell is not None:
        markup = shell.display_formatter.formatters["text/html"](result)
    if markup is None and hasattr(result, "_repr_html_"):
        markup = result._repr_html_()
    if markup is None:
        markup = f"<pre>{html.escape(str(result))}</pre>"
    return markup


def twin_html(title: str, values: Mapping[str, str], outputs: Iterable[str]) -> str:
    """The static twin of a panel.

    Parameters
    ----------
    title : str
        What the panel is ("withheld-count explorer").
    values : mapping of str to str
        Each control's description and its value written out
        (:func:`control_text`), in the panel's order.
    outputs : iterable of str
        Each view's output as HTML (:func:`output_html`), in the panel's order.

    Returns
    -------
    str
        A ``<div class="ea-panel-twin">``: a heading line, the values as a
        list (one control a line, plain markup that every sanitizer keeps),
        then each output in a ``<div class="ea-panel-view">``. The title and
        values are escaped; the outputs are inserted as given.

    Examples
    --------
    >>> twin = twin_html("explorer", {"audience": "(all)"}, ["<p>table</p>"])
    >>> "<strong>audience</strong>: " in twin and "<p>table</p></div>" in twin
    True
    """
    rows = "".join(
        f'<li><strong>{html.escape(name)}</strong>: <span class="ea-panel-value">'
        f"{html.escape(text)}</span></li>"
        for name, text in values.items()
    )
    views = "".join(f'<div class="ea-panel-view">{markup}</div>' for markup in outputs)
    return (
        f'<div class="{TWIN_CLASS}"><p class="ea-panel-twin-title"><strong>'
        f"{html.escape(title)}</strong>, as saved: run the notebook to use its controls.</p>"
        f'<ul class="ea-panel-values">{rows}</ul>{views}</div>'
    )
