"""The package's layers, checked from its source: no import cycles, and the lower layers
(config, tools, results) never reach up into the engine, the report or the CLI.

Every ``import``/``from ... import`` of a nicbench module counts, at module level or in
a function, except under ``if TYPE_CHECKING:``. ``from nicbench.x import y`` counts as an
import of ``nicbench.x.y`` when that is a module, else of ``nicbench.x``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "nicbench"

LOWER = ("nicbench.config", "nicbench.tools", "nicbench.results")
UPPER = ("nicbench.execution", "nicbench.report", "nicbench.cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(name: str) -> set[str]:
    tree = ast.parse(MODULES[name].read_text())
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("nicbench"))
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("nicbench") and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in MODULES else node.module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return {m for m in found if m in MODULES}


GRAPH = {name: imports_of(name) for name in MODULES}


def test_no_import_cycles():
    seen: dict[str, int] = {}     # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(GRAPH[node]):
            if seen.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in seen:
                walk(nxt, [*path, nxt])
        seen[node] = 2

    for start in sorted(GRAPH):
        if start not in seen:
            walk(start, [start])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("layer", LOWER)
def test_lower_layers_do_not_import_upwards(layer):
    bad = sorted((m, i) for m, deps in GRAPH.items() if m.startswith(layer)
                 for i in deps if i.startswith(UPPER))
    assert not bad, f"{layer} imports from above it: {bad}"


def test_the_graph_is_real():
    # the checks above would pass on an empty graph
    assert "nicbench.results.records" in GRAPH["nicbench.results.store"]
    assert "nicbench.execution.runner" in GRAPH["nicbench.cli.run"]
