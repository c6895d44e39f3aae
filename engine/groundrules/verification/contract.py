"""The verify v1 contract (`schemas/verify.v1.schema.json`): its parts, through the one checker.

Before a part's schema is read, `json_problem` makes sure the value is JSON at all: the contract
leaves statements, conditions and data values open, so without it a NaN, a set or a value nested
thousands deep would pass the shape check and then crash a later step or the envelope's serialiser.
"""
from __future__ import annotations

from typing import Any

from ..core.canonical import MAX_INT_BITS, json_problem as canonical_json_problem
from ..core.schema_check import contract
from ..core.yamlsrc import dotted
from .instances import located

CONTRACT = "verify.v1.schema.json"
# Deeper than any real extraction, shallow enough that every recursive step after the shape check
# (jsonschema, copies, serialisation) stays far from the interpreter's recursion limit.
MAX_DEPTH = 64


def problems(schemas, part: str, value: Any) -> list:
    """jsonschema errors of `value` against `$defs/<part>`, by path; [None] when it is too deep to
    check at all; [] when it satisfies the part."""
    try:
        return contract(schemas, f"{CONTRACT}#/$defs/{part}").errors(value)
    except RecursionError:
        return [None]


def message(error) -> str:
    return "the value is nested too deeply" if error is None else located(error)


def json_message(path: tuple, problem: str) -> str:
    """A `json_problem` as one sentence, located like jsonschema's problems."""
    return f"at {dotted(path)}: {problem}" if path else problem


def json_problem(value: Any) -> tuple[tuple, str] | None:
    """canonical.json_problem within this contract's depth and integer limits."""
    return canonical_json_problem(value, max_depth=MAX_DEPTH, max_int_bits=MAX_INT_BITS)
