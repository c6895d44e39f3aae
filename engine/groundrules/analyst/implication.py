"""Whether one condition holds whenever another does, from their tests alone (for lint's shadowed
rows).

A row under `first` never fires when an earlier row holds whenever it does. Comparing tests as
text misses the usual case: `{field: s, in: [filled, conflicting]}` holds whenever `{field: s, eq:
filled}` does, `gt: 5` whenever `gt: 7`, `exists: true` whenever `eq: 3`. This module answers "does
A imply B" for the grammar's comparisons, membership, ranges and plain-text `matches` (a literal
inside a longer one; a listed value the pattern finds) on one field, through `all`, `any` and the
list quantifiers; anything it cannot decide counts as "no" (lint stays quiet rather
than claim a row is dead when it is not). Semantics are the grammar's (core/conditions.py): a test on
a missing field is false, equality is type-strict, ordering compares numbers with numbers and
strings with strings.
"""
from __future__ import annotations

import json
from typing import Any

from ..core.conditions import Condition
from ..core.operators import is_num, same

_ORDER = ("lt", "le", "gt", "ge")


def conjuncts(cond: Condition) -> list[Condition]:
    """The conditions `cond` requires all of: the parts of an `all` (flattened), else itself."""
    if cond.kind == "all":
        return [c for child in cond.children for c in conjuncts(child)]
    return [cond]


def implied(given: list[Condition], cond: Condition) -> Condition | None:
    """A condition of `given` (all of which hold) that makes `cond` hold, or None when that does
    not follow from the tests alone. For an `all`, the first of `given` that was needed."""
    if cond.kind == "all":
        found = [implied(given, child) for child in cond.children]
        return None if any(f is None for f in found) else found[0]
    if cond.kind == "any":
        return next((f for child in cond.children if (f := implied(given, child)) is not None), None)
    for g in given:
        if g.kind == "any":                # every branch of g implies cond
            if all(implied(conjuncts(branch), cond) is not None for branch in g.children):
                return g
        elif _same_text(g, cond) or (g.kind == cond.kind == "test" and _test_implies(g, cond)):
            return g
    return None


def _same_text(a: Condition, b: Condition) -> bool:
    return _text(a) == _text(b)


def _text(cond: Condition) -> str:
    return json.dumps(cond.source, sort_keys=True, ensure_ascii=False, default=str)


def _test_implies(a: Condition, b: Condition) -> bool:
    """Test `a` holding makes test `b` hold (both on one field, neither comparing with a field)."""
    if a.field != b.field or a.ref or b.ref:
        return False
    if b.op == "exists":
        return b.arg is True and _needs_a_value(a)
    if a.op in ("any", "all") and b.op == a.op:
        return implied(conjuncts(a.arg), b.arg) is not None
    if a.op == "none" and b.op == "none":
        return implied(conjuncts(b.arg), a.arg) is not None
    if a.op == "matches" and b.op == "matches":
        return _literal_within(a.arg, b.arg)
    held = _values(a)              # the values a lets through, when it names them
    if held is not None:
        return all(_holds(b, v) for v in held)
    if a.op in _ORDER and b.op in _ORDER:
        return _range_implies(a.op, a.arg, b.op, b.arg)
    if a.op == "ne" and b.op == "ne":
        return same(a.arg, b.arg)
    if a.op == "not_in" and b.op in ("ne", "not_in"):
        excluded = b.arg if b.op == "not_in" else [b.arg]
        return all(any(same(x, y) for y in a.arg) for x in excluded)
    return False


def _needs_a_value(a: Condition) -> bool:
    """`a` can hold only on a present, non-null value (so it implies `exists: true`)."""
    if a.op in ("eq", "in"):
        return all(v is not None for v in (a.arg if a.op == "in" else [a.arg]))
    return a.op in _ORDER or a.op in ("matches", "before", "after", "empty", "any", "all", "none", "count")


def _values(a: Condition) -> list | None:
    """The literal values `a` admits (eq, in), else None."""
    if a.op == "eq":
        return [a.arg]
    if a.op == "in":
        return list(a.arg)
    return None


def _holds(b: Condition, v: Any) -> bool:
    """Test `b` on the literal value `v` (only the operators on literals)."""
    op, arg = b.op, b.arg
    if op == "eq":
        return same(v, arg)
    if op == "ne":
        return not same(v, arg)
    if op == "in":
        return any(same(v, x) for x in arg)
    if op == "not_in":
        return not any(same(v, x) for x in arg)
    if op in _ORDER:
        if not _comparable(v, arg):
            return False
        return {"lt": v < arg, "le": v <= arg, "gt": v > arg, "ge": v >= arg}[op]
    if op == "matches" and b.pattern is not None:
        try:
            return v.__class__ is str and b.pattern.search(v, timeout=0.05) is not None
        except TimeoutError:
            return False
    return False


_META = set(".^$*+?{}[]\\|()")


def _literal(pattern: Any) -> str | None:
    """The text a pattern made of plain characters searches for (a leading ^ or a trailing $ kept
    apart), else None: `申论题量` -> 申论题量."""
    if not isinstance(pattern, str):
        return None
    body = pattern[1:] if pattern.startswith("^") else pattern
    body = body[:-1] if body.endswith("$") else body
    return body if body and not (_META & set(body)) else None


def _literal_within(a: Any, b: Any) -> bool:
    """Every text `matches: a` finds also holds `matches: b`: both plain, b's text inside a's (an
    anchor of b must be one of a's too, at the same end)."""
    la, lb = _literal(a), _literal(b)
    if la is None or lb is None:
        return False
    if b.startswith("^") and not (a.startswith("^") and la.startswith(lb)):
        return False
    if b.endswith("$") and not (a.endswith("$") and la.endswith(lb)):
        return False
    return lb in la


def _comparable(a: Any, b: Any) -> bool:
    return (is_num(a) and is_num(b)) or (a.__class__ is str and b.__class__ is str)


def _range_implies(op_a: str, x: Any, op_b: str, y: Any) -> bool:
    """`v op_a x` makes `v op_b y` hold, for every v (numbers, or strings)."""
    if not _comparable(x, y):
        return False
    if op_a in ("gt", "ge") and op_b in ("gt", "ge"):
        return x > y or (x == y and not (op_a == "ge" and op_b == "gt"))
    if op_a in ("lt", "le") and op_b in ("lt", "le"):
        return x < y or (x == y and not (op_a == "le" and op_b == "lt"))
    return False
