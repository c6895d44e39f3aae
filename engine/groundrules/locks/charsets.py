"""Named character sets of a lock table: written once, used by its regexes and its steps.

A table's separators (spaces, invisible marks, dashes, brackets) appear in its scan regexes, in
the normaliser that deletes them and in its context rules; naming the set once keeps them from
drifting apart. `{name}` in a regex stands for one character of the set (it becomes a character
class, so it is written where a class could stand, never inside `[...]`); `{name}` in a
`delete_chars` argument stands for the set's characters themselves. `\\p{..}`, `\\x{..}`, `\\N{..}`
and escaped braces are left alone.
"""
from __future__ import annotations

import regex

from ..errors import Fault, did_you_mean

REFERENCE = regex.compile(r"(?<!\\[A-Za-z])(?<!\\)\{([a-z][a-z0-9_]*)\}")


def as_class(chars: str) -> str:
    """A regex character class matching exactly the characters of `chars`, consecutive code points
    written as ranges (the scanner tests a range several times faster than a list)."""
    points = sorted(set(map(ord, chars)))
    parts, i = [], 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        first, last = (regex.escape(chr(points[k]), special_only=True, literal_spaces=False) for k in (i, j))
        parts.append(first if i == j else first + last if j == i + 1 else f"{first}-{last}")
        i = j + 1
    return "[" + "".join(parts) + "]"


def expand(text: str, sets: dict, where: tuple, faults: list[Fault], literal: bool = False) -> str | None:
    """Replace each `{name}` by its set (a class, or with literal=True the characters); an unknown
    name is a fault at `where` and gives None."""
    missing = [m.group(1) for m in REFERENCE.finditer(text) if m.group(1) not in sets]
    if missing:
        faults.append(Fault("unknown-set", f"'{{{missing[0]}}}' names no set of this table", where,
                            did_you_mean(missing[0], sets) or "define it under sets: {" + missing[0] + ": \"...\"}"))
        return None
    return REFERENCE.sub(lambda m: sets[m.group(1)] if literal else as_class(sets[m.group(1)]), text)


def expand_tree(node, sets: dict, where: tuple, faults: list[Fault]):
    """A condition with every `matches:` argument expanded (other values untouched)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "matches" and isinstance(value, str):
                expanded = expand(value, sets, where + (key,), faults)
                out[key] = value if expanded is None else expanded
            else:
                out[key] = expand_tree(value, sets, where + (key,), faults)
        return out
    if isinstance(node, list):
        return [expand_tree(item, sets, where + (i,), faults) for i, item in enumerate(node)]
    return node
