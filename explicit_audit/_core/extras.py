"""The kit's optional parts, each an extra of the distribution, and the hint when one is missing.

The core (loading, the checks, ``explicit-audit verify`` and ``summary``)
needs pandas, pyarrow and a few small libraries. The rest is optional:

==============  =========================================================  ==================
extra           what it adds                                               needed by
==============  =========================================================  ==================
``report``      Jupyter's kernel and converters, matplotlib, ipywidgets    ``explicit-audit
                                                                           report``, plots,
                                                                           the panels
``notebooks``   ``report``, and JupyterLab to open the notebooks in        exploring
``dask``        Dask and distributed                                       ``engine="dask"``,
                                                                           ``--engine dask``
``remote``      fsspec, and aiohttp for HTTP                               URL sources
==============  =========================================================  ==================

Code that needs an extra says so where it starts (:func:`require`), or
around the imports of a module that is nothing without it (:func:`needs`):
a missing extra is one line naming the ``pip install`` that adds it,
never a bare ``ModuleNotFoundError`` from deep inside.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator

from ..errors import MissingExtraError

__all__ = ["EXTRAS", "needs", "require"]

#: Extra -> the modules whose absence means it is not installed.
EXTRAS = {
    "report": (
        "nbformat",
        "nbclient",
        "nbconvert",
        "ipykernel",
        "matplotlib",
        "ipywidgets",
        "anywidget",
    ),
    "notebooks": ("nbformat", "ipykernel", "matplotlib", "ipywidgets", "anywidget", "jupyterlab"),
    "dask": ("dask", "dask.dataframe", "distributed"),
    "remote": ("fsspec",),
}


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return True


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`~explicit_audit.errors.MissingExtraError` unless ``extra`` is installed.

    Parameters
    ----------
    extra : str
        One of :data:`EXTRAS`.
    what : str
        What needs it, as the message names it (``'engine="dask"'``).
    modules : tuple of str, optional
        The modules to look for; the extra's own list by default.

    Examples
    --------
    >>> require("report", "explicit-audit report", ("json",))  # json is always there
    """
    for module in modules if modules is not None else EXTRAS[extra]:
        if _missing(module):
            raise MissingExtraError(extra, what, module)


@contextlib.contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """Turn a ``ModuleNotFoundError`` inside the block into the extra's one-line hint.

    Examples
    --------
    >>> with needs("report", "explicit_audit.plots"):
    ...     import json
    """
    try:
        yield
    except ModuleNotFoundError as error:
        raise MissingExtraError(extra, what, error.name or str(error)) from error
