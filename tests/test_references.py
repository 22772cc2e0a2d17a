"""Every ``explicit_audit.*`` name the docs and docstrings mention resolves to a real object."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from explicit_audit._core.registry import ENTRY_POINT_GROUP
from explicit_audit.verdicts.formats import ENTRY_POINT_GROUP as FORMATS_GROUP

ROOT = Path(__file__).resolve().parent.parent
# Not after a dot: ``metadata.explicit_audit.tables`` is a notebook metadata key.
_NAME = re.compile(r"(?<![\w.])explicit_audit(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: Names that are not Python objects: a template file, the plug-in entry point groups.
_NOT_OBJECTS = {"explicit_audit.html.j2", ENTRY_POINT_GROUP, FORMATS_GROUP}
SOURCES = sorted(
    [*(ROOT / "explicit_audit").rglob("*.py"), ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for name in parts[split:]:
                found = getattr(found, name)
        except AttributeError:
            return False
        return True
    return False


def _references() -> list[tuple[str, str]]:
    found = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for name in sorted(set(_NAME.findall(text)) - _NOT_OBJECTS):
            found.append((str(path.relative_to(ROOT)), name))
    return found


def test_the_references_are_many():
    assert len(_references()) > 50


@pytest.mark.parametrize(("where", "name"), _references())
def test_every_reference_resolves(where, name):
    assert _resolves(name), f"{where} names {name}, which does not exist"
