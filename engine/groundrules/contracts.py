"""Which field paths a JSON Schema contract defines, so tables can only read real fields."""
from __future__ import annotations

import regex

from .errors import Fault, did_you_mean

_INDEX = regex.compile(r"\.([0-9]+)(?=\.|$)")   # ASCII only, as conditions.path_parts


def field_paths(schema: dict, root: dict | None = None, prefix: str = "", depth: int = 0) -> set[str]:
    """Dotted paths (`missing[].reason`) reachable through properties, items and local $refs."""
    root = root if root is not None else schema
    out: set[str] = set()
    if depth > 12 or not isinstance(schema, dict):
        return out
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        out |= field_paths(target, root, prefix, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            out |= field_paths(sub, root, prefix, depth + 1)
    for name, sub in schema.get("properties", {}).items():
        path = f"{prefix}{name}"
        out.add(path)
        out |= field_paths(sub, root, path + ".", depth + 1)
    items = schema.get("items")
    if isinstance(items, dict):
        base = prefix.rstrip(".") + "[]"
        out.add(base)
        out |= field_paths(items, root, base + ".", depth + 1)
    return out


def normalise(path: str) -> str:
    """`evidence.0.id` reads like `evidence[].id`."""
    return _INDEX.sub("[]", path)


def contract_fields(data: dict, ctx) -> frozenset | None:
    """The field paths of the contract a table names under `input:` (None when it names none)."""
    name = data.get("input")
    if not name:
        return None
    schema = ctx.schemas.get(name)
    if schema is None:
        ctx.fault("unknown-contract", f"input contract '{name}' is not under schemas/", ("input",),
                  did_you_mean(name, ctx.schemas.by_name))
        return None
    return frozenset(field_paths(schema))


def check_fields(fields: list[tuple[str, tuple]], known: frozenset | None, faults: list[Fault]) -> None:
    """A fault for every (field, key path) the contract does not define, with a did-you-mean."""
    if known is None:
        return
    for f, where in fields:
        if f != "." and normalise(f) not in known:
            faults.append(Fault("unknown-field", f"'{f}' is not a field of the input contract", where,
                                did_you_mean(normalise(f), known)))
