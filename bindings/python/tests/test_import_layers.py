"""The layering of the coffer package: each module imports, when it is
imported, only modules below it, so the graph of those imports has no
cycle, and importing coffer runs every module once.

Imports under `if TYPE_CHECKING:` only name types for annotations and never
run, so they are not edges; an intra-package import inside a function (the
usual way to dodge a cycle) is not allowed at all."""

import ast
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set

import coffer

PACKAGE = Path(coffer.__file__).resolve().parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py"))


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _targets(node: ast.AST) -> List[str]:
    """The package modules a relative import names: `from . import a, b`
    gives a and b, `from .a import x` gives a."""
    if not isinstance(node, ast.ImportFrom) or node.level != 1:
        return []
    if node.module is None:
        return [alias.name for alias in node.names if alias.name in MODULES]
    return [node.module.split(".")[0]]


def _tree(module: str) -> ast.Module:
    return ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))


def _import_time_imports(module: str) -> Set[str]:
    """What `module` imports from the package when it runs: imports at the
    top level and in top-level blocks (if, try), not in functions or
    classes, and not under TYPE_CHECKING."""
    found: Set[str] = set()
    pending: List[ast.AST] = list(_tree(module).body)
    while pending:
        node = pending.pop()
        if _is_type_checking_block(node) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        found.update(_targets(node))
        if isinstance(node, (ast.If, ast.Try)):
            pending.extend(ast.iter_child_nodes(node))
    found.discard(module)
    return found


def _cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of `graph` as [a, b, ..., a], or None."""
    state: Dict[str, str] = {}
    path: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_cycle_finder_names_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_import_time_imports_form_no_cycle():
    graph = {module: _import_time_imports(module) for module in MODULES}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_codec_layer_sits_below_the_database():
    graph = {module: _import_time_imports(module) for module in MODULES}

    def below(module: str) -> Set[str]:
        seen: Set[str] = set()
        pending = [module]
        while pending:
            for nxt in graph[pending.pop()] - seen:
                seen.add(nxt)
                pending.append(nxt)
        return seen

    codec_layer = {"_library", "_capi", "errors", "values", "packing", "codec", "objectid"}
    assert codec_layer <= below("database")
    for module in codec_layer:
        assert "database" not in below(module), module


def test_type_only_imports_name_only_the_handle_types():
    # Lower layers annotate with the Database handle and its class and
    # property records (and packing.py with codec's Writer); nothing else
    # is named up the stack, even for types.
    for module in MODULES:
        for node in _tree(module).body:
            if _is_type_checking_block(node):
                named = {t for n in ast.walk(node) for t in _targets(n)}
                assert named <= {"database", "codec"}, (module, named)


def test_no_module_imports_from_the_package_inside_a_function():
    for module in MODULES:
        for node in ast.walk(_tree(module)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [t for n in ast.walk(node) for t in _targets(n)]
                assert not inner, f"{module}.{node.name} imports {inner} when it runs"


def test_importing_coffer_runs_each_module_once():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", "import coffer"],
                         capture_output=True, text=True, env=env, check=True)
    # Lines of -X importtime: "import time: self | cumulative | name".
    names = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")]
    ours = [name for name in names if name == "coffer" or name.startswith("coffer.")]
    assert sorted(ours) == sorted(set(ours)), ours
    assert set(ours) == {"coffer"} | {f"coffer.{m}" for m in MODULES if m != "__init__"}
