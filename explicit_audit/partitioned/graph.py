"""The task graph of a lazy load: what each partition's tasks do, and how they are wired.

:class:`Graph` plans, in one pass over the partitions, the tasks of
:func:`~explicit_audit.partitioned.load.load_partitioned`: per partition, the
line its bytes start on, the partition read and built by every kind
(:func:`_build`), its tables fitted to the meta after the rows of the
partitions before it (:func:`_fitted`), and its accounting folded into one
tally in file order (:func:`_fold`), finished into ``rejected``, ``sources``
and ``keys`` (:func:`_finish`). Each table is made from its layer
(:meth:`Graph.table`) as a persisted collection is.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._core.key_table import concat_keys, keys_frame
from .._core.records import RecordKind, Rejection
from ..errors import InputError
from ..reading.byte_ranges import count_lines
from ..reading.collect import Reading
from ..reading.digests import file_digest
from ..reading.gc_pause import cyclic_gc_paused
from ..reading.limits import Limits
from ..reading.sources import CANNOT_READ
from ..reading.tables import (
    build_kind,
    in_file_order,
    loaded_counts,
    rejected_frame,
    sources_frame,
)
from .accounting import RejectionTally
from .conform import SampleError, Where, conform
from .parts import Part, read_part

__all__ = ["Graph"]


@dataclass
class _Built:
    """One partition read and built: its tables (rows from 0) and its accounting."""

    tables: dict[str, pd.DataFrame]
    reading: Reading
    built_rejections: list[Rejection] = field(default_factory=list)
    loaded: dict[str, int] = field(default_factory=dict)
    keys: pd.DataFrame = field(default_factory=lambda: keys_frame([]))


def _where(part: Part, first_line: int | None) -> str:
    if part.members:
        last = part.members[-1].name
        return f"the files {part.name} to {last} ({len(part.members)} files, one partition)"
    if part.whole:
        return part.name
    lines = "the lines" if first_line is None else f"the lines from {first_line}"
    return f"{part.name} ({lines} in bytes {part.start}-{part.stop})"


def _begin() -> None:
    """The graph's one root: every task that reads nothing before it waits for it.

    It computes nothing. Without it, each range's line count is a root of its
    own, and every later range reaches every earlier count through the chain
    of first lines: Dask's ordering keeps, per task, the set of roots it
    reaches, which grows with the square of the partitions (about 50 MB at
    300 partitions, gigabytes at 3,000).
    """


def _counted(part: Part, begun: None = None) -> int | None:
    """The newlines of a byte range; None when the file cannot be read (its read says why)."""
    try:
        return count_lines(part.path, part.start, part.stop)
    except OSError:
        return None


def _next_line(line: int | None, count: int | None) -> int | None:
    """The first line of the next range; None when a range before could not be counted."""
    return None if line is None or count is None else line + count


def _build(
    part: Part,
    first_line: int | None,
    kinds: Sequence[RecordKind],
    keep: set[str] | None,
    limits: Limits,
    strict: bool,
    strict_keys: bool = False,
    begun: None = None,
) -> _Built:
    """Read the partition and build the tables of every kind (of ``keep``), and its accounting.

    The cyclic collector is paused while the values are read and built.
    """
    tables: dict[str, pd.DataFrame] = {}
    rejections: list[Rejection] = []
    main = []
    notes = []
    with cyclic_gc_paused():
        reading = read_part(part, first_line, kinds, keep=keep, limits=limits)
        for kind in kinds:
            if keep is not None and kind.name not in keep:
                continue
            segments = reading.segments.pop(kind.name, [])
            built = build_kind(kind, segments, strict_keys=strict_keys, limits=limits, times=False)
            notes.append((kind.name, built.notes))
            tables.update(built.tables)
            main.append(kind.loaded_rows(built))
            rejections.extend(built.rejected)
        reading.segments.clear()
    if strict:
        found = in_file_order([*reading.rejections, *rejections], part.names)
        if found:
            first = found[0]
            raise InputError(first.source_file, first.source_line or None, first.reason)
    return _Built(tables, reading, rejections, loaded_counts(main), keys_frame(notes))


def _lengths(built: _Built) -> dict[str, int]:
    return {name: len(table) for name, table in built.tables.items()}


def _add(offsets: dict[str, int], lengths: dict[str, int]) -> dict[str, int]:
    total = dict(offsets)
    for name, count in lengths.items():
        total[name] = total.get(name, 0) + count
    return total


def _fitted(
    built: _Built,
    offsets: dict[str, int],
    metas: dict,
    part: Part,
    first_line: int | None,
    references: dict[str, dict[str, str]],
) -> dict[str, pd.DataFrame]:
    """The partition's tables fitted to the metas; a :class:`SampleError` says what sample fits."""
    where = Where(_where(part, first_line), part.name, first_line)
    try:
        return {
            name: conform(
                built.tables[name],
                meta,
                name=name,
                offsets=offsets,
                where=where,
                references=references.get(name),
            )
            for name, meta in metas.items()
        }
    except SampleError as error:
        error.needed = _sample_taking_in(part, built.reading.digests)
        raise


