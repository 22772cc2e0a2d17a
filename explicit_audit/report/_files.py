"""Writing reports into a folder: each page whole or not at all, and no stale page left.

A page is written to a temporary file in the output folder and moved into
place with :func:`os.replace`, so a full disk or a crash leaves the previous
page (or none), never a cut-off one. A page the kit wrote carries
:data:`REPORT_MARKER`; after a run, such pages that the run did not write
(a notebook removed or renamed since) are removed, and nothing else is.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["REPORT_MARKER", "remove_stale_reports", "write_atomically"]

#: The element in a page's head that says the kit wrote it (attributes in any order).
REPORT_MARKER = re.compile(
    r'<meta\b(?=[^>]*\bname="generator")(?=[^>]*\bcontent="explicit_audit )[^>]*>'
)


def write_atomically(target: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` whole, or leave ``target`` as it was.

    Parameters
    ----------
    target : Path
    text : str

    Raises
    ------
    OSError
        When it cannot be written; the temporary file is removed.
    """
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _written_by_the_kit(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return REPORT_MARKER.search(stream.read()) is not None
    except OSError:
        return False


def remove_stale_reports(folder: Path, keep: Iterable[Path]) -> list[Path]:
    """Remove the pages the kit wrote into ``folder`` earlier that this run did not write.

    Parameters
    ----------
    folder : Path
    keep : iterable of Path
        The pages this run wrote.

    Returns
    -------
    list of Path
        The pages removed. Files the kit did not write are never touched.
    """
    kept = {path.resolve() for path in keep}
    removed = []
    for path in sorted(folder.glob("*.html")):
        if path.resolve() not in kept and path.is_file() and _written_by_the_kit(path):
            path.unlink()
            removed.append(path)
    return removed
