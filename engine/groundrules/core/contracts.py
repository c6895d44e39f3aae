"""Which field paths a JSON Schema contract defines, so tables can only read real fields."""
from __future__ import annotations

import re


_INDEX = re.compile(r"\.([0-9]+)(?=\.|$)")   # ASCII only, as conditions.path_parts


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
