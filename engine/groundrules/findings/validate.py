"""Tool arguments checked against schemas/finding-ledger.v1.schema.json, before any SQL runs.

The MCP SDK's own argument checking would answer a bad call with plain text; the ledger checks
every argument itself so that every refusal carries INVALID_ARGUMENT and the path of the problem.
Messages name the field and what was expected, never the rejected value (it may be an excerpt).

A valid call is the common case and sits on the write path, so validity is first decided by a
small compiled checker for the keywords the contract uses (`compile_check`); jsonschema runs only
when that checker objects, to name the problem, and has the last word.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import jsonschema

from ..tables import Schemas

CONTRACT = "finding-ledger.v1.schema.json"

_WORDS = {"minItems": "at least {} item(s)", "maxItems": "at most {} item(s)",
          "minLength": "at least {} character(s)", "maxLength": "at most {} character(s)",
          "minimum": "a number ≥ {}", "maximum": "a number ≤ {}", "uniqueItems": "unique items",
          "minProperties": "at least {} key(s)", "maxProperties": "at most {} key(s)",
          "pattern": "text matching /{}/"}


class ArgumentChecker:
    """One compiled validator per tool input; `problem(tool, args)` -> (field, problem) or None."""

    def __init__(self, schemas: Schemas):
        self._schemas = schemas
        self._validators: dict[str, Any] = {}
        self._checks: dict[str, Callable[[Any], bool]] = {}

    def schema(self, tool: str) -> dict:
        return self._schemas.get(CONTRACT)["$defs"][f"{tool}.input"]

    def problem(self, tool: str, args: Any) -> tuple[str, str] | None:
        check = self._checks.get(tool)
        if check is None:
            defs = self._schemas.get(CONTRACT)["$defs"]
            check = self._checks[tool] = compile_check(defs[f"{tool}.input"], defs)
        if check(args):
            return None
        validator = self._validators.get(tool)
        if validator is None:
            validator = self._schemas.validator({"$ref": f"{CONTRACT}#/$defs/{tool}.input"})
            self._validators[tool] = validator
        errors = sorted(validator.iter_errors(args), key=lambda e: (len(e.absolute_path), _path(e)))
        if not errors:
            return None
        return _describe(errors[0])


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def _describe(error: jsonschema.ValidationError) -> tuple[str, str]:
    if error.validator in ("anyOf", "oneOf") and error.context:
        return _describe(jsonschema.exceptions.best_match(error.context))
    field = _path(error) or "(arguments)"
    v, value, instance = error.validator, error.validator_value, error.instance
    if v == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return field, "missing required argument " + ", ".join(missing)
    if v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(k for k in instance if k not in allowed)[:3]
        return field, f"unknown argument {', '.join(extra)[:100]} (allowed: {', '.join(allowed)})"
    if v == "type":
        words = " or ".join(value) if isinstance(value, list) else str(value)
        return field, f"expected {words}"
    if v in ("enum", "const"):
        choices = value if v == "enum" else [value]
        return field, "expected one of: " + ", ".join(map(str, choices))
    if v in _WORDS:
        return field, "expected " + _WORDS[v].format(value)
    return field, f"does not satisfy '{v}'"


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "number": lambda v: type(v) in (int, float),
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
}


def _unique_key(value: Any) -> Any:
    if type(value) in (int, float):
        return ("n", float(value))
    if type(value) is list:
        return ("l", tuple(_unique_key(v) for v in value))
    if type(value) is dict:
        return ("d", tuple(sorted((k, _unique_key(v)) for k, v in value.items())))
    return (type(value).__name__, value)


def compile_check(schema: dict, defs: dict, _seen: dict | None = None) -> Callable[[Any], bool]:
    """value -> valid? for the keywords the ledger contract uses; an unknown keyword makes the
    check answer False, so jsonschema decides."""
    seen = {} if _seen is None else _seen
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name not in seen:
            seen[name] = None
            seen[name] = compile_check(defs[name], defs, seen)
        return lambda v: seen[name](v)
    tests: list[Callable[[Any], bool]] = []
    for key, arg in schema.items():
        if key in ("description", "title", "$schema", "$id", "$defs"):
            continue
        if key == "type":
            kinds = [_TYPES[t] for t in (arg if isinstance(arg, list) else [arg])]
            tests.append(lambda v, kinds=kinds: any(k(v) for k in kinds))
        elif key == "properties":
            props = {name: compile_check(sub, defs, seen) for name, sub in arg.items()}
            tests.append(lambda v, props=props: type(v) is not dict or all(
                props[k](v[k]) for k in props if k in v))
        elif key == "required":
            tests.append(lambda v, arg=tuple(arg): type(v) is not dict or all(k in v for k in arg))
        elif key == "additionalProperties":
            known = frozenset(schema.get("properties", {}))
            if arg is False:
                tests.append(lambda v, known=known: type(v) is not dict or all(k in known for k in v))
            else:
                extra = compile_check(arg, defs, seen)
                tests.append(lambda v, known=known, extra=extra: type(v) is not dict or all(
                    extra(x) for k, x in v.items() if k not in known))
        elif key == "items":
            item = compile_check(arg, defs, seen)
            tests.append(lambda v, item=item: type(v) is not list or all(item(x) for x in v))
        elif key in ("minLength", "maxLength"):
            cmp = (lambda n, a: n >= a) if key == "minLength" else (lambda n, a: n <= a)
            tests.append(lambda v, arg=arg, cmp=cmp: type(v) is not str or cmp(len(v), arg))
        elif key in ("minItems", "maxItems"):
            cmp = (lambda n, a: n >= a) if key == "minItems" else (lambda n, a: n <= a)
            tests.append(lambda v, arg=arg, cmp=cmp: type(v) is not list or cmp(len(v), arg))
        elif key in ("minProperties", "maxProperties"):
            cmp = (lambda n, a: n >= a) if key == "minProperties" else (lambda n, a: n <= a)
            tests.append(lambda v, arg=arg, cmp=cmp: type(v) is not dict or cmp(len(v), arg))
        elif key == "minimum":
            tests.append(lambda v, arg=arg: type(v) not in (int, float) or v >= arg)
        elif key == "uniqueItems" and arg is True:
            tests.append(lambda v: type(v) is not list or len({_unique_key(x) for x in v}) == len(v))
        elif key == "pattern":
            pattern = re.compile(arg)
            tests.append(lambda v, pattern=pattern: type(v) is not str or pattern.search(v) is not None)
        elif key == "anyOf":
            subs = [compile_check(sub, defs, seen) for sub in arg]
            tests.append(lambda v, subs=subs: any(s(v) for s in subs))
        else:
            return lambda v: False
    return lambda v: all(t(v) for t in tests)
