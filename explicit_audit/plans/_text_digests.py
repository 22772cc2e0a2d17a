"""``retrieval_plan_hash`` rebuilt from plans kept as JSON text, column by column.

The ``plan`` column holds each plan as JSON text. Texts are parsed by Arrow
in runs; a plan whose five core fields are written, each of the type Arrow's
schema holds it to, in one shape, has its canonical text written column by
column, as
``json.dumps(canonical, sort_keys=True, separators=(",", ":"))`` writes it
(see :mod:`explicit_audit.plans._json_text`). Any other text, and every text
of a run Arrow refuses, is read one by one as the seed reads it (orjson where
it reads exactly as ``json.loads`` does, ``json.loads`` itself otherwise) and
hashed by :func:`~explicit_audit.plans._canonical.digest`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import NamedTuple

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from .._core.overlap import THREADS, each
from ..reading.memory import hand_back_pooled
from ._arrow import PLAN_TYPE, any_of, mt_set, rows_holding
from ._canonical import PlanError, digest
from ._json_text import join_texts, quoted_lists, quoted_repeated, quoted_strings
from ._producer import producer_fields, producer_text

__all__ = ["text_digests"]

_PLAN = pa.schema(list(PLAN_TYPE))
_PARSE = pa_json.ParseOptions(explicit_schema=_PLAN, unexpected_field_behavior="error")
#: Texts parsed together: a run's parse, texts and digests are let go before the next.
_RUN = 1 << 14
#: Searched for one at a time: a pattern with one literal is searched for fast.
_NULL, _LINE_END = re.compile(rb"null"), re.compile(rb"\n")


def text_digests(texts: pa.Array | pa.ChunkedArray, threads: int = THREADS) -> list[str | None]:
    """SHA-256 hex of each plan text's canonical text; None where the seed would not hash it.

    Parameters
    ----------
    texts : pyarrow string or large string array, or chunked array
        Plans as JSON text (the ``plan`` column); a null is no plan.
    threads : int
        Runs of texts parsed and hashed at once (Arrow's parse and kernels
        release the interpreter's lock). The digests are the same for any
        number.

    Returns
    -------
    list of (str or None)
        What :func:`~explicit_audit.plans._canonical.digest` gives for the
        value ``json.loads`` reads from each text, or None where it raises
        or the text is not JSON.
    """
    chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    # 64-bit offsets, so that one run's joined texts may pass 2 GiB; chunk by chunk,
    # so that their texts are not copied.
    chunks = [chunk.cast(pa.large_string()) for chunk in chunks]
    outs = [np.full(len(chunk), None, dtype=object) for chunk in chunks]
    left: list[list[np.ndarray]] = [[] for _ in chunks]
    runs = []
    for at, chunk in enumerate(chunks):
        # Arrow reads ``"mt": null`` as a key left out: a text holding a ``null`` is read
        # one by one, as is a null, and a text not between braces (see :func:`_parse`).
        braced = pc.and_(pc.starts_with(chunk, "{"), pc.ends_with(chunk, "}"))
        braced = pc.fill_null(braced, False).to_numpy(zero_copy_only=False)
        doubtful = _holding(chunk, _NULL) | ~braced
        several_lines = _holding(chunk, _LINE_END)
        left[at].append(np.flatnonzero(doubtful))
        rows = np.flatnonzero(~doubtful)
        for start in range(0, len(rows), _RUN):
            run = rows[start : start + _RUN]
            runs.append(_Run(at, run, bool(several_lines[run].any())))
    for run, digested in _digested_runs(chunks, runs, threads):
        if digested is None:
            left[run.chunk].append(run.rows)
            continue
        found, digests = digested
        if len(found):
            outs[run.chunk][run.rows[found]] = digests
        taken = np.zeros(len(run.rows), dtype=bool)
        taken[found] = True
        left[run.chunk].append(run.rows[~taken])
    for chunk, out, rows in zip(chunks, outs, left, strict=True):
        rows = np.sort(np.concatenate(rows))
        if len(rows):
            out[rows] = _read_one_by_one(chunk, rows)
    return [digest_ for out in outs for digest_ in out.tolist()]


#: Batches of runs between two hand-backs of what their kernels freed.
_HAND_BACK_EVERY = 4


class _Run(NamedTuple):
    """Texts parsed together: their chunk, their rows in it, whether one has several lines."""

    chunk: int
    rows: np.ndarray
    several_lines: bool


def _digested_runs(chunks: list[pa.Array], runs: list[_Run], threads: int):
    """``(run, digested)`` for each run of texts parsed by Arrow, ``threads`` runs at once.

    ``digested`` is what :func:`_canonical_digests` finds in the run's parse,
    or None for a run Arrow refuses. Runs keep what a parse holds at once
    small. Two runs refused in a row, in the order of the texts, say the
    texts Arrow refuses are spread through them: the rest are then left to
    be read one by one, without a parse.
    """

    def digested(run: _Run) -> tuple[np.ndarray, list[str]] | None:
        table = _parse(chunks[run.chunk], run.rows, run.several_lines)
        return None if table is None else _canonical_digests(table)

    step = max(threads, 1)
    refused_in_a_row = 0
    for number, start in enumerate(range(0, len(runs), step)):
        batch = runs[start : start + step]
        if refused_in_a_row >= 2:
            results = [None] * len(batch)
        else:
            results = each(digested, batch, threads)
        # What the runs' kernels freed is handed back after every fourth batch: kept, it
        # grew the peak of 200k plans by a fifth; handed back after each batch, the
        # next runs faulted it in again, 8% slower (peak 3.0-3.4 times the file, against
        # 3.3-3.5 so, and 4.2 kept).
        if number % _HAND_BACK_EVERY == _HAND_BACK_EVERY - 1:
            hand_back_pooled()
        for run, result in zip(batch, results, strict=True):
            refused_in_a_row = refused_in_a_row + 1 if result is None else 0
            yield run, result


def _holding(texts: pa.Array, pattern: re.Pattern) -> np.ndarray:
    """Per text: whether it holds ``pattern`` (one search of all their bytes)."""
    _, offsets, data = texts.buffers()
    if data is None:
        return np.zeros(len(texts), dtype=bool)
    bounds = np.frombuffer(offsets, dtype=np.int64)[texts.offset : texts.offset + len(texts) + 1]
    view = memoryview(data)[bounds[0] : bounds[-1]]
    return rows_holding(view, bounds[:-1] - bounds[0], pattern)


def _read_one_by_one(texts: pa.Array, rows: np.ndarray) -> list[str | None]:
    """The seed's hash of the plan ``json.loads`` reads from each text at ``rows``, or None.

    orjson reads each text first. A value it reads in a producer shape
    (:func:`~explicit_audit.plans._producer.producer_fields`: every field of
    its exact type, integers within 64 bits, no other key) is the value
    ``json.loads`` reads, since orjson and ``json.loads`` differ only on
    integers beyond 64 bits (orjson makes them floats) and on what orjson
    refuses; any other text is read by ``json.loads`` and hashed the seed's
    way (:func:`~explicit_audit.plans._canonical.digest`).
    """
    out: list[str | None] = []
    sha256 = hashlib.sha256
    for text in pc.take(texts, pa.array(rows)).to_pylist():
        if text is None:
            out.append(None)
            continue
        try:
            fields = producer_fields(orjson.loads(text))
        except orjson.JSONDecodeError:
            fields = None
        if fields is not None:
            out.append(sha256(producer_text(fields).encode()).hexdigest())
            continue
        try:
            out.append(digest(json.loads(text)))
        except (ValueError, RecursionError, PlanError):  # not JSON, or not hashable
            out.append(None)
    return out


def _joined(texts: pa.Array) -> pa.Buffer:
    """The texts, each followed by a line end, as one buffer, read without a copy."""
    joined = join_texts(texts, pa.scalar("\n", texts.type), separator=pa.scalar("", texts.type))
    _, offsets, data = joined.buffers()
    if data is None:  # every text null
        return pa.py_buffer(b"")
    bounds = np.frombuffer(offsets, dtype=np.int64)[joined.offset : joined.offset + len(joined) + 1]
    start = int(bounds[0])
    return data.slice(start, int(bounds[-1]) - start)


def _parse(texts: pa.Array, rows: np.ndarray, several_lines: bool) -> pa.Table | None:
    """The texts at ``rows`` parsed by Arrow, one row each; None where Arrow refuses.

    The texts go one per line, and each starts with ``{`` and ends with ``}``:
    then no value runs from one text into the next (after a closing brace, a
    value goes on only with a comma or another closing brace, and a raw line
    end is refused inside a string), so each text gives at least one row,
    and as many rows as texts is one row per text. A text of two values, or
    an unfinished one that a neighbour would close, is thus never read as
    another's row.

    A text of several lines (a plan from a pretty-printed log) is parsed with
    its line ends as tabs: outside a string both are white space, and inside
    one Arrow refuses a raw tab as ``json.loads`` refuses a raw line end.
    """
    if not len(rows):
        return None
    chosen = pc.take(texts, pa.array(rows))
    if several_lines:
        chosen = pc.replace_substring(chosen, "\n", "\t")
    buffer = _joined(chosen)
    try:
        table = pa_json.read_json(
            pa.BufferReader(buffer), parse_options=_PARSE, memory_pool=pa.system_memory_pool()
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return table if table.num_rows == len(rows) else None


def _canonical_digests(table: pa.Table) -> tuple[np.ndarray, list[str]]:
    """The rows of ``table`` whose canonical text follows from Arrow's columns, and their digests.

    A row is taken when the five core fields are written (each of the type
    Arrow's schema holds it to) and not both the ``mt`` object and a flat MT
    key: then the seed's ``canonical()`` takes no default for a core field
    and raises nothing. An MT text left out reads as ``""``, as the seed's
    dataclass default does (the texts hold no ``null``, see :func:`text_digests`).
    """
    column = table.column
    core = [column(name) for name in ("retrieval_keywords", "top_k", "over_fetch")]
    core += [column("max_context_chars"), column("shard_ids")]
    mt = column("mt")
    in_mt = [pc.struct_field(mt, name) for name in ("engine", "manifest_hash", "source_lang")]
    flat = [column(name) for name in ("mt_engine", "mt_manifest_hash", "source_lang")]
    has_block, flat_set = pc.is_valid(mt), [pc.is_valid(c) for c in flat]
    any_flat = any_of(flat_set)
    ok = pc.invert(pc.and_(any_flat, has_block))
    for part in core:
        ok = pc.and_(ok, pc.is_valid(part))
    found = np.flatnonzero(ok.to_numpy(zero_copy_only=False))
    if not len(found):
        return found, []
    # One chunk per column: Arrow joins texts of unlike chunks far slower.
    take = None if len(found) == table.num_rows else pa.array(found)

    def rows_found(column) -> pa.Array:
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        return column if take is None else pc.take(column, take)

    keywords, top_k, over_fetch, max_chars, shard_ids = map(rows_found, core)
    engine, manifest, lang = (
        pc.fill_null(rows_found(pc.if_else(any_flat, f, b)), "")
        for f, b in zip(flat, in_mt, strict=True)
    )
    has_mt = mt_set(engine, manifest, lang)
    block = join_texts(
        '"mt":{"engine":',
        quoted_repeated(engine, ensure_ascii=True),
        ',"manifest_hash":',
        quoted_repeated(manifest, ensure_ascii=True),
        ',"source_lang":',
        quoted_repeated(lang, ensure_ascii=True),
        "},",
    )
    canonical = join_texts(
        '{"max_context_chars":',
        pc.cast(max_chars, pa.string()),
        ",",
        pc.if_else(has_mt, block, ""),
        '"over_fetch":',
        pc.cast(over_fetch, pa.string()),
        ',"retrieval_keywords":',
        quoted_strings(keywords, ensure_ascii=True),
        ',"shard_ids":',
        quoted_lists(shard_ids, ensure_ascii=True),
        ',"top_k":',
        pc.cast(top_k, pa.string()),
        "}",
    )
    sha256 = hashlib.sha256
    texts = pc.cast(canonical, pa.binary()).to_pylist()
    return found, [sha256(text).hexdigest() for text in texts]
