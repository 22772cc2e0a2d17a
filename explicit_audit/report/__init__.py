"""Reports: notebooks executed on the data, rendered as self-contained HTML, with provenance.

:mod:`~explicit_audit.report.writer` (which needs nbconvert and a kernel) is
imported only when one of its names is asked for, so that computing with the
kit never loads the report machinery.
"""

from __future__ import annotations

from typing import Any

from .._core.extras import require
from .provenance import Provenance, provenance

__all__ = ["NotebookError", "Provenance", "provenance", "write_reports"]

_WRITER_NAMES = frozenset({"NotebookError", "write_reports"})


def __getattr__(name: str) -> Any:
    if name in _WRITER_NAMES:
        require("report", f"explicit_audit.report.{name}")
        from . import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
