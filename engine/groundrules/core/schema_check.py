"""The one contract checker: a compiled yes/no check first, jsonschema to explain a failure.

Every part checks its inputs through `contract(schemas, ref)`: the contract `ref` names (a file
under schemas/, optionally `#/$defs/<name>`), bundled into one self-contained schema (`bundle`),
compiled once per Schemas object. The compiled check covers the JSON Schema subset our contracts
use and answers "valid?" on hot paths, where a full jsonschema pass costs several times the
evaluation it guards; jsonschema stays the authority, explains every failure from its structured
fields, and takes over whole schemas that use a keyword outside SUPPORTED. `pattern` uses stdlib
`re.search` for our own contracts; a caller's schema (`bounded`) searches within the time budget
(bounded_patterns), as the jsonschema validators do. Only repr'd keys and literals (or named constants) reach the
generated source.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any, Callable

from . import bounded_patterns
from .uniqueness import unique
from .canonical import json_problem
from .condgen import Gen, compiled
from .tables import _to_faults
from .yamlsrc import dotted

Check = Callable[[Any], bool]

# `format` is an annotation here: no contract check is built with a format checker (jsonschema's
# default); `x-names` says which vocabulary a value names (analyst/references.py), `x-shapes` and
# `x-given` how the listing offers a node to a caller (listing/forms.py): no constraint
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "examples", "default", "$comment",
               "format", "x-names", "x-shapes", "x-given"}
SUPPORTED = ANNOTATIONS | {"type", "required", "properties", "items", "enum", "const", "minimum",
                           "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "maxProperties", "uniqueItems",
                           "additionalProperties", "$ref", "minProperties", "allOf", "anyOf", "oneOf",
                           "if", "then", "else"}

TYPE_TESTS = {
    "object": "{v}.__class__ is dict",
    "array": "{v}.__class__ is list",
    "string": "{v}.__class__ is str",
    "integer": "({v}.__class__ is int or ({v}.__class__ is float and {v}.is_integer()))",
    "number": "({v}.__class__ is int or {v}.__class__ is float)",
    "boolean": "{v}.__class__ is bool",
    "null": "{v} is None",
}


class Unsupported(Exception):
    """The schema uses a keyword this checker does not implement."""


def same(a: Any, b: Any) -> bool:
    """jsonschema's equality for enum/const: bool is not a number, 1 equals 1.0."""
    if a.__class__ is bool or b.__class__ is bool:
        return a.__class__ is b.__class__ and a == b
    return a == b


def compile_check(schema: dict, bounded: bool = False) -> Check | None:
    """A function equivalent to jsonschema's verdict, or None when the schema is outside the subset.
    `bounded`: the schema is a caller's, so its patterns search within the time budget (our own
    contracts' patterns use stdlib `re`, ~30x cheaper per search than a search with a timeout)."""
    errors: tuple = (Unsupported, RecursionError, re.error)
    if bounded:                                   # a caller's patterns compile with `regex`
        import regex
        errors += (regex.error,)
    try:
        return _Gen(schema, bounded).check()
    except errors:
        return None


