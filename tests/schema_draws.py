"""Values drawn from a JSON Schema: a generator of our own over the subset the contracts use.

hypothesis-jsonschema 0.23.1, the latest, fails on this Hypothesis with `'many' object has no
attribute 'more'`. The draws are candidates: jsonschema, not the generator, decides which are
valid (a caller filters with the validator), so a branch drawn too loosely costs draws, not truth.
"""
from __future__ import annotations

import json

from hypothesis import strategies as st


def drawn(schema: dict):
    """Candidate values for `schema` (its own `$defs` resolved)."""
    return strategy(schema, schema.get("$defs", {}))


def strategy(node, defs, depth=0):
    if depth > 12:
        return st.nothing()
    if "$ref" in node:
        return strategy(defs[node["$ref"].removeprefix("#/$defs/")], defs, depth + 1)
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            base = {k: v for k, v in node.items() if k != key}
            return st.one_of([strategy({**base, **branch}, defs, depth + 1) for branch in node[key]])
    if "allOf" in node:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        return strategy(merged, defs, depth + 1)              # the other parts: jsonschema filters
    kind = node.get("type")
    if kind == "string":
        low, high = node.get("minLength", 0), min(node.get("maxLength", 12), max(node.get("minLength", 0), 12))
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: low <= len(s) <= node.get(
                "maxLength", len(s)))
        return st.text(min_size=low, max_size=high)
    if kind == "integer":
        return st.integers(node.get("minimum", -5), node.get("maximum", node.get("minimum", -5) + 50))
    if kind == "number":
        return st.floats(node.get("minimum", -5), node.get("maximum", 50), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = strategy(node.get("items", {"type": "string"}), defs, depth + 1)
        low = node.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=min(node.get("maxItems", 3), low + 2),
                        unique_by=(lambda v: json.dumps(v, sort_keys=True)) if node.get("uniqueItems") else None)
    if kind == "object":
        props = node.get("properties", {})
        required = [k for k in node.get("required", ()) if k in props]
        optional = [k for k in props if k not in required]
        extra = node.get("additionalProperties")
        fixed = st.fixed_dictionaries({k: strategy(props[k], defs, depth + 1) for k in required},
                                      optional={k: strategy(props[k], defs, depth + 1) for k in optional})
        if isinstance(extra, dict):
            more = st.dictionaries(st.text(min_size=1, max_size=6), strategy(extra, defs, depth + 1), max_size=2)
            return st.tuples(fixed, more).map(lambda pair: {**pair[1], **pair[0]})
        return fixed
    return st.nothing()
