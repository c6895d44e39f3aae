"""The `decision_masking` kind (rules/decision_masking.yaml): what the decision log never keeps, how
long it keeps the rest, which values it shows masked, and the placeholders standing in for values a
lock finds.

Compiling checks every tool against the registry's schema files and every path against the tool's
schemas (an argument the input schema cannot hold, an answer key the envelope or the tool's data
cannot hold, is a load error naming the key), so that an operator's typo never silently keeps what
was meant to be dropped.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..access import SUFFIX, TOOL_SCHEMAS, tool_names
from ..core.errors import did_you_mean
from ..core.schema_check import bundle
from ..core.messages import Messages, compile_messages

if TYPE_CHECKING:
    from ..core.tables import CompileContext

MASKING_TABLE = "decision_masking"
ALL = "all"
ENVELOPE_KEYS = ("ok", "data", "warnings", "error")
WILD = "*"


@dataclass(frozen=True)
class Policy:
    """One tool's: days kept, paths never kept (or everything: `whole`), paths shown masked."""

    retention_days: int
    whole: bool = False
    never_keep: tuple = ()          # of path tuples
    personal: tuple = ()


@dataclass(frozen=True)
class Masking:
    kind: str
    id: str
    file: str
    default_days: int
    tools: dict                     # tool -> Policy
    placeholders: dict              # lock kind -> (value, ...)
    fill_attempts: int
    substring_min_chars: int
    messages: Messages          # name -> Template, in the bound language

    def policy(self, tool: str) -> Policy:
        return self.tools.get(tool) or Policy(self.default_days)

    def message(self, name: str, **params: Any) -> str:
        return self.messages[name].render(params)


def of(book) -> Masking | None:
    """The rulebook's masking table, if it has one (a rulebook without it cannot log decisions)."""
    return book.tables.get(MASKING_TABLE)


def parse(path: str) -> tuple:
    return tuple(path.split("."))


# ----------------------------------------------------------------------------- applying paths

def drop(doc: Any, path: tuple) -> bool:
    """Remove every value at `path` (below the root key) from `doc` in place; True if one was there."""
    def remove(holder: Any, key: Any) -> bool:
        found = holder[key] is not None
        del holder[key]
        return found
    return _walk(doc, path, remove)


def replace(doc: Any, path: tuple, make: Callable[[Any], Any]) -> bool:
    """Replace every value at `path` by make(value), in place; True if one was there."""
    def put(holder: Any, key: Any) -> bool:
        holder[key] = make(holder[key])
        return True
    return _walk(doc, path, put)


def _walk(node: Any, path: tuple, act: Callable[[Any, Any], bool]) -> bool:
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        keys = list(node) if head == WILD else ([head] if head in node else [])
    elif isinstance(node, list) and head == WILD:
        keys = list(range(len(node)))
    else:
        return False
    found = False
    for key in reversed(keys):          # last first: removing a list item leaves the earlier ones in place
        if rest:
            found = _walk(node[key], rest, act) or found
        else:
            found = act(node, key) or found
    return found


# ----------------------------------------------------------------------------- compiling

def compile_masking(data: dict, ctx: CompileContext) -> Masking | None:
    before = len(ctx.faults)
    declared = tool_names(ctx.schemas)
    tools = {}
    for tool, spec in data["tools"].items():
        where = ("tools", tool)
        if tool not in declared:
            ctx.fault("unknown-tool", f"'{tool}' has no schema file schemas/{TOOL_SCHEMAS}{tool}{SUFFIX}", where,
                      did_you_mean(tool, declared) or "name a tool of the registry (schemas/tools/)")
            continue
        never = spec.get("never_keep", [])
        never_paths = () if never == ALL else tuple(
            _checked(ctx, tool, p, where + ("never_keep", i)) for i, p in enumerate(never))
        personal = tuple(_checked(ctx, tool, p, where + ("personal", i))
                         for i, p in enumerate(spec.get("personal", [])))
        tools[tool] = Policy(spec.get("retention_days", data["retention"]["default_days"]), never == ALL,
                             never_paths, personal)
    messages = compile_messages(data["messages"], ctx.faults)
    if any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    holders = data["placeholders"]
    return Masking("decision_masking", data["id"], ctx.source.file, data["retention"]["default_days"], tools,
                   {k: tuple(v) for k, v in holders["kinds"].items()}, holders["fill_attempts"],
                   data["erasure"]["substring_min_chars"], messages)


def _checked(ctx: CompileContext, tool: str, text: str, where: tuple) -> tuple:
    path = parse(text)
    if path[0] == "arguments":
        schema, rest, what = _schema(ctx.schemas, f"{TOOL_SCHEMAS}{tool}{SUFFIX}#/$defs/input"), path[1:], "input"
    elif path[1] not in ENVELOPE_KEYS:
        ctx.fault("unknown-path", f"'{text}': an answer holds only {', '.join(ENVELOPE_KEYS)}", where,
                  did_you_mean(path[1], ENVELOPE_KEYS) or "start with answer.data, answer.warnings or answer.error")
        return path
    elif path[1] == "data":
        schema, rest, what = _schema(ctx.schemas, f"{TOOL_SCHEMAS}{tool}{SUFFIX}#/$defs/data"), path[2:], "data"
    else:
        schema, rest, what = {}, (), ""
    if schema is not None and not _may_hold(schema, schema.get("$defs", {}), rest):
        ctx.fault("unknown-path", f"'{text}' is not a place {tool}'s {what} schema can hold a value", where,
                  "name keys of the tool's schema (schemas/tools/" + tool + SUFFIX + "), * for every item")
    return path


def _schema(schemas, ref: str) -> dict | None:
    try:
        return bundle(schemas, ref)
    except KeyError:
        return None


def _may_hold(node: Any, defs: dict, path: tuple, depth: int = 0) -> bool:
    """Can a value valid under `node` have something at `path`? Open schemas answer yes."""
    if not path:
        return True
    if not isinstance(node, dict) or depth > 64:
        return True
    if "x-shapes" in node:              # a shape table's forms (listing/forms.py) may hold keys of their own
        return True
    if "$ref" in node and isinstance(node["$ref"], str):
        target = defs.get(node["$ref"].rsplit("/", 1)[-1])
        if target is not None and not _may_hold(target, defs, path, depth + 1):
            return False
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            if not any(_may_hold(branch, defs, path, depth + 1) for branch in node[key]):
                return False
    for branch in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
        if not _may_hold(branch, defs, path, depth + 1):
            return False
    head, rest = path[0], path[1:]
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not {"object", "array"} & set(kinds):
        return False
    props = node.get("properties")
    props = props if isinstance(props, dict) else {}
    extra = node.get("additionalProperties", True)
    if head == WILD:
        children = list(props.values()) + ([node["items"]] if isinstance(node.get("items"), dict) else [])
        if extra is not False:
            children.append(extra if isinstance(extra, dict) else {})
        if not children:
            return "object" not in kinds and "array" not in kinds
        return any(_may_hold(c, defs, rest, depth + 1) for c in children)
    if head in props:
        return _may_hold(props[head], defs, rest, depth + 1)
    if kinds == ["array"]:
        return False
    if extra is False:
        return False
    return _may_hold(extra, defs, rest, depth + 1) if isinstance(extra, dict) else True
