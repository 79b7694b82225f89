"""The layers import one way only: topologies < themis < solvers < reports.

An AST walk of every module of the four packages (imports anywhere: at the top,
inside functions, under ``TYPE_CHECKING``) fails on:

- an import of a higher layer (``reports.cli``, the command line, is the top: it
  may import anything, and nothing else may import it);
- a module imported by a name computed at run time or given as a string
  (``__import__("x")``, ``importlib.import_module("x")``), which hides imports
  from readers and tools (plug-in packages import their modules by name, in a
  chosen order, in their ``__init__``);
- a cycle among module-level imports;
- a cycle among run-time imports anywhere (a function-level import must not hide
  one: it is how a lower module would reach back up, e.g. the simulator into the
  planners that simulate).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("topologies", "themis", "solvers", "reports")
CLI = "reports.cli"


def modules() -> dict[str, Path]:
    """Every module of the layered packages, by dotted name."""
    out = {}
    for pkg in LAYERS:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, path: Path, runtime: bool = False) -> list[tuple[int, str, bool]]:
    """``(line, imported module, at module level)`` for every import statement
    (with ``runtime``, those under ``if TYPE_CHECKING:`` left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = {id(s) for n in ast.walk(tree) if _is_type_checking(n)
                   for s in ast.walk(n)} if runtime else set()
    top = {id(n) for n in tree.body}
    for n in tree.body:  # statements under a module-level try/if count as module level
        if isinstance(n, ast.Try | ast.If) and not _is_type_checking(n):
            top |= {id(s) for s in ast.walk(n) if isinstance(s, ast.stmt)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, path.name == "__init__.py", node)
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((node.lineno, sub if _is_module(sub) else target, id(node) in top))
    return out


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def layer(module: str) -> int:
    """The rank of a module's layer (the CLI above everything)."""
    if module == CLI or module.startswith(CLI + "."):
        return len(LAYERS)
    return LAYERS.index(module.split(".")[0])


def _dynamic_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name not in ("__import__", "importlib.import_module", "import_module",
                        "importlib.__import__"):
            continue
        out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return out


MODULES = modules()


def test_the_walk_sees_every_package() -> None:
    assert {m.split(".")[0] for m in MODULES} == set(LAYERS)
    assert CLI in MODULES and "reports.methods" in MODULES


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_import(module: str) -> None:
    bad = [f"{MODULES[module].relative_to(ROOT)}:{line}: imports {target}"
           for line, target, _ in imports(module, MODULES[module])
           if target.split(".")[0] in LAYERS and layer(target) > layer(module)]
    assert not bad, "upward imports (layers: topologies < themis < solvers < reports < " \
                    "reports.cli):\n" + "\n".join(bad)


def test_no_module_imported_by_a_string() -> None:
    bad = [line for path in MODULES.values() for line in _dynamic_imports(path)]
    assert not bad, "imports by a computed name or a string:\n" + "\n".join(bad)


def _cycles(graph: dict[str, list[str]]) -> list[str]:
    """The cycles a depth-first walk of ``graph`` meets, package self-cycles aside."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in graph[m]:
            if state.get(t) == 1:
                cycles.append(" -> ".join(stack[stack.index(t):] + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    # A package importing its own submodules in __init__ while they import the package
    # back is how Python packages work; only cycles between distinct modules count.
    return [c for c in cycles if not _package_self_cycle(c)]


def test_no_import_cycle_at_module_level() -> None:
    graph = {m: sorted({t for _, t, top in imports(m, p) if top and t in MODULES and t != m})
             for m, p in MODULES.items()}
    real = _cycles(graph)
    assert not real, "module-level import cycles:\n" + "\n".join(real)


def test_no_import_cycle_hidden_in_a_function() -> None:
    graph = {m: sorted({t for _, t, _ in imports(m, p, runtime=True)
                        if t in MODULES and t != m})
             for m, p in MODULES.items()}
    real = _cycles(graph)
    assert not real, "import cycles through function-level imports:\n" + "\n".join(real)


def test_the_cycle_walk_finds_a_cycle_through_a_function() -> None:
    assert _cycles({"a.x": ["a.y"], "a.y": ["a.x"]}) == ["a.x -> a.y -> a.x"]
    assert _cycles({"a": ["a.x"], "a.x": ["a"]}) == []


def _package_self_cycle(cycle: str) -> bool:
    parts = cycle.split(" -> ")
    return len(set(parts)) == 2 and (parts[1].startswith(parts[0] + ".")
                                     or parts[0].startswith(parts[1] + "."))


def test_the_check_catches_an_upward_and_a_string_import(tmp_path: Path) -> None:
    """The walk itself works: a module that imports up, and one by a string, are caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from reports.methods import run_method\n"
                     "    import importlib\n    importlib.import_module('solvers.cpsat')\n")
    found = imports("themis.probe", probe)
    assert (2, "reports.methods", False) in found
    assert layer("reports.methods") > layer("themis.probe")
    assert len(_dynamic_imports_of(probe)) == 1


def _dynamic_imports_of(path: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return _dynamic_imports(path)
    finally:
        ROOT = saved
