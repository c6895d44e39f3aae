"""The verify v1 contract (`schemas/verify.v1.schema.json`): checkers for its parts.

A fast yes/no check answers the common case; jsonschema explains a failure from its structured
fields. Checkers are built once per rulebook's schemas. Before either runs, `json_problem` makes
sure the value is JSON at all: the contract leaves statements, conditions and data values open, so
without it a NaN, a set or a value nested thousands deep would pass the shape check and then crash
a later step or the envelope's serialiser.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..canonical import json_problem as canonical_json_problem
from ..schema_check import compile_check
from ..yamlsrc import dotted
from .instances import located

CONTRACT = "verify.v1.schema.json"
# Deeper than any real extraction, shallow enough that every recursive step after the shape check
# (jsonschema, copies, serialisation) stays far from the interpreter's recursion limit.
MAX_DEPTH = 64
# Python refuses to print an int of more than 4300 digits; 14,000 bits stay below that.
MAX_INT_BITS = 14_000


@dataclass(frozen=True)
class PartChecker:
    fast: Any
    validator: Any

    def problems(self, value: Any) -> list:
        """jsonschema errors of `value`, sorted by path; [] when it satisfies the part."""
        if self.fast is not None and self.fast(value):
            return []
        try:
            errors = list(self.validator.iter_errors(value))
        except RecursionError:
            return [None]
        return sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)))


def checker(schemas, part: str) -> PartChecker:
    """The checker of `$defs/<part>`, kept on the Schemas object it was built from."""
    def build() -> PartChecker:
        schema = {**schemas.get(CONTRACT), "$ref": f"#/$defs/{part}"}
        return PartChecker(compile_check(schema), schemas.validator(schema))
    return schemas.memoized(("verify", part), build)


def message(error) -> str:
    return "the value is nested too deeply" if error is None else located(error)


def json_message(path: tuple, problem: str) -> str:
    """A `json_problem` as one sentence, located like jsonschema's problems."""
    return f"at {dotted(path)}: {problem}" if path else problem


def json_problem(value: Any) -> tuple[tuple, str] | None:
    """canonical.json_problem within this contract's depth and integer limits."""
    return canonical_json_problem(value, max_depth=MAX_DEPTH, max_int_bits=MAX_INT_BITS)