def _sample_taking_in(part: Part, digests: dict) -> int | None:
    """The ``sample_bytes`` whose heads take in every byte of ``part``: a URL's bytes are
    those the partition read (``digests``); None where they are not known."""
    if not part.whole:
        return part.stop
    sizes = []
    for member in part.files:
        digest = digests.get(member.name) if member.stamp is None else None
        if member.stamp is None and digest is None:
            return None
        sizes.append(member.stamp.size if member.stamp is not None else digest.bytes)
    return max(sizes) if sizes else None


def _accounting(built: _Built) -> _Built:
    """The partition's accounting alone (no tables), to fold."""
    return _Built({}, built.reading, built.built_rejections, built.loaded, built.keys)


@dataclass
class _Tally(RejectionTally):
    """The fold of every partition's accounting: rejections, build misfits, loaded rows."""

    built: list[Rejection] = field(default_factory=list)
    loaded: dict[str, int] = field(default_factory=dict)
    keys: list[pd.DataFrame] = field(default_factory=list)


def _fold(tally: _Tally, part: _Built) -> _Tally:
    """Fold one more partition's accounting in (the chain runs in file order)."""
    tally.add(part.reading)
    tally.built.extend(part.built_rejections)
    tally.keys.append(part.keys)
    for name, count in part.loaded.items():
        tally.loaded[name] = tally.loaded.get(name, 0) + count
    return tally


def _start(limits: Limits, problems: list[Rejection], begun: None = None) -> _Tally:
    tally = _Tally(limits)
    for problem in problems:
        tally.reading.reject(problem)
    return tally


