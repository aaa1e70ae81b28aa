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
import dataclasses
import re
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


# -- issue 28: the trial's column names spelled in few modules -----------------------------
MAX_MODULES_SPELLING_COLUMNS = 2
_SQL = re.compile(r"\b(?:SELECT|DELETE|INSERT|UPDATE|CREATE|WHERE|ORDER BY|GROUP BY)\b")
_WORD = re.compile(r"(?<![\w.])(?:t\.)?([a-z_][a-z0-9_]*)\b(?!\.)")


_T_WORD = re.compile(r"(?<![\w.])t\.([a-z_][a-z0-9_]*)\b")


def _texts(tree: ast.Module) -> list[str]:
    """A module's string literals; an f-string as one text, its values as ``{}``."""
    inside = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}"
                               for v in n.values))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inside:
            out.append(n.value)
    return out


def _imports_pandas(tree: ast.Module) -> bool:
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(a.name == "pandas" for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "pandas":
            return True
    return False


def _keyed(tree: ast.Module) -> list[ast.Constant]:
    """String literals used as a key: a subscript's (``x["adapter"]``,
    ``x[["run_id", "pair"]]``) and every element of a list or tuple literal (the column
    lists pandas takes: ``groupby([...])``, ``on=[...]``, a module's tuple of columns)."""
    out: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            keys = node.slice.elts if isinstance(node.slice, (ast.List, ast.Tuple)) \
                else [node.slice]
            out += [k for k in keys if isinstance(k, ast.Constant)]
        elif isinstance(node, (ast.List, ast.Tuple)):
            out += [e for e in node.elts if isinstance(e, ast.Constant)]
    return out


def column_spellings(tree: ast.Module) -> set[str]:
    """The trial's column names a module spells as string literals (an f-string's text
    parts included; adjacent literals are one), by this rule:

    1. anywhere, a name only the trial's columns have: a column name of more than one
       word (``run_started_at``, ``latency_p99_us``) that is no key of a trial record,
       of this format or an older one (``TrialRecord``'s fields, ``records.OLD_KEYS``):
       such a literal can only mean the column;
    2. in a module that imports pandas (the trial frame's readers), any column's name
       used as a key: a subscript's (``df["adapter"]``, ``row["pair"]``) or an element
       of a list or tuple literal (``groupby(["adapter", "test"])``, ``on=[...]``);
       there "adapter" is a frame's column. Elsewhere "test", "tool", "pair" and "mtu"
       are ordinary words, profile keys and JSON keys of other records, and a record's
       own field names are attributes, not strings;
    3. in SQL text, a column's name qualified by nb_trials' alias (``t.adapter``); in
       SQL text that names ``nb_trials``, any column's name as a word, unless another
       table's alias qualifies it (``r.started_at`` is nb_runs' column).

    A module that names a column as ``columns.Col`` (``df[Col.ADAPTER]``,
    ``f"t.{Col.RUN_ID} = ?"``) spells nothing."""
    from nicbench.results.columns import TRIAL_SCHEMA
    from nicbench.results.records import OLD_KEYS, TrialRecord

    names = {c.name.value for c in TRIAL_SCHEMA}
    record_keys = {f.name for f in dataclasses.fields(TrialRecord)} | set(OLD_KEYS)
    only_columns = {n for n in names if "_" in n} - record_keys
    found = {t for t in _texts(tree) if t in only_columns}
    if _imports_pandas(tree):
        found |= {k.value for k in _keyed(tree) if k.value in names}
    for text in _texts(tree):
        if _SQL.search(text):
            words = _WORD.findall(text) if "nb_trials" in text else _T_WORD.findall(text)
            found |= {w for w in words if w in names}
    return found


def test_column_names_are_spelled_in_at_most_two_modules():
    spelled = {name: sorted(found) for name, tree in TREES.items()
               if (found := column_spellings(tree))}
    assert len(spelled) <= MAX_MODULES_SPELLING_COLUMNS, (
        f"{len(spelled)} modules spell the trial's column names as strings (name them "
        f"as columns.Col members): {spelled}")
    assert "nicbench.results.columns" in spelled     # the rule sees the declaration


def test_the_column_rule_sees_each_way_of_spelling():
    def spells(source: str) -> set[str]:
        return column_spellings(ast.parse(source))

    assert spells("x = 'latency_p99_us'") == {"latency_p99_us"}
    assert spells("import pandas as pd\ndf['adapter']") == {"adapter"}
    assert spells("import pandas as pd\nk = ['run_id', 'pair']") == {"run_id", "pair"}
    assert spells("df['adapter']") == set()            # not a frame's reader
    assert spells("import pandas as pd\nprint('test')") == set()
    assert spells("q = 'SELECT t.adapter, r.started_at FROM nb_trials t'") == {"adapter"}
    assert spells("q = f'SELECT t.{Col.ADAPTER} FROM nb_trials t'") == set()
    assert spells("q = f'SELECT pair FROM nb_trials WHERE t.{c} = 1'") == {"pair"}
    assert spells("q = ' WHERE t.run_id IN (?)'") == {"run_id"}


def test_one_store_and_one_frame_module_outside_the_cli():
    """issue 28: one name, one meaning: outside cli/ (where a command's module is named
    after its command) at most one module is called store.py and at most one frame.py or
    frames.py."""
    outside = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts]
    stores = [str(p.relative_to(PACKAGE)) for p in outside if p.name == "store.py"]
    frames = [str(p.relative_to(PACKAGE)) for p in outside
              if p.name in ("frame.py", "frames.py")]
    assert len(stores) <= 1, stores
    assert len(frames) <= 1, frames
