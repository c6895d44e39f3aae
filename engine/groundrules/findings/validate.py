"""Tool arguments checked against schemas/finding-ledger.v1.schema.json, before any SQL runs.

The MCP SDK's own argument checking would answer a bad call with plain text; the ledger checks
every argument itself so that every refusal carries INVALID_ARGUMENT and the path of the problem.
Messages name the field and what was expected, never the rejected value (it may be an excerpt).

Before any schema check, one iterative walk refuses what JSON Schema cannot describe and what would
otherwise fail deep inside (recursion, NaN in canonical JSON, lone surrogates in UTF-8): nesting
deeper than the vocabulary's `argument_depth`, non-finite numbers and unencodable text.
Keys the caller invented are echoed only when they look like identifiers; any other key (a path,
an excerpt pasted as a key) is shown as `…`.

A valid call is the common case and sits on the write path, so validity is first decided by a
compiled checker (`schema_check.compile_check`); jsonschema runs only when that checker objects,
to name the problem, and has the last word.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import math
import re

from ..schema_check import compile_check
from ..tables import Schemas

if TYPE_CHECKING:                # jsonschema runs only to explain a refusal
    import jsonschema

CONTRACT = "finding-ledger.v1.schema.json"

_WORDS = {"minItems": "at least {} item(s)", "maxItems": "at most {} item(s)",
          "minLength": "at least {} character(s)", "maxLength": "at most {} character(s)",
          "minimum": "a number ≥ {}", "maximum": "a number ≤ {}", "uniqueItems": "unique items",
          "minProperties": "at least {} key(s)", "maxProperties": "at most {} key(s)",
          "pattern": "text matching /{}/"}


_SAFE_KEY = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def shown(key: object) -> str:
    """A caller's key as an error may show it: identifiers as they are, anything else as '…'."""
    text = str(key)
    return text if _SAFE_KEY.fullmatch(text) else "…"


def unsafe(args: Any, max_depth: int) -> tuple[str, str] | None:
    """(field, problem) for the first value no schema check should see, else None (iterative)."""
    todo: list[tuple[Any, str, int]] = [(args, "", 0)]
    while todo:
        value, field, depth = todo.pop()
        if depth > max_depth:
            return field or "(arguments)", f"nested deeper than {max_depth} levels"
        if isinstance(value, float) and not math.isfinite(value):
            return field or "(arguments)", "expected a finite number"
        if isinstance(value, str) and _SURROGATE.search(value):
            return field or "(arguments)", "text is not valid Unicode"
        if isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and _SURROGATE.search(key):
                    return field or "(arguments)", "a key is not valid Unicode"
                todo.append((item, f"{field}.{shown(key)}" if field else shown(key), depth + 1))
        elif isinstance(value, (list, tuple)):
            todo.extend((item, f"{field}[{n}]", depth + 1) for n, item in enumerate(value))
    return None


class ArgumentChecker:
    """One compiled validator per tool input; `problem(tool, args)` -> (field, problem) or None."""

    def __init__(self, schemas: Schemas, max_depth: int):
        self._schemas = schemas
        self._max_depth = max_depth
        self._validators: dict[str, Any] = {}
        self._checks: dict[str, Callable[[Any], bool] | None] = {}

    def schema(self, tool: str) -> dict:
        return self._schemas.get(CONTRACT)["$defs"][f"{tool}.input"]

    def problem(self, tool: str, args: Any) -> tuple[str, str] | None:
        hostile = unsafe(args, self._max_depth)
        if hostile is not None:
            return hostile
        if tool not in self._checks:
            defs = self._schemas.get(CONTRACT)["$defs"]
            self._checks[tool] = compile_check({"$defs": defs, "$ref": f"#/$defs/{tool}.input"})
        check = self._checks[tool]
        if check is not None and check(args):
            return None
        validator = self._validators.get(tool)
        if validator is None:
            validator = self._schemas.validator({"$ref": f"{CONTRACT}#/$defs/{tool}.input"})
            self._validators[tool] = validator
        errors = sorted(validator.iter_errors(args), key=lambda e: (len(e.absolute_path), _path(e)))
        if not errors:
            return None
        return _describe(errors[0])


def _path(error: "jsonschema.ValidationError") -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + shown(part)
    return out


def _describe(error: "jsonschema.ValidationError") -> tuple[str, str]:
    if error.validator in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match
        return _describe(best_match(error.context))
    field = _path(error) or "(arguments)"
    v, value, instance = error.validator, error.validator_value, error.instance
    if v == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return field, "missing required argument " + ", ".join(missing)
    if v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(shown(k) for k in instance if k not in allowed)[:3]
        return field, f"unknown argument {', '.join(extra)} (allowed: {', '.join(allowed)})"
    if v == "type":
        words = " or ".join(value) if isinstance(value, list) else str(value)
        return field, f"expected {words}"
    if v in ("enum", "const"):
        choices = value if v == "enum" else [value]
        return field, "expected one of: " + ", ".join(map(str, choices))
    if v in _WORDS:
        return field, "expected " + _WORDS[v].format(value)
    return field, f"does not satisfy '{v}'"
