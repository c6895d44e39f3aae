"""Which definitions a schema reaches through its `$ref`s."""
from __future__ import annotations


def reachable(root: dict, defs: dict) -> set[str]:
    used: set[str] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name not in used and name in defs:
                    used.add(name)
                    todo.append(defs[name])
            todo.extend(v for k, v in node.items() if k != "$ref")
    return used
