"""Writing reports into a folder: each page whole or not at all, and no stale page left.

A page is written to a temporary file in the output folder and moved into
place with :func:`os.replace`, so a full disk, a crash or a signal leaves the
previous page (or none), never a cut-off one. A page the kit wrote carries
:data:`REPORT_MARKER`, and the folder keeps a list of the pages the kit
wrote there (:data:`MANIFEST`). After a run, the listed pages that the run
did not write (a notebook removed or renamed since) are removed; after a
run that could not read its data (exit 2), every listed page is, since each
shows the verdict of data that is no longer what was given. A file the list
does not name is never touched, even when it carries the mark: a user's
renamed copy of a page stays.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "MANIFEST",
    "REPORT_MARKER",
    "remove_stale_reports",
    "withdraw_reports",
    "write_atomically",
]

#: The file in the output folder that lists the pages the kit wrote there.
MANIFEST = ".explicit-audit-pages.json"

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


def _listed(folder: Path) -> list[Path]:
    """The pages the manifest names: plain ``.html`` names in ``folder``, nothing else."""
    try:
        names = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("pages", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [
        folder / name
        for name in names
        if isinstance(name, str)
        and name.endswith(".html")
        and name not in (".", "..")
        and "/" not in name
        and os.sep not in name
    ]


def _write_manifest(folder: Path, pages: Iterable[Path]) -> None:
    names = sorted({path.name for path in pages})
    write_atomically(
        folder / MANIFEST,
        json.dumps({"generator": "explicit_audit", "pages": names}, indent=2) + "\n",
    )


def remove_stale_reports(folder: Path, keep: Iterable[Path]) -> list[Path]:
    """Remove the pages the kit wrote into ``folder`` earlier that this run did not write.

    Parameters
    ----------
    folder : Path
    keep : iterable of Path
        The pages this run wrote; the manifest lists them afterwards.

    Returns
    -------
    list of Path
        The pages removed: those the manifest listed that still carry the
        kit's mark. Files it does not list are never touched.
    """
    keep = list(keep)
    kept = {path.resolve() for path in keep}
    removed = []
    for path in _listed(folder):
        if path.resolve() not in kept and path.is_file() and _written_by_the_kit(path):
            path.unlink()
            removed.append(path)
    _write_manifest(folder, keep)
    return removed


def withdraw_reports(folder: Path) -> list[Path]:
    """Remove every page the manifest lists: the run that should replace them failed.

    Parameters
    ----------
    folder : Path

    Returns
    -------
    list of Path
        The pages removed. Files the manifest does not list are never touched.
    """
    if not (folder / MANIFEST).is_file():
        return []
    removed = remove_stale_reports(folder, [])
    (folder / MANIFEST).unlink(missing_ok=True)
    return removed
