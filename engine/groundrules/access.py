"""The `role_table` kind (rules/roles.yaml): which role may call which tool and give which option.

Compiling it checks the table against the tool registry's schema files (`schemas/tools/*.schema.json`):
every tool listed there must be listed here and the other way round, every role named must be
declared, every option must be an argument of the tool's input schema. The registry asks the
compiled table on every call; nothing here knows a transport.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .core.errors import did_you_mean
from .core.schema_check import bundle
from .core.messages import Messages, compile_messages

if TYPE_CHECKING:
    from .core.tables import CompileContext

TOOL_SCHEMAS = "tools/"
SUFFIX = ".schema.json"


def tool_names(schemas) -> tuple[str, ...]:
    """The tools the registry declares: one schema file each under schemas/tools/."""
    return tuple(sorted(n[len(TOOL_SCHEMAS):-len(SUFFIX)] for n in schemas.by_name
                        if n.startswith(TOOL_SCHEMAS) and n.endswith(SUFFIX) and n.count("/") == 1))


@dataclass(frozen=True)
class RoleTable:
    kind: str
    id: str
    file: str
    roles: dict               # role -> {label, description}
    grants: dict              # tool -> frozenset of roles
    options: dict             # tool -> ((path tuple, frozenset of roles), ...)
    limits: dict
    messages: Messages          # name -> Template, in the bound language

    def may_call(self, role: str, tool: str) -> bool:
        return role in self.grants.get(tool, ())

    def denied_option(self, role: str, tool: str, arguments: dict) -> tuple[str, tuple] | None:
        """(option path, roles allowed) of the first option in `arguments` the role may not give."""
        for path, allowed in self.options.get(tool, ()):
            if role not in allowed and _present(arguments, path):
                return ".".join(path), tuple(sorted(allowed))
        return None

    def message(self, name: str, **params: Any) -> str:
        return self.messages[name].render(params)


def _present(value: Any, path: tuple) -> bool:
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    return True


def compile_role_table(data: dict, ctx: CompileContext) -> RoleTable | None:
    before = len(ctx.faults)
    roles = dict(data["roles"])
    declared = tool_names(ctx.schemas)

    def role_ok(role: str, at: tuple) -> None:
        if role not in roles:
            ctx.fault("unknown-role", f"role '{role}' is not declared under 'roles'", at, did_you_mean(role, roles))

    grants, options = {}, {}
    for tool, spec in data["tools"].items():
        where = ("tools", tool)
        if tool not in declared:
            ctx.fault("unknown-tool", f"'{tool}' has no schema file schemas/{TOOL_SCHEMAS}{tool}{SUFFIX}", where,
                      did_you_mean(tool, declared) or "a tool is declared by its schema file under schemas/tools/")
            continue
        for i, role in enumerate(spec["roles"]):
            role_ok(role, where + ("roles", i))
        grants[tool] = frozenset(spec["roles"])
        inputs = _input_schema(ctx.schemas, tool)
        paths = []
        for option, allowed in spec.get("options", {}).items():
            path = tuple(option.split("."))
            if not _argument(inputs, path):
                ctx.fault("unknown-option", f"'{option}' is not an argument of {tool}", where + ("options", option),
                          "name an argument of the tool's input schema (dots for nested ones: new.manual_exception)")
            for i, role in enumerate(allowed):
                role_ok(role, where + ("options", option, i))
            paths.append((path, frozenset(allowed)))
        options[tool] = tuple(paths)
    for tool in declared:
        if tool not in data["tools"]:
            ctx.fault("ungated-tool", f"tool '{tool}' (schemas/{TOOL_SCHEMAS}{tool}{SUFFIX}) is not listed", ("tools",),
                      f"add '{tool}: {{roles: [...]}}' so that someone may call it")
    messages = compile_messages(data["messages"], ctx.faults)
    if any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    return RoleTable("role_table", data["id"], ctx.source.file, roles, grants, options, dict(data["limits"]),
                     messages)


def _input_schema(schemas, tool: str) -> dict:
    try:
        return bundle(schemas, f"{TOOL_SCHEMAS}{tool}{SUFFIX}#/$defs/input")
    except KeyError:
        return {}


def _argument(schema: dict, path: tuple) -> bool:
    """Does the (bundled) input schema declare this nested property?"""
    defs = schema.get("$defs", {})
    node: Any = schema
    for part in path:
        while isinstance(node, dict) and "$ref" in node and "properties" not in node:
            node = defs.get(node["$ref"].rsplit("/", 1)[-1])
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict) or part not in props:
            return False
        node = props[part]
    return True

