"""The installed version of the kit."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["ROWS_FORMAT", "__version__"]

#: Raised whenever the rows a load makes of the same bytes under the same options
#: change (2: every rejection's excerpt cut at ``Limits.excerpt_chars``). A cache
#: entry or an audit state's rows made under another number are not reused.
ROWS_FORMAT = 2

try:
    __version__ = version("explicit_audit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"
