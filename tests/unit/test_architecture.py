"""The package's layers, checked from its source: no import cycles, and the lower layers
(config, tools, results) never reach up into the engine, the report or the CLI; config/
stands on nothing of nicbench but errors.py and textfile.py; the engine's units stay small.

Every ``import``/``from ... import`` of a nicbench module counts, at module level, in a
function, or under ``if TYPE_CHECKING:`` (a loop that only the type checker sees is still
a loop: the two modules cannot be understood apart). ``from nicbench.x import y`` counts
as an import of ``nicbench.x.y`` when that is a module, else of ``nicbench.x``. A
package's own ``__init__`` being run first is Python's doing and is not an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "nicbench"

LOWER = ("nicbench.config", "nicbench.tools", "nicbench.results")
UPPER = ("nicbench.execution", "nicbench.history", "nicbench.report", "nicbench.cli")

# What config/ may import besides itself: the modules below every layer. Both import
# nothing of nicbench (test_the_bottom_imports_nothing), so this list is all config/
# stands on, transitively; pydantic, yaml and the standard library are not nicbench.
BELOW_CONFIG = ("nicbench.errors", "nicbench.textfile")

# issue 17, deliverable 1: the engine as small units with one job each.
EXECUTION = "nicbench.execution"
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 60


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
TREES = {name: ast.parse(path.read_text()) for name, path in MODULES.items()}


def imports_of(name: str, tree: ast.Module | None = None) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree or TREES[name]):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("nicbench"))
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{name}: a relative import (line {node.lineno})"
            if node.module and node.module.startswith("nicbench"):
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    found.add(sub if sub in MODULES else node.module)
    found.discard(name)
    return {m for m in found if m in MODULES}


GRAPH = {name: imports_of(name) for name in MODULES}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm: every group of modules that import each other, directly or
    through others (each group of more than one module is a cycle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            groups.append(sorted(group))

    for start in sorted(graph):
        if start not in index:
            visit(start)
    return groups


def test_no_import_cycles():
    cycles = [g for g in strongly_connected(GRAPH) if len(g) > 1]
    assert not cycles, "modules that import each other: " + "; ".join(
        " <-> ".join(g) for g in cycles)


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert sorted(g for g in strongly_connected(graph) if len(g) > 1) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer", LOWER)
def test_lower_layers_do_not_import_upwards(layer):
    bad = sorted((m, i) for m, deps in GRAPH.items() if m.startswith(layer)
                 for i in deps if i.startswith(UPPER))
    assert not bad, f"{layer} imports from above it: {bad}"


def test_config_stands_on_errors_and_textfile_only():
    bad = sorted((m, i) for m, deps in GRAPH.items() if m.startswith("nicbench.config")
                 for i in deps if not i.startswith("nicbench.config") and i not in BELOW_CONFIG)
    assert not bad, f"config/ imports from above it: {bad}"


@pytest.mark.parametrize("module", BELOW_CONFIG)
def test_the_bottom_imports_nothing(module):
    assert GRAPH[module] == set()


# issue 28: the rooms (each subpackage, and each top-level module) in their order, lowest
# first. A room imports only rooms listed before it; rooms on one line stand side by side
# and import none of each other. Every import counts, as in GRAPH (lazy and TYPE_CHECKING
# ones too), so no two rooms can form a cycle and a room's place says what it may use.
ROOM_ORDER: tuple[tuple[str, ...], ...] = (
    ("nicbench", "nicbench.errors", "nicbench.textfile", "nicbench.limits",
     "nicbench.durations", "nicbench.polling", "nicbench.interrupts", "nicbench.display",
     "nicbench.workers"),
    ("nicbench.config",),
    ("nicbench.physics", "nicbench.judging"),   # the wire's arithmetic; the comparison's rule
    ("nicbench.tools",),
    ("nicbench.results",),
    ("nicbench.remote",),
    ("nicbench.platforms", "nicbench.lab"),
    ("nicbench.history",),
    ("nicbench.execution",),
    ("nicbench.store",),
    ("nicbench.report",),
    ("nicbench.cli",),
)
RANK = {room: level for level, rooms in enumerate(ROOM_ORDER) for room in rooms}


def room_of(module: str) -> str:
    """``nicbench.report.figures.bars`` -> ``nicbench.report``; ``nicbench.errors`` itself."""
    parts = module.split(".")
    return ".".join(parts[:2])


def room_edges(graph: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(room, room it imports) -> the module imports behind that edge."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, deps in graph.items():
        for dep in deps:
            a, b = room_of(module), room_of(dep)
            if a != b:
                edges.setdefault((a, b), []).append(f"{module} -> {dep}")
    return edges


def test_every_room_has_its_place():
    rooms = {room_of(m) for m in MODULES}
    assert rooms <= set(RANK), f"rooms with no place in ROOM_ORDER: {sorted(rooms - set(RANK))}"
    assert set(RANK) <= rooms, f"ROOM_ORDER names rooms that are gone: {sorted(set(RANK) - rooms)}"


def test_rooms_import_only_rooms_below_them():
    bad = [f"{a} -> {b} ({', '.join(why[:3])})" for (a, b), why in sorted(room_edges(GRAPH).items())
           if RANK.get(b, 99) >= RANK.get(a, -1)]
    assert not bad, "rooms importing their own level or above: " + "; ".join(bad)


def test_no_cycle_between_rooms():
    rooms: dict[str, set[str]] = {room_of(m): set() for m in MODULES}
    for a, b in room_edges(GRAPH):
        rooms[a].add(b)
    cycles = [g for g in strongly_connected(rooms) if len(g) > 1]
    assert not cycles, "rooms that import each other: " + "; ".join(" <-> ".join(g) for g in cycles)


def test_the_room_order_catches_a_loop():
    # history reading the line rate from report/ while report draws history: the loop of
    # issue 28, as an edge the order refuses
    graph = {"nicbench.history.series": {"nicbench.report.linerate"},
             "nicbench.report.history": {"nicbench.history.series"},
             "nicbench.report.linerate": set()}
    edges = room_edges(graph)
    assert ("nicbench.history", "nicbench.report") in edges
    assert RANK["nicbench.report"] > RANK["nicbench.history"]
    rooms = {"nicbench.history": {"nicbench.report"}, "nicbench.report": {"nicbench.history"}}
    assert [g for g in strongly_connected(rooms) if len(g) > 1]


def _long_units(name: str) -> list[str]:
    found = []
    for node in ast.walk(TREES[name]):
        if isinstance(node, ast.ClassDef):
            limit = MAX_CLASS_LINES
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            limit = MAX_FUNCTION_LINES
        else:
            continue
        assert node.end_lineno is not None
        lines = node.end_lineno - node.lineno + 1
        if lines > limit:
            found.append(f"{name}.{node.name}: {lines} lines (at most {limit})")
    return found


def test_the_engine_is_small_units():
    long = [u for name in sorted(MODULES) if name.startswith(EXECUTION)
            for u in _long_units(name)]
    assert not long, "too long: " + "; ".join(long)


def test_the_graph_is_real():
    # the checks above would pass on an empty graph
    assert "nicbench.results.records" in GRAPH["nicbench.results.rundir"]
    assert "nicbench.execution.runner" in GRAPH["nicbench.cli.run"]
    # function-local imports count
    assert "nicbench.report" in GRAPH["nicbench.cli.report"]
    # so do the type checker's
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from nicbench.errors import UsageError\n")
    assert imports_of("nicbench.cli", ast.parse(source)) == {"nicbench.errors"}
    # and the size check sees the engine
    assert any(name.startswith(EXECUTION) for name in MODULES)
