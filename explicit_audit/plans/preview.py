"""The plan editor's view: a retrieval plan, the text arborist hashes, and its hash.

:func:`plan_view` reads a written plan (either shape), applies the edits a
reader makes, and returns a :class:`PlanPreview`: the canonical JSON the seed's
``retrieval_plan_hash`` is taken over, that hash, and the hash the same plan
has with every MT field empty, so a reader sees that an unset MT block leaves
the pre-MT hash unchanged. Re-exported by :mod:`explicit_audit.views`.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import AuditError
from ._canonical import FLAT_MT_FIELDS, PlanError, canonical_text, dataclass_fields, written_plan
from .hashing import plan_hash

__all__ = ["PlanPreview", "plan_view"]

_PLAN_FIELDS = (
    "retrieval_keywords",
    "top_k",
    "over_fetch",
    "max_context_chars",
    "shard_ids",
    *FLAT_MT_FIELDS,
)


@dataclass(frozen=True)
class PlanPreview:
    """An edited retrieval plan, the text arborist hashes, and its hash.

    Attributes
    ----------
    fields : dict
        The plan's eight dataclass fields (flat shape), as edited.
    canonical_json : str
        The exact text ``retrieval_plan_hash`` is taken over.
    plan_hash : str
        ``retrieval_plan_hash`` of the plan.
    pre_mt_hash : str
        The hash of the same plan with every MT field empty (as before MT
        existed).
    mt_block : bool
        Whether the canonical JSON carries an ``mt`` block: only when an MT
        field is set, so a plan with every MT field empty keeps its pre-MT hash.
    error : str or None
        Why the plan cannot be hashed, if it cannot (then the other text
        attributes are empty).
    """

    fields: dict[str, Any]
    canonical_json: str
    plan_hash: str
    pre_mt_hash: str
    mt_block: bool
    error: str | None = field(default=None)

    @property
    def hash_unchanged_by_mt(self) -> bool:
        """True when the hash equals the pre-MT hash."""
        return self.error is None and self.plan_hash == self.pre_mt_hash

    def _rows(self) -> list[tuple[str, str]]:
        if self.error is not None:
            return [("error", self.error)]
        if self.mt_block:
            mt = "present (an MT field is set): the hash differs from the pre-MT hash"
        else:
            mt = "omitted (every MT field is empty): the hash equals the pre-MT hash"
        return [
            ("retrieval_plan_hash", self.plan_hash),
            ("canonical JSON", self.canonical_json),
            ("MT block", mt),
            ("pre-MT hash", self.pre_mt_hash),
            ("hash unchanged by MT", "yes" if self.hash_unchanged_by_mt else "no"),
        ]

    def __repr__(self) -> str:
        rows = self._rows()
        width = max(len(name) for name, _ in rows)
        return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
            f"<td style='text-align:left'><code>{html.escape(value)}</code></td></tr>"
            for name, value in self._rows()
        )
        return f"<table class='plan-preview'>{cells}</table>"


def _shards(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(part) for part in value]


def plan_view(
    plan: Mapping[str, Any] | str | None = None,
    *,
    retrieval_keywords: str | None = None,
    top_k: int | None = None,
    over_fetch: int | None = None,
    max_context_chars: int | None = None,
    shard_ids: str | Sequence[str] | None = None,
    mt_engine: str | None = None,
    mt_manifest_hash: str | None = None,
    source_lang: str | None = None,
) -> PlanPreview:
    """A plan's canonical JSON and ``retrieval_plan_hash``, after edits.

    Parameters
    ----------
    plan : mapping or str, optional
        The plan to start from, in either written shape: a mapping, or its
        JSON text (a value of the ``plan`` column), read as the seed reads
        it (``json.loads``); the dataclass defaults (empty keywords, zero
        counts, no shards, no MT) when None.
    retrieval_keywords, top_k, over_fetch, max_context_chars : optional
        Replace the plan's field when given.
    shard_ids : str or sequence of str, optional
        The shards, as a list or one comma-separated string.
    mt_engine, mt_manifest_hash, source_lang : str, optional
        The MT fields; an empty string unsets one.

    Returns
    -------
    PlanPreview
        Renders as a small table: hash, canonical JSON, whether the MT block
        is present, and the hash the plan has with no MT field set.

    Examples
    --------
    >>> from explicit_audit.views import plan_view
    >>> plain = plan_view(retrieval_keywords="budget", top_k=8)
    >>> plan_view(retrieval_keywords="budget", top_k=8, mt_engine="").plan_hash == plain.plan_hash
    True
    >>> plan_view(retrieval_keywords="budget", top_k=8, mt_engine="nllb").mt_block
    True
    """
    if plan is None:
        fields: dict[str, Any] = {}
    else:
        try:
            fields = dict(dataclass_fields(written_plan(plan))[0])
        except PlanError as exc:
            return PlanPreview({}, "", "", "", False, error=f"cannot read this plan: {exc}")
    edits = {
        "retrieval_keywords": retrieval_keywords,
        "top_k": top_k,
        "over_fetch": over_fetch,
        "max_context_chars": max_context_chars,
        "shard_ids": None if shard_ids is None else _shards(shard_ids),
        "mt_engine": mt_engine,
        "mt_manifest_hash": mt_manifest_hash,
        "source_lang": source_lang,
    }
    defaults = {"top_k": 0, "over_fetch": 0, "max_context_chars": 0, "shard_ids": []}
    flat = {
        name: edits[name] if edits[name] is not None else fields.get(name, defaults.get(name, ""))
        for name in _PLAN_FIELDS
    }
    flat["shard_ids"] = list(flat["shard_ids"])
    for name in ("retrieval_keywords", *FLAT_MT_FIELDS):
        flat[name] = "" if flat[name] is None else flat[name]
    pre_mt = dict(flat, **dict.fromkeys(FLAT_MT_FIELDS, ""))
    try:
        text = canonical_text(flat)
        digest, pre_mt_digest = plan_hash(flat), plan_hash(pre_mt)
    except AuditError as exc:  # the seed refuses the plan (PlanError is one): show why
        return PlanPreview(flat, "", "", "", False, error=str(exc))
    return PlanPreview(flat, text, digest, pre_mt_digest, '"mt":' in text)
