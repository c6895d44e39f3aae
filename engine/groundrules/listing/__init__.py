"""What a tool advertises as its input is what the registry enforces: one schema, built here.

A tool's input contract (`schemas/tools/<tool>.schema.json#/$defs/input`) is bundled into one
self-contained schema and then made fit for a model and for every client's JSON Schema dialect:
each node that names a vocabulary (`x-names`) becomes an `enum` of what the loaded tables define
(an analyst's new claim kind or state shows in the listing and is enforced, with no Python); a
node whose `type` is a list becomes an `anyOf` of single types; a `const` or `enum` gets its
`type`, and so does a branch of a typed node's `anyOf` or `oneOf` (one that only names required
keys stays a constraint); a node that takes the seed shapes of a shape table (`x-shapes`: records or
events) becomes an `anyOf` of itself and the schema of each shape read backwards
(evidence/shape_inputs.py), so a seed-shaped record the fold maps is one the listing allows; a
top-level property that is only a `$ref`
is written out in place, and one whose every branch has one type carries it (some clients coerce a
typed-in argument by its own `type` only, and send it as a string without one). `Service` lists this
schema and checks every call's arguments against this very schema, so the two cannot drift.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..vocabularies import known
from .forms import as_given, with_shapes
from .reach import reachable
from .sharing import shared, short_names

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook

NAMES = "x-names"
JSON_TYPES = (("string", str), ("boolean", bool), ("object", dict), ("array", list))
# keywords that constrain one JSON type, so that a list-valued `type` can be split
TYPE_KEYWORDS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("items", "minItems", "maxItems", "uniqueItems", "prefixItems", "contains"),
    "object": ("properties", "required", "additionalProperties", "minProperties", "maxProperties",
               "patternProperties", "propertyNames"),
}


def input_schema(book: "Rulebook", bundled: dict) -> dict:
    """The listed and enforced form of a tool's bundled input schema (see the module's words)."""
    bundled = as_given(with_shapes(book, bundled))
    defs = {name: _node(book, node, None) for name, node in bundled.get("$defs", {}).items()}
    root = _node(book, {k: v for k, v in bundled.items() if k != "$defs"}, None)
    root.pop("description", None)                   # the tool's own description says it, once
    properties = root.get("properties", {})
    for key, node in list(properties.items()):
        node = _one_type(_written_out(node, defs), defs)
        properties[key] = {k: (v if k == "description" else compact(v)) for k, v in node.items()} \
            if isinstance(node, dict) else node
    if defs:
        used = reachable(root, defs)
        if used:
            root["$defs"] = {name: compact(defs[name]) for name in sorted(used)}
    return shared(short_names(root))


def described(book: "Rulebook", bundled: dict) -> dict:
    """A bundled contract shape with its vocabularies as enums and single types, descriptions kept:
    what a guide shows beside the listing, which keeps descriptions to the arguments."""
    out = _node(book, {k: v for k, v in bundled.items() if k != "$defs"}, None)
    if bundled.get("$defs"):
        out["$defs"] = {name: _node(book, node, None) for name, node in bundled["$defs"].items()}
    return out


def _node(book: "Rulebook", node: Any, parent_type: str | None) -> Any:
    if isinstance(node, list):
        return [_node(book, item, parent_type) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict = {}
    for key, value in node.items():
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = {k: _node(book, v, None) for k, v in value.items()}
        elif key in ("anyOf", "oneOf", "allOf"):
            out[key] = [_node(book, v, node.get("type") if isinstance(node.get("type"), str) else None)
                        for v in value]
        elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
            out[key] = _node(book, value, None)
        elif key != NAMES:
            out[key] = value
    names = node.get(NAMES)
    if isinstance(names, str):
        found = known(book, names)
        if found is not None and found[1]:
            out.pop("$ref", None)
            bounds = {k: out.pop(k) for k in ("minLength", "maxLength", "pattern") if k in out}
            out.update(type="string", enum=[v for v in found[1] if _within(v, bounds)])
    if isinstance(out.get("type"), list):
        out = _split_types(out)
    if "type" not in out:
        typed = _type_of(out)
        if typed is None and parent_type is not None and not set(out) <= {"required", "description"} \
                and not ({"$ref", "anyOf", "oneOf", "allOf"} & set(out)):
            typed = parent_type
        if typed is not None:
            out = {"type": typed, **out}
    return out


def _within(value: str, bounds: dict) -> bool:
    """Whether a name meets the string bounds the node had: the enum keeps exactly what both allow."""
    import re
    return (len(value) >= bounds.get("minLength", 0) and len(value) <= bounds.get("maxLength", len(value))
            and ("pattern" not in bounds or re.search(bounds["pattern"], value) is not None))


def _type_of(node: dict) -> str | None:
    """The one JSON type every value a `const` or `enum` allows has, if there is one."""
    values = [node["const"]] if "const" in node else node.get("enum")
    if not values:
        return None
    kinds = {_json_type(v) for v in values}
    return kinds.pop() if len(kinds) == 1 else None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if isinstance(value, int) else "number"
    return next((name for name, cls in JSON_TYPES if isinstance(value, cls)), "string")


def _split_types(node: dict) -> dict:
    """`{"type": [a, b], ...}` as `{"anyOf": [{"type": a, ...}, {"type": b, ...}]}`: each branch
    keeps the keywords of its own type; the rest (description, enum) stays on the node."""
    types = node["type"]
    typed = {k for t in types for k in TYPE_KEYWORDS.get(t, ())}
    branches = [{"type": t, **{k: v for k, v in node.items() if k in TYPE_KEYWORDS.get(t, ())}} for t in types]
    rest = {k: v for k, v in node.items() if k != "type" and k not in typed}
    if "anyOf" in rest:                                   # never the case in our schemas; keep both meanings
        return {**{k: v for k, v in rest.items() if k != "anyOf"}, "allOf": [{"anyOf": branches},
                                                                            {"anyOf": rest["anyOf"]}]}
    return {**rest, "anyOf": branches}


def _written_out(node: Any, defs: dict) -> Any:
    """A property that is only a `$ref` (and a description), as the definition it names."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and set(node) <= {"$ref", "description"} \
            and seen < 8:
        target = defs.get(node["$ref"].removeprefix("#/$defs/"))
        if not isinstance(target, dict):
            break
        node = {**target, **({"description": node["description"]} if "description" in node else {})}
        seen += 1
    return node


def _one_type(node: Any, defs: dict) -> Any:
    """An argument whose every branch has one and the same `type` carries that type itself: a
    client that reads only an argument's own `type` (the Inspector's forms, its 0.15 CLI) sends a
    record typed as text as that object, not as a string."""
    if not isinstance(node, dict) or "type" in node:
        return node
    branches = [_written_out(b, defs) for key in ("anyOf", "oneOf") for b in node.get(key, ())]
    kinds = {b.get("type") if isinstance(b, dict) and isinstance(b.get("type"), str) else None for b in branches}
    return {"type": kinds.pop(), **node} if branches and len(kinds) == 1 and None not in kinds else node


def compact(schema: Any) -> Any:
    """`schema` without its descriptions (what a compact listing shows): the same constraints."""
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: (compact(v) if k not in ("enum", "const", "required") else v) for k, v in schema.items()
            if not (k == "description" and isinstance(v, str))}


def first_sentence(text: str) -> str:
    """A description's first sentence (to its first '. ' or '; '), the whole text when it has one."""
    cut = min((i for i in (text.find(". "), text.find("; ")) if i >= 0), default=-1)
    return text if cut < 0 else text[:cut + 1].rstrip(";") + ("" if text[cut] == "." else ".")
