"""The package's import graph: no cycles, and every import points down the layers."""

from __future__ import annotations

import ast
import functools
import shutil
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
    ("small_files", 2.5),  # files read whole beside the logs: a baseline, a policy, a notebook
    ("canonical", 1),
    ("partitioned", 4),
    ("audit", 5),
    ("loading", 6),
    ("_parquet_checks", 3),
    ("parquet", 4),
    ("_cache_seal", 4),
    ("cache", 5),
    ("state", 5.5),  # above the cache and the audit it writes and joins; below loading
    ("plugins", 3),
    ("verify", 6),
    ("verdicts", 7),
    ("_plot_style", 6),
    ("trends", 7),
    ("plots", 7),
    ("views", 7),
    ("report", 7.5),  # a report shows a verdict: above verdicts
    ("saved_panels", 1),
    ("widgets", 8),
    ("cli", 9),
    ("__init__", 10),
    ("__main__", 10),
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


#: Where the engines may be told apart: the engine switch, and the Dask engine itself.
ENGINE_HOMES = ("_core/engine.py", "partitioned/")
#: The packages of the Dask engine: imported only in :data:`ENGINE_HOMES`.
DASK_PACKAGES = ("dask", "dask_expr", "distributed")


def _engine_names() -> set[str]:
    from explicit_audit.reading.options import ENGINES

    return set(ENGINES)


def _names_engine(node: ast.AST, engines: set[str]) -> bool:
    """Whether ``node`` is an engine's name, or a tuple, list or set holding one."""
    if isinstance(node, ast.Constant):
        return node.value in engines
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_engine(item, engines) for item in node.elts)
    return False


def _is_dask_module(name: str | None) -> bool:
    return (name or "").split(".")[0] in DASK_PACKAGES


def _dask_names(tree: ast.AST) -> set[str]:
    """The names a module binds by importing Dask (``dd`` of ``import dask.dataframe as dd``)."""
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_dask_module(alias.name):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and not node.level and _is_dask_module(node.module):
            bound.update(alias.asname or alias.name for alias in node.names)
    return bound


