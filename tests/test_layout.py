"""The package's import graph: no cycles, and every import points down the layers."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "explicit_audit"

#: The layer of every record kind's package (found by :func:`_kind_packages`).
KIND_LAYER = 3

#: Each module's layer, by the first matching prefix of its dotted name. A module
#: imports only from its own layer's package or a lower layer; the four record
#: kinds share a layer and never import one another.
LAYERS = (
    ("errors", 0),
    ("_version", 0),
    ("_core", 1),
    ("reading", 2),
    ("canonical", 1),
    ("partitioned", 4),
    ("audit", 5),
    ("loading", 6),
    ("_parquet_checks", 3),
    ("parquet", 4),
    ("_cache_seal", 4),
    ("cache", 5),
    ("plugins", 3),
    ("verify", 6),
    ("verdicts", 7),
    ("_plot_style", 6),
    ("plots", 7),
    ("views", 7),
    ("report", 7),
    ("widgets", 8),
    ("cli", 9),
    ("__init__", 10),
)


def _kind_packages() -> tuple[str, ...]:
    """The packages that declare a registered record kind (each in its ``kind.py``)."""
    from explicit_audit._core import registry

    found = {tuple(kind.build.__module__.split(".")) for kind in registry.kinds()}
    return tuple(sorted(parts[1] for parts in found if parts[0] == "explicit_audit"))


#: Every kind package shares one layer; it is found from the registry, so that a
#: new kind's package needs no line here.
KINDS = _kind_packages()


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
    for kind in KINDS:
        if module == kind or module.startswith(kind + "."):
            return kind, KIND_LAYER
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


#: The modules above the kinds that every kind plugs into: none names a kind.
KIND_AGNOSTIC = (
    "_core",
    "reading",
    "audit",
    "cache",
    "loading",
    "parquet",
    "verify",
    "verdicts",
    "cli",
    "partitioned",
)


def test_the_engine_switch_lives_in_one_module():
    found = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if "is_partitioned(" in path.read_text(encoding="utf-8")
    )
    assert found == ["_core/engine.py"]


def test_no_module_a_kind_plugs_into_imports_a_kind():
    for module, targets in _graph().items():
        home, _ = _layer(module)
        if home not in KIND_AGNOSTIC:
            continue
        for target in targets:
            assert _layer(target)[0] not in KINDS, f"{module} imports {target}"


def test_verify_names_no_record_kind_and_no_check_function():
    import explicit_audit as ea
    from explicit_audit._core import registry

    text = (PACKAGE / "verify.py").read_text(encoding="utf-8")
    for kind in registry.kinds():
        for name in (kind.name, *kind.table_names):
            assert f'"{name}"' not in text and f"'{name}'" not in text, name
        for checker in kind.checks:
            assert checker.run.__name__ not in text, checker.run.__name__
    for name in ea.__all__:
        if name.startswith("check_"):
            assert name not in text, name


def test_the_in_memory_load_imports_no_module_of_the_dask_engine():
    code = (
        "import sys, warnings\n"
        "import explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "ea.verify_all(ea.load('data', progress=False))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('explicit_audit.partitioned.', "
        "'dask'))))\n"
    )
    import subprocess
    import sys

    finished = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
        check=True,
        timeout=120,
    )
    loaded = ast.literal_eval(finished.stdout)
    assert not [name for name in loaded if name.startswith("dask")], loaded
    assert set(loaded) <= {
        "explicit_audit.partitioned.results",
        "explicit_audit.partitioned.scheduler",
    }
    assert not [t for t in _graph()["audit"] if t.startswith("partitioned")]
