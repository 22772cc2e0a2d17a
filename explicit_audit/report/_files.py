"""Writing reports into a folder: a run's pages whole or not at all, and no stale page left.

A run writes its pages into a fresh folder inside the output folder
(:func:`staged_reports`, named ``.explicit-audit-staging-*``) and, once all
of them and the index are written, moves them into place together, SIGINT
and SIGTERM held for those few renames: a run stopped before then leaves the
previous run's pages, index and list as they were, and its own folder goes.
A staging folder that a killed run (SIGKILL) left behind is removed by the
next run when its mark (:data:`STAGING_MARK`) names a process that no longer
runs and it holds nothing but what the kit writes there: a run going on
beside it into the same folder keeps its own.

The findings and rejected rows written beside the pages (``findings.csv``
and the like, :mod:`~explicit_audit.report.downloads`) go the same way as
the pages: staged, moved into place with them, listed with them. Such a file
counts as the kit's when its header line (CSV) or its metadata (Parquet) is
the kit's.

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

import contextlib
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..small_files import MAX_SMALL_FILE_BYTES, read_small_json
from .downloads import DOWNLOADS
from .downloads import written_by_the_kit as downloaded_by_the_kit

__all__ = [
    "MANIFEST",
    "REPORT_MARKER",
    "STAGING_MARK",
    "STAGING_PREFIX",
    "Staging",
    "remove_stale_reports",
    "staged_reports",
    "withdraw_reports",
    "write_atomically",
]

#: The file in the output folder that lists the pages the kit wrote there.
MANIFEST = ".explicit-audit-pages.json"

#: The element in a page's head that says the kit wrote it (attributes in any order).
REPORT_MARKER = re.compile(
    r'<meta\b(?=[^>]*\bname="generator")(?=[^>]*\bcontent="explicit_audit )[^>]*>'
)


#: How the folder a run writes its pages into before they are moved into place begins.
STAGING_PREFIX = ".explicit-audit-staging-"

#: The file a run writes first into its staging folder: the kit made the folder, in
#: the process it names (``explicit_audit PID``).
STAGING_MARK = ".explicit-audit-staging"


def write_atomically(target: Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8, or bytes as they are) to ``target`` whole, or leave
    ``target`` as it was.

    Parameters
    ----------
    target : Path
    text : str or bytes

    Raises
    ------
    OSError
        When it cannot be written; the temporary file is removed.
    """
    handle, temporary = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _written_by_the_kit(path: Path) -> bool:
    if path.name in DOWNLOADS:
        return downloaded_by_the_kit(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return REPORT_MARKER.search(stream.read()) is not None
    except OSError:
        return False


def _listed(folder: Path) -> list[Path]:
    """The pages the manifest names: plain ``.html`` names in ``folder`` and the tables
    beside them (:data:`~explicit_audit.report.downloads.DOWNLOADS`), nothing else."""
    try:  # bounded: a FIFO or a device in its place is refused, never read
        found = read_small_json(folder / MANIFEST, max_bytes=MAX_SMALL_FILE_BYTES["manifest"])
        names = found.get("pages", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [
        folder / name
        for name in names
        if isinstance(name, str)
        and (name.endswith(".html") or name in DOWNLOADS)
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


class Staging:
    """The folder a run writes its pages into, and the move of those pages into place.

    Parameters
    ----------
    out, folder : Path
        The output folder the pages are for, and the staging folder inside it
        (on the same file system: a move is a rename).
    """

    def __init__(self, out: Path, folder: Path) -> None:
        self.out = out
        self.folder = folder

    def swap_in(self, names: Sequence[str]) -> list[Path]:
        """Move the staged files ``names`` into the output folder, all of them or none.

        SIGINT and SIGTERM are held until every page is in place, the
        previous run's pages this run did not write are removed and the list
        of pages is written (:func:`remove_stale_reports`); a signal that came
        meanwhile is delivered then.

        Parameters
        ----------
        names : sequence of str
            File names in :attr:`folder`, each moved to the same name in :attr:`out`.

        Returns
        -------
        list of Path
            The stale pages removed.
        """
        with _signals_held():
            for name in names:
                os.replace(self.folder / name, self.out / name)
            return remove_stale_reports(self.out, [self.out / name for name in names])


@contextlib.contextmanager
def staged_reports(out: Path) -> Iterator[Staging]:
    """A fresh staging folder in ``out`` for one run, removed when the run ends.

    ``out`` is created when missing, and removed again when the run leaves
    it empty (nothing was swapped in). Staging folders that a killed run
    left in ``out`` are removed first when their mark names a process that
    is gone and they hold nothing but the kit's pages and temporary files;
    any other folder is never touched.

    Parameters
    ----------
    out : Path
        The output folder.

    Yields
    ------
    Staging
        Write the pages into its ``folder``, then call :meth:`Staging.swap_in`.

    Examples
    --------
    >>> with staged_reports(Path("reports")) as staging:  # doctest: +SKIP
    ...     write_atomically(staging.folder / "index.html", page)
    ...     staging.swap_in(["index.html"])
    """
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    for leftover in out.glob(f"{STAGING_PREFIX}*"):
        if _abandoned(leftover):
            shutil.rmtree(leftover)
    folder = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        (folder / STAGING_MARK).write_text(f"explicit_audit {os.getpid()}\n", encoding="utf-8")
        yield Staging(out, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty: a run that swapped nothing in leaves nothing


def _abandoned(folder: Path) -> bool:
    """Whether ``folder`` (not a link) is a staging folder of a run that is gone: its mark
    names a process that no longer runs, and it holds pages the kit marked and its
    temporary files, nothing else."""
    if folder.is_symlink() or not folder.is_dir() or not _writer_gone(folder / STAGING_MARK):
        return False
    for entry in folder.iterdir():
        if entry.is_symlink() or not entry.is_file():
            return False
        if entry.name == STAGING_MARK:
            continue
        temporary = entry.name.startswith(".") and entry.name.endswith(".tmp")
        kits = entry.suffix == ".html" or entry.name in DOWNLOADS
        if not temporary and not (kits and _written_by_the_kit(entry)):
            return False
    return True


def _writer_gone(mark: Path) -> bool:
    """Whether the process a staging mark names has ended (False when the mark is not one)."""
    try:
        generator, pid = mark.read_text(encoding="utf-8").split()
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return generator == "explicit_audit"
    except (OSError, ValueError):
        return False  # no mark, not the kit's, or a process the kit may not signal: kept
    return False


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the block, then deliver what came: the swap is not cut.

    Outside the main thread, where no handler can be set, the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda s, _f: held.append(s)) for signum in signals}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)
