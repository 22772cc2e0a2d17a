"""The files of a source compared with what an audit state says was audited before.

:func:`begin` hashes again, in threads, the bytes each file held when it
was audited (so that the caller may read the state's entries meanwhile), and
:func:`finish` decides, per file, how this run reads it
(:class:`Plan`): from where the audit ended (the bytes before it unchanged,
the file grown or not), or whole (a file not audited before, an edited one,
any file that is not JSON Lines; a gzip one read on from its next member,
:func:`continues_gzip`). What does not hold is an :class:`Edit`: audited
bytes changed, a file cut short, replaced (another file under its name) or
gone. A file's audited bytes found at the start of another file
(``x.jsonl`` renamed ``x.jsonl.1`` by a log rotation, a copy then
truncated) are recognised by their SHA-256, not by the name: the rotation
is a notice, and the rotated file is read on from where its audit ended.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..reading.names import display_name
from ..reading.sources import is_gzip_name, is_jsonl_name, is_plain_jsonl_name
from ..reading.streams import gzip_at
from .lines import first_changed_line, scan
from .store import Kept

__all__ = [
    "Begun",
    "Edit",
    "Origin",
    "Plan",
    "begin",
    "continues_gzip",
    "finish",
    "hashing_pool",
    "is_gzip_jsonl_name",
    "is_incremental_name",
]


@dataclass
class Plan:
    """How this run reads one file.

    Attributes
    ----------
    path : Path
    name : str
        As tables name it.
    stat : os.stat_result or None
        None when it cannot be stat'ed (the reading names the problem).
    kept : Kept or None
        The audit whose bytes this file starts with, unchanged (under this
        name or, after a rotation, another).
    hasher : hashlib object or None
        The SHA-256 of those bytes, to be continued over the rest.
    real : str or None
        The real path the state records (None: the path's own); a copy's is
        its origin's.
    """

    path: Path
    name: str
    stat: os.stat_result | None
    kept: Kept | None = None
    hasher: object = None
    real: str | None = None

    @property
    def incremental(self) -> bool:
        """Whether only the bytes after the audited ones are read (the rows before are kept):
        a plain JSON Lines file read on from its last line, or a gzip one from its next
        member (:func:`continues_gzip`)."""
        return self.kept is not None and self.kept.rows and is_incremental_name(self.path)

    @property
    def start(self) -> int:
        """Where reading starts: the end of the audited bytes, or 0."""
        return self.kept.audited if self.incremental else 0


@dataclass(frozen=True)
class Origin:
    """The file a copy was made from, as an audit state knows files.

    Attributes
    ----------
    device, inode, mtime_ns : int
        The original's, from the descriptor the copy was read from.
    real : str
        Its real path.
    """

    device: int
    inode: int
    mtime_ns: int
    real: str

    @classmethod
    def of(cls, descriptor: int, path: str | os.PathLike) -> Origin:
        """The origin of a copy read from ``descriptor``, open on ``path``."""
        found = os.fstat(descriptor)
        return cls(found.st_dev, found.st_ino, found.st_mtime_ns, os.path.realpath(path))

    def stat_of(self, copy: os.stat_result) -> os.stat_result:
        """The copy's ``stat`` (its size), with the original's device, inode and time."""
        fields = list(copy[:10])
        fields[1], fields[2] = self.inode, self.device
        fields[8] = self.mtime_ns // 1_000_000_000
        return os.stat_result(
            fields,
            {
                "st_atime": copy.st_atime,
                "st_mtime": self.mtime_ns / 1e9,
                "st_ctime": copy.st_ctime,
                "st_atime_ns": copy.st_atime_ns,
                "st_mtime_ns": self.mtime_ns,
                "st_ctime_ns": copy.st_ctime_ns,
            },
        )


@dataclass
class Edit:
    """A difference between the files and the bytes audited before: a finding of the state."""

    rule: str
    source_file: str
    source_line: int
    detail: str
    before: tuple[str, int] | None = None  # (file, line) of the audited record, as kept
    now: tuple[Path, int, int] | None = None  # (path, line, offset) of the line now there
    extra: dict = field(default_factory=dict)


def is_gzip_jsonl_name(path: Path | str) -> bool:
    """Whether a file is gzip-compressed JSON Lines by its name (``x.jsonl.gz``)."""
    return is_gzip_name(path) and is_jsonl_name(path)


def is_incremental_name(path: Path | str) -> bool:
    """Whether a file is read on from where its audit ended: JSON Lines, plain or gzip."""
    return is_plain_jsonl_name(path) or is_gzip_jsonl_name(path)


def continues_gzip(plan: Plan) -> bool:
    """Whether the bytes after a gzip file's audited ones start a gzip member.

    Its audited members ended where its audit did; what a logger appends is a
    member of its own. Anything else (bytes that are not gzip, zero padding)
    is read as a whole read reads it: the file is read whole.
    """
    if plan.stat is None or plan.stat.st_size <= plan.kept.audited:
        return True  # nothing after them
    return gzip_at(plan.path, plan.kept.audited)


def _same(stat: os.stat_result, kept: Kept) -> bool:
    return (stat.st_dev, stat.st_ino) == (kept.device, kept.inode)


#: What :func:`_holds` gives for a file it cannot read: no edit told (the reading names it).
UNREADABLE = object()


def _holds(path: Path, stat: os.stat_result, kept: Kept):
    """The SHA-256 of ``path``'s first ``kept.audited`` bytes when they are those audited;
    None when they are not; :data:`UNREADABLE` when the file cannot be read."""
    if stat.st_size < kept.audited:
        return None
    try:
        found = scan(path, 0, kept.audited, index=False)
    except OSError:
        return UNREADABLE
    if found.read != kept.audited or found.hasher.hexdigest() != kept.sha256:
        return None
    return found.hasher


def _first_change(path: Path, kept: Kept) -> tuple[int, int]:
    """The first audited line the file no longer holds as it was, and where it starts now."""
    if is_gzip_name(path) or not len(kept.index):
        return 0, 0
    try:
        now = scan(path, 0, kept.audited).lines
    except OSError:
        return 0, 0
    line = first_changed_line(kept.index, now)
    offset = int(now.ends[line - 2]) if line >= 2 and line - 2 < len(now) else 0
    return line, offset


def _lines_text(kept: Kept) -> str:
    if not kept.lines:
        return f"{kept.audited:,} bytes"
    return f"lines 1-{kept.lines:,}, {kept.audited:,} bytes"


def _changed(plan: Plan, kept: Kept, rule: str, what: str) -> Edit:
    line, offset = _first_change(plan.path, kept)
    where = f"; line {line:,} is the first that changed" if line else ""
    return Edit(
        rule,
        plan.name,
        line,
        f"{what} (audited before: {_lines_text(kept)}, SHA-256 {kept.sha256[:16]}...){where}",
        before=(kept.name, line) if line else None,
        now=(plan.path, line, offset) if line else None,
    )


@dataclass
class Begun:
    """A comparison begun: the files stat'ed, and the hashing of those still under their
    name begun in threads (:func:`begin`); :func:`finish` finishes it.

    Attributes
    ----------
    kept : dict
        The files the state audited, by name.
    plans : list of Plan
        One per path, in order.
    hashes : dict
        ``{name: future}`` of each file audited under its name and the same file
        (device and inode) still: what :func:`_holds` finds of it.
    """

    kept: dict[str, Kept]
    plans: list[Plan]
    hashes: dict[str, Future]


def begin(
    kept: dict[str, Kept],
    paths: list[Path],
    origins: Mapping[str, Origin] | None,
    pool: ThreadPoolExecutor,
) -> Begun:
    """Stat each of ``paths`` and begin hashing, in ``pool``, the bytes audited of each file
    still under its name (hashlib lets go of the interpreter's lock over large buffers).

    Parameters
    ----------
    kept : dict
        The files the state audited, by name (empty: nothing to hash).
    paths : list of Path
        The files of the source now, in order.
    origins : mapping, optional
        ``{name: Origin}`` of files that are copies (a report's): each is
        known to the state by the file it was copied from (its device, inode,
        modification time and real path), its bytes are the copy's.
    pool : ThreadPoolExecutor
        Runs the hashing meanwhile (:func:`hashing_pool`).

    Returns
    -------
    Begun
        For :func:`finish`.
    """
    plans = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        name = display_name(path)
        origin = None if origins is None else origins.get(os.path.normpath(name))
        if origin is not None and stat is not None:
            plans.append(Plan(path, name, origin.stat_of(stat), real=origin.real))
        else:
            plans.append(Plan(path, name, stat))
    by_name = {plan.name: plan for plan in plans}
    hashes = {
        name: pool.submit(_holds, by_name[name].path, by_name[name].stat, record)
        for name, record in kept.items()
        if name in by_name and by_name[name].stat is not None and _same(by_name[name].stat, record)
    }
    return Begun(kept, plans, hashes)


def hashing_pool() -> ThreadPoolExecutor:
    """The threads that hash files again (:func:`begin`): one per core, at most four."""
    return ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1))


def finish(begun: Begun) -> tuple[list[Plan], list[Edit]]:
    """How each file is read, and every edit of the bytes audited before: the comparison
    ``begun``, once its hashes are found.

    Returns
    -------
    plans : list of Plan
        One per path, in order.
    edits : list of Edit
        In the order of the files audited before.
    """
    kept, plans = begun.kept, begun.plans
    by_name = {plan.name: plan for plan in plans}
    tentative: dict[str, Edit] = {}
    found: set[str] = set()
    for name, future in begun.hashes.items():
        plan, record, hasher = by_name[name], kept[name], future.result()
        if hasher is UNREADABLE:
            found.add(name)  # not continued: read whole, and the reading names the problem
        elif hasher is not None:
            plan.kept, plan.hasher = record, hasher
            found.add(name)
        elif plan.stat.st_size < record.audited:
            tentative[name] = _changed(plan, record, "audited_file_shrank", "cut short")
        else:
            tentative[name] = _changed(
                plan, record, "audited_bytes_changed", "bytes audited before were changed"
            )
    edits: list[Edit] = []
    for name, record in kept.items():
        if name in found or not record.audited:
            continue  # no byte audited (an empty file): none can have changed, or moved
        home = by_name.get(name)
        moved = _moved(record, plans, home)
        if moved is not None:
            if moved.name == name:
                edits.append(
                    Edit(
                        "audited_file_replaced",
                        name,
                        0,
                        f"replaced by another file (inode {record.inode} is now "
                        f"{moved.stat.st_ino}) that starts with the bytes audited before, "
                        "unchanged",
                    )
                )
            elif not _renamed_only(moved, record):
                edits.append(
                    Edit(
                        "log_rotated",
                        moved.name,
                        0,
                        f"{name} (audited before: {_lines_text(record)}) is now {moved.name}, "
                        "recognised by the SHA-256 of the bytes audited; read on from there",
                    )
                )
            continue
        if name in tentative:
            edits.append(tentative[name])
        elif home is None or home.stat is None:
            edits.append(
                Edit(
                    "audited_file_missing",
                    name,
                    0,
                    f"gone: no file of the source holds the bytes audited before "
                    f"({_lines_text(record)}, SHA-256 {record.sha256[:16]}...)",
                )
            )
        else:
            edits.append(
                _changed(
                    home,
                    record,
                    "audited_file_replaced",
                    f"replaced by another file (inode {record.inode} is now {home.stat.st_ino}) "
                    "that does not hold the bytes audited before",
                )
            )
    return plans, edits


def _renamed_only(plan: Plan, record: Kept) -> bool:
    """Whether ``plan`` is the very file audited, named otherwise only by the source given
    (``logs`` and then ``/home/me/logs``): the same inode at the same real path."""
    real = plan.real or str(Path(plan.path).resolve())
    return _same(plan.stat, record) and real == record.real


def _moved(record: Kept, plans: list[Plan], home: Plan | None) -> Plan | None:
    """The file not yet claimed that starts with ``record``'s audited bytes, if any.

    The same file (device and inode) first, then the file under its name, then the others.
    """
    free = [p for p in plans if p.kept is None and p.stat is not None]
    ranked = sorted(
        free, key=lambda p: (not _same(p.stat, record), p is not home)
    )  # stable: listing order among equals
    for plan in ranked:
        if plan is home and _same(plan.stat, record):
            continue  # compared above: it does not hold them
        hasher = _holds(plan.path, plan.stat, record)
        if hasher is not None and hasher is not UNREADABLE:
            plan.kept, plan.hasher = record, hasher
            return plan
    return None