def _engine_branches(source: str) -> list[str]:
    """Where ``source`` tells the engines apart, by meaning: ``line: what``.

    A comparison with an engine's name (``engine == "dask"``, ``"dask" != e``,
    ``engine in ("pandas", "dask")``), a ``case "dask":``, an import of Dask
    (``import dask``, ``from dask import ...``, ``import distributed``,
    ``importlib.import_module("dask")``), an ``isinstance`` against a Dask type,
    and a Dask detector by module name (``....startswith("dask")``).
    """
    tree = ast.parse(source)
    engines = _engine_names()
    dask_names = _dask_names(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            if any(_names_engine(side, engines) for side in (node.left, *node.comparators)):
                found.append(f"{line}: compares with an engine's name")
        elif isinstance(node, ast.match_case):
            patterns = [p for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
            if any(_names_engine(p.value, engines) for p in patterns):
                found.append(f"{node.pattern.lineno}: matches an engine's name")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                modules = [node.module]
            if any(_is_dask_module(module) for module in modules):
                found.append(f"{line}: imports Dask")
        elif isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            texts = [text for text in texts if isinstance(text, str)]
            if func.endswith(("import_module", "__import__")) and any(map(_is_dask_module, texts)):
                found.append(f"{line}: imports Dask")
            elif func.endswith("startswith") and any(map(_is_dask_module, texts)):
                found.append(f"{line}: detects Dask by a module's name")
            elif func in ("isinstance", "issubclass") and len(node.args) == 2:
                against = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if against & dask_names or "dask" in ast.unparse(node.args[1]).lower():
                    found.append(f"{line}: {func} against a Dask type")
    return sorted(found, key=lambda text: int(text.split(":")[0]))


def test_the_engine_switch_lives_in_one_module():
    """Only the engine switch and the Dask engine tell the engines apart (by meaning)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith(ENGINE_HOMES):
            continue
        branches = _engine_branches(path.read_text(encoding="utf-8"))
        if branches:
            found[name] = branches
    assert not found, f"the engines told apart outside {', '.join(ENGINE_HOMES)}: {found}"


@pytest.mark.parametrize(
    "planted",
    [
        'if engine == "dask":\n    pass',
        'if "dask" != engine:\n    pass',
        'lazy = options["engine"] in ("pandas", "dask")',
        'match engine:\n    case "dask":\n        pass',
        "import dask",
        "import dask.dataframe as dd\nlazy = isinstance(frame, dd.DataFrame)",
        "from dask import delayed",
        "from distributed import Client",
        'lazy = type(frame).__module__.startswith("dask.")',
        'module = importlib.import_module("dask.dataframe")',
    ],
)
def test_the_engine_check_sees_a_branch_by_meaning(planted):
    assert _engine_branches(planted)
    other = planted.replace("dask", "numpy").replace("distributed", "numpy")
    assert not _engine_branches(other.replace('"pandas", ', ""))


def test_the_engine_check_fails_on_a_branch_planted_in_audit(tmp_path, monkeypatch):
    """A copy of the package with ``if engine == "dask"`` in audit.py fails the check."""
    package = tmp_path / "explicit_audit"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    test_the_engine_switch_lives_in_one_module()
    audit = package / "audit.py"
    planted = '\n\ndef _planted(engine):\n    if engine == "dask":\n        return 1\n'
    audit.write_text(audit.read_text(encoding="utf-8") + planted, encoding="utf-8")
    with pytest.raises(AssertionError, match=r"audit\.py.*compares with an engine's name"):
        test_the_engine_switch_lives_in_one_module()


def test_no_module_a_kind_plugs_into_imports_a_kind():
    for module, targets in _graph().items():
        home, _ = _layer(module)
        if home not in KIND_AGNOSTIC:
            continue
        for target in targets:
            assert _layer(target)[0] not in KINDS, f"{module} imports {target}"


#: The modules that name no record kind, table, document or check: those every kind
#: plugs into, and the reports.
NAME_FREE = (*KIND_AGNOSTIC, "report")


def _kind_names() -> tuple[set[str], set[str]]:
    """Every registered kind's name, tables and documents; and its check functions."""
    import explicit_audit as ea
    from explicit_audit._core import registry

    names = {declared.name for declared in registry.documents()}
    functions = {name for name in ea.__all__ if name.startswith("check_")}
    for kind in registry.kinds():
        names.update((kind.name, *kind.table_names))
        functions.update(checker.run.__name__ for checker in kind.checks)
    return names, functions


def _kinds_named(source: str, names: set[str], functions: set[str]) -> list[str]:
    """Where ``source`` names a kind, table or document (as a string or an attribute:
    ``"receipts"``, ``audit.policies``) or a check function (``check_plan_hashes``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append(f"{node.lineno}: {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in names | functions:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in functions:
            found.append(f"{node.lineno}: {node.id}")
    return found


def test_verify_names_no_record_kind_and_no_check_function():
    """No module every kind plugs into names a kind, its tables or documents, or a check."""
    names = _kind_names()
    found = {}
    for module, path in sorted({_module_name(p): p for p in PACKAGE.rglob("*.py")}.items()):
        if _layer(module)[0] in NAME_FREE:
            named = _kinds_named(path.read_text(encoding="utf-8"), *names)
            if named:
                found[module] = named
    assert not found, f"kinds named outside their packages: {found}"


@pytest.mark.parametrize(
    "planted",
    ["audit.policies", 'frame = tables["receipts"]', "check_plan_hashes(audit.plans)"],
)
def test_the_name_check_fails_on_a_planted_table_name(planted, tmp_path, monkeypatch):
    """A copy of the package with a kind's table named in report/ or cache.py fails the check."""
    assert _kinds_named(planted, *_kind_names())
    assert not _kinds_named("audit.tables[name]", *_kind_names())
    package = tmp_path / "explicit_audit"
    shutil.copytree(PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(__import__(__name__), "PACKAGE", package)
    test_verify_names_no_record_kind_and_no_check_function()
    for module in ("report/_empty.py", "cache.py"):
        path = package / module
        original = path.read_text(encoding="utf-8")
        path.write_text(f"{original}\n\ndef _planted(audit, tables):\n    {planted}\n")
        with pytest.raises(AssertionError, match=module.removesuffix(".py").replace("/", ".")):
            test_verify_names_no_record_kind_and_no_check_function()
        path.write_text(original, encoding="utf-8")


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


#: The most lines a module and a class of the package may hold: past them, a seam waits to be cut.
MODULE_LINES = 450
CLASS_LINES = 250


def test_no_module_or_class_outgrows_its_bound():
    too_long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE)
        if len(text.splitlines()) > MODULE_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > CLASS_LINES:
                    too_long.append(f"{name}: class {node.name}, {lines} lines")
    assert not too_long, "; ".join(too_long)
