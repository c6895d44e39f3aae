"""Extension schemas: given inline, or named instances in `rules/instances/` (kind
`extension_schema`, part of the rulebook and its version). Both are checked by the same rules
and compiled once into the facts verification needs: the fields in order, which are required,
the root and field descriptions, and a checker per field."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..core import codes, limits
from ..core.bounded_patterns import PatternTimeout, bounded
from ..core.errors import ECHO_ITEMS, GroundrulesError, closest, echo
from ..core.messages import say
from ..core.schema_check import Contract, of_schema
from ..core.tables import _to_faults
from ..core.yamlsrc import dotted

if TYPE_CHECKING:                # jsonschema is imported when an extension schema is compiled
    import jsonschema

    from ..core.tables import CompileContext

KIND = "extension_schema"
INVALID_ARGUMENT = codes.INVALID_ARGUMENT
_DEFS = ("$defs", "definitions")
_MAX_DEPTH = 64
DIALECT = "https://json-schema.org/draft/2020-12/schema"     # what the compiled check and the metaschema read
_NOWHERE = object()
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")   # name -> schema
_DATA = ("const", "enum", "default", "examples")          # values, not schemas: a "pattern" in them is data
_IN_PLACE_ONE = ("not", "if", "then", "else")


@dataclass(frozen=True)
class FieldChecker:
    """Whether one field's value satisfies its schema (the one contract checker)."""

    contract: Contract

    def problem(self, value: Any) -> str | None:
        try:
            errors = self.contract.errors(value)
        except PatternTimeout:      # the host's pattern, not the model's value: a refusal, PATTERN_TIMEOUT
            raise
        except Exception as exc:  # noqa: BLE001 - a host schema that cannot run must not crash verify
            return f"cannot be checked ({type(exc).__name__})"
        return located(errors[0]) if errors else None


@dataclass(frozen=True)
class ExtensionSchema:
    name: str | None
    schema: dict
    fields: tuple              # property names, in the schema's order
    required: frozenset
    description: str | None    # the root description
    field_descriptions: dict   # field -> description
    checkers: dict             # field -> FieldChecker


@dataclass(frozen=True)
class ExtensionSchemaTable:
    kind: str
    id: str
    file: str
    extension: ExtensionSchema


def describe(error: jsonschema.ValidationError) -> str:
    """One readable sentence from jsonschema's structured fields (never its message text). The
    schema is the caller's: its pattern and its list of allowed values are echoes, and cut as such."""
    if error.validator == "format":
        return f"expected a valid {error.validator_value}"
    if error.validator == "pattern":
        return f"expected text matching /{echo(error.validator_value)}/"
    if error.validator == "enum" and len(error.validator_value) > ECHO_ITEMS:
        return f"expected one of the schema's {len(error.validator_value)} values"
    for fault in _to_faults(error):
        return fault.message.replace("the table's", "the schema's")
    return f"does not satisfy '{error.validator}'"


def located(error: jsonschema.ValidationError) -> str:
    """`describe`, prefixed with where in the value the problem is."""
    where = dotted(tuple(error.absolute_path))
    return f"at {where}: {describe(error)}" if where else describe(error)


@lru_cache(maxsize=1)
def _meta() -> "jsonschema.protocols.Validator":
    """The metaschema check of a caller's schema, bounded as its own check is: a `required` (any
    uniqueItems keyword of the metaschema) of 5,000 objects cost jsonschema a minute comparing
    them pairwise, and one item's explanation is enough for a refusal."""
    from jsonschema import Draft202012Validator
    return bounded(Draft202012Validator)(Draft202012Validator.META_SCHEMA,
                                         format_checker=Draft202012Validator.FORMAT_CHECKER)


