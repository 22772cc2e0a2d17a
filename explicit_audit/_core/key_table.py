"""``Audit.keys``: the key notes of the records a load built, and of those it rejected.

:func:`settle` wraps a kind's builder (the reading core calls it for every
kind, on both engines): it reads every value's keys against the kind's
shapes (:mod:`explicit_audit._core.keys`), keeps the notes of the values
loaded, and joins the notes of a value rejected anyway into its rejection,
with every other problem its shape finds in it
(:func:`~explicit_audit._core.shape.shape_problems`), so that a rejection
lists every problem of the record, not only the first its builder met; under
``strict_keys`` an unknown key is itself a reason to reject the value.
:func:`keys_frame` and :func:`concat_keys` make the notes a table
(:data:`KEY_COLUMNS`), one per load or one per partition folded into one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from .columns import text_safe_series
from .keys import UNDECLARED_VALUE, UNKNOWN_KEY, KeyNote, key_notes
from .records import KindTables, RawValue, Rejection, excerpt
from .shape import Shape, shape_problems

__all__ = ["KEY_COLUMNS", "STRICT_KEYS_REASON", "concat_keys", "keys_frame", "settle"]

#: How the reason of a record rejected under ``strict_keys`` begins.
STRICT_KEYS_REASON = "strict_keys: "

#: Columns of ``Audit.keys``: one row per key a record holds that its shape
#: does not declare, or per declared field it leaves to the producer's default.
KEY_COLUMNS = {
    "source_file": "file of the record",
    "source_line": "1-based line where the record starts",
    "kind": "the record kind",
    "record": "the record's id where it has one",
    "note": "unknown_key, defaulted_field or undeclared_value",
    "key": "the key's dotted path (an array's items as `name[]`)",
    "suggestion": "for an unknown key, the closest declared key when one is near",
    "default": "for a defaulted field, the producer's default as JSON",
    "detail": "the note in words, as its finding says it",
}


def settle(
    kind_name: str,
    shapes: Sequence[Shape],
    shape_for: Any,
    segments: list[tuple[str, Any]],
    build: Any,
    *,
    strict_keys: bool,
) -> KindTables:
    """Build a kind's tables from its segments, its key notes kept beside them.

    Parameters
    ----------
    kind_name : str
    shapes : sequence of Shape
        The kind's declared shapes; with none, the kind is built as it is.
    shape_for : callable
        ``shape_for(value) -> Shape | None``: the shape a value is read as
        (None: a value no shape declares, such as a receipt's presentation).
    segments : list
        The kind's segments (``RecordKind.build``'s argument).
    build : callable
        The kind's builder.
    strict_keys : bool
        Reject a value holding an unknown key, naming every key.

    Returns
    -------
    KindTables
        With ``notes``: ``(RawValue, Shape, [KeyNote, ...])`` of every value
        loaded that has one. A value the builder rejected has its notes and
        every problem its shape finds joined into its rejection's reason.
    """
    if not shapes:
        return build(segments)
    # A .json array may hold several values on one line: each place keeps a list.
    found: dict[tuple[str, int], list[tuple[RawValue, Shape, list[KeyNote]]]] = {}
    refused: list[Rejection] = []
    kept_segments: list[tuple[str, Any]] = []
    for what, items in segments:
        if what != "values":
            kept_segments.append((what, items))
            continue
        kept = []
        for item in items:
            shape = shape_for(item.value)
            notes = key_notes(shape, item.value) if shape is not None else []
            unknown = [note for note in notes if note.note == UNKNOWN_KEY]
            if strict_keys and unknown:
                reasons = [note.text() for note in notes]
                reasons += shape_problems(shape, item.value)
                refused.append(
                    Rejection(
                        item.source_file,
                        item.source_line,
                        kind_name,
                        STRICT_KEYS_REASON + "; ".join(reasons),
                        excerpt(item.text),
                    )
                )
                continue
            kept.append(item)
            if shape is not None:
                entry = (item, shape, notes)
                found.setdefault((item.source_file, item.source_line), []).append(entry)
        kept_segments.append((what, kept))
    built = build(kept_segments)
    rejected = []
    for rejection in built.rejected:
        entries = found.get((rejection.source_file, rejection.source_line))
        if not entries:
            rejected.append(rejection)
            continue
        item, shape, notes = entries.pop(0)
        # The builder's own message first; then what else the shape finds, but
        # for the field the builder already named.
        problems = shape_problems(shape, item.value)
        more = [p for p in problems if p.split(":")[0] not in rejection.reason]
        # An undeclared value is among the shape's problems already.
        more += [note.text() for note in notes if note.note != UNDECLARED_VALUE]
        reason = rejection.reason + "".join(f"; also {problem}" for problem in more)
        where = (rejection.source_file, rejection.source_line, rejection.kind)
        rejected.append(Rejection(*where, reason, rejection.raw))
    built.rejected = [*rejected, *refused]
    built.notes = sorted(
        (entry for entries in found.values() for entry in entries if entry[2]),
        key=lambda entry: (entry[0].source_file, entry[0].source_line),
    )
    return built


def _record_id(shape: Shape, value: dict) -> str | None:
    for path in (*shape.record, "request_id"):
        found: Any = value
        for part in path.split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if isinstance(found, str | int) and not isinstance(found, bool):
            return str(found)
    return None


def keys_frame(
    kind_notes: Iterable[tuple[str, Sequence[tuple[RawValue, Shape, list[KeyNote]]]]],
    files: Sequence[str] = (),
) -> pd.DataFrame:
    """``Audit.keys``: one row per note (:data:`KEY_COLUMNS`), given ``(kind, notes)`` pairs.

    Rows in file order (``files``, then any other file by name), then line order.
    """
    rows: list[tuple] = []
    for kind_name, entries in kind_notes:
        for item, shape, notes in entries:
            record = _record_id(shape, item.value) if isinstance(item.value, dict) else None
            for note in notes:
                rows.append(
                    (item.source_file, item.source_line, kind_name, record, note.note,
                     note.key, note.suggestion, note.default, note.text())
                )  # fmt: skip
    names = list(KEY_COLUMNS)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    rank = {name: index for index, name in enumerate(files)}
    order = sorted(
        range(len(rows)),
        key=lambda i: (rank.get(rows[i][0], len(rank)), rows[i][0], rows[i][1]),
    )
    columns = [[values[i] for i in order] for values in columns]
    # A key may hold a lone surrogate (a JSON escape) where its kind lets it load.
    return pd.DataFrame(
        {
            name: text_safe_series(values, "int64" if name == "source_line" else "str")
            for name, values in zip(names, columns, strict=True)
        }
    )


def concat_keys(frames: Sequence[pd.DataFrame], files: Sequence[str]) -> pd.DataFrame:
    """Several ``Audit.keys`` frames (one per partition) as one, in file then line order."""
    frames = [frame for frame in frames if len(frame)]
    if not frames:
        return keys_frame([])
    frame = pd.concat(frames, ignore_index=True)
    rank = {name: index for index, name in enumerate(files)}
    order = frame["source_file"].map(lambda name: rank.get(name, len(rank)))
    frame = frame.assign(_rank=order).sort_values(
        ["_rank", "source_file", "source_line"], kind="stable"
    )
    return frame.drop(columns="_rank").reset_index(drop=True)
