"""Input checking against the JSON Schema contracts, reported as one readable sentence."""
from __future__ import annotations

from typing import Any

from .canonical import plain
from .schema_check import compile_check
from .tables import Schemas, _to_faults
from .yamlsrc import dotted


def first_problem(schemas: Schemas, name: str, value: Any) -> str | None:
    """None when `value` satisfies contract `name`; else the first problem as 'path: message'."""
    fast, validator = _validators(schemas, name)
    if fast is not None and fast(value):
        return None
    errors = sorted(validator.iter_errors(value), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    for error in errors:
        for fault in _to_faults(error):
            where = dotted(fault.path) or "(root)"
            return f"{where}: {fault.message}"
    return None


def checked(schemas: Schemas, name: str, value: Any) -> tuple[Any, str | None]:
    """(value, None) when `value` satisfies contract `name`, else (value, the first problem). A value
    jsonschema accepts only through subclasses of the JSON types (an OrderedDict) comes back as a
    plain copy, so that rules comparing by class read it as the JSON it stands for."""
    fast, _ = _validators(schemas, name)
    if fast is not None and fast(value):
        return value, None
    problem = first_problem(schemas, name, value)
    return (value, problem) if problem is not None else (plain(value), None)


def _validators(schemas: Schemas, name: str):
    def build():
        schema = schemas.get(name)
        return compile_check(schema), schemas.validator(schema)
    return schemas.memoized(("contract", name), build)