class _Gen(Gen):
    def __init__(self, root: dict, bounded: bool = False):
        super().__init__()
        self.schema = root
        self.searcher = bounded_patterns.searcher if bounded else (lambda pattern: re.compile(pattern).search)
        self.names.update(same=same, unique=unique)
        self.functions: list[str] = []
        self.refs: dict[str, str] = {}
        self.inplace: set[str] = set()     # refs being compiled for the same value: a loop if met again

    def check(self) -> Check:
        top = self.function(self.schema)
        source = "\n".join(self.functions)
        namespace = dict(self.names)
        exec(compiled(source, "<groundrules schema check>"), namespace)  # noqa: S102
        return namespace[top]

    def function(self, schema: Any) -> str:
        name = self.fresh("_f")
        body = self.emit(schema, "v", 1, 0)
        self.functions.append(f"def {name}(v):\n" + "".join(body) + "    return True\n")
        return name

    def emit(self, schema: Any, v: str, ind: int, depth: int) -> list[str]:
        """Lines that `return False` when `v` breaks `schema` (at indent level `ind`)."""
        if schema is True or schema == {}:
            return []
        if not isinstance(schema, dict) or set(schema) - SUPPORTED or depth > 64:
            raise Unsupported()
        pad = "    " * ind
        out: list[str] = []
        if "$ref" in schema:
            out.append(f"{pad}if not {self.ref(schema['$ref'])}({v}):\n{pad}    return False\n")
        known = None
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if any(n not in TYPE_TESTS for n in names):
                raise Unsupported()
            test = " or ".join(TYPE_TESTS[n].format(v=v) for n in names)
            out.append(f"{pad}if not ({test}):\n{pad}    return False\n")
            known = names[0] if len(names) == 1 else None
        out += self.scalars(schema, v, pad)
        out += self.combinators(schema, v, pad)
        out += self.guarded(self.object(schema, v, ind + (known != "object"), depth),
                            f"{v}.__class__ is dict", pad, known == "object")
        if "items" in schema:
            x = self.fresh("x")
            body = self.child(schema["items"], x, ind + 1 + (known != "array"), depth + 1)
            if body:
                inner_pad = "    " * (ind + (known != "array"))
                loop = [f"{inner_pad}for {x} in {v}:\n"] + body
                out += self.guarded(loop, f"{v}.__class__ is list", pad, known == "array")
        return out

    @staticmethod
    def guarded(lines: list[str], test: str, pad: str, known: bool) -> list[str]:
        if not lines or known:
            return lines
        return [f"{pad}if {test}:\n"] + lines

    def scalars(self, schema: dict, v: str, pad: str) -> list[str]:
        out = []
        if "enum" in schema:
            values = schema["enum"]
            if all(e.__class__ is str for e in values):
                test = f"{v}.__class__ is not str or {v} not in {self.const(frozenset(values))}"
            else:
                test = f"not any(same({v}, e) for e in {self.const(tuple(values))})"
            out.append(f"{pad}if {test}:\n{pad}    return False\n")
        if "const" in schema:
            out.append(f"{pad}if not same({v}, {self.const(schema['const'])}):\n{pad}    return False\n")
        num = f"({v}.__class__ is int or {v}.__class__ is float)"
        text, array, obj = f"{v}.__class__ is str", f"{v}.__class__ is list", f"{v}.__class__ is dict"
        bounds = {"minimum": (num, "{v} < {k}"), "maximum": (num, "{v} > {k}"),
                  "minLength": (text, "len({v}) < {k}"), "maxLength": (text, "len({v}) > {k}"),
                  "minItems": (array, "len({v}) < {k}"), "maxItems": (array, "len({v}) > {k}"),
                  "minProperties": (obj, "len({v}) < {k}"), "maxProperties": (obj, "len({v}) > {k}")}
        for key, (guard, cmp) in bounds.items():
            if key in schema:
                test = cmp.format(v=v, k=self.const(schema[key]))
                out.append(f"{pad}if {guard} and {test}:\n{pad}    return False\n")
        if schema.get("uniqueItems") is True:
            out.append(f"{pad}if {array} and not unique({v}):\n{pad}    return False\n")
        if "pattern" in schema:
            search = self.const(self.searcher(schema["pattern"]))
            out.append(f"{pad}if {text} and {search}({v}) is None:\n{pad}    return False\n")
        return out

    def combinators(self, schema: dict, v: str, pad: str) -> list[str]:
        """allOf / anyOf / oneOf / if-then-else, each subschema its own generated function."""
        out = []
        for sub in schema.get("allOf", []):
            out.append(f"{pad}if not {self.function(sub)}({v}):\n{pad}    return False\n")
        if "anyOf" in schema:
            calls = " or ".join(f"{self.function(sub)}({v})" for sub in schema["anyOf"])
            out.append(f"{pad}if not ({calls}):\n{pad}    return False\n")
        if "oneOf" in schema:
            calls = " + ".join(f"{self.function(sub)}({v})" for sub in schema["oneOf"])
            out.append(f"{pad}if ({calls}) != 1:\n{pad}    return False\n")
        if "if" in schema:
            test = f"{self.function(schema['if'])}({v})"
            then = f"{self.function(schema['then'])}({v})" if "then" in schema else "True"
            other = f"{self.function(schema['else'])}({v})" if "else" in schema else "True"
            out.append(f"{pad}if not (({then}) if {test} else ({other})):\n{pad}    return False\n")
        return out

    def object(self, schema: dict, v: str, ind: int, depth: int) -> list[str]:
        pad = "    " * ind
        out: list[str] = []
        required = schema.get("required", [])
        if required:
            test = " or ".join(f"{k!r} not in {v}" for k in required)
            out.append(f"{pad}if {test}:\n{pad}    return False\n")
        props = schema.get("properties", {})
        for key, sub in props.items():
            x = self.fresh("x")
            body = self.child(sub, x, ind + 1, depth + 1)
            if body:
                out.append(f"{pad}{x} = {v}.get({key!r}, M)\n{pad}if {x} is not M:\n")
                out += body
        extra = schema.get("additionalProperties", True)
        if extra is not True:
            k, x = self.fresh("k"), self.fresh("x")
            allowed = self.const(frozenset(props))
            body = (["    " * (ind + 2) + "return False\n"] if extra is False
                    else self.child(extra, x, ind + 2, depth + 1))
            if body:
                out.append(f"{pad}for {k}, {x} in {v}.items():\n{pad}    if {k} not in {allowed}:\n")
                out += body
        return out

    def child(self, schema: Any, v: str, ind: int, depth: int) -> list[str]:
        """`emit` for a member or item: a $ref chain starts afresh one level down the value."""
        saved, self.inplace = self.inplace, set()
        try:
            return self.emit(schema, v, ind, depth)
        finally:
            self.inplace = saved

    def ref(self, ref: str) -> str:
        if not ref.startswith("#/") or ref in self.inplace:
            raise Unsupported()        # a $ref that reaches itself without descending never ends
        if ref not in self.refs:
            target: Any = self.schema
            for part in ref[2:].split("/"):
                if not isinstance(target, dict) or part not in target:
                    raise Unsupported()
                target = target[part]
            name = self.fresh("_r")
            self.refs[ref] = name
            self.inplace.add(ref)
            body = self.emit(target, "v", 1, 0)
            self.inplace.discard(ref)
            self.functions.append(f"def {name}(v):\n" + "".join(body) + "    return True\n")
        return self.refs[ref]


