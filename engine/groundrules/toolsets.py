"""The `toolsets` kind (rules/toolsets.yaml): the registry's tools in named sets a session lists.

A model reads every tool it is listed; the whole registry is more than a model should carry into
every turn. So an MCP session lists the toolsets its role starts with (and the toolsets' own tools,
list_toolsets and enable_toolset), and the model enables the rest as it needs them. Compiling the
table checks it against the registry's schema files: every tool is in exactly one toolset, and a
tool no schema file declares is a fault. The library (`Service.call` with no session) answers
every tool a role may call, whatever this table says.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from .access import SUFFIX, TOOL_SCHEMAS, tool_names
from .core.errors import did_you_mean
from .core.examples import ExampleResult

if TYPE_CHECKING:
    from .core.tables import CompileContext

TABLE = "toolsets"          # the table's id, as the registry asks for it


@dataclass(frozen=True)
class Toolset:
    name: str
    description: str
    tools: tuple[str, ...]
    always: bool = False


@dataclass(frozen=True)
class ToolsetTable:
    kind: str
    id: str
    file: str
    toolsets: dict              # name -> Toolset, in table order
    defaults: dict              # role -> tuple of toolset names
    examples: tuple             # ({role, tool, enable}, ...)

    def of_tool(self, tool: str) -> Toolset:
        """The one toolset holding `tool` (the table names every tool the registry declares)."""
        return next(t for t in self.toolsets.values() if tool in t.tools)

    def starting(self, role: str) -> frozenset[str]:
        """The toolsets a session of `role` lists from its start: its defaults (every toolset for a
        role the table does not name) and those listed always."""
        named = self.defaults.get(role, tuple(self.toolsets))
        return frozenset(named) | {t.name for t in self.toolsets.values() if t.always}

    def listed(self, tool: str, enabled: frozenset[str] | None) -> bool:
        """Is `tool` listed in a session with `enabled` toolsets (None: no session, every one)?"""
        toolset = self.of_tool(tool)
        return enabled is None or toolset.always or toolset.name in enabled

    def check_examples(self) -> Iterator[ExampleResult]:
        for n, ex in enumerate(self.examples, 1):
            toolset = self.of_tool(ex["tool"])
            starts = toolset.name in self.starting(ex["role"])
            expected = None if starts else toolset.name
            ok = ex["enable"] == expected
            said = "listed from the start" if expected is None else f"listed after enabling '{expected}'"
            yield ExampleResult(f"{self.id}:{ex['role']}:{n}", ok, "" if ok else f"{ex['tool']} is {said}",
                                ("examples", n - 1, "enable"))


def compile_toolsets(data: dict, ctx: CompileContext) -> ToolsetTable | None:
    before = len(ctx.faults)
    declared = tool_names(ctx.schemas)
    holder: dict[str, str] = {}
    toolsets = {}
    for name, spec in data["toolsets"].items():
        for i, tool in enumerate(spec["tools"]):
            where = ("toolsets", name, "tools", i)
            if tool not in declared:
                ctx.fault("unknown-tool", f"'{tool}' has no schema file schemas/{TOOL_SCHEMAS}{tool}{SUFFIX}", where,
                          did_you_mean(tool, declared) or "a tool is declared by its schema file under schemas/tools/")
            elif tool in holder:
                ctx.fault("tool-in-two-toolsets", f"'{tool}' is already in toolset '{holder[tool]}'", where,
                          f"keep '{tool}' in one toolset: remove it from '{name}' or from '{holder[tool]}'")
            else:
                holder[tool] = name
        toolsets[name] = Toolset(name, spec["description"], tuple(spec["tools"]), spec.get("always", False))
    for tool in declared:
        if tool not in holder:
            ctx.fault("tool-in-no-toolset", f"tool '{tool}' (schemas/{TOOL_SCHEMAS}{tool}{SUFFIX}) is in no toolset",
                      ("toolsets",), f"add '{tool}' to the tools of the toolset a model enables to call it")
    defaults = {}
    for i, row in enumerate(data["defaults"]):
        if row["role"] in defaults:
            ctx.fault("duplicate-role", f"role '{row['role']}' has two rows", ("defaults", i, "role"),
                      "give each role one row of default toolsets")
        for j, name in enumerate(row["toolsets"]):
            if name not in toolsets:
                ctx.fault("unknown-toolset", f"'{name}' is no toolset of this table", ("defaults", i, "toolsets", j),
                          did_you_mean(name, toolsets) or "toolsets: " + ", ".join(toolsets))
        defaults[row["role"]] = tuple(row["toolsets"])
    for i, ex in enumerate(data["examples"]):
        if ex["tool"] not in holder:
            ctx.fault("unknown-tool", f"example names '{ex['tool']}', which is in no toolset", ("examples", i, "tool"),
                      did_you_mean(ex["tool"], holder) or "name a tool of the toolsets above")
        if ex["enable"] is not None and ex["enable"] not in toolsets:
            ctx.fault("unknown-toolset", f"'{ex['enable']}' is no toolset of this table", ("examples", i, "enable"),
                      did_you_mean(ex["enable"], toolsets) or "toolsets: " + ", ".join(toolsets))
    if any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    return ToolsetTable("toolsets", data["id"], ctx.source.file, toolsets, defaults,
                        tuple(dict(ex) for ex in data["examples"]))
