"""Conditions as short text for a grid cell: `> 0`, `any item: reason = recorded_unresolved`.

A test is written relative to its column's field when it sits in that column (`= partial`), and
with its field otherwise (`support_status = partial`). Nothing here decides anything: it only reads
the compiled Condition tree.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ...core.conditions import Condition

# Operator -> how it reads; {} is the argument.
SYMBOLS = {"eq": "= {}", "ne": "≠ {}", "lt": "< {}", "le": "≤ {}", "gt": "> {}", "ge": "≥ {}",
           "in": "in {}", "not_in": "not in {}", "matches": "matches /{}/", "before": "before {}",
           "after": "after {}"}
BARE = re.compile(r"^[\w.:-]+$")
QUANTIFIERS = {"any": "some item", "all": "every item", "none": "no item"}


def literal(value: Any) -> str:
    """A string bare when it cannot be misread (a word, not a number or true/false/null), else JSON."""
    if isinstance(value, str) and BARE.match(value) and value not in ("true", "false", "null"):
        try:
            float(value)
        except ValueError:
            return value
    return json.dumps(value, ensure_ascii=False)


def fields_read(cond: Condition) -> list[str]:
    """The top-level fields a condition reads, in order (a quantifier's inner fields are its own)."""
    if cond.kind == "test":
        return [cond.field]
    out: list[str] = []
    for child in cond.children:
        out += [f for f in fields_read(child) if f not in out]
    return out


def text(cond: Condition, column: str | None = None) -> str:
    """The condition as one line; tests on `column` omit their field."""
    if cond.kind == "not":
        inner = text(cond.children[0], column)
        return f"not {inner}" if " " not in inner else f"not ({inner})"
    if cond.kind in ("all", "any"):
        joiner = " and " if cond.kind == "all" else " or "
        return joiner.join(_wrapped(c, column) for c in cond.children)
    head = "" if cond.field == column else f"{cond.field} "
    return head + _test(cond)


def _wrapped(cond: Condition, column: str | None) -> str:
    inner = text(cond, column)
    return f"({inner})" if cond.kind in ("all", "any") and len(cond.children) > 1 else inner


def _test(cond: Condition) -> str:
    op, arg = cond.op, cond.arg
    if cond.ref:
        return SYMBOLS[op].format(cond.ref)
    if op in ("in", "not_in"):
        return SYMBOLS[op].format("[" + ", ".join(literal(a) for a in arg) + "]")
    if op == "matches":
        return SYMBOLS[op].format(arg)
    if op in ("before", "after"):          # the table's own words: a date, or {now: DURATION}
        raw = cond.source.get(op)
        shown = f"now {raw['now']}" if isinstance(raw, dict) and "now" in raw else literal(raw)
        return SYMBOLS[op].format(shown)
    if op in SYMBOLS:
        return SYMBOLS[op].format(literal(arg))
    if op == "exists":
        return "exists" if arg else "absent"
    if op == "empty":
        return "empty" if arg else "not empty"
    if op in QUANTIFIERS:
        return f"{QUANTIFIERS[op]} ({text(arg)})"
    # count: {"where": Condition | None, <cmp>: N}
    cmp = next(k for k in arg if k != "where")
    where = f" where {text(arg['where'])}" if arg.get("where") is not None else ""
    return f"count{where} {SYMBOLS[cmp].format(literal(arg[cmp]))}"
