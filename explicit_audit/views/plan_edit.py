"""The plan editor's view: an edited plan, checked as the seed's ``canonical()`` reads it.

An editor's controls hand over text as typed. arborist's ``canonical()`` runs
``int()`` on the three counts, keeps strings as written, and writes the ``mt``
block as soon as one MT field is a non-empty string, even one holding only a
space. :func:`plan_edit_view` hashes exactly what the seed would hash (through
:func:`~explicit_audit.views.plan_view`) and says, field by field, what the
seed would reject (an error: no hash), what it would change on the way
(``" 8 "`` hashed as 8), and what it accepts although it is likely a slip (a
negative count, a whitespace-only MT field, a repeated shard).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..plans.preview import PlanPreview, plan_view

__all__ = ["PlanEdit", "PlanMessage", "plan_edit_view"]

COUNT_FIELDS = ("top_k", "over_fetch", "max_context_chars")
MT_FIELDS = ("mt_engine", "mt_manifest_hash", "source_lang")
_LEVELS = ("error", "warning", "note")
_COLOURS = {"error": "#b00020", "warning": "#8a5a00", "note": "#30557a"}


@dataclass(frozen=True)
class PlanMessage:
    """One finding about one field of an edited plan.

    Attributes
    ----------
    field : str
        The plan field (``"top_k"``, ``"mt_manifest_hash"``, ...).
    level : {"error", "warning", "note"}
        ``error``: the seed would refuse the plan, so no hash is shown;
        ``warning``: the seed hashes it, but it is likely not what was meant;
        ``note``: the seed changes the value on the way to the hash.
    text : str
        What happens and why.
    """

    field: str
    level: str
    text: str

    def __str__(self) -> str:
        return f"{self.level}: {self.field}: {self.text}"


def visible(value: Any) -> str:
    """``repr`` of a value, with its whitespace named: ``"' ' (a single space)"``.

    Examples
    --------
    >>> from explicit_audit.views.plan_edit import visible
    >>> visible(" ")
    "' ' (whitespace only: 1 space)"
    >>> visible(" nllb")
    "' nllb' (leading whitespace: 1 space)"
    >>> visible("8")
    "'8'"
    """
    text = repr(value)
    if not isinstance(value, str) or not value or value.strip() == value:
        return text
    if not value.strip():
        return f"{text} (whitespace only: {_count_whitespace(value)})"
    parts = []
    leading = value[: len(value) - len(value.lstrip())]
    trailing = value[len(value.rstrip()) :]
    if leading:
        parts.append(f"leading whitespace: {_count_whitespace(leading)}")
    if trailing:
        parts.append(f"trailing whitespace: {_count_whitespace(trailing)}")
    return f"{text} ({'; '.join(parts)})"


def _count_whitespace(text: str) -> str:
    names = {" ": "space", "\t": "tab", "\n": "newline", "\r": "carriage return"}
    counts: dict[str, int] = {}
    for char in text:
        name = names.get(char, f"U+{ord(char):04X}")
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n} {name}{'s' if n > 1 else ''}" for name, n in counts.items())


@dataclass(frozen=True)
class PlanEdit:
    """An edited plan: the fields as typed, what the seed makes of them, and its hash.

    Attributes
    ----------
    preview : PlanPreview
        The canonical JSON and hashes of the plan the seed would hash
        (``preview.error`` set when it would refuse it).
    typed : dict
        Each field as the editor holds it (text as typed).
    messages : tuple of PlanMessage
        Errors first, then warnings, then notes.
    """

    preview: PlanPreview
    typed: dict[str, Any]
    messages: tuple[PlanMessage, ...]

    @property
    def plan_hash(self) -> str:
        """``retrieval_plan_hash`` of the plan, or ``""`` when the seed would refuse it."""
        return self.preview.plan_hash

    @property
    def canonical_json(self) -> str:
        """The text the hash is taken over."""
        return self.preview.canonical_json

    @property
    def pre_mt_hash(self) -> str:
        """The hash with every MT field empty."""
        return self.preview.pre_mt_hash

    @property
    def mt_block(self) -> bool:
        """Whether the canonical JSON carries the ``mt`` block."""
        return self.preview.mt_block

    @property
    def hash_unchanged_by_mt(self) -> bool:
        """True when the hash equals the pre-MT hash."""
        return self.preview.hash_unchanged_by_mt

    @property
    def error(self) -> str | None:
        """Why the seed would refuse the plan, if it would."""
        return self.preview.error

    def of_level(self, level: str) -> list[PlanMessage]:
        """The messages of one level (``"error"``, ``"warning"`` or ``"note"``)."""
        return [message for message in self.messages if message.level == level]

    def __repr__(self) -> str:
        lines = [str(message) for message in self.messages] or ["checks: nothing to report"]
        return "\n".join([*lines, repr(self.preview)])

    def _repr_html_(self) -> str:
        # pre-wrap: a value of three spaces reads as three, not as one.
        items = "".join(
            f"<li style='color:{_COLOURS[m.level]};white-space:pre-wrap'>"
            f"<strong>{m.level}</strong> "
            f"<code>{html.escape(m.field)}</code>: {html.escape(m.text)}</li>"
            for m in self.messages
        )
        checks = (
            f"<ul class='plan-checks'>{items}</ul>"
            if items
            else "<p class='plan-checks'>checks: nothing to report</p>"
        )
        typed = "".join(
            f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
            f"<td style='text-align:left;white-space:pre'><code>{html.escape(visible(value))}"
            "</code></td></tr>"
            for name, value in self.typed.items()
        )
        # The hash first: however many messages show, it stays where the eye is.
        return (
            f"{self.preview._repr_html_()}{checks}<table class='plan-typed'><caption "
            f"style='text-align:left'>as typed (Python repr)</caption>{typed}</table>"
        )


def _check_count(name: str, value: Any, was: Any, out: list[PlanMessage]) -> None:
    if isinstance(value, str):
        if not value.strip():
            what = "empty" if value == "" else f"only whitespace, {visible(value)}"
            out.append(
                PlanMessage(
                    name,
                    "error",
                    f"is {what}: the seed's int({value!r}) raises ValueError, so canonical() "
                    f"fails and there is no hash. Type a whole number (the dataclass default "
                    f"is 0; it was {was!r}).",
                )
            )
            return
        try:
            number = int(value)
        except ValueError:
            out.append(
                PlanMessage(
                    name,
                    "error",
                    f"{visible(value)} is not a whole number as int() reads text: the seed's "
                    "canonical() would raise ValueError, so there is no hash. Type digits only.",
                )
            )
            return
        if str(number) != value:
            out.append(
                PlanMessage(name, "note", f"typed {visible(value)}; int() reads it as {number}")
            )
    elif isinstance(value, bool) or not isinstance(value, int):
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError) as exc:
            out.append(
                PlanMessage(
                    name, "error", f"{value!r}: the seed's int() would raise {type(exc).__name__}"
                )
            )
            return
        out.append(PlanMessage(name, "note", f"{value!r} is hashed as {number} (int())"))
    else:
        number = value
    if number < 0:
        out.append(
            PlanMessage(
                name,
                "warning",
                f"{name} = {number} is negative. The seed hashes it without a word (int() "
                "keeps the sign), but no retrieval asks for a negative count: check the value.",
            )
        )


def _check_text(name: str, value: Any, was: Any, out: list[PlanMessage]) -> None:
    if not isinstance(value, str):
        state = "set" if value else "unset"
        out.append(
            PlanMessage(name, "note", f"{value!r} is not a string; the seed treats it as {state}")
        )
        return
    mt = name in MT_FIELDS
    if value == "" and isinstance(was, str) and was != "":
        effect = "the field is unset" if mt else 'hashed as ""'
        out.append(PlanMessage(name, "note", f"emptied (was {visible(was)}): {effect}"))
    elif value and not value.strip():
        effect = (
            "yet a non-empty string counts as set: canonical() writes the mt block and the "
            "hash moves off the pre-MT hash"
            if mt
            else "hashed as written, not as empty keywords"
        )
        out.append(PlanMessage(name, "warning", f"is {visible(value)}: {effect}"))
    elif value != value.strip():
        out.append(
            PlanMessage(
                name,
                "warning",
                f"is {visible(value)}: the seed hashes the whitespace as written, so the hash "
                f"differs from that of {value.strip()!r}",
            )
        )


def _check_shards(value: Any, out: list[PlanMessage]) -> list[str] | Any:
    if isinstance(value, str):
        parts = value.split(",")
        shards = [part.strip() for part in parts if part.strip()]
        if value != ", ".join(shards):
            out.append(
                PlanMessage(
                    "shard_ids",
                    "note",
                    f"typed {visible(value)}, read as {shards!r} (each id trimmed, empty "
                    "entries dropped)",
                )
            )
    else:
        shards = value
    if isinstance(shards, Sequence) and not isinstance(shards, str):
        seen: set[Any] = set()
        for shard in shards:
            try:
                repeated = shard in seen
                seen.add(shard)
            except TypeError:
                continue
            if repeated:
                out.append(
                    PlanMessage(
                        "shard_ids",
                        "warning",
                        f"{shard!r} appears more than once; canonical() keeps every repeat "
                        "(and the order), so the hash differs from the plan without it",
                    )
                )
    return shards


def plan_edit_view(
    plan: Mapping[str, Any] | str | None = None,
    *,
    retrieval_keywords: str | None = None,
    top_k: int | str | None = None,
    over_fetch: int | str | None = None,
    max_context_chars: int | str | None = None,
    shard_ids: str | Sequence[str] | None = None,
    mt_engine: str | None = None,
    mt_manifest_hash: str | None = None,
    source_lang: str | None = None,
) -> PlanEdit:
    """A plan after edits typed into an editor, checked as the seed's ``canonical()`` reads it.

    Parameters
    ----------
    plan : mapping or str, optional
        The plan to start from, in either written shape, as a mapping or its
        JSON text (a value of the ``plan`` column); the dataclass defaults
        when None.
    retrieval_keywords, mt_engine, mt_manifest_hash, source_lang : str, optional
        Replace the field when given; an empty string unsets an MT field.
    top_k, over_fetch, max_context_chars : int or str, optional
        Replace the count when given: a number, or text as typed, which the
        seed reads with ``int()`` (``" 8 "`` is 8; ``""`` and ``"8.0"`` are
        refused).
    shard_ids : str or sequence of str, optional
        The shards, as a list or one comma-separated string.

    Returns
    -------
    PlanEdit
        The preview of :func:`~explicit_audit.views.plan_view` for what the
        seed would hash, the fields as typed, and one message per error,
        warning and coercion.

    Examples
    --------
    >>> from explicit_audit.views import plan_edit_view
    >>> edit = plan_edit_view({"top_k": 8}, top_k="", mt_manifest_hash=" ")
    >>> [(m.field, m.level) for m in edit.messages]
    [('top_k', 'error'), ('mt_manifest_hash', 'warning'), ('mt', 'note')]
    >>> edit.plan_hash
    ''
    >>> plan_edit_view({"top_k": 8}, top_k="-3").of_level("warning")[0].field
    'top_k'
    """
    start = plan_view(plan)
    if start.error is not None and not start.fields:
        return PlanEdit(start, {}, (PlanMessage("plan", "error", start.error),))
    edits = {
        "retrieval_keywords": retrieval_keywords,
        "top_k": top_k,
        "over_fetch": over_fetch,
        "max_context_chars": max_context_chars,
        "shard_ids": shard_ids,
        "mt_engine": mt_engine,
        "mt_manifest_hash": mt_manifest_hash,
        "source_lang": source_lang,
    }
    was = start.fields
    typed = {name: was[name] if value is None else value for name, value in edits.items()}
    found: list[PlanMessage] = []
    keywords = "retrieval_keywords"
    _check_text(keywords, typed[keywords], was.get(keywords), found)
    for name in COUNT_FIELDS:
        _check_count(name, typed[name], was.get(name), found)
    shards = _check_shards(typed["shard_ids"], found)
    for name in MT_FIELDS:
        _check_text(name, typed[name], was.get(name), found)
    mt_values = [typed[name] for name in MT_FIELDS]
    if any(mt_values) and not all(mt_values):
        empty = [name for name in MT_FIELDS if not typed[name]]
        found.append(
            PlanMessage(
                "mt",
                "note",
                f"the mt block is written with {', '.join(empty)} empty (one set MT field "
                "is enough for the block)",
            )
        )
    preview = plan_view(plan, **{**typed, "shard_ids": shards})
    if preview.error is not None and not any(m.level == "error" for m in found):
        found.append(PlanMessage("plan", "error", preview.error))
    order = {level: rank for rank, level in enumerate(_LEVELS)}
    messages = tuple(sorted(found, key=lambda m: order[m.level]))
    return PlanEdit(preview, typed, messages)
