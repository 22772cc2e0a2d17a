"""Docstring examples run as doctests on the bundled data: ``ea`` is the kit, run from the root."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _doctest_namespace(request, doctest_namespace, monkeypatch):
    """For a doctest: ``ea`` imported, and paths such as ``data/`` read from the root.

    The bundled data holds rejected rows on purpose; the warning that says so
    is not what an example shows.
    """
    if not isinstance(request.node, pytest.DoctestItem):
        yield
        return
    import explicit_audit

    doctest_namespace["ea"] = explicit_audit
    monkeypatch.chdir(ROOT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", explicit_audit.RejectedRowsWarning)
        yield
    if "matplotlib.pyplot" in sys.modules:  # an example that drew: its figure goes
        sys.modules["matplotlib.pyplot"].close("all")


#: The modules that run longest (a LocalCluster, a scheduler and workers, rendered reports, a
#: JupyterLab or Notebook 7 server, command-line processes, installed wheels), longest first, by the
#: seconds each takes in its process. The tests run in several processes, a module's tests
#: in one of them (``--dist loadfile``), each process handed the next module as it frees up:
#: started first, longest first, these modules run beside the many short ones instead of
#: after them, and the processes finish together.
LONG_MODULES = (
    "tests/test_dask.py",
    "tests/test_cluster.py",
    "tests/test_report.py",
    "tests/test_report_takeaway.py",
    "tests/test_jupyterlab.py",
    "tests/test_cli.py",
    "tests/test_wheel.py",
    "tests/test_notebook7.py",
    "tests/test_keys.py",
    "tests/test_reading_properties.py",
    "tests/test_files.py",
    "tests/test_dask_notebooks.py",
    "tests/test_browser.py",
    "tests/test_plans.py",
    "tests/test_remote.py",
    "tests/test_progress.py",
    "tests/test_limits.py",
    "tests/test_dask_views.py",
)


def pytest_collection_modifyitems(items):
    """Put the tests of :data:`LONG_MODULES` first, in that order; the rest keep theirs."""
    rank = {name: index for index, name in enumerate(LONG_MODULES)}

    def first(item) -> int:
        return rank.get(item.nodeid.split("::", 1)[0], len(rank))  # relative to the root

    items.sort(key=first)  # stable: a module's and a notebook's cells keep their order