# ----------------------------------------------------------------------------- the one checker

@dataclass(frozen=True)
class Contract:
    """A schema's compiled check and its jsonschema validator, with the JSON limits the contract
    puts on values before any schema rule is read (nesting depth, integer size)."""

    schema: dict
    fast: Check | None
    validator: Any
    max_depth: int | None = None
    max_int_bits: int | None = None

    def valid(self, value: Any) -> bool:
        return self.fast(value) if self.fast is not None else self.validator.is_valid(value)

    def not_json(self, value: Any) -> tuple[tuple, str] | None:
        """(path, problem) when `value` is not JSON within the contract's limits (NaN, a lone
        surrogate, a set, nesting past max_depth): no schema rule can be read on it."""
        return json_problem(value, max_depth=self.max_depth, max_int_bits=self.max_int_bits)

    def errors(self, value: Any) -> list:
        """jsonschema's errors for `value`, shallowest first then by path ([] when valid)."""
        if self.valid(value):
            return []
        errors = list(self.validator.iter_errors(value))
        return sorted(errors, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path],
                                             str(e.validator)))

    def problem(self, value: Any) -> tuple[tuple, str] | None:
        """(path, one readable sentence) of the first problem of `value`, or None when it satisfies
        the contract. The sentence comes from jsonschema's structured fields, never its text."""
        found = self.not_json(value)
        if found is not None:
            return found
        for error in self.errors(value):
            for fault in faults_of(error):
                return tuple(fault.path), fault.message
        return None

    def located(self, value: Any) -> str | None:
        """`problem` as 'path: sentence' ('(root)' for the value itself)."""
        found = self.problem(value)
        return None if found is None else f"{dotted(found[0]) or '(root)'}: {found[1]}"


