"""Docstring parts written once and filled into every docstring that shares them.

A docstring names a part by a line holding ``%(name)s`` alone; :func:`fill_docs`
puts the part there at that line's indentation, as pandas' ``Substitution``
and seaborn's ``DocstringComponents`` do, so that each public name keeps a
whole numpydoc docstring while the sentences several of them share are
written in one place.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["fill_docs"]

Function = TypeVar("Function", bound=Callable)

_PLACEHOLDER = re.compile(r"^( *)%\((\w+)\)s$", re.MULTILINE)


def fill_docs(parts: Mapping[str, str], **values: str) -> Callable[[Function], Function]:
    """A decorator that fills ``parts`` into the decorated function's docstring.

    Parameters
    ----------
    parts : mapping of str to str
        Each part by name, written without indentation.
    **values : str
        Filled into the parts where they hold ``%(name)s`` inside a line.

    Returns
    -------
    callable
        The decorator; it returns the function itself, its ``__doc__`` filled.

    Raises
    ------
    KeyError
        When a docstring names a part ``parts`` does not hold.

    Examples
    --------
    >>> parts = {"drawn": "**kwargs\\n    Passed to :meth:`~matplotlib.axes.Axes.%(method)s`."}
    >>> @fill_docs(parts, method="plot")
    ... def plot_nothing(**kwargs):
    ...     '''Draw nothing.
    ...
    ...     Parameters
    ...     ----------
    ...     %(drawn)s
    ...     '''
    >>> print(plot_nothing.__doc__.splitlines()[-2])
            Passed to :meth:`~matplotlib.axes.Axes.plot`.
    """

    def fill(match: re.Match) -> str:
        part = parts[match.group(2)]
        for name, value in values.items():
            part = part.replace(f"%({name})s", value)
        return textwrap.indent(part, match.group(1))

    def decorate(function: Function) -> Function:
        function.__doc__ = _PLACEHOLDER.sub(fill, function.__doc__ or "")
        return function

    return decorate
