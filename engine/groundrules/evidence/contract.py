"""Checking a fold payload against evidence v1, item by item.

The contract's root validates the whole payload, but a record's type picks one closed schema
(`record_<type>`), so the fold validates the shell, then each record against the schema its type
names and each interpretation on its own: the same verdicts (a test holds them equal), without
jsonschema trying every record type's branch on every record.
"""
from __future__ import annotations

from typing import Any

from ..canonical import json_problem
from ..schema_check import compile_check
from ..tables import Schemas, _to_faults
from ..yamlsrc import dotted

NAME = "evidence.v1.schema.json"
RECORD_TYPES = ("message", "tool_receipt", "injected_field", "lock", "derived")


def _validator(schemas: Schemas, pointer: str):
    """A validator for one $def with every local $ref inlined: the contract has no recursive refs,
    and resolving refs through the registry on every record costs more than the checks."""
    def build():
        root = schemas.get(NAME)
        schema = _inline(root["$defs"][pointer], root)
        return compile_check(schema), schemas.validator(schema)
    return schemas.memoized(("evidence", pointer), build)


def _inline(node: Any, root: dict) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            target = _inline(root["$defs"][ref[len("#/$defs/"):]], root)
            return {"allOf": [target, _inline(rest, root)]} if rest else target
        return {k: _inline(v, root) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, root) for v in node]
    return node


def first_problem(schemas: Schemas, payload: Any) -> str | None:
    """None when `payload` satisfies evidence v1, else the first problem as 'path: message'."""
    problem = unwritable(payload, ()) or _check(schemas, "payload_shell", payload, ())
    if problem:
        return problem
    for n, record in enumerate(payload["records"]):
        problem = _record_check(schemas, record)
        if problem:
            return f"records[{n}].{problem}"
    for n, interp in enumerate(payload["interpretations"]):
        problem = _check(schemas, "interpretation", interp, ("interpretations", n))
        if problem:
            return problem
    return None


def record_problem(schemas: Schemas, record: Any, at: str) -> str | None:
    """The first problem of one record (the store checks each record it appends)."""
    problem = unwritable(record, ()) or _record_check(schemas, record)
    return f"{at}.{problem}" if problem else None


def _record_check(schemas: Schemas, record: Any) -> str | None:
    kind = record.get("type") if isinstance(record, dict) else None
    return _check(schemas, f"record_{kind}" if kind in RECORD_TYPES else "record", record, ())


def unwritable(value: Any, prefix: tuple) -> str | None:
    """The first thing in `value` that JSON cannot carry, as 'path: message'. JSON Schema admits NaN,
    infinity and lone surrogates, yet an output holding one could never be printed, and SQLite cannot
    store the surrogate."""
    found = json_problem(value)
    return None if found is None else f"{dotted(prefix + found[0]) or '(root)'}: {found[1]}"


def _check(schemas: Schemas, pointer: str, value: Any, prefix: tuple) -> str | None:
    fast, validator = _validator(schemas, pointer)
    if fast(value) if fast is not None else validator.is_valid(value):
        return None
    errors = sorted(validator.iter_errors(value),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    for error in errors:
        for fault in _to_faults(error):
            return f"{dotted(prefix + tuple(fault.path)) or '(root)'}: {fault.message}"
    return f"{dotted(prefix) or '(root)'}: does not satisfy evidence v1"
