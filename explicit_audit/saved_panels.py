"""What a saved notebook keeps of a panel: its static twin, not a view no one can draw.

A panel's output carries two representations: the live widget's view
(``application/vnd.jupyter.widget-view+json``, a pointer to a model that
lives in the kernel and the page) and its static twin (``text/html``, see
:mod:`explicit_audit.widgets.twin`). Saved and reopened, the notebook is
trusted, and JupyterLab and Notebook 7 then always pick the widget view: their
renderers go by rank, not by the order of the output's keys (which the server
sorts when it writes the file anyway). With no saved widget state the model is
gone, and the page reads "Error displaying widget: model not found" where the
panel was.

So the kit gives the Jupyter server a pre-save hook, :func:`drop_unsaved_views`
(this module is a server extension, enabled by the ``jupyter_server_config.d``
file the package installs; it adds to any hook the user has): when a notebook
is saved, the widget view of each kit panel whose model the notebook
does not carry (no ``metadata.widgets`` state for it) is left out of the
file. The page being edited keeps its live panel; the file,
reopened, shows the twin. A notebook saved with its widget state (JupyterLab's
"Save Widget State Automatically") keeps its views and reopens with the
restored panel.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TWIN_CLASS", "drop_unsaved_views"]

#: The class of a panel twin's outer element (:func:`explicit_audit.widgets.twin.twin_html`).
TWIN_CLASS = "ea-panel-twin"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _text(value: Any) -> str:
    """A notebook output's text: one string, or the list of lines a file may hold."""
    return "".join(value) if isinstance(value, list) else str(value)


def drop_unsaved_views(model: dict[str, Any], **_: Any) -> int:
    """Leave out of a notebook about to be saved the panel views it cannot draw again.

    Parameters
    ----------
    model : dict
        A Jupyter contents model (``type`` and ``content``); a notebook's
        content is changed in place, anything else is left alone.
    **_
        What the server passes besides (``path``, ``contents_manager``).

    Returns
    -------
    int
        How many widget views were left out: those of outputs that carry a
        panel's twin and whose model has no saved state in the notebook's
        ``metadata.widgets``. Other packages' widgets are kept as they are.

    Examples
    --------
    >>> twin = '<div class="ea-panel-twin">…</div>'
    >>> output = {"output_type": "display_data",
    ...           "data": {WIDGET_VIEW: {"model_id": "a1"}, "text/html": twin}}
    >>> notebook = {"metadata": {}, "cells": [{"cell_type": "code", "outputs": [output]}]}
    >>> drop_unsaved_views({"type": "notebook", "content": notebook})
    1
    >>> sorted(output["data"])
    ['text/html']
    """
    notebook = model.get("content")
    if model.get("type") != "notebook" or not isinstance(notebook, dict):
        return 0
    widgets = notebook.get("metadata", {}).get("widgets") or {}
    saved = (widgets.get(WIDGET_STATE) or {}).get("state") or {}
    dropped = 0
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = output.get("data") or {}
            view = data.get(WIDGET_VIEW)
            if not isinstance(view, dict) or view.get("model_id") in saved:
                continue
            if f'class="{TWIN_CLASS}"' in _text(data.get("text/html", "")):
                del data[WIDGET_VIEW]
                dropped += 1
    return dropped


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """The Jupyter server extension this module is (enabled by ``jpserver_extensions``)."""
    return [{"module": "explicit_audit.saved_panels"}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Register :func:`drop_unsaved_views` as a pre-save hook of the server's contents."""
    hooked: list[Any] = []

    def hook() -> None:
        manager = server_app.contents_manager
        if not any(manager is done for done in hooked):
            manager.register_pre_save_hook(drop_unsaved_views)
            hooked.append(manager)

    hook()
    # An extension loaded after this one may make the contents manager anew (jupytext's
    # does): hooked again once the server runs, on the manager it then serves files with.
    server_app.io_loop.add_callback(hook)
