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
