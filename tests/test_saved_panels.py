"""A notebook saved through the Jupyter server keeps a panel's twin, not its dead widget view."""

from __future__ import annotations

import asyncio
import json

import ipywidgets
import nbformat
import pytest
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from nbformat.v4 import new_code_cell, new_notebook, new_output

from explicit_audit.saved_panels import (
    WIDGET_STATE,
    WIDGET_VIEW,
    _load_jupyter_server_extension,
    drop_unsaved_views,
)
from explicit_audit.widgets import plan_panel


def _output(widget) -> dict:
    """What a notebook stores when ``widget`` is a cell's last line."""
    data = widget._repr_mimebundle_()
    return new_output("execute_result", data=data, execution_count=1)


def _save(tmp_path, notebook: dict, *, replaced: bool = False) -> dict:
    """``notebook`` saved by a Jupyter server's contents manager with the kit's hook, read back.
    ``replaced``: the server's contents manager made anew after the kit's extension loaded,
    as jupytext's extension does."""

    class Server:  # what the extension reads of a server: its contents manager and loop
        contents_manager = AsyncLargeFileManager(root_dir=str(tmp_path))

    loop = asyncio.new_event_loop()
    try:
        Server.io_loop = type("Loop", (), {"add_callback": staticmethod(loop.call_soon)})
        _load_jupyter_server_extension(Server)
        if replaced:
            Server.contents_manager = AsyncLargeFileManager(root_dir=str(tmp_path))
        model = {"type": "notebook", "format": "json", "content": notebook}
        loop.run_until_complete(Server.contents_manager.save(model, "saved.ipynb"))
    finally:
        loop.close()
    return json.loads((tmp_path / "saved.ipynb").read_text(encoding="utf-8"))


@pytest.mark.parametrize("replaced", [False, True], ids=["as loaded", "manager made anew"])
def test_a_saved_panel_keeps_its_twin_and_loses_its_widget_view(tmp_path, replaced):
    panel = plan_panel()
    other = ipywidgets.IntSlider()  # another package's widget: left as it is
    notebook = new_notebook(
        cells=[
            new_code_cell("plan_panel()", outputs=[_output(panel)]),
            new_code_cell("IntSlider()", outputs=[_output(other)]),
        ]
    )
    saved = _save(tmp_path, notebook, replaced=replaced)
    data = saved["cells"][0]["outputs"][0]["data"]
    assert WIDGET_VIEW not in data
    assert "".join(data["text/html"]) == panel.twin_html()
    assert WIDGET_VIEW in saved["cells"][1]["outputs"][0]["data"]
    nbformat.validate(nbformat.from_dict(saved))


def test_a_panel_saved_with_its_widget_state_keeps_its_view(tmp_path):
    panel = plan_panel()
    notebook = new_notebook(cells=[new_code_cell("plan_panel()", outputs=[_output(panel)])])
    state = {panel.model_id: {"model_name": "VBoxModel", "state": {}}}
    notebook.metadata["widgets"] = {WIDGET_STATE: {"state": state}}
    saved = _save(tmp_path, notebook)
    assert WIDGET_VIEW in saved["cells"][0]["outputs"][0]["data"]


def test_anything_but_a_notebook_is_left_alone():
    model = {"type": "file", "content": "text"}
    assert drop_unsaved_views(model) == 0 and model == {"type": "file", "content": "text"}
