"""What the kinds' loaders share, said once: the ``load_*`` contract and the parts loop.

Each kind's ``load_<table>`` is a plain function in the kind's loader module
(``load_plans`` in :mod:`explicit_audit.plans.loader`): its summary and its
example are its own; :func:`table_loader` adds the parameters and returns
every one of them shares. :func:`parts_and_rejections` is the loop of a
builder whose columnar path and value-by-value path both make parts.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..errors import RecordError
from .records import RawValue, Rejection, sort_out

__all__ = ["parts_and_rejections", "table_loader"]

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


def parts_and_rejections(
    segments: Sequence[tuple[str, Any]],
    kind: str,
    parse: Callable[[Any], Any],
    to_part: Callable[[list[tuple[RawValue, Any]]], Any],
    *,
    text_only: bool = False,
) -> tuple[list[Any], list[Rejection]]:
    """A kind's parts, in segment order, and the values it rejected.

    A ``("part", part)`` segment is kept as it is; the values of a
    ``("values", [...])`` segment are parsed one by one (:func:`sort_out`,
    a :class:`~explicit_audit.errors.RecordError` rejecting one) and those
    that fit made one part by ``to_part(kept)``. With no segment, one part of
    no rows (``to_part([])``), so that the table has its columns.
    """
    parts: list[Any] = []
    rejected: list[Rejection] = []
    for what, segment in segments:
        if what == "part":
            parts.append(segment)
            continue
        kept, misfits = sort_out(segment, kind, parse, RecordError, text_only=text_only)
        parts.append(to_part(kept))
        rejected.extend(misfits)
    if not parts:
        parts.append(to_part([]))
    return parts, rejected
