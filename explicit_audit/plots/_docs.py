"""The parts every plot's docstring shares, written once (see :func:`plot_docs`)."""

from __future__ import annotations

from collections.abc import Callable

from .._core.docstrings import fill_docs

__all__ = ["PLOT_DOC_PARTS", "plot_docs"]

#: The shared parts, by name; ``drawn`` names the Axes method ``**kwargs`` go to.
PLOT_DOC_PARTS = {
    "title": """\
title : str
    The Axes title.""",
    "drawn": """\
ax : Axes, optional
    Where to draw; the current Axes when None.
**kwargs
    Passed to :meth:`~matplotlib.axes.Axes.%(method)s`.""",
    "axes": """\
Returns
-------
Axes""",
}


def plot_docs(method: str = "barh") -> Callable:
    """Fill :data:`PLOT_DOC_PARTS` into a plot's docstring.

    Parameters
    ----------
    method : str, default "barh"
        The :class:`~matplotlib.axes.Axes` method the plot passes ``**kwargs`` to.

    Returns
    -------
    callable
        The decorator (:func:`~explicit_audit._core.docstrings.fill_docs`).
    """
    return fill_docs(PLOT_DOC_PARTS, method=method)
