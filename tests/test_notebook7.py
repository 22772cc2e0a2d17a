"""The kit's notebooks in Notebook 7, driven by headless Chromium as a reader drives them.

Notebook 7 (package ``notebook``) is served by a JupyterLab server of this
module's own (the fixtures of :mod:`test_jupyterlab`, started again here), so
that it runs beside the JupyterLab checks instead of after them. Each
committed notebook opened before it runs shows its panel's static twin,
untrusted and trusted; after Run → Run All Cells, in a laptop's window,
every table of its panel fits its box, and letters and arrow keys in every
control move it and never edit the notebook; saved and reopened, a notebook
shows its panel's twin.
"""

from __future__ import annotations

import pytest
from test_jupyterlab import (  # noqa: F401 (fixtures, started anew for this module)
    LAPTOP,
    TWIN_ONLY,
    WITH_CONTROLS,
    browser,
    check_keys,
    check_reopen,
    check_twin,
    lab,
    open_notebook,
)


@pytest.mark.parametrize("name", TWIN_ONLY)
def test_a_notebook_opened_before_it_runs_shows_its_panels_static_twin(
    open_notebook,  # noqa: F811
    name,
):
    check_twin(open_notebook(name, front_end="notebook"), name)


@pytest.mark.parametrize("name", WITH_CONTROLS)
def test_keys_in_every_control_move_it_and_never_edit_the_notebook(
    open_notebook,  # noqa: F811
    name,
    record_property,
):
    # The first test to open these notebooks here: their static twins, before they run;
    # in a laptop's window, where every table of the panel must fit its box.
    check_keys(open_notebook, name, "notebook", record_property, twin=True, viewport=LAPTOP)


def test_a_saved_notebook_reopened_shows_the_twin_not_a_widget_error(
    open_notebook,  # noqa: F811
    lab,  # noqa: F811
):
    check_reopen(open_notebook, lab, "notebook")
