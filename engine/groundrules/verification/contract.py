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


def json_problem(value: Any, depth: int = 0) -> tuple[tuple, str] | None:
    """(path, problem) of the first place where `value` is not a JSON value, else None: objects
    with string keys, arrays, strings, finite numbers, booleans and null, at most MAX_DEPTH deep.
    It recurses, but never deeper than MAX_DEPTH + 1 frames; the path is built only on failure."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return None
    if isinstance(value, (dict, list)):
        if depth >= MAX_DEPTH:
            return (), f"the value is nested deeper than {MAX_DEPTH} levels"
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    return (), f"an object key is {type(key).__name__}, not a string"
            items = value.items()
        else:
            items = enumerate(value)
        for key, sub in items:
            if isinstance(sub, str):
                continue
            found = json_problem(sub, depth + 1)
            if found is not None:
                return (key,) + found[0], found[1]
        return None
    if isinstance(value, float):
        return None if value - value == 0 else ((), f"{value} is not a JSON number")
    if isinstance(value, int):
        return None if value.bit_length() <= MAX_INT_BITS else ((), "the integer is too large")
    return (), f"a {type(value).__name__} is not a JSON value"
