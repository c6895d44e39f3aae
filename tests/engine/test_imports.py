"""The floors hold: no import cycle anywhere in engine/ (an import inside a function counts; one
under `if TYPE_CHECKING:` does not), and the library imports without the MCP SDK's server stack."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def _graph() -> dict[str, set[str]]:
    modules = {}
    for path in ENGINE.rglob("*.py"):
        rel = path.relative_to(ENGINE).with_suffix("")
        modules[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = path
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    source = ".".join(parts[:len(parts) - node.level + 1]) + ("." + node.module if node.module else "")
                else:
                    source = node.module or ""
                names = [source] + [f"{source}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            graph[module] |= {n for n in names if n in modules and n != module and not module.startswith(n + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on:
                low[node] = min(low[node], index[child])
    return out


def test_no_import_cycle_in_the_engine():
    assert _cycles(_graph()) == []


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_the_library_does_not_import_the_mcp_server_stack():
    code = "import sys, groundrules; groundrules.default_rulebook(); print(any(m.startswith('mcp') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