def schema_problems(schema: Any) -> list[tuple[tuple, str]]:
    """Why `schema` cannot serve as an extension schema (empty when it can)."""
    if not isinstance(schema, dict):
        return [((), "an extension schema is a JSON object")]
    try:
        errors = sorted(_meta().iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    except RecursionError:
        return [((), "the schema is nested too deeply")]
    if errors:
        return [(tuple(errors[0].absolute_path), describe(errors[0]))]
    out: list[tuple[tuple, str]] = []
    if schema.get("type") != "object":
        out.append((("type",), "the root must have type 'object'"))
    props = schema.get("properties")
    if not isinstance(props, dict):
        out.append((("properties",), "the root must define its fields under 'properties'"))
        props = {}
    for i, name in enumerate(schema.get("required", ())):
        if name not in props:
            out.append((("required", i), f"required field '{echo(name)}' is not under 'properties'"))
    out += _ref_problems(schema, schema, (), 0)
    if not out:
        out += _ref_cycles(schema)
    return out


def _ref_problems(node: Any, root: dict, path: tuple, depth: int) -> list[tuple[tuple, str]]:
    if depth > _MAX_DEPTH:
        return [(path, "the schema is nested too deeply")]
    out: list[tuple[tuple, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$dynamicRef", "$recursiveRef"):
                out.append((path + (key,), f"'{key}' is not supported in an extension schema"))
            elif key == "$schema" and value not in (DIALECT, DIALECT + "#"):
                out.append((path + (key,), f"an extension schema is draft 2020-12: '$schema' may only be {DIALECT}"))
            elif key == "$ref" and isinstance(value, str) and not _resolves(value, root):
                out.append((path + (key,), f"'$ref' {echo(value)!r} must point inside the schema (#/...)"))
            else:
                out += _ref_problems(value, root, path + (key,), depth + 1)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _ref_problems(value, root, path + (i,), depth + 1)
    return out


def _resolves(ref: str, root: dict) -> bool:
    return _target(ref, root) is not _NOWHERE


def _target(ref: str, root: dict) -> Any:
    """The subschema a local '#...' reference points at, else _NOWHERE."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return _NOWHERE
    target: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return _NOWHERE
    return target


def _ref_cycles(root: dict) -> list[tuple[tuple, str]]:
    """A `$ref` that reaches itself without descending into the value (only through $ref, allOf,
    anyOf, oneOf, not, if/then/else, dependentSchemas) makes validation recurse for ever, whatever
    the value: refuse the schema instead of failing on every candidate."""
    graph = {ref: _in_place_refs(_target(ref, root)) for ref in _all_refs(root)}
    for ref in sorted(graph):
        seen: set = set()
        todo = list(graph[ref])
        while todo:
            nxt = todo.pop()
            if nxt == ref:
                return [((), f"'$ref' {echo(ref)!r} refers back to itself without descending into the value")]
            if nxt not in seen:
                seen.add(nxt)
                todo.extend(graph.get(nxt, ()))
    return []


def _all_refs(root: dict) -> set:
    refs: set = set()
    todo: list = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return refs


def _in_place_refs(node: Any) -> list[str]:
    """The references a schema applies to the same value it is given."""
    out: list[str] = []
    todo: list = [node]
    while todo:
        item = todo.pop()
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("$ref"), str):
            out.append(item["$ref"])
        for key in _IN_PLACE_LISTS:
            if isinstance(item.get(key), list):
                todo.extend(item[key])
        todo.extend(item.get(key) for key in _IN_PLACE_ONE)
        if isinstance(item.get("dependentSchemas"), dict):
            todo.extend(item["dependentSchemas"].values())
    return out


def build(schema: dict, name: str | None) -> ExtensionSchema:
    """Compile a schema that passed `schema_problems`."""
    from jsonschema import Draft202012Validator
    checked_by = bounded(Draft202012Validator)      # a caller's patterns run within their time budget
    props = schema["properties"]
    defs = {k: schema[k] for k in _DEFS if k in schema}
    checkers = {}
    descriptions = {}
    for field, sub in props.items():
        full = {**defs, **sub} if isinstance(sub, dict) else sub
        checkers[field] = FieldChecker(of_schema(full, checked_by, bounded=True) if isinstance(full, dict)
                                       else Contract(full, None, checked_by(full)))
        text = _description(sub, schema)
        if text is not None:
            descriptions[field] = text
    return ExtensionSchema(name, schema, tuple(props), frozenset(schema.get("required", ())),
                           _description(schema, schema), descriptions, checkers)


def _description(node: Any, root: dict) -> str | None:
    """The description of a (sub)schema: its own, else the one its `$ref` chain reaches (the same
    value is described either way). `$ref` cycles were refused by `schema_problems`."""
    seen: set = set()
    while isinstance(node, dict):
        text = node.get("description")
        if isinstance(text, str) and text:
            return text
        ref = node.get("$ref")
        if not isinstance(ref, str) or ref in seen:
            return None
        seen.add(ref)
        node = _target(ref, root)
    return None


def resolve(schema: Any, book) -> ExtensionSchema:
    """The compiled schema for an inline dict or an instance name; INVALID_ARGUMENT otherwise."""
    if isinstance(schema, str):
        instances = {t.id: t for t in book.of_kind(KIND)}
        if schema not in instances:
            close = closest(schema, instances)
            words = say(book, "verify.instance_unknown_close", name=echo(schema), closest=close) if close else \
                say(book, "verify.instance_unknown", name=echo(schema), instances=sorted(instances))
            raise GroundrulesError(INVALID_ARGUMENT, words, field="schema", instance=echo(schema))
        return instances[schema].extension
    if not isinstance(schema, dict):
        raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.schema_kind"), field="schema")
    try:
        text = json.dumps(schema, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.schema_not_json"), field="schema") from None
    cap = limits.pattern_max_chars(book)
    found = _long_pattern(schema, cap) if '"pattern' in text else None     # no key pattern(Properties): none
    if found is not None:
        raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.pattern_long", at=dotted(found[0]), cap=cap,
                                                     length=found[1]), field="schema")
    try:
        return _inline(text)
    except SchemaProblem as problem:
        raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.schema_problem", at=problem.at,
                                                     problem=problem.problem), field="schema") from None


class SchemaProblem(Exception):
    """What is wrong with an inline schema, and where (the caller words it in its language)."""

    def __init__(self, at: str, problem: str):
        super().__init__(f"{at}: {problem}")
        self.at, self.problem = at, problem


def _long_pattern(schema: dict, cap: int) -> tuple[tuple, int] | None:
    """(where, how long) the first pattern of a caller's schema longer than `cap` is (a `pattern`,
    or a `patternProperties` name), in document order: refused before the metaschema check or the
    checks compile it, since compiling one costs before any time budget applies."""
    todo: list[tuple[tuple, Any]] = [((), schema)]
    while todo:
        path, node = todo.pop()
        if isinstance(node, list):
            todo.extend(reversed([(path + (i,), item) for i, item in enumerate(node)]))
        if not isinstance(node, dict):
            continue
        below: list[tuple[tuple, Any]] = []
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str) and len(value) > cap:
                return path + (key,), len(value)
            if key in _NAMED and isinstance(value, dict):
                for name, sub in value.items():
                    if key == "patternProperties" and len(name) > cap:
                        return path + (key, name), len(name)
                    below.append((path + (key, name), sub))
            elif key not in _DATA:
                below.append((path + (key,), value))
        todo.extend(reversed(below))
    return None


@lru_cache(maxsize=64)
def _inline(text: str) -> ExtensionSchema:
    """Inline schemas compiled once per distinct text (key order kept: it is the field order)."""
    schema = json.loads(text)
    problems = schema_problems(schema)
    if problems:
        path, message = problems[0]
        raise SchemaProblem(dotted(path), message)
    return build(schema, None)


def compile_instance(data: dict, ctx: CompileContext) -> ExtensionSchemaTable | None:
    for path, message in schema_problems(data["schema"]):
        ctx.fault("bad-extension-schema", message, ("schema",) + path,
                  "extension schemas are JSON Schema objects with type: object and properties")
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return ExtensionSchemaTable(KIND, data["id"], ctx.source.file, build(data["schema"], data["id"]))
