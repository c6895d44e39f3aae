"""The names the rulebook defines, by vocabulary: what a schema's `x-names` annotation points at.

A schema node that says `"x-names": "states:epistemic"` (or `slots`, `lock_kinds`, `codes:<table>`,
`roles`, `tools`, `keys:<table kind>:<dotted path>`) holds a name some table defines. Lint checks
every such name in the tables against this (analyst/references.py), and the registry turns each
such node of a tool's input into an `enum` of what the loaded tables define (listing/), so an
analyst's new state or claim kind appears in the listing and is enforced by it, with no Python.
Every vocabulary answers in table order, so a listing is the same bytes on every load.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from .core.rulebook import Rulebook


def _ordered(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _lock_kinds(book: "Rulebook", _: str) -> tuple | None:
    tables = book.of_kind("lock_patterns")
    return _ordered(p.kind for t in tables for p in t.patterns) if tables else None


def _lock_patterns(book: "Rulebook", _: str) -> tuple | None:
    tables = book.of_kind("lock_patterns")
    return _ordered(p.id for t in tables for p in t.patterns) if tables else None


def _slots(book: "Rulebook", _: str) -> tuple | None:
    policies = book.of_kind("merge_policy")
    return _ordered(s for p in policies for s in p.slots) if policies else None


def _states(book: "Rulebook", machine: str) -> tuple | None:
    machines = [m for t in book.of_kind("transition_table") for name, m in t.machines.items()
                if not machine or name == machine]
    return _ordered(s for m in machines for s in m.states) if machines else None


def _codes(book: "Rulebook", table_id: str) -> tuple | None:
    found = {t.id: t for t, _, _ in book.decision_tables()}
    return _ordered(found[table_id].codes) if table_id in found else None


def _roles(book: "Rulebook", _: str) -> tuple | None:
    tables = book.of_kind("role_table")
    return _ordered(r for t in tables for r in t.roles) if tables else None


def _tools(book: "Rulebook", _: str) -> tuple | None:
    from .access import tool_names
    return _ordered(tool_names(book.schemas)) or None


def _keys(book: "Rulebook", arg: str) -> tuple | None:
    """`keys:<table kind>:<dotted path>[,<dotted path>…]`: the keys of the mapping at each path of
    every table of that kind (`*` walks every value of a mapping), e.g.
    `keys:finding_vocabulary:claim_kinds`."""
    kind, _, paths = arg.partition(":")
    ids = [t for t in book.tables if book.kinds.get(t) == kind]
    if not ids or not paths:
        return None
    found: list[str] = []
    for path in paths.split(","):
        for table_id in ids:
            nodes: list[Any] = [book.sources[table_id].data]
            for step in path.split("."):
                nodes = [v for n in nodes if isinstance(n, dict)
                         for v in (n.values() if step == "*" else [n.get(step)]) if v is not None]
            found += [k for n in nodes if isinstance(n, dict) for k in n if isinstance(k, str)]
    return _ordered(found)


# vocabulary -> (what one name is, in words; what the rulebook defines, or None when it has no table to say)
VOCABULARIES: dict[str, tuple[str, Callable[["Rulebook", str], tuple | None]]] = {
    "lock_kinds": ("lock kind (a pattern's kind in a lock table)", _lock_kinds),
    "lock_patterns": ("lock pattern (<table>.<pattern id>)", _lock_patterns),
    "slots": ("slot of the merge policy", _slots),
    "states": ("state of a transition table's machine{arg}", _states),
    "codes": ("code of decision table {arg}", _codes),
    "roles": ("caller role of the role table (rules/roles.yaml)", _roles),
    "tools": ("tool of the registry (schemas/tools/<tool>.schema.json)", _tools),
    "keys": ("name defined at {arg}", _keys),
}


def known(book: "Rulebook", names: str) -> tuple[str, tuple[str, ...]] | None:
    """(what a name is, the names defined, in table order) for a vocabulary such as
    `states:epistemic`; None for a vocabulary this rulebook cannot say (no lock table at all, no
    such decision table)."""
    head, _, arg = names.partition(":")
    entry = VOCABULARIES.get(head)
    if entry is None:
        return None
    words, find = entry
    defined = find(book, arg)
    if defined is None:
        return None
    return words.format(arg=f" '{arg}'" if head == "states" and arg else arg), defined
