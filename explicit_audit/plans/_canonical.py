"""arborist's ``RetrievalPlan.canonical()`` and ``retrieval_plan_hash``, mirrored.

A written plan comes in one of two shapes (``docs/formats.md`` section 2):

- canonical: the output of ``RetrievalPlan.canonical()``, with the MT fields
  in an ``mt`` object that is present only when an MT field is set;
- flat: ``dataclasses.asdict(plan)``, with ``mt_engine``, ``mt_manifest_hash``
  and ``source_lang`` as top-level keys.

Either is read back into the dataclass's eight fields, a missing field taking
the dataclass default, exactly as ``RetrievalPlan(**fields)`` would. The
canonical dict is then built with the seed's own expressions, so its coercions
hold here too: ``keywords or ""`` (None, ``false``, ``0`` become ``""``),
``int()`` on the three counts (``true`` is 1, ``8.9`` is 8, ``" 8 "`` is 8,
``"8.0"`` raises), ``list()`` on ``shard_ids`` (a string splits into its
characters, an object into its keys). Where the seed would raise, or where the
written plan is not a shape any producer writes (an unknown key, both the
``mt`` object and flat MT keys, ``mt`` not an object), :class:`PlanError` says
so and names the field.

Two routes give the same text. :func:`canonical_text` takes the fast route for
the shapes producers write (exact types, all fields present, see
:mod:`explicit_audit.plans._producer`): the canonical keys are fixed, so the
sorted text is formatted directly, each string escaped by the C encoder
``json.dumps`` itself uses with ``ensure_ascii=True`` (which writes astral
characters as surrogate pairs). Anything else takes the slow route: the
seed's dict, then the seed's ``json.dumps`` call. For a ``NaN``
inside the keywords (possible only from Python, never from a file) the seed
writes ``NaN`` and so does this module.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .._core.describe import short_repr
from .._core.shape import defaults
from ..errors import RecordError
from . import shape
from ._producer import producer_fields, producer_text

__all__ = [
    "CORE_FIELDS",
    "FLAT_MT_FIELDS",
    "MT_KEYS",
    "PlanError",
    "canonical_text",
    "dataclass_fields",
    "digest",
    "digests",
    "seed_canonical",
    "written_plan",
]

CORE_FIELDS = tuple(field.name for field in shape.CORE_FIELDS)
#: flat field name -> key inside the canonical ``mt`` object
FLAT_MT_FIELDS = {
    flat.name: field.name for flat, field in zip(shape.FLAT_MT_FIELDS, shape.MT_FIELDS, strict=True)
}
MT_KEYS = tuple(field.name for field in shape.MT_FIELDS)
# ``RetrievalPlan``'s defaults; a list one as a tuple, which no plan shares.
_DEFAULTS = {
    name: tuple(value) if isinstance(value, list) else value
    for name, value in defaults((*shape.CORE_FIELDS, *shape.FLAT_MT_FIELDS)).items()
}
_KNOWN_KEYS = frozenset(CORE_FIELDS) | frozenset(FLAT_MT_FIELDS) | {"mt"}
_sha256 = hashlib.sha256


#: A written plan the seed would not hash, or a shape no producer writes: the
#: kit's one "record does not fit" error, under the name the plans modules use.
PlanError = RecordError


def written_plan(plan: Any) -> Any:
    """A plan as the seed reads it: JSON text (the ``plan`` column) parsed by ``json.loads``.

    Any other value is returned as it is.

    Raises
    ------
    PlanError
        For text that is not JSON ``json.loads`` reads.
    """
    if not isinstance(plan, str):
        return plan
    try:
        return json.loads(plan)
    except (ValueError, RecursionError) as exc:
        raise PlanError("retrieval_plan", f"is text that is not JSON ({exc})") from None


def dataclass_fields(plan: Any) -> tuple[dict[str, Any], str, list[str]]:
    """Read a written plan back into ``RetrievalPlan``'s eight fields.

    Returns
    -------
    fields : dict
        Field name -> value as written (the dataclass default when missing).
    shape : {"canonical", "flat"}
        ``"flat"`` when any flat MT key is present.
    missing : list of str
        The fields that were not written.

    Raises
    ------
    PlanError
        For a plan that is not an object, an unknown key, a mixed shape, or an
        ``mt`` that is not an object.
    """
    if not isinstance(plan, Mapping):
        raise PlanError(
            "retrieval_plan", f"is {type(plan).__name__} {short_repr(plan)}, not an object"
        )
    unknown = [key for key in plan if key not in _KNOWN_KEYS]
    if unknown:
        raise PlanError(
            f"retrieval_plan.{unknown[0]}",
            "is not a field of arborist's RetrievalPlan, and canonical() would drop it from "
            "the hash, so the recorded hash cannot vouch for it",
        )
    flat_keys = [key for key in FLAT_MT_FIELDS if key in plan]
    if "mt" in plan and flat_keys:
        raise PlanError(
            "retrieval_plan.mt",
            f"the canonical 'mt' object and the flat key {flat_keys[0]!r} are both present; "
            "a producer writes one shape or the other",
        )
    fields = {name: plan[name] if name in plan else _DEFAULTS[name] for name in CORE_FIELDS}
    missing = [name for name in CORE_FIELDS if name not in plan]
    if "mt" in plan:
        block = plan["mt"]
        if not isinstance(block, Mapping):
            raise PlanError(
                "retrieval_plan.mt",
                f"is {type(block).__name__} {short_repr(block)}; canonical() writes an object "
                "or leaves the key out",
            )
        unknown = [key for key in block if key not in MT_KEYS]
        if unknown:
            raise PlanError(
                f"retrieval_plan.mt.{unknown[0]}",
                "is not one of engine, manifest_hash, source_lang",
            )
        for flat, key in FLAT_MT_FIELDS.items():
            fields[flat] = block[key] if key in block else ""
            if key not in block:
                missing.append(f"mt.{key}")
        return fields, "canonical", missing
    for flat in FLAT_MT_FIELDS:
        fields[flat] = plan[flat] if flat in plan else ""
        if flat_keys and flat not in plan:
            missing.append(flat)
    return fields, ("flat" if flat_keys else "canonical"), missing


def _as_int(name: str, value: Any, notes: list[str]) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PlanError(
            f"retrieval_plan.{name}",
            f"{short_repr(value)} is not accepted by int(); the seed's canonical() would raise "
            f"{type(exc).__name__} ({exc})",
        ) from None
    if type(value) is not int:
        notes.append(f"{name}: {short_repr(value)} -> {number} by int()")
    return number


def seed_canonical(fields: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``RetrievalPlan(**fields).canonical()``, with notes on each coercion made.

    Returns
    -------
    canonical : dict
        In the seed's insertion order.
    notes : list of str
        One line per value the seed's expressions changed.

    Raises
    ------
    PlanError
        Where the seed's ``int()`` or ``list()`` would raise.
    """
    notes: list[str] = []
    keywords = fields["retrieval_keywords"]
    if type(keywords) is not str:
        notes.append(
            f"retrieval_keywords: {short_repr(keywords)} is not a string; hashed as "
            f'{short_repr(keywords or "")} (the seed\'s `or ""`)'
        )
    out: dict[str, Any] = {"retrieval_keywords": keywords or ""}
    for name in ("top_k", "over_fetch", "max_context_chars"):
        out[name] = _as_int(name, fields[name], notes)
    shard_ids = fields["shard_ids"]
    try:
        out["shard_ids"] = list(shard_ids)
    except TypeError as exc:
        raise PlanError(
            "retrieval_plan.shard_ids",
            f"{short_repr(shard_ids)} is not accepted by list(); the seed's canonical() would "
            f"raise TypeError ({exc})",
        ) from None
    if not isinstance(shard_ids, list | tuple):
        notes.append(
            f"shard_ids: {short_repr(shard_ids)} -> {short_repr(out['shard_ids'])} by list()"
        )
    elif not set(map(type, shard_ids)) <= {str}:
        notes.append("shard_ids: holds values that are not strings; hashed as written")
    engine, manifest, lang = fields["mt_engine"], fields["mt_manifest_hash"], fields["source_lang"]
    for name in FLAT_MT_FIELDS:
        if type(fields[name]) is not str:
            state = "set" if fields[name] else "unset"
            notes.append(f"{name}: {short_repr(fields[name])} is not a string (counts as {state})")
    if engine or manifest or lang:
        out["mt"] = {
            "engine": engine or "",
            "manifest_hash": manifest or "",
            "source_lang": lang or "",
        }
    return out, notes


