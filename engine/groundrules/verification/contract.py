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


_cache: dict = {}


def checker(schemas, part: str) -> PartChecker:
    """The checker of `$defs/<part>`, cached on the very Schemas object it was built from."""
    key = (id(schemas), part)
    hit = _cache.get(key)
    if hit is None or hit[0] is not schemas:
        root = schemas.get(CONTRACT)
        schema = {**root, "$ref": f"#/$defs/{part}"}
        hit = (schemas, PartChecker(compile_check(schema), schemas.validator(schema)))
        if len(_cache) > 64:        # a host that reloads often must not keep every old rulebook
            _cache.clear()
        _cache[key] = hit
    return hit[1]


def message(error) -> str:
    return "the value is nested too deeply" if error is None else located(error)
