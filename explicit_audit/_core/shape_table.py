"""A shape's field table, as ``docs/formats.md`` shows it.

``scripts/formats_tables.py`` writes each table of the document from the
declared shapes (:mod:`explicit_audit._core.shape`), and a test compares
them, so that the document cannot drift from the declarations.
"""

from __future__ import annotations

from .shape import Field, Shape, is_map, walk

__all__ = ["markdown_table"]


def _type_text(field: Field) -> str:
    text = field.type
    if field.type == "array" and field.items is not None:
        text = f"array of {field.items.type}"
    if is_map(field):
        text = f"object of {field.items.type} by name"
    if field.values:
        text = " or ".join(f"`{value!r}`" if isinstance(value, str) else f"`{value}`"
                           for value in field.values)  # fmt: skip
    text += " or null" if field.nullable else ""
    if field.accepts:
        text += f" (accepted, noted: {' or '.join(field.accepts)})"
    return text


def _presence(field: Field) -> str:
    if field.has_default:
        default = "null" if field.default is None else repr(field.default)
        default = {"True": "true", "False": "false"}.get(default, default)
        return f"default `{default}`"
    return "required" if field.required else "optional"


def markdown_table(shape: Shape) -> str:
    """The field table of one shape, as ``docs/formats.md`` shows it (nested fields dotted)."""
    lines = ["| field | type | presence | meaning |", "|---|---|---|---|"]
    for path, field in walk(shape.fields):
        doc = field.doc.replace("|", "\\|")
        lines.append(f"| `{path}` | {_type_text(field)} | {_presence(field)} | {doc} |")
    return "\n".join(lines) + "\n"
