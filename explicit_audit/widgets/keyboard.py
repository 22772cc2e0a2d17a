"""Keys for the panel's controls, not for the notebook; names and states for a screen reader.

JupyterLab (and Notebook 7, built on it) dispatches every keydown through
Lumino's command registry. A key binding applies when its selector matches an
element on the way from the focused element up to the document; the
notebook's command-mode bindings (``b`` inserts a cell, ``m`` makes it
Markdown, ArrowDown selects the next cell) use the selector
``.jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus``, which
matches a focused ``<select>``, slider handle or button in an output. Lumino
then calls ``preventDefault()``, so the control never sees the key either
(jupyter-widgets/ipywidgets#3912, #3836). Text fields escape only because the
notebook marks an editable element ``jp-mod-readWrite``.

Lumino stops that walk at an element carrying ``data-lm-suppress-shortcuts``
(jupyterlab/lumino#15; JupyterLab's "keyboard interaction model" for
extensions), and checks the attribute before it matches the element: so the
attribute goes on every focusable element of the kit's controls, not on a
container. :class:`ControlAttributes` is a small invisible widget inside a
panel's controls that sets it, and, while it is there:

- ``aria-label`` on every slider handle (noUiSlider's handles carry no name),
  the control's description, with "start" and "end" on a range's two handles;
- ``aria-valuetext`` on a selection slider's handles: the option's label (a
  day), not its index;
- ``aria-pressed`` on every toggle button, following its ``mod-active`` class;
- Escape in any control (a text box too) leaves it for its cell, so that the
  notebook's keys apply again, as Escape leaves a cell's editor.

A mutation observer keeps these as the controls redraw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

__all__ = ["ControlAttributes", "control_class", "control_spec"]

#: The class of the box holding a panel's controls; the widget looks for it above itself.
CONTROLS_CLASS = "ea-panel-controls"

_ESM = r"""
const FOCUSABLE = "select, button, input[type=checkbox], .noUi-handle";

function set(node, name, value) {
  if (node.getAttribute(name) !== value) node.setAttribute(name, value);
}

function apply(root, specs) {
  for (const [cls, spec] of Object.entries(specs)) {
    for (const box of root.querySelectorAll("." + cls)) {
      for (const node of box.querySelectorAll(FOCUSABLE)) {
        set(node, "data-lm-suppress-shortcuts", "true");
      }
      box.querySelectorAll(".noUi-handle").forEach((handle, index) => {
        set(handle, "aria-label", spec.handles[index] ?? spec.name);
        if (spec.valuetexts) {
          const text = spec.valuetexts[Math.round(Number(handle.getAttribute("aria-valuenow")))];
          if (text !== undefined) set(handle, "aria-valuetext", text);
        }
      });
      box.querySelectorAll("button.widget-toggle-button").forEach((button) => {
        set(button, "aria-pressed", String(button.classList.contains("mod-active")));
      });
    }
  }
}

export default {
  render({ model, el }) {
    let observer = null;
    let frame = 0;
    let timer = 0;
    let tries = 0;
    let root = null;
    let leave = null;
    const attach = () => {
      root = el.closest(".CONTROLS_CLASS");
      if (!root) {
        // Drawn before its parent box is in the page: look again on the next frames,
        // then twice a second (an output drawn off screen joins the page later).
        if (++tries < 120) frame = requestAnimationFrame(attach);
        else timer = setTimeout(attach, 500);
        return;
      }
      const run = () => apply(root, model.get("controls"));
      run();
      leave = (event) => {
        if (event.key !== "Escape" || !root.contains(event.target)) return;
        // Escape leaves the control for its cell, as it leaves a cell's editor: the
        // notebook's keys work again (Tab moves on to the next control instead). Caught
        // before the page's shortcuts see it (they take Escape in a text box).
        event.stopPropagation();
        event.target.blur();
        const cell = root.closest(".jp-Cell") ?? root.closest(".jp-Notebook");
        if (cell) cell.focus();
      };
      window.addEventListener("keydown", leave, true);
      observer = new MutationObserver(run);
      observer.observe(root, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ["class", "aria-valuenow"],
      });
      model.on("change:controls", run);
    };
    attach();
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      if (observer) observer.disconnect();
      if (leave) window.removeEventListener("keydown", leave, true);
    };
  },
};
""".replace("CONTROLS_CLASS", CONTROLS_CLASS)


def control_class(name: str) -> str:
    """The DOM class that marks the control ``name`` of a panel.

    Examples
    --------
    >>> control_class("own_thresholds")
    'ea-control-own_thresholds'
    """
    return f"ea-control-{name}"


def control_spec(control: widgets.ValueWidget, name: str) -> dict[str, Any]:
    """What :class:`ControlAttributes` sets on ``control``'s elements.

    Parameters
    ----------
    control : ipywidgets.ValueWidget
    name : str
        The control's name in its panel (its description when it has none).

    Returns
    -------
    dict
        ``name`` (the accessible name), ``handles`` (one name per slider
        handle, "start" and "end" on a range) and ``valuetexts`` (a selection
        slider's option labels, by index; None for other controls).

    Examples
    --------
    >>> import ipywidgets as widgets
    >>> days = widgets.SelectionRangeSlider(options=["a", "b"], description="days")
    >>> spec = control_spec(days, "window")
    >>> spec["handles"], spec["valuetexts"]
    (['days: start', 'days: end'], ['a', 'b'])
    """
    label = getattr(control, "description", "") or name
    if isinstance(control, widgets.SelectionRangeSlider):
        handles = [f"{label}: start", f"{label}: end"]
    else:
        handles = [label]
    valuetexts = None
    if isinstance(control, widgets.SelectionRangeSlider | widgets.SelectionSlider):
        valuetexts = [str(option) for option in control._options_labels]
    return {"name": label, "handles": handles, "valuetexts": valuetexts}


class ControlAttributes(anywidget.AnyWidget):
    """An invisible widget that keeps a panel's keys in its controls and names its parts.

    Put it inside the box holding the controls (class ``ea-panel-controls``);
    mark each control with :func:`control_class`.

    Parameters
    ----------
    controls : mapping of str to ipywidgets.ValueWidget
        The panel's controls, by name.
    """

    _esm = _ESM
    controls = traitlets.Dict().tag(sync=True)

    def __init__(self, controls: Mapping[str, widgets.ValueWidget]) -> None:
        specs = {}
        for name, control in controls.items():
            control.add_class(control_class(name))
            specs[control_class(name)] = control_spec(control, name)
        super().__init__(controls=specs, layout=widgets.Layout(display="none"))
