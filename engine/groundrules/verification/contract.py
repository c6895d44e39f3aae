"""The verify v1 contract (`schemas/verify.v1.schema.json`): checkers for its parts.

A fast yes/no check answers the common case; jsonschema explains a failure from its structured
fields. Checkers are built once per rulebook's schemas.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schema_check import compile_check
from .instances import located

CONTRACT = "verify.v1.schema.json"


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
