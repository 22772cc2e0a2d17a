"""The per-kind ``load_*`` functions: what they take and return, said once.

Each kind's ``load_<table>`` is a plain function in the kind's loader module
(``load_plans`` in :mod:`explicit_audit.plans.loader`): its summary and its
example are its own; :func:`table_loader` adds the parameters and returns
every one of them shares.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["table_loader"]

_Loader = TypeVar("_Loader", bound=Callable[..., Any])

_PARAMETERS = """Parameters
----------
source, **options
    As for :func:`explicit_audit.load`; values of other kinds are skipped.

Returns
-------
{returns}
    The ``{names}`` {tables} (columns in the module docstring). Rejected
    records are announced by a :class:`~explicit_audit.RejectedRowsWarning`;
    ``ea.load(source).rejected`` lists them.
"""


def table_loader(*tables: str) -> Callable[[_Loader], _Loader]:
    """Give a kind's ``load_*`` function the parameters and returns every one shares.

    The function's docstring holds its summary, then its ``Examples``; the
    sections ``Parameters`` and ``Returns`` (of ``tables``, in order) are put
    between them. The function itself is returned, unchanged otherwise.
    """
    returns = f"{', '.join(tables)} : DataFrame" if len(tables) > 1 else "DataFrame"
    shared = _PARAMETERS.format(
        returns=returns,
        names="``, ``".join(tables),
        tables="tables" if len(tables) > 1 else "table",
    )

    def decorate(function: _Loader) -> _Loader:
        doc = inspect.cleandoc(function.__doc__ or "")
        summary, _, examples = doc.partition("\nExamples\n")
        text = f"{summary.rstrip()}\n\n{shared}"
        if examples:
            text += f"\nExamples\n{examples}"
        function.__doc__ = text
        return function

    return decorate