def contract(schemas, ref: str, *, max_depth: int | None = None, max_int_bits: int | None = None) -> Contract:
    """The Contract of `ref` ('file' or 'file#/$defs/name'), built once and kept on `schemas`."""
    def build() -> Contract:
        return of_schema(bundle(schemas, ref), schemas.validator, max_depth, max_int_bits)
    return schemas.memoized(("contract", ref, max_depth, max_int_bits), build)


def of_schema(schema: dict, validator_for: Callable[[dict], Any], max_depth: int | None = None,
              max_int_bits: int | None = None, *, bounded: bool = False) -> Contract:
    """A Contract for a self-contained schema (a bundle, or with `bounded` a host's inline schema)."""
    return Contract(schema, compile_check(schema, bounded), validator_for(schema), max_depth, max_int_bits)


def faults_of(error):
    """The located sentences of one jsonschema error (tables.py words them for every contract)."""
    return _to_faults(error)


# ----------------------------------------------------------------------------- bundling

def bundle(schemas, ref: str) -> dict:
    """One self-contained schema for `ref`: every definition it reaches, in its own file or another
    under schemas/, copied under `$defs` with local `#/$defs/...` refs, so that a client (an MCP
    host), jsonschema and the compiled check resolve every $ref within it. A definition that is only
    a $ref stands for its target. Definitions of the target's file keep their names; those of other
    files are named `<file stem>:<name>`."""
    file, _, pointer = ref.partition("#")
    start = schemas.get(file)
    if not isinstance(start, dict):
        raise KeyError(file)
    if pointer:
        target = _target("#" + pointer, file)
        start = _definition(schemas, target)
        while isinstance(start, dict) and set(start) == {"$ref"} and isinstance(start["$ref"], str):
            target = _target(start["$ref"], target[0])
            start = _definition(schemas, target)
        file = target[0]
    names: dict[tuple, str] = {}
    todo: list[tuple] = []

    def name_of(target: tuple) -> str:
        if target not in names:
            stem = target[0].rsplit("/", 1)[-1].removesuffix(".schema.json")
            names[target] = target[1] if target[0] == file else f"{stem}:{target[1]}" if target[1] else stem
            todo.append(target)
        return names[target]

    def rewrite(node: Any, current: str, top: bool = False) -> Any:
        if isinstance(node, list):
            return [rewrite(v, current) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if top and key in ("$defs", "$id"):
                continue
            if key == "$ref" and isinstance(value, str):
                out[key] = "#/$defs/" + name_of(_target(value, current))
            else:
                out[key] = rewrite(value, current)
        return out

    root = rewrite(start, file, True)
    defs: dict = {}
    while todo:
        target = todo.pop()
        definition = rewrite(_definition(schemas, target), target[0], True)
        if not target[1]:                                   # a whole file: its root, under a name
            definition = {k: v for k, v in definition.items() if k not in ("$schema", "title")}
        defs[names[target]] = definition
    if defs:
        root["$defs"] = {k: defs[k] for k in sorted(defs)}
    return root


def _definition(schemas, target: tuple) -> Any:
    document = schemas.get(target[0])
    if not target[1] and isinstance(document, dict):
        return document
    defs = document.get("$defs") if isinstance(document, dict) else None
    if not isinstance(defs, dict) or target[1] not in defs:
        raise KeyError(f"{target[0]}#/$defs/{target[1]}")
    return defs[target[1]]


def _target(ref: str, current: str) -> tuple[str, str]:
    """(schema file, $defs name) that `ref`, written inside `current`, points at ('' for the
    root of another file)."""
    path, _, pointer = ref.partition("#")
    target = posixpath.normpath(posixpath.join(posixpath.dirname(current), path)) if path else current
    if path and not pointer:                                # another file's root
        return target, ""
    if not pointer.startswith("/$defs/") or pointer.count("/") != 2:
        raise KeyError(ref)
    return target, pointer[len("/$defs/"):]
