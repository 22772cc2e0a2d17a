"""The package's import graph: no cycles, and every import points down the layers."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "explicit_audit"

#: Each module's layer, by the first matching prefix of its dotted name. A module
#: imports only from its own layer's package or a lower layer; the four record
#: kinds share a layer and never import one another.
LAYERS = (
    ("errors", 0),
    ("_version", 0),
    ("_core", 1),
    ("canonical", 1),
    ("receipts", 2),
    ("plans", 2),
    ("requests", 2),
    ("decisions", 2),
    ("partitioned", 3),
    ("audit", 4),
    ("loading", 5),
    ("verify", 5),
    ("_plot_style", 5),
    ("plots", 6),
    ("views", 6),
    ("report", 6),
    ("widgets", 7),
    ("cli", 8),
    ("__init__", 9),
)
KINDS = ("receipts", "plans", "requests", "decisions")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> set[str]:
    """The package modules ``module`` imports, as dotted names inside the package."""
    return _imports_in(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")


@functools.cache
def _imports_in(source: str, module: str, is_package: bool) -> frozenset[str]:
    """As :func:`_imports`, from the module's text (parsed once per text: every test asks)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    if module == "__init__":
        package = []
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)]
            target = [*base, *(node.module.split(".") if node.module else [])]
            if node.module is None:
                found.update(".".join([*target, alias.name]) for alias in node.names)
            else:
                found.add(".".join(target))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("explicit_audit"):
            found.add(node.module.removeprefix("explicit_audit").lstrip(".") or "__init__")
    return frozenset(name or "__init__" for name in found)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {}
    for module, path in modules.items():
        targets = set()
        for name in _imports(path, module):
            # "pkg.name" may name a module or a name inside pkg/__init__.py.
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def _layer(module: str) -> tuple[str, int]:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return prefix, layer
    raise AssertionError(f"{module} is in no layer of LAYERS: add it")


def test_every_module_has_a_layer():
    for module in _graph():
        _layer(module)


@pytest.mark.parametrize("module", sorted(_graph()))
def test_imports_point_down_the_layers(module):
    home, layer = _layer(module)
    for target in _graph()[module]:
        other, other_layer = _layer(target)
        if other == home:
            continue
        assert other_layer < layer, f"{module} (layer {layer}) imports {target} ({other_layer})"


def test_record_kinds_never_import_audit_or_each_other():
    for module, targets in _graph().items():
        home, _ = _layer(module)
        if home not in KINDS:
            continue
        for target in targets:
            other, _ = _layer(target)
            assert other == home or other not in (*KINDS, "audit"), f"{module} imports {target}"


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycle = [*stack[stack.index(target) :], target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_the_checker_sees_a_cycle(tmp_path, monkeypatch):
    """The cycle test would fail on a package whose modules import each other."""
    package = tmp_path / "explicit_audit"
    (package / "receipts").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "receipts" / "__init__.py").write_text("from .a import x\n")
    (package / "receipts" / "a.py").write_text("from .b import y\nx = 1\n")
    (package / "receipts" / "b.py").write_text("from .a import x\ny = 2\n")
    (package / "audit.py").write_text("from .receipts import x\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    with pytest.raises(AssertionError, match="import cycle"):
        test_no_import_cycles()
    (package / "receipts" / "b.py").write_text("from ..audit import z\ny = 2\n")
    with pytest.raises(AssertionError, match="imports audit"):
        test_record_kinds_never_import_audit_or_each_other()
