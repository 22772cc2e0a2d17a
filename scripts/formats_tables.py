"""Write the field tables of docs/formats.md from the record kinds' declared shapes.

Each table stands between ``<!-- fields NAME SHAPE -->`` and ``<!-- end fields -->``,
``NAME`` a name shapes are published under (``explicit-audit schema NAME``);
everything else in the document is left as written. ``tests/test_shape.py``
fails when a table differs from what this writes.

    python -m scripts.formats_tables          # rewrite docs/formats.md
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import explicit_audit  # noqa: F401  (registers the kit's kinds)
from explicit_audit._core import registry
from explicit_audit._core.shape import published
from explicit_audit._core.shape_table import markdown_table

FORMATS = Path(__file__).resolve().parent.parent / "docs" / "formats.md"

_TABLE = re.compile(r"(<!-- fields (\S+) (\S+) -->\n)(.*?)(<!-- end fields -->)", re.DOTALL)


def filled(text: str) -> str:
    """``text`` with every marked field table written anew from the declarations."""

    shapes = published(registry.kinds())

    def table(match: re.Match) -> str:
        kind, shape = match.group(2), match.group(3)
        found = [s for s in shapes.get(kind, ()) if s.name == shape]
        if not found:
            raise SystemExit(f"docs/formats.md names a shape {kind} {shape} that is not declared")
        return f"{match.group(1)}{markdown_table(found[0])}{match.group(5)}"

    return _TABLE.sub(table, text)


def main() -> int:
    text = FORMATS.read_text(encoding="utf-8")
    FORMATS.write_text(filled(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
