"""Checking a fold payload against evidence v1, item by item.

The contract's root validates the whole payload, but a record's type picks one closed schema
(`record_<type>`, for every type the event catalogue lists), so the fold validates the shell, then
each record against the schema its type names and each interpretation on its own: the same
verdicts (a test holds them equal), without jsonschema trying every record type's branch on every
record. The checks are the one contract checker's (groundrules.core.schema_check).
"""
from __future__ import annotations

from typing import Any, Iterable

from ..core.schema_check import contract
from ..core.yamlsrc import dotted

NAME = "evidence.v1.schema.json"


def first_problem(schemas, record_types: Iterable[str], payload: Any) -> str | None:
    """None when `payload` satisfies evidence v1, else the first problem as 'path: message'."""
    shell = contract(schemas, f"{NAME}#/$defs/payload_shell")
    found = shell.not_json(payload)
    if found is not None:
        return _said((), found)
    problem = _said((), shell.problem(payload))
    if problem:
        return problem
    types = frozenset(record_types)
    for n, record in enumerate(payload["records"]):
        problem = _said(("records", n), _record(schemas, types, record))
        if problem:
            return problem
    for n, interp in enumerate(payload["interpretations"]):
        problem = _said(("interpretations", n), contract(schemas, f"{NAME}#/$defs/interpretation").problem(interp))
        if problem:
            return problem
    return None


def record_problem(schemas, record_types: Iterable[str], record: Any, at: str) -> str | None:
    """The first problem of one record (the ledger checks each record it appends)."""
    found = _record(schemas, frozenset(record_types), record)
    return None if found is None else f"{at}.{_said((), found)}"


def _record(schemas, types: frozenset, record: Any) -> tuple[tuple, str] | None:
    kind = record.get("type") if isinstance(record, dict) else None
    kind = kind if isinstance(kind, str) else None
    return contract(schemas, f"{NAME}#/$defs/" + (f"record_{kind}" if kind in types else "record")).problem(record)


def _said(prefix: tuple, found: tuple[tuple, str] | None) -> str | None:
    if found is None:
        return None
    return f"{dotted(prefix + tuple(found[0])) or '(root)'}: {found[1]}"
