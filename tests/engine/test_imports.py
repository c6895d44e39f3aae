"""The floors hold: every import points down the floors (or stays on its own), no import cycle
anywhere in engine/ (an import inside a function counts; one under `if TYPE_CHECKING:` does not),
the library imports without the MCP SDK's server stack, and a command imports only the part it runs."""
from __future__ import annotations

import ast
import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
PARTS = ("groundrules.support_reason", "groundrules.locks", "groundrules.evidence", "groundrules.verification",
         "groundrules.findings", "groundrules.provenance", "groundrules.store", "groundrules.analyst.report", "groundrules.analyst.corpus_diff")
# the floors, lowest first: a module imports from its own floor or one beneath it
FLOORS = (
    ("engine", ("groundrules.core",)),
    ("stores", ("groundrules.store",)),
    ("parts", ("groundrules.support_reason", "groundrules.locks", "groundrules.evidence",
               "groundrules.verification", "groundrules.findings", "groundrules.provenance")),
    ("registry", ("groundrules.api", "groundrules.access", "groundrules.toolsets", "groundrules.claim_map", "groundrules.results",
                  "groundrules.vocabularies", "groundrules.listing", "groundrules.guides")),
    ("batch", ("groundrules.batch",)),
    ("decision log", ("groundrules.decision_log",)),
    ("analyst's tools", ("groundrules.analyst",)),
    ("surface", ("groundrules", "groundrules.cli", "groundrules.transports")),
)
# a command on a warm verdict cache, its input, and the one part it uses
COMMANDS = {
    "explain": (ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json", "groundrules.support_reason"),
    "lock": (ROOT / "schemas" / "examples" / "locks" / "decline_phone_give_wechat.json", "groundrules.locks"),
}


def _graph() -> dict[str, set[str]]:
    """module -> the engine modules it imports, parsed once per worker (three checks read it)."""
    return {module: set(deps) for module, deps in _parsed_graph()}


@functools.cache
def _parsed_graph() -> tuple[tuple[str, frozenset[str]], ...]:
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
    return tuple((module, frozenset(deps)) for module, deps in graph.items())


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


def _floor(module: str) -> int:
    """The floor of a module: that of the longest package prefix naming it."""
    return max(((len(p), i) for i, (_, prefixes) in enumerate(FLOORS) for p in prefixes
                if module == p or module.startswith(p + ".")))[1]


def test_every_module_is_named_by_its_floor():
    """Nothing lands on a floor by default: the package root holds only what a floor names."""
    named = {p for _, prefixes in FLOORS for p in prefixes} - {"groundrules"}
    assert sorted(m for m in _graph() if m != "groundrules"
                  and not any(m == p or m.startswith(p + ".") for p in named)) == []


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} ({FLOORS[_floor(m)][0]}) -> {d} ({FLOORS[_floor(d)][0]})"
                  for m, deps in graph.items() for d in deps if _floor(d) > _floor(m))


def test_imports_point_down_the_floors():
    assert _upward(_graph()) == []


def test_the_floor_check_sees_an_upward_import():
    graph = {"groundrules.core.dates": {"groundrules.api"}, "groundrules.api": {"groundrules.core.dates"}}
    assert _upward(graph) == ["groundrules.core.dates (engine) -> groundrules.api (registry)"]


def test_every_kind_names_a_compiler_that_exists():
    from groundrules.core.compilers import COMPILERS
    for kind, compiler in COMPILERS.items():
        assert callable(compiler.resolve()), kind


def test_no_import_cycle_in_the_engine():
    assert _cycles(_graph()) == []


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_the_library_does_not_import_the_mcp_server_stack():
    code = "import sys, groundrules; groundrules.default_rulebook(); print(any(m.startswith('mcp') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.extended
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_imports_only_its_own_part(tmp_path, command):
    """Start-up: a process pays for what it uses. On a warm cache `explain` and `lock` import their
    own part, and no other part, nor PyYAML, jsonschema or sqlite3; explain not even `regex`."""
    path, own = COMMANDS[command]
    watched = PARTS + ("yaml", "jsonschema", "sqlite3", "regex")
    code = ("import sys, io, contextlib\nfrom groundrules.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main([{command!r}, {str(path)!r}])\n"
            f"print(' '.join(sorted(m for m in {watched!r} if m in sys.modules)))")
    env = dict(os.environ, GROUNDRULES_CACHE=str(tmp_path / "cache"))
    cold, warm = (subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                                 timeout=120).stdout.split() for _ in range(2))
    assert own in cold and "yaml" in cold                  # the check can see an import
    assert warm == sorted([own] + (["regex"] if command == "lock" else []))
