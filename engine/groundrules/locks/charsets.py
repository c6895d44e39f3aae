"""Named character sets, word lists and character maps of a lock table: written once, used by its
regexes, its steps and its rules.

A table's separators (spaces, invisible marks, dashes, brackets) appear in its scan regexes, in
the normaliser that deletes them and in its context rules; its phone labels in several rules; its
Chinese numerals in a regex and in the step that maps them to digits. Naming each once keeps them
from drifting apart. One namespace holds the three kinds (`sets`, `words`, `maps`):
- `{name}` of a set in a regex stands for one character of the set (it becomes a character class,
  so it is written where a class could stand, never inside `[...]`); in a `delete_chars` argument,
  a check's `in` or a gate's `chars`, for the set's characters themselves;
- `{name}` of a map stands for one of the characters it maps, exactly like a set of its keys;
- `{name}` of a word list in a regex stands for one of its words, literally (a non-capturing
  alternation in the table's order); it is no set of characters, so it cannot be deleted or counted;
- a prefilter item, or an item of a rule's `in` / `not_in` list, that is just `{name}` stands for
  each of its words (or characters).
`\\p{..}`, `\\x{..}`, `\\N{..}` and escaped braces are left alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from ..core.errors import Fault, did_you_mean

REFERENCE = regex.compile(r"(?<!\\[A-Za-z])(?<!\\)\{([a-z][a-z0-9_]*)\}")
SECTIONS = ("sets", "words", "maps")


@dataclass(frozen=True)
class Named:
    """One entry of the namespace: its section and, for a regex, what `{name}` becomes there."""

    section: str                 # sets | words | maps
    chars: str | None            # the characters it stands for (None for a word list)
    pattern: str                 # the regex text it expands to
    words: tuple = ()            # a word list's words


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


def namespace(data: dict, faults: list[Fault]) -> dict[str, Named]:
    """Every set, word list and map of a table by name; a name used in two sections is a fault."""
    out: dict[str, Named] = {}
    for section in SECTIONS:
        for name, value in data.get(section, {}).items():
            if name in out:
                faults.append(Fault("duplicate-name", f"'{name}' is named under both {out[name].section} and "
                                    f"{section}", (section, name), "give one of them another name"))
                continue
            if section == "words":
                alternation = "|".join(regex.escape(w, special_only=True, literal_spaces=True) for w in value)
                out[name] = Named(section, None, f"(?:{alternation})", tuple(value))
            else:
                chars = value if section == "sets" else "".join(value)
                out[name] = Named(section, chars, as_class(chars))
    return out


def expand(text: str, names: dict[str, Named], where: tuple, faults: list[Fault],
           literal: bool = False) -> str | None:
    """Replace each `{name}` by what it stands for (in a regex; with literal=True, a set's or map's
    characters); an unknown name, or a word list where characters are meant, is a fault at
    `where` and gives None."""
    used = [m.group(1) for m in REFERENCE.finditer(text)]
    missing = [name for name in used if name not in names]
    if missing:
        faults.append(Fault("unknown-set", f"'{{{missing[0]}}}' names no set, word list or map of this table",
                            where, did_you_mean(missing[0], names)
                            or "define it under sets: {" + missing[0] + ": \"...\"}"))
        return None
    if literal:
        words = [name for name in used if names[name].chars is None]
        if words:
            faults.append(Fault("words-as-characters", f"'{{{words[0]}}}' is a word list, not a set of characters",
                                where, "name a set (or a map) here; word lists stand for words in regexes only"))
            return None
    return REFERENCE.sub(lambda m: names[m.group(1)].chars if literal else names[m.group(1)].pattern, text)


def expand_tree(node, names: dict[str, Named], where: tuple, faults: list[Fault]):
    """A condition with every `matches:` argument expanded, and in an `in` / `not_in` list every
    item that is just `{name}` replaced by the characters of a set or map (the words of a word
    list); other values untouched."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "matches" and isinstance(value, str):
                expanded = expand(value, names, where + (key,), faults)
                out[key] = value if expanded is None else expanded
            elif key in ("in", "not_in") and isinstance(value, list):
                out[key] = members(value, names, where + (key,), faults)
            else:
                out[key] = expand_tree(value, names, where + (key,), faults)
        return out
    if isinstance(node, list):
        return [expand_tree(item, names, where + (i,), faults) for i, item in enumerate(node)]
    return node


def members(items: list, names: dict[str, Named], where: tuple, faults: list[Fault]) -> list:
    """`items` with each `{name}` replaced by the words of that word list (or the characters of that
    set or map); an unknown name is a fault at its place."""
    out = []
    for i, item in enumerate(items):
        named = REFERENCE.fullmatch(item) if isinstance(item, str) else None
        if named is None:
            out.append(item)
        elif named.group(1) not in names:
            faults.append(Fault("unknown-set", f"'{item}' names no set, word list or map of this table",
                                where + (i,), did_you_mean(named.group(1), names)))
        else:
            entry = names[named.group(1)]
            out += list(entry.words if entry.chars is None else entry.chars)
    return out
