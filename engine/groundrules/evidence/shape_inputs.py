"""The schema of what a seed shape accepts: each shape of rules/seed_shapes.yaml, read backwards.

A shape maps an item to the internal shape the contract checks (`shapes.py`). So the items a shape
admits are those whose image satisfies the target schema: the target's properties with every
renamed key back under its source name (a dotted source is a key of a nested object), the keys the
shape sets (and an id it makes) optional, the `missing` key absent, the `present` key required.
The listing offers these beside the internal shapes (an `x-shapes` node), so a seed-shaped record
or event that the fold accepts is one the listed schema allows: one table, read both ways.
"""
from __future__ import annotations

from typing import Callable

from .shapes import Shape, ShapeMap

Resolve = Callable[[dict], dict]


def given_forms(shapes: ShapeMap, where: str, targets: dict[str, dict], resolve: Resolve) -> list[dict]:
    """For every shape that applies to `where` ('records' or 'events'), the schema of the items it
    admits, one per target it can map to: `targets` maps a record type (or '' for events) to its
    internal schema; a shape that sets `type` maps to that type's, one that does not to each
    target whose properties hold its `present` key (under the name the shape renames it to)."""
    out = []
    for shape in shapes.shapes:
        if shape.applies_to != where:
            continue
        fixed = dict(shape.set).get("type")
        head = dict(shape.rename).get(shape.present, shape.present).split(".")[0]   # under its target name
        for name, target in targets.items():
            schema = resolve(target)
            if (fixed is not None and name != fixed) or (fixed is None and head not in schema.get("properties", {})):
                continue
            given = _preimage(shape, schema, resolve)
            if given is not None:
                out.append(given)
    return out


def _preimage(shape: Shape, schema: dict, resolve: Resolve) -> dict | None:
    props = dict(schema.get("properties", {}))
    required = list(schema.get("required", ()))
    nested: dict[str, dict] = {}                  # a source's parent key -> its properties
    nested_required: dict[str, list] = {}
    for source, target in shape.rename:
        t_head, _, t_rest = target.partition(".")
        if t_head not in props:
            continue
        if t_rest:                                # a key of a nested object, e.g. lock.quote
            parent = resolve(props[t_head])
            sub = parent.get("properties", {}).get(t_rest)
            needed = t_head in required and t_rest in parent.get("required", ())
        else:
            sub, needed = props[t_head], t_head in required
        if sub is None:
            continue
        s_head, _, s_rest = source.partition(".")
        if s_rest:
            nested.setdefault(s_head, {})[s_rest] = sub
            if needed:
                nested_required.setdefault(s_head, []).append(s_rest)
                required.append(s_head)
        else:
            props[s_head] = sub
            if needed:
                required.append(s_head)
    for source, target in shape.rename:          # the renamed keys are given under their sources only
        t_head = target.split(".")[0]
        if t_head not in {s.split(".")[0] for s, _ in shape.rename}:
            props.pop(t_head, None)
            required = [r for r in required if r != t_head]
    for head, inner in nested.items():
        props[head] = {"type": "object", "properties": inner, "additionalProperties": False,
                       **({"required": sorted(set(nested_required[head]))} if head in nested_required else {})}
    filled = {k for k, _ in shape.set} | ({"id"} if shape.id_template else set())
    required = [r for r in required if r not in filled]
    missing = shape.missing.split(".")[0]
    if "." in shape.missing:
        return None                               # never written so; not offered rather than guessed
    props.pop(missing, None)
    required = [r for r in required if r != missing]
    p_head, _, p_rest = shape.present.partition(".")
    if p_head not in props:
        return None
    required.append(p_head)
    if p_rest and p_head not in nested and p_rest not in resolve(props[p_head]).get("required", ()):
        return None
    out = {"type": "object", "required": list(dict.fromkeys(required)), "properties": props,
           "additionalProperties": False}
    if "description" in schema:
        out["description"] = schema["description"]
    return out
