"""The plan shape producers write, recognised once, and its canonical text.

A written plan is in a *producer shape* when every field is written, each of
its exact type: text, whole numbers within 64 bits, a list of text, and
either no MT field, the ``mt`` object of three texts (canonical shape) or
the three flat MT keys (flat shape), and no other key. The seed's
``canonical()`` then changes nothing and takes no default: its canonical
dict, and so its text, follows from the fields alone, and the loader's row
holds them as they are. :func:`producer_fields` is the one test of that
shape: the loader's rows (value by value and in bulk) and the hashes
(:func:`explicit_audit.plans._canonical.digests`) both read it. Anything
else goes the seed's way (:mod:`explicit_audit.plans._canonical`).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .._core.columns import INT64_MAX as _INT64_MAX
from .._core.columns import INT64_MIN as _INT64_MIN

__all__ = ["ProducerFields", "producer_fields", "producer_text"]

_escape = json.encoder.encode_basestring_ascii
_new = tuple.__new__


class ProducerFields(NamedTuple):
    """A plan in a producer shape, field by field (the MT fields ``""`` when unset)."""

    keywords: str
    top_k: int
    over_fetch: int
    max_context_chars: int
    shard_ids: list
    engine: str
    manifest_hash: str
    source_lang: str
    shape: str
    """``"canonical"`` or ``"flat"``."""

    @property
    def has_mt(self) -> bool:
        """Whether the canonical dict holds an MT block (an MT field is set)."""
        return bool(self.engine or self.manifest_hash or self.source_lang)


def producer_fields(plan: Any) -> ProducerFields | None:
    """The fields of a plan in a producer shape (see the module docstring), or None.

    Examples
    --------
    >>> producer_fields({"retrieval_keywords": "k", "top_k": 8, "over_fetch": 2,
    ...                  "max_context_chars": 12000, "shard_ids": ["s1"]}).shape
    'canonical'
    >>> producer_fields({"retrieval_keywords": "k", "top_k": "8", "over_fetch": 2,
    ...                  "max_context_chars": 12000, "shard_ids": ["s1"]}) is None
    True
    """
    if type(plan) is not dict:
        return None
    # Subscripts, not dict.get: a missing key is rare and costs an exception,
    # where a method call would cost every plan.
    try:
        keywords, top_k = plan["retrieval_keywords"], plan["top_k"]
        over_fetch, max_chars = plan["over_fetch"], plan["max_context_chars"]
        shard_ids = plan["shard_ids"]
        if (
            type(keywords) is not str
            or type(top_k) is not int
            or type(over_fetch) is not int
            or type(max_chars) is not int
            or type(shard_ids) is not list
            or not _INT64_MIN <= top_k <= _INT64_MAX
            or not _INT64_MIN <= over_fetch <= _INT64_MAX
            or not _INT64_MIN <= max_chars <= _INT64_MAX
        ):
            return None
        # Five fields present: the size tells whether the rest is nothing, ``mt``
        # or the three flat keys.
        size = len(plan)
        if size == 5:
            engine = manifest = lang = ""
            shape = "canonical"
        elif size == 6:
            block = plan["mt"]
            if type(block) is not dict or len(block) != 3:
                return None
            engine, manifest, lang = block["engine"], block["manifest_hash"], block["source_lang"]
            shape = "canonical"
        elif size == 8:
            engine, manifest = plan["mt_engine"], plan["mt_manifest_hash"]
            lang = plan["source_lang"]
            shape = "flat"
        else:
            return None
    except KeyError:
        return None
    if type(engine) is not str or type(manifest) is not str or type(lang) is not str:
        return None
    for shard in shard_ids:
        if type(shard) is not str:
            return None
    # tuple.__new__ in C: a named tuple's own constructor is a Python call per plan.
    return _new(
        ProducerFields,
        (keywords, top_k, over_fetch, max_chars, shard_ids, engine, manifest, lang, shape),
    )


# Escaped pieces that recur from plan to plan (shard sets, MT engines), keyed
# by the tuple of strings they were made from. A key holds strings only (the
# fields are of exact types), so a lookup cannot return another value's text.
_SHARD_TEXT: dict[tuple, str] = {}
_MT_PIECE: dict[tuple, str] = {}
_CACHE_LIMIT = 1 << 16


def producer_text(fields: ProducerFields) -> str:
    """The text the seed hashes for a plan in a producer shape, byte for byte.

    ``json.dumps(canonical, sort_keys=True, separators=(",", ":"))``: the
    canonical keys are fixed, so the sorted text is formatted directly, each
    string escaped by the encoder ``json.dumps`` itself uses with
    ``ensure_ascii=True`` (astral characters as surrogate pairs).
    """
    if fields.engine or fields.manifest_hash or fields.source_lang:
        key = (fields.engine, fields.manifest_hash, fields.source_lang)
        mt = _MT_PIECE.get(key)
        if mt is None:
            mt = (
                f'"mt":{{"engine":{_escape(key[0])},"manifest_hash":{_escape(key[1])},'
                f'"source_lang":{_escape(key[2])}}},'
            )
            if len(_MT_PIECE) < _CACHE_LIMIT:
                _MT_PIECE[key] = mt
    else:
        mt = ""
    key = tuple(fields.shard_ids)
    shards = _SHARD_TEXT.get(key)
    if shards is None:
        shards = ",".join(map(_escape, key))
        if len(_SHARD_TEXT) < _CACHE_LIMIT:
            _SHARD_TEXT[key] = shards
    return (
        f'{{"max_context_chars":{fields.max_context_chars},{mt}"over_fetch":{fields.over_fetch},'
        f'"retrieval_keywords":{_escape(fields.keywords)},"shard_ids":[{shards}],'
        f'"top_k":{fields.top_k}}}'
    )
