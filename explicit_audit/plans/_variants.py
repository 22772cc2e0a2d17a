"""Known ways a retrieval plan hash goes wrong, tried on a mismatching row.

When a recorded ``retrieval_plan_hash`` differs from the seed's hash of the
written plan, the plan was either changed after hashing, or hashed by a writer
that strays from the seed. The second kind is named here: each *content*
variant (what was hashed) is written by each *writer* (how it was written),
and the first pair whose digest equals the recorded one explains the row.
None matching means no known writer produced that hash from this plan: the
row was changed after hashing.

Content variants, in the order tried:

======================  ===============================================
code                    what was hashed
======================  ===============================================
(none)                  the seed's ``canonical()`` dict
``mt_block_empty``      the same with an ``mt`` block of empty strings
``mt_block_dropped``    the same without the ``mt`` block (a pre-MT writer)
``missing:<field>``     the same without one field
``keywords_nfc`` /      the keywords in Unicode form NFC / NFD (the text
``keywords_nfd``        was re-normalised after hashing)
``flat_shape``          the flat ``asdict`` shape instead of ``canonical()``
``written_as_is``       the written plan itself, no ``canonical()`` step
======================  ===============================================

Writers are the dialects of :mod:`explicit_audit.canonical`, the seed's own
(``python-ascii``) first.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from ..canonical import DIALECTS, PLAN_HASH_DIALECT, canonical_json
from ..errors import AuditError
from ._canonical import CORE_FIELDS, FLAT_MT_FIELDS, MT_KEYS, dataclass_fields, seed_canonical

__all__ = ["diagnose_plan", "diagnose_recorded_hash"]

_SEED_WRITER = PLAN_HASH_DIALECT
_WRITER_TEXT = {
    "python-ascii": "",
    "python-utf8": "non-ASCII written raw (ensure_ascii=False) instead of \\uXXXX escapes",
    "orjson-sorted": "orjson as the writer (sorted keys, non-ASCII raw)",
    "rfc8785": "RFC 8785 canonical JSON as the writer",
    "python-spaced": "json.dumps' default ', ' and ': ' separators",
    "unsorted-ascii": "keys left unsorted",
    "unsorted-utf8": "a JSON.stringify-style writer (keys unsorted, non-ASCII raw)",
}
_WRITERS = [_SEED_WRITER, *(name for name in DIALECTS if name != _SEED_WRITER)]


def _content_variants(plan: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    fields, shape, _missing = dataclass_fields(plan)
    canonical, _notes = seed_canonical(fields)
    yield "", "", canonical
    if "mt" not in canonical:
        with_block = dict(canonical, mt={"engine": "", "manifest_hash": "", "source_lang": ""})
        yield "mt_block_empty", "the MT block present though every MT field is empty", with_block
    else:
        without = {key: value for key, value in canonical.items() if key != "mt"}
        yield "mt_block_dropped", "the MT block left out though an MT field is set", without
    for name in CORE_FIELDS:
        without = {key: value for key, value in canonical.items() if key != name}
        yield f"missing:{name}", f"the field {name!r} left out", without
    if "mt" in canonical:
        for key in MT_KEYS:
            block = {k: v for k, v in canonical["mt"].items() if k != key}
            yield f"missing:mt.{key}", f"the field 'mt.{key}' left out", dict(canonical, mt=block)
    keywords = canonical["retrieval_keywords"]
    if isinstance(keywords, str):
        for form in ("NFC", "NFD"):
            normal = unicodedata.normalize(form, keywords)
            if normal != keywords:
                yield (
                    f"keywords_{form.lower()}",
                    f"the keywords hashed in Unicode form {form} and written in another form",
                    dict(canonical, retrieval_keywords=normal),
                )
    flat = {name: fields[name] for name in CORE_FIELDS}
    flat["shard_ids"] = canonical["shard_ids"]
    flat.update({name: fields[name] for name in FLAT_MT_FIELDS})
    yield "flat_shape", "the flat dataclass shape (asdict) hashed instead of canonical()", flat
    yield "written_as_is", f"the written {shape}-shape plan hashed as-is", dict(plan)


def diagnose_plan(plan: Mapping[str, Any], recorded: str) -> tuple[str, str] | None:
    """The first known variant whose digest equals ``recorded``.

    Parameters
    ----------
    plan : mapping
        The written plan (either shape).
    recorded : str
        The recorded hash (64 lowercase hex).

    Returns
    -------
    (code, description) or None
        ``code`` joins the content code and ``writer:<dialect>`` with ``+``;
        None when no known variant reproduces ``recorded``.
    """
    seen: set[bytes] = set()
    for content_code, content_text, content in _content_variants(plan):
        for writer in _WRITERS:
            try:
                text = canonical_json(content, writer)
            except AuditError:  # a writer that cannot write it is no match
                continue
            if text in seen:
                continue
            seen.add(text)
            if hashlib.sha256(text).hexdigest() != recorded:
                continue
            codes = [content_code] if content_code else []
            texts = [content_text] if content_text else []
            if writer != _SEED_WRITER:
                codes.append(f"writer:{writer}")
                texts.append(_WRITER_TEXT[writer])
            if not codes:
                return None
            return "+".join(codes), "recorded hash reproduced with " + "; ".join(texts)
    return None


def diagnose_recorded_hash(recorded: Any, rebuilt: str | None) -> tuple[str, str]:
    """Name what is wrong with a recorded hash that is not 64 lowercase hex.

    Returns
    -------
    (code, description)
    """
    if not isinstance(recorded, str):
        return "not_a_string", f"recorded hash is {type(recorded).__name__}, not a string"
    cleaned = recorded.strip().lower()
    if rebuilt is not None and cleaned == rebuilt:
        what = []
        if recorded.strip() != recorded:
            what.append("surrounding whitespace")
        if recorded.strip().lower() != recorded.strip():
            what.append("upper-case hex digits")
        return (
            "hash_format",
            "recorded hash is not 64 lowercase hex characters ("
            + " and ".join(what)
            + "); otherwise it matches",
        )
    return (
        "hash_format",
        f"recorded hash is not 64 lowercase hex characters ({len(recorded)} characters: "
        f"{recorded[:70]!r}) and does not match",
    )
