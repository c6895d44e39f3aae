"""Where a listed input is what a caller gives, not what the contract stores.

`x-shapes` (records, events): the node also takes the seed shapes of the shape table, read
backwards (evidence/shape_inputs.py). `x-given` on an argument: the keys the store writes left out,
the keys it fills optional. Both are applied to the bundled input before it is listed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .reach import reachable

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook

SHAPES = "x-shapes"
GIVEN = "x-given"


def with_shapes(book: "Rulebook", bundled: dict) -> dict:
    """`bundled` with every `x-shapes` node an `anyOf` of the node and the forms its shapes admit.
    The evidence part is imported only where a node has shapes: `explain` and `lock` list no record."""
    defs = bundled.get("$defs", {})

    def resolve(node: dict) -> dict:
        seen = 0
        while isinstance(node.get("$ref"), str) and seen < 8:
            node = {**defs.get(node["$ref"].removeprefix("#/$defs/"), {}), **{k: v for k, v in node.items()
                                                                               if k not in ("$ref", SHAPES)}}
            seen += 1
        return node

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items() if k != SHAPES}
        where = node.get(SHAPES)
        if isinstance(where, str):
            from ..evidence.shape_inputs import given_forms
            plain = resolve(out)
            branches = plain.get("anyOf", [out])
            targets = {_const_type(resolve(b)): b for b in branches} if "anyOf" in plain else {"": out}
            forms = [f for table in book.of_kind("shape_map") for f in given_forms(table, where, targets, resolve)]
            if forms:
                kept = {k: v for k, v in out.items() if k not in ("$ref", "anyOf")}
                out = {"anyOf": [*branches, *forms], **kept}
        return out
    return walk(bundled)


def as_given(bundled: dict) -> dict:
    """Each top-level property with `x-given` ({omit: [keys], omit_defs: [definitions], optional:
    [keys]}) as a caller gives it: the keys the store writes (or refuses from a caller) taken out of
    every object the property reaches, the definitions named left out of every choice, the keys the
    store fills made optional. The definitions it reaches are changed in this tool's copy, so a
    definition both such a property and another one reach would change for both: none does."""
    defs = dict(bundled.get("$defs", {}))
    properties = dict(bundled.get("properties", {}))
    for key, node in properties.items():
        given = node.get(GIVEN) if isinstance(node, dict) else None
        if not isinstance(given, dict):
            continue
        node = {k: v for k, v in node.items() if k != GIVEN}
        omit, optional = set(given.get("omit", ())), set(given.get("optional", ()))
        dropped = {f"#/$defs/{name}" for d in given.get("omit_defs", ()) for name in defs
                   if name == d or name.endswith(":" + d)}
        properties[key] = _given(node, omit, optional, dropped)
        for name in reachable(node, defs):
            defs[name] = _given(defs[name], omit, optional, dropped)
    out = dict(bundled, properties=properties)
    if defs:
        out["$defs"] = defs
    return out


def _given(node: Any, omit: set, optional: set, dropped: set) -> Any:
    if isinstance(node, list):
        return [_given(v, omit, optional, dropped) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {k: _given(v, omit, optional, dropped) for k, v in value.items() if k not in omit}
        elif key == "required":
            out[key] = [k for k in value if k not in omit and k not in optional]
        elif key in ("anyOf", "oneOf"):
            kept = [_given(v, omit, optional, dropped) for v in value
                    if not (isinstance(v, dict) and v.get("$ref") in dropped)]
            if len(kept) == 1 and isinstance(kept[0], dict):
                out.update({k: v for k, v in kept[0].items() if k not in out})
                continue
            out[key] = kept
        elif key in ("enum", "const"):
            out[key] = value
        else:
            out[key] = _given(value, omit, optional, dropped)
    return out


def _const_type(node: dict) -> str:
    kind = node.get("properties", {}).get("type", {})
    return kind.get("const", "") if isinstance(kind, dict) else ""
