"""Deprecated names: an old public name kept for one release, warning when called."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .caller import warn

__all__ = ["deprecated_alias"]


def deprecated_alias(old_name: str, replacement: Callable, *, use: str, changes: str) -> Callable:
    """``replacement`` under its 0.1 name, with a ``DeprecationWarning`` at each call.

    Parameters
    ----------
    old_name : str
        The deprecated public name (``verify_requests``).
    replacement : callable
        What the old name now calls, with the same arguments.
    use : str
        What to call instead, as the warning says it (``ea.check_requests``).
    changes : str
        What differs from the 0.1 result, for the docstring.

    Returns
    -------
    callable
        A function named ``old_name`` that warns, then returns ``replacement(...)``.

    Examples
    --------
    >>> new = lambda x: x + 1
    >>> new.__name__ = "new"
    >>> old = deprecated_alias("old", new, use="ea.new", changes="None.")
    >>> import pytest
    >>> with pytest.warns(DeprecationWarning, match="use ea.new"):
    ...     old(1)
    2
    """

    @functools.wraps(replacement)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warn(
            f"ea.{old_name} is deprecated and goes in the next release: use {use}",
            DeprecationWarning,
        )
        return replacement(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old_name
    alias.__doc__ = (
        f"Deprecated alias of :func:`{replacement.__name__}` (the 0.1 name), kept for one "
        f"release.\n\n{changes}\n\nIt takes the arguments of :func:`{replacement.__name__}`, "
        "returns what it returns, and warns with a ``DeprecationWarning``: use "
        f"``{use}`` instead.\n"
    )
    return alias
