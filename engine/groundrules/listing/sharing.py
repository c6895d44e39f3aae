"""A listed schema in fewer bytes, with the same constraints.

Definitions bundled from another file (`<file stem>:<name>`) go by their own name where it is free,
and every shape written out more than once below the arguments is written once under `$defs`.
Both only rename and move: jsonschema reads the result exactly as before.
"""
from __future__ import annotations

import json
from typing import Any


def short_names(root: dict) -> dict:
    """Definitions of another file named `<file stem>:<name>` by bundling go by `<name>` alone
    wherever that name is free: the same schema, in fewer bytes of every `$ref`."""
    defs = root.get("$defs")
    if not defs:
        return root
    taken = set(defs)
    renames = {}
    for name in sorted(defs):
        short = name.rsplit(":", 1)[-1]
        if short != name and short not in taken:
            renames[name] = short
            taken.add(short)
    if not renames:
        return root
    return _retarget(root, {f"#/$defs/{k}": f"#/$defs/{v}" for k, v in renames.items()}, renames)


def _retarget(node: Any, refs: dict, names: dict) -> Any:
    if isinstance(node, list):
        return [_retarget(v, refs, names) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = refs.get(value, value)
        elif key == "$defs":
            out[key] = {names.get(k, k): _retarget(v, refs, names) for k, v in sorted(
                value.items(), key=lambda kv: names.get(kv[0], kv[0]))}
        elif key in ("enum", "const", "required"):
            out[key] = value
        else:
            out[key] = _retarget(value, refs, names)
    return out


SHARED_MIN_BYTES = 64          # a repeated subschema smaller than this is kept where it is used
STRUCTURE = {"properties", "items", "anyOf", "oneOf", "allOf", "additionalProperties", "enum"}   # worth a name


def shared(root: dict) -> dict:
    """Each shape (an object, an array, a choice, a closed list) written out more than once, below
    the arguments themselves (which keep their own `type`), is written once under `$defs` and
    referred to: the same constraints, fewer bytes. Other scalar leaves stay where they are used."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}

    def key(node: dict) -> str:
        return json.dumps(node, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def visit(node: Any, name: str, top: bool) -> None:
        if isinstance(node, list):
            for v in node:
                visit(v, name, False)
            return
        if not isinstance(node, dict):
            return
        if not top and STRUCTURE & set(node):
            k = key(node)
            counts[k] = counts.get(k, 0) + 1
            first[k] = name if first.get(k, name) == name else ""      # named for its key when it has one
        for kk, v in node.items():
            if kk in ("properties", "$defs", "patternProperties"):
                for n, sub in v.items():
                    visit(sub, n, kk == "properties" and node is root)
            elif kk not in ("enum", "const", "required"):
                visit(v, name, False)
    visit(root, "", True)
    defs = dict(root.get("$defs", {}))
    taken = set(defs)
    chosen: dict[str, str] = {}
    for k in sorted(counts, key=lambda k: (-len(k), k)):
        if counts[k] > 1 and len(k.encode("utf-8")) >= SHARED_MIN_BYTES and not any(k in c for c in chosen):
            base = first[k] or "shared"
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}{n}"
            taken.add(name)
            chosen[k] = name

    if not chosen:
        return root

    def rewrite(node: Any, top: bool, is_root: bool = False) -> Any:
        if isinstance(node, list):
            return [rewrite(v, False) for v in node]
        if not isinstance(node, dict):
            return node
        if not top and key(node) in chosen:
            return {"$ref": "#/$defs/" + chosen[key(node)]}
        return {kk: ({n: rewrite(sub, kk == "properties" and is_root) for n, sub in v.items()}
                     if kk in ("properties", "$defs", "patternProperties")
                     else v if kk in ("enum", "const", "required") else rewrite(v, False))
                for kk, v in node.items()}

    out = rewrite({k: v for k, v in root.items() if k != "$defs"}, True, True)
    out_defs = {n: rewrite(d, True) for n, d in defs.items()}
    for k, name in chosen.items():
        out_defs[name] = _inner(json.loads(k), rewrite)
    out["$defs"] = {n: out_defs[n] for n in sorted(out_defs)}
    return out


def _inner(node: dict, rewrite) -> dict:
    """A shared subschema's own children, shared in their turn (the node itself stays written out)."""
    return {k: ({n: rewrite(sub, False) for n, sub in v.items()} if k in ("properties", "$defs", "patternProperties")
                else v if k in ("enum", "const", "required") else rewrite(v, False)) for k, v in node.items()}
