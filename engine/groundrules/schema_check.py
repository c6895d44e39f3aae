"""A fast yes/no check for the JSON Schema subset our contracts use, compiled to closures.

jsonschema stays the authority: it explains every failure and takes over whole schemas that use
a keyword outside SUPPORTED. This only answers "valid?" for the hot path, where a full jsonschema
pass costs more than the evaluation it guards.
"""
from __future__ import annotations

from typing import Any, Callable

Check = Callable[[Any], bool]

ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "examples", "default", "$comment"}
SUPPORTED = ANNOTATIONS | {"type", "required", "properties", "items", "enum", "const", "minimum",
                           "maximum", "minLength", "minItems", "additionalProperties", "$ref",
                           "minProperties"}


def _is_int(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v.is_integer())


TYPES: dict[str, Check] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "integer": _is_int,
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def _each(item: Check) -> Check:
    def check(v: Any) -> bool:
        if type(v) is list:
            for i in v:
                if not item(i):
                    return False
        return True
    return check


class Unsupported(Exception):
    """The schema uses a keyword this checker does not implement."""


def compile_check(schema: dict) -> Check | None:
    """A closure equivalent to jsonschema's verdict, or None when the schema is outside the subset."""
    try:
        return _Compiler(schema).compile(schema, 0)
    except Unsupported:
        return None


def _same(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    return a == b


class _Compiler:
    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any, depth: int) -> Check:
        if schema is True or schema == {}:
            return lambda v: True
        if not isinstance(schema, dict) or depth > 32 or set(schema) - SUPPORTED:
            raise Unsupported()
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self._ref(schema["$ref"], depth))
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            fns = [TYPES[n] for n in names]
            checks.append(fns[0] if len(fns) == 1 else (lambda v: any(f(v) for f in fns)))
        if "enum" in schema:
            values = tuple(schema["enum"])
            checks.append(lambda v: any(_same(v, e) for e in values))
        if "const" in schema:
            c = schema["const"]
            checks.append(lambda v: _same(v, c))
        if "minimum" in schema:
            lo = schema["minimum"]
            checks.append(lambda v: type(v) not in (int, float) or v >= lo)
        if "maximum" in schema:
            hi = schema["maximum"]
            checks.append(lambda v: type(v) not in (int, float) or v <= hi)
        if "minLength" in schema:
            n = schema["minLength"]
            checks.append(lambda v: type(v) is not str or len(v) >= n)
        if "minItems" in schema:
            n = schema["minItems"]
            checks.append(lambda v: type(v) is not list or len(v) >= n)
        if "minProperties" in schema:
            n = schema["minProperties"]
            checks.append(lambda v: type(v) is not dict or len(v) >= n)
        obj = self._object(schema, depth)
        if obj is not None:
            checks.append(obj)
        if "items" in schema:
            checks.append(_each(self.compile(schema["items"], depth + 1)))
        if not checks:
            return lambda v: True
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            a, b = checks
            return lambda v: a(v) and b(v)
        frozen = tuple(checks)

        def every(v: Any) -> bool:
            for c in frozen:
                if not c(v):
                    return False
            return True
        return every

    def _object(self, schema: dict, depth: int) -> Check | None:
        """required + properties + additionalProperties as one loop over the dict."""
        required = tuple(schema.get("required", ()))
        props = tuple((k, self.compile(s, depth + 1)) for k, s in schema.get("properties", {}).items())
        extra = schema.get("additionalProperties", True)
        known = frozenset(k for k, _ in props)
        other = None if extra is True or extra is False else self.compile(extra, depth + 1)
        closed = extra is False
        if not required and not props and extra is True:
            return None

        def check(v: Any) -> bool:
            if type(v) is not dict:
                return True
            for k in required:
                if k not in v:
                    return False
            for k, c in props:
                if k in v and not c(v[k]):
                    return False
            if closed or other is not None:
                for k, x in v.items():
                    if k not in known and (closed or not other(x)):
                        return False
            return True
        return check

    def _ref(self, ref: str, depth: int) -> Check:
        if not ref.startswith("#/"):
            raise Unsupported()
        if ref not in self.refs:
            self.refs[ref] = lambda v: resolved[0](v)   # placeholder for recursive refs
            resolved: list[Check] = []
            target: Any = self.root
            for part in ref[2:].split("/"):
                if not isinstance(target, dict) or part not in target:
                    raise Unsupported()
                target = target[part]
            resolved.append(self.compile(target, depth + 1))
            self.refs[ref] = resolved[0]
        return self.refs[ref]