def _seed_dumps(canonical: dict[str, Any]) -> str:
    try:
        return json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise PlanError("retrieval_plan", f"the seed's json.dumps would raise ({exc})") from None


def digests(plans: Sequence[Any]) -> list[str | None]:
    """SHA-256 hex of each plan's canonical text; None where the seed would not hash it."""
    sha256 = _sha256
    fields = list(map(producer_fields, plans))
    out: list[str | None] = [
        None if found is None else sha256(producer_text(found).encode()).hexdigest()
        for found in fields
    ]
    for index in [i for i, found in enumerate(fields) if found is None]:
        try:
            out[index] = digest(plans[index])
        except PlanError:
            out[index] = None
    return out


def canonical_text(plan: Any) -> str:
    """The exact text the seed hashes for a written plan (either shape).

    Raises
    ------
    PlanError
        Where the seed would raise, or the plan is no producer's shape.
    """
    found = producer_fields(plan)
    if found is not None:
        return producer_text(found)
    fields, _shape, _missing = dataclass_fields(plan)
    canonical, _notes = seed_canonical(fields)
    return _seed_dumps(canonical)


def digest(plan: Any) -> str:
    """SHA-256 hex of :func:`canonical_text`, as ``retrieval_plan_hash`` computes it."""
    return _sha256(canonical_text(plan).encode("utf-8")).hexdigest()