def _finish(
    tally: _Tally,
    files: list[str],
    policy_files: list[Path],
    loaded_files: list[str],
    policy_rejections: list[Rejection],
    skipped: list[tuple[str, str]],
    split: dict[str, Path],
    held: Reading,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    reading = tally.reading
    reading.skipped = list(skipped)
    reading.policy_files = list(policy_files)
    # The policies were read, hashed and parsed once, when the load was planned.
    reading.digests.update(held.digests)
    for rejection in held.rejections:
        reading.reject(rejection)
    _hash_split_files(reading, split)
    rejections = [*reading.rejections, *tally.built, *policy_rejections, *reading.overflow_rows()]
    rejected = rejected_frame(in_file_order(rejections, files))
    reading.files = list(files)
    reading.count_policy_files()
    sources = sources_frame(reading, tally.loaded, loaded_files, rejected)
    return rejected, sources, concat_keys(tally.keys, files)


def _hash_split_files(reading: Reading, split: dict[str, Path]) -> None:
    """The size and SHA-256 of each file read in byte ranges, in one more pass over it.

    A whole-file partition hashes its file as it reads it; ranges read apart
    cannot make one hash, so such a file is read once more, here, at the end
    of the computation. A file whose ranges could not be read is not.
    """
    unread = {r.source_file for r in reading.rejections if r.kind == "file"}
    for name, path in split.items():
        if name in unread or name in reading.digests:
            continue
        try:
            reading.digests[name] = file_digest(path)
        except OSError as exc:
            reading.reject(Rejection(name, 0, "file", f"{CANNOT_READ}{exc.strerror or exc}", ""))


class _Layer(Mapping):
    """One table's tasks, named for Dask by the load's token and the table, not task by task.

    ``dask.dataframe.from_graph`` names a table by a token of its layer;
    tokenizing every task of it would cost more than planning them.
    """

    def __init__(self, tasks: dict, token: str) -> None:
        self._tasks, self._token = tasks, token

    def __getitem__(self, key):
        return self._tasks[key]

    def __iter__(self):
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def __dask_tokenize__(self) -> str:
        return self._token


class Graph:
    """The load's task graph, planned in one pass: linear in the number of partitions.

    Per partition ``i``, three groups of tasks:

    - *reads*: ``first-line`` (for a byte range after a file's first: the
      line the range before it starts on, plus its newlines, ``count``) and
      ``build`` (:func:`_build`);
    - *fits*: ``fitted`` (:func:`_fitted`), after the ``offsets`` summed from
      the lengths of the partitions before it;
    - *accounting*: the partition's accounting folded into ``tally``, in file
      order, and at the end ``accounts`` (:func:`_finish`).

    The graph has the shape the chained ``dask.delayed`` calls gave it
    (constants are arguments, not keys), so a cluster schedules and holds it
    as it did. A table's layer holds the reads, the fits and its own pieces;
    ``rejected``'s and ``sources``'s hold the reads and the accounting. The
    keys carry a token new to each load, as ``dask.delayed`` keys do: a load
    never takes up results held for another (of files since changed).
    """

    def __init__(
        self,
        parts: Sequence[Part],
        kinds: Sequence[RecordKind],
        keep: set[str] | None,
        limits: Limits,
        strict: bool,
        metas: dict[str, pd.DataFrame],
        problems: list[Rejection],
        finish: tuple,
        strict_keys: bool = False,
    ) -> None:
        from dask.task_spec import Task, TaskRef

        self.token = uuid.uuid4().hex
        # Declared by each kind's tables: the columns naming a row of another table.
        references = {table.name: dict(table.references) for kind in kinds for table in kind.tables}
        self.partitions = len(parts)
        key = self._key
        reads: dict = {}
        fits: dict = {}
        begun = TaskRef(key("begin"))  # the one root (see _begin)
        reads[key("begin")] = Task(key("begin"), _begin)
        # A task, not data: the fold adds to its tally in place, so each computation starts anew.
        accounting = {key("tally", 0): Task(key("tally", 0), _start, limits, problems, begun)}
        line: object = 1
        offsets: object = {}
        for i, part in enumerate(parts):
            if part.whole or part.start == 0:
                line = 1
            else:
                # The range before it, of the same file, counted: only where a range follows.
                count = key("count", i - 1)
                reads[count] = Task(count, _counted, parts[i - 1], begun)
                first = key("first-line", i)
                reads[first] = Task(first, _next_line, line, TaskRef(count))
                line = TaskRef(first)
            build = key("build", i)
            reads[build] = Task(
                build, _build, part, line, kinds, keep, limits, strict, strict_keys, begun
            )
            fitted, lengths = key("fitted", i), key("lengths", i)
            fits[fitted] = Task(
                fitted, _fitted, TaskRef(build), offsets, metas, part, line, references
            )
            if i + 1 < len(parts):  # the rows before the next partition: only where one follows
                fits[lengths] = Task(lengths, _lengths, TaskRef(build))
                fits[key("offsets", i)] = Task(key("offsets", i), _add, offsets, TaskRef(lengths))
                offsets = TaskRef(key("offsets", i))
            folded = key("accounting", i)
            accounting[folded] = Task(folded, _accounting, TaskRef(build))
            accounting[key("tally", i + 1)] = Task(
                key("tally", i + 1), _fold, TaskRef(key("tally", i)), TaskRef(folded)
            )
        last = TaskRef(key("tally", len(parts)))
        accounting[key("accounts")] = Task(key("accounts"), _finish, last, *finish)
        self.reads, self.fits, self.accounting = reads, fits, accounting

    def _key(self, name: str, index: int | None = None):
        return f"{name}-{self.token}" if index is None else (f"{name}-{self.token}", index)

    def table(self, name: str) -> tuple[Mapping, list]:
        """The layer of the table ``name`` and its partitions' keys."""
        from dask.task_spec import Task, TaskRef

        layer = {**self.reads, **self.fits}
        keys = [self._key(f"{name}-part", i) for i in range(self.partitions)]
        for i, piece in enumerate(keys):
            layer[piece] = Task(piece, operator.getitem, TaskRef(self._key("fitted", i)), name)
        return _Layer(layer, f"{name}-{self.token}"), keys

    def accounts(self, index: int) -> tuple[Mapping, list]:
        """The layer of ``rejected`` (``index`` 0), ``sources`` (1) or ``keys`` (2), and its key."""
        from dask.task_spec import Task, TaskRef

        piece = self._key(("rejected", "sources", "keys")[index], 0)
        task = Task(piece, operator.getitem, TaskRef(self._key("accounts")), index)
        return _Layer({**self.reads, **self.accounting, piece: task}, piece[0]), [piece]
