"""Which JSON types a field of an input contract can hold, and whether a value keeps to them.

durable-rules compares across types (1 == "1" == true), so the durable compiler needs to know
which types a field can carry to choose an exact translation. A table's `input` contract tells
it; `conforms` checks the same assumption on a value before the durable backend evaluates it.
Only types matter here (not `required`, enums or bounds): a partial example context still
conforms as long as every field it has carries a contract type.
"""
from __future__ import annotations

from typing import Any

NULL, BOOL, NUM, STR, LIST, DICT = "null", "bool", "num", "str", "list", "dict"
ALL = frozenset({NULL, BOOL, NUM, STR, LIST, DICT})
SCALARS = frozenset({BOOL, NUM, STR})
COMPOSITES = frozenset({LIST, DICT})

ITEMS, UNKNOWN = ("items",), ("unknown",)   # cache keys that no property name can equal
_SCHEMA_TYPES = {"null": {NULL}, "boolean": {BOOL}, "integer": {NUM}, "number": {NUM},
                 "string": {STR}, "array": {LIST}, "object": {DICT}}


def type_of(value: Any) -> str:
    """The JSON type class of a Python value decoded from JSON."""
    if value is None:
        return NULL
    cls = value.__class__
    if cls is bool:
        return BOOL
    if cls is int or cls is float:
        return NUM
    if cls is str:
        return STR
    if cls is list:
        return LIST
    return DICT


class Shape:
    """A node of a JSON Schema (after local $refs), or the unknown shape when `node` is None."""

    def __init__(self, node: dict | None, root: dict | None = None):
        self.root = root if root is not None else node
        self.node = self._resolve(node)
        self._types: frozenset | None = None
        self._children: dict = {}              # property name, ITEMS or UNKNOWN -> Shape

    def _resolve(self, node: Any, depth: int = 0) -> dict | None:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 16:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                return None
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target.get(part) if isinstance(target, dict) else None
            node, depth = target, depth + 1
        return node if isinstance(node, dict) else None

    def _branches(self) -> list[dict]:
        """This node and its allOf parts: every one of them constrains the value."""
        out = [self.node] if self.node is not None else []
        for sub in (self.node or {}).get("allOf", []):
            resolved = self._resolve(sub)
            if resolved is not None:
                out.append(resolved)
        return out

    def types(self) -> frozenset:
        if self._types is None:
            allowed = ALL
            for node in self._branches():
                allowed &= _node_types(node, self)
            self._types = allowed
        return self._types

    def at(self, key: str) -> "Shape":
        if self.node is None:
            return self                        # below an unknown shape everything is unknown
        if key not in self._children:
            for node in self._branches():
                props = node.get("properties")
                if isinstance(props, dict) and key in props:
                    self._children[key] = Shape(props[key], self.root)
                    break
            else:
                return self._unknown()         # not cached: context keys are unbounded
        return self._children[key]

    def _unknown(self) -> "Shape":
        if UNKNOWN not in self._children:
            self._children[UNKNOWN] = Shape(None, self.root)
        return self._children[UNKNOWN]

    def items(self) -> "Shape":
        if ITEMS not in self._children:
            found = None
            for node in self._branches():
                if isinstance(node.get("items"), dict):
                    found = node["items"]
                    break
            self._children[ITEMS] = Shape(found, self.root)
        return self._children[ITEMS]

    def path(self, parts: tuple) -> "Shape":
        shape = self
        for part in parts:
            shape = shape.at(part)
        return shape


def _node_types(node: dict, shape: Shape) -> frozenset:
    allowed = set(ALL)
    declared = node.get("type")
    if isinstance(declared, str):
        declared = [declared]
    if isinstance(declared, list):
        allowed &= {t for name in declared for t in _SCHEMA_TYPES.get(name, ALL)}
    if isinstance(node.get("enum"), list):
        allowed &= {type_of(v) for v in node["enum"]}
    if "const" in node:
        allowed &= {type_of(node["const"])}
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            union: set = set()
            for sub in node[key]:
                union |= Shape(sub, shape.root).types()
            allowed &= union
    return frozenset(allowed)


def conforms(value: Any, shape: Shape, where: str = "") -> str | None:
    """None when every value inside `value` has a type its shape allows; else the first path that
    does not (the compiler's assumption, checked before the durable backend evaluates)."""
    if type_of(value) not in shape.types():
        return where or "(root)"
    if value.__class__ is dict:
        for key, item in value.items():
            problem = conforms(item, shape.at(key), f"{where}.{key}" if where else key)
            if problem:
                return problem
    elif value.__class__ is list:
        inner = shape.items()
        for n, item in enumerate(value):
            problem = conforms(item, inner, f"{where}.{n}")
            if problem:
                return problem
    return None
