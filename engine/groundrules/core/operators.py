"""What a condition test means: reading a path, and each operator's test on the value read.

The grammar (conditions.py) checks a table's conditions against OPERATORS; condgen.py compiles the
same semantics into straight-line Python and falls back on these functions where inlining would
not pay. tests/cases/conditions/ pins both.
"""
from __future__ import annotations

from typing import Any, Callable

from . import cpu_clock
from .dates import Anchor, order, parse_moment


class _Missing:
    """The value of a path that does not lead anywhere; never equal to any JSON value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


def is_num(v: Any) -> bool:
    return v.__class__ is int or v.__class__ is float


def same(a: Any, b: Any) -> bool:
    """Type-strict equality of JSON scalars (bool is not a number)."""
    if is_num(a) and is_num(b):
        return a == b
    return a.__class__ is b.__class__ and a == b


def _ordered(a: Any, b: Any) -> bool:
    return (is_num(a) and is_num(b)) or (a.__class__ is str and b.__class__ is str)


def _op_eq(v, arg): return v is not MISSING and same(v, arg)
def _op_ne(v, arg): return v is not MISSING and not same(v, arg)
def _op_lt(v, arg): return _ordered(v, arg) and v < arg
def _op_le(v, arg): return _ordered(v, arg) and v <= arg
def _op_gt(v, arg): return _ordered(v, arg) and v > arg
def _op_ge(v, arg): return _ordered(v, arg) and v >= arg
def _op_in(v, arg): return v is not MISSING and any(same(v, a) for a in arg)
def _op_not_in(v, arg): return v is not MISSING and not any(same(v, a) for a in arg)
def _op_exists(v, arg): return (v is not MISSING and v is not None) is arg


def _op_empty(v, arg):
    if v.__class__ not in (list, dict, str):
        return False
    return (len(v) == 0) is arg


def _op_matches(v, pattern, budget_s):
    """`budget_s` of the searching thread's CPU (cpu_clock): the limits table's patterns.table_budget_ms,
    bound when the condition was compiled."""
    return v.__class__ is str and cpu_clock.search(pattern, v, budget_s) is not None


def _date_order(v, anchor: Anchor, n) -> int | None:
    try:
        return order(v, anchor.resolve(n))
    except OverflowError:          # now shifted past year 9999: no date is before or after that
        return None


def _op_before(v, anchor, n):
    o = _date_order(v, anchor, n)
    return o is not None and o < 0


def _op_after(v, anchor, n):
    o = _date_order(v, anchor, n)
    return o is not None and o > 0


def _ref_before(v, w):
    other = parse_moment(w)
    o = None if other is None else order(v, other)
    return o is not None and o < 0


def _ref_after(v, w):
    other = parse_moment(w)
    o = None if other is None else order(v, other)
    return o is not None and o > 0


# A date test against another field: (value read, the other field's value).
DATE_REFS = {"before": _ref_before, "after": _ref_after}

# Operator name -> (kind of argument, test on (value read, argument)). Behaviour as data. Date
# tests also take the caller's now: (value read, anchor, now); `matches` its time budget: (value
# read, compiled pattern, seconds).
OPERATORS: dict[str, tuple[str, Callable[..., bool] | None]] = {
    "eq": ("scalar_or_ref", _op_eq),
    "ne": ("scalar_or_ref", _op_ne),
    "lt": ("ordered_or_ref", _op_lt),
    "le": ("ordered_or_ref", _op_le),
    "gt": ("ordered_or_ref", _op_gt),
    "ge": ("ordered_or_ref", _op_ge),
    "in": ("scalar_list", _op_in),
    "not_in": ("scalar_list", _op_not_in),
    "exists": ("bool", _op_exists),
    "empty": ("bool", _op_empty),
    "matches": ("regex", _op_matches),
    "before": ("date", _op_before),
    "after": ("date", _op_after),
    "any": ("condition", None),
    "all": ("condition", None),
    "none": ("condition", None),
    "count": ("count", None),
}


# An index with more digits than this fits no list in memory; it reads nothing, like any index
# past the end (and int() refuses strings of thousands of digits).
_MAX_INDEX_DIGITS = 18


def _part(p: str) -> str | int:
    """A list index only for ASCII digits: '１' or '²' pass str.isdigit() but are keys."""
    if not (p.isascii() and p.isdigit()):
        return p
    return int(p) if len(p) <= _MAX_INDEX_DIGITS else 10 ** _MAX_INDEX_DIGITS


# A field written `$.name` inside a list test (any, all, none, count) reads `name` of the whole input,
# not of the item: `{field: evidence, any: {field: page_date, before: {field: $.fresh_after}}}`.
ROOT = "$."


def path_parts(path: str) -> tuple:
    """`engines.0.status` -> ('engines', 0, 'status'); '.' -> ()."""
    if path == ".":
        return ()
    return tuple(_part(p) for p in path.split("."))
