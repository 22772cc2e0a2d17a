"""Warnings that point at the caller's line, however deep in the kit they arise.

A warning raised inside the kit with a fixed ``stacklevel`` points at
whichever of the kit's own lines sits that many frames up, which depends on
the path taken (``ea.load`` or ``ea.load_receipts``, a deprecated alias, the
command line). :func:`warn` walks out of the package instead: the warning
names the first frame that is not the kit's own, the user's ``ea.load(...)``
line.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["outside_stacklevel", "warn"]

# explicit_audit/, with a separator so that a sibling such as explicit_audit_extra/ is outside.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def outside_stacklevel() -> int:
    """The ``stacklevel`` that names the first frame outside the kit.

    Returns
    -------
    int
        For a ``warnings.warn`` call made by the function that calls this
        one. When every frame is the kit's (a warning under ``python -m``),
        the frame just above that function.
    """
    # Level 1 is the function that calls warnings.warn: the caller of this one.
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 2


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)``, pointing at the first frame outside the kit.

    Parameters
    ----------
    message : str
    category : Warning subclass
    """
    warnings.warn(message, category, stacklevel=outside_stacklevel())
