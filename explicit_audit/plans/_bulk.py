"""Plan records read in bulk: values parsed together, rows kept as columns.

The reading core parses every span of a group with orjson in one pass and
hands the plans kind the values it claims (:attr:`RecordKind.bulk`).
:func:`read_bulk` takes those in a producer shape
(:func:`~explicit_audit.plans._producer.producer_fields`) as a
:class:`PlanPart`: their fields, plans and lines, with no value object, row
dict or key walk per record. It refuses, for the exact path to read value by
value, every record whose row or key notes could differ there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._core.keys import likely_typo
from ._producer import ProducerFields, producer_fields
from .loader import _RECORD_KEYS, _extra_keys

__all__ = ["PlanPart", "read_bulk"]


class PlanPart:
    """Plan records taken in bulk from one file: their lines and fields, no row objects.

    Built by :func:`read_bulk` from values parsed in bulk; its rows are the
    rows :func:`_producer_row` builds for the same values (records in a
    producer shape, each with its key notes empty).
    """

    __slots__ = (
        "extras",
        "fields",
        "files",
        "lines",
        "plans",
        "recorded",
        "run_ids",
        "source_file",
    )

    def __init__(self, source_file: str, lines: np.ndarray) -> None:
        self.source_file = source_file
        self.lines = lines
        self.run_ids: list[Any] = []
        self.recorded: list[str] = []
        self.fields: list[ProducerFields] = []
        self.plans: list[dict] = []
        self.extras: list[dict] = []
        #: Each row's file, when the rows come from several (small files read as one batch).
        self.files: list[str] | None = None

    def __len__(self) -> int:
        return len(self.plans)

    def file_names(self) -> list[str]:
        """The files its rows come from, in row order, each once."""
        return [self.source_file] if self.files is None else list(dict.fromkeys(self.files))

    def row_files(self) -> list[str]:
        """Each row's file."""
        return [self.source_file] * len(self) if self.files is None else self.files

    def _take(self, rows: Any) -> PlanPart:
        """The part's rows at ``rows`` (positions), in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        part = PlanPart(self.source_file, self.lines[rows])
        positions = rows.tolist()
        part.run_ids = [self.run_ids[i] for i in positions]
        part.recorded = [self.recorded[i] for i in positions]
        part.fields = [self.fields[i] for i in positions]
        part.plans = [self.plans[i] for i in positions]
        part.extras = [self.extras[i] for i in positions] if self.extras else []
        part.files = None if self.files is None else [self.files[i] for i in positions]
        return part

    def slice(self, start: int, stop: int) -> PlanPart:
        """Rows ``start`` to ``stop`` (a batch's run of files, see ``_core/batches.py``)."""
        return self._take(np.arange(start, stop))

    @classmethod
    def batched(
        cls, parts: list[PlanPart], names: list[str], starts: np.ndarray
    ) -> tuple[PlanPart, np.ndarray]:
        """Parts read from a batch of small files, joined; each row named by its own file.

        ``starts`` holds each file's first line in the batch. Returns the rows
        in file and line order, and the batch's file of each row.
        """
        joined = cls("", np.concatenate([part.lines for part in parts]))
        for part in parts:
            joined.run_ids += part.run_ids
            joined.recorded += part.recorded
            joined.fields += part.fields
            joined.plans += part.plans
        if any(part.extras for part in parts):
            for part in parts:
                joined.extras += part.extras or [{}] * len(part)
        ordered = joined._take(np.argsort(joined.lines, kind="stable"))
        files = np.searchsorted(starts, ordered.lines, side="right") - 1
        ordered.files = [names[index] for index in files.tolist()]
        ordered.lines = ordered.lines - starts[files] + 1
        return ordered, files

    def add_to(self, columns: dict[str, list], extras: list[dict]) -> None:
        """Append its rows to the builder's column lists (see :func:`build_tables`)."""
        n = len(self)
        columns["source_file"] += self.row_files()
        columns["source_line"] += self.lines.tolist()
        columns["run_id"] += [pd.NA if r is None else r for r in self.run_ids]
        columns["retrieval_plan_hash"] += self.recorded
        (keywords, top_k, over_fetch, max_chars, shard_ids, engine, manifest, lang, shape) = (
            zip(*self.fields, strict=True) if n else ((),) * 9
        )
        has_mt = [bool(e or m or s) for e, m, s in zip(engine, manifest, lang, strict=True)]
        columns["plan_shape"] += shape
        columns["retrieval_keywords"] += keywords
        columns["keywords_non_ascii"] += [not text.isascii() for text in keywords]
        columns["top_k"] += top_k
        columns["over_fetch"] += over_fetch
        columns["max_context_chars"] += max_chars
        columns["shard_ids"] += shard_ids
        columns["has_mt"] += has_mt
        columns["mt_engine"] += [e if h else pd.NA for e, h in zip(engine, has_mt, strict=True)]
        columns["mt_manifest_hash"] += [
            m if h else pd.NA for m, h in zip(manifest, has_mt, strict=True)
        ]
        columns["source_lang"] += [s if h else pd.NA for s, h in zip(lang, has_mt, strict=True)]
        columns["seed_coercions"] += [pd.NA] * n
        columns["plan"] += self.plans
        extras += self.extras if any(self.extras) else [{}] * n


#: Types of an extra value orjson reads exactly as the exact path does: any other
#: (a float, an object, an array) may hold an integer beyond 64 bits, or nest deeply.
_PLAIN_EXTRA = frozenset((str, int, bool, type(None)))
_TOP_KEYS = tuple(_RECORD_KEYS)
_NO_EXTRAS: dict = {}


def read_bulk(
    values: list[Any], texts: list[bytes], lines: np.ndarray, source_file: str, guard: Any
) -> tuple[PlanPart | None, list[int]]:
    """The plan records among values parsed in bulk, as a part; the positions refused.

    A record is taken when it is in a producer shape (:func:`_record_fields`)
    and the exact path would give it no key note: its other keys are logger
    keys, none a likely typo of a record key, and a value among them that
    orjson might not read as the exact path does (see ``guard``) sends the
    record to the exact path. Everything refused is read value by value there.
    """
    part = PlanPart(source_file, lines)
    taken: list[int] = []
    refused: list[int] = []
    run_ids, recorded_hashes, all_fields = part.run_ids, part.recorded, part.fields
    plans, extras = part.plans, part.extras
    has_extras = False
    for position, value in enumerate(values):
        # _record_fields, inlined: this loop runs once per record of a file.
        recorded, run_id = value.get("retrieval_plan_hash"), value.get("run_id")
        plan = value.get("retrieval_plan")
        fields = producer_fields(plan)
        if (
            fields is None
            or type(recorded) is not str
            or (run_id is not None and type(run_id) is not str)
        ):
            refused.append(position)
            continue
        extra = _NO_EXTRAS
        if len(value) != 2 + ("run_id" in value):
            extra = _extra_keys(value)
            if _doubtful_extras(extra, texts[position], guard):
                refused.append(position)
                continue
            has_extras = True
        taken.append(position)
        run_ids.append(run_id)
        recorded_hashes.append(recorded)
        all_fields.append(fields)
        plans.append(plan)
        extras.append(extra)
    if not has_extras:
        part.extras = []
    if refused:
        part.lines = lines[np.asarray(taken, dtype=np.int64)]
    return part, refused


def _doubtful_extras(extra: dict, text: bytes, guard: Any) -> bool:
    """Whether a record's logger keys send it to the exact path."""
    for key in extra:
        if likely_typo(key, _TOP_KEYS) is not None:
            return True  # noted there as an unknown key
    if set(map(type, extra.values())) <= _PLAIN_EXTRA:
        return False
    return guard(text)
