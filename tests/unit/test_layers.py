"""Layers point one way and no module imports itself in a circle (STYLE.md: `agent` uses `tools`
and `graph_store`, never the reverse; `evals` may use both; nothing of ours imports `evals` but
`evals` and the CLI that runs it). Every import counts, including those inside functions: a lazy
import that closes a circle is still a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("agent", "tools", "graph_store", "evals", "bench")
# which of our packages each package may import (bench, the benchmark scripts, is not shipped:
# nothing of the product may import it)
ALLOWED = {
    "graph_store": set(),
    "tools": {"graph_store"},
    "agent": {"tools", "graph_store", "evals"},  # evals only from the CLI's eval/score commands
    "evals": {"agent", "tools", "graph_store"},
    "bench": {"agent", "tools", "graph_store", "evals"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}


def type_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under `if TYPE_CHECKING:`, which never run."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def imports_of(name: str, path: Path, known: set[str], runtime_only: bool = False) -> set[str]:
    """Our modules that `name` imports, anywhere in its file (with `runtime_only`, not counting
    the imports under `if TYPE_CHECKING:`)."""
    out: set[str] = set()
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = type_only(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while (
                t and t not in known
            ):  # `import tools.retrieval.fusion` -> tools.retrieval.fusion; unknown tail trimmed
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


@pytest.fixture(scope="module")
def import_graph() -> nx.DiGraph:
    mods = modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for name, path in mods.items():
        for target in imports_of(name, path, set(mods)):
            g.add_edge(name, target)
    return g


def test_the_scan_sees_the_real_imports(import_graph):
    # a scan that saw nothing would pass everything below
    assert import_graph.has_edge("agent.graph", "agent.nodes.method_steps")
    assert import_graph.has_edge("tools.retrieval.retrieve", "tools.retrieval.fusion")
    assert import_graph.has_edge("agent.methods.rra.retrieve", "tools.retrieval.retrieve")


def test_layers_point_one_way(import_graph):
    bad = [
        (a, b)
        for a, b in import_graph.edges
        if a.split(".")[0] != b.split(".")[0] and b.split(".")[0] not in ALLOWED[a.split(".")[0]]
    ]
    assert bad == []


def test_only_the_cli_reaches_evals_from_agent(import_graph):
    users = sorted(a for a, b in import_graph.edges if a.startswith("agent") and b.startswith("evals"))
    assert all(u in ("agent.cli", "agent.cli_eval") for u in users), users


def test_no_import_cycles():
    # a package's __init__ importing its own submodules (agent.methods registering its methods)
    # is how packages load, not a cycle between modules; an import under `if TYPE_CHECKING:`
    # never runs (a type named in an annotation), so it closes no circle
    mods = modules()
    g = nx.DiGraph()
    for name, path in mods.items():
        g.add_edges_from((name, t) for t in imports_of(name, path, set(mods), runtime_only=True))
    g.remove_edges_from([(a, b) for a, b in list(g.edges) if b.startswith(a + ".")])
    cycles = [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]
    assert cycles == []
