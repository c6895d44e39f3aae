"""Our compiled conditions -> durable-rules condition expressions, exact or refused with a reason.

durable-rules 2.0.28 compares across types and has no negation inside a condition, so every test
is translated class by class (null, bool, num, str, list, dict) from these facts, measured on this
machine (see .readme/oracle.md and tests/oracle/test_durable_oracle.py, which re-measures them):
- `{p: v}` / `$neq` / `$lt`...: exact between two values of the same class; across classes the
  engine compares text ("1" == 1, "true" == true) or 0/1 (true == 1); null and lists/objects
  compare false with everything (`$neq` too), except null == null. A string field against a
  number literal reads uninitialised memory in the C core, so it must be guarded away.
- `$mt` is a full match over a text form: a string's JSON-escaped text, "%lld"/"%f" for numbers,
  "true"/"false", "nil" for null, "" for a list or object. `\\d` and `^` never match.
- `$ex`/`$nex` test presence; `$nex` must not be the only test of a rule (it loops forever), so
  every rule starts with the marker `{_eval: 1}`.
- `$iany`/`$iall` are false on anything but a list, and `$iall` is false on [] (ours: true).
  Inside them `$i` is a scalar item and `$i.k` a key of an object item (an object item has no `$i`).
- `{p: {$add: {$l: {$m: p}, $r: 0}}}` holds exactly for numbers and booleans (arithmetic on a
  string is unsupported); `$m` always reads the top-level fact, so this works only outside lists.
Which classes a field can hold comes from the table's input contract (shapes.Shape); a value that
breaks the contract is refused by the backend, not evaluated.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from ...core.conditions import Condition
from ...core.operators import ROOT
from .shapes import BOOL, COMPOSITES, DICT, LIST, NULL, NUM, SCALARS, STR, Shape, type_of

MARKER = "_eval"
RESERVED = ("sid", MARKER)                 # the wrapper writes these into every fact
MT_NUMBER = "[0-9].*|-.*"                  # "%lld" / "%f" text; never "true", "false", "nil", ""
MT_BOOL = "true|false"
MT_COMPOSITE = ("x?", "y?")                # match "" (a list or object), never "nil" or a number
TRUE_ITEM = {"$or": [{"$ex": {"$i": 1}}, {"$nex": {"$i": 1}}]}
REGEX_META = set(".^$*+?{}[]\\|()")
JSON_ESCAPE_TEXT = set('\\"/bfnrtu0123456789abcdefABCDEF')
INT64 = 2 ** 63
FLIP = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}
DURABLE_CMP = {"lt": "$lt", "le": "$lte", "gt": "$gt", "ge": "$gte", "eq": "$eq", "ne": "$neq"}


class Inexpressible(Exception):
    """This test has no exact durable-rules translation; the message says why."""


class _Const:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


TRUE, FALSE = _Const("TRUE"), _Const("FALSE")


def OR(*parts: Any) -> Any:
    out: list = []
    for p in parts:
        if p is TRUE:
            return TRUE
        if p is FALSE:
            continue
        out += p["$or"] if isinstance(p, dict) and list(p) == ["$or"] else [p]
    return FALSE if not out else out[0] if len(out) == 1 else {"$or": out}


def AND(*parts: Any) -> Any:
    out: list = []
    for p in parts:
        if p is FALSE:
            return FALSE
        if p is TRUE:
            continue
        out += p["$and"] if isinstance(p, dict) and list(p) == ["$and"] else [p]
    return TRUE if not out else out[0] if len(out) == 1 else {"$and": out}


def literal_ok(value: Any) -> bool:
    """A literal durable's JSON reader takes as we mean it (no exponents, 64-bit integers)."""
    if value.__class__ is int:
        return -INT64 <= value < INT64
    if value.__class__ is float:
        text = json.dumps(value)
        return not any(c in text for c in "eEIN")
    return True


@dataclass(frozen=True)
class Scope:
    """Where a condition is compiled: the fact itself (prefix "") or a list item ("$i")."""

    prefix: str
    shape: Shape
    nonempty: frozenset = frozenset()      # fields that the enclosing `all` already proves are not []

    @property
    def top(self) -> bool:
        return self.prefix == ""

    def locate(self, field: str) -> tuple[str, frozenset]:
        """(durable path, classes the field can hold) or Inexpressible."""
        if field.startswith(ROOT):
            raise Inexpressible(f"'{field}' reads the whole input from inside a list; durable's $m there "
                                "reads the fact too, but unmeasured: out of the oracle's reach")
        if field == ".":
            if self.top:
                raise Inexpressible("'.' at the top names the whole fact, which durable cannot test")
            types = self.shape.types()
            if DICT in types:
                raise Inexpressible("'.' on an object item: durable gives object items no '$i' value")
            return "$i", types
        parts = field.split(".")
        for part in parts:
            if part.isdigit():
                raise Inexpressible(f"'{field}' indexes a list; durable flattens only objects")
            if part.startswith("$"):
                raise Inexpressible(f"'{field}': names starting with '$' are durable syntax")
        if self.top and parts[0] in RESERVED:
            raise Inexpressible(f"'{parts[0]}' is written by the durable wrapper into every fact")
        path = field if self.top else f"{self.prefix}.{field}"
        return path, self.shape.path(tuple(parts)).types()

    def item(self, field: str) -> "Scope":
        parts = () if field == "." else tuple(field.split("."))
        return Scope("$i", self.shape.path(parts).items())


# --- class detectors ------------------------------------------------------------------------

def _numorbool(p: str) -> dict:
    return {"$eq": {p: {"$add": {"$l": {"$m": p}, "$r": 0}}}}


def detect(p: str, classes: frozenset, types: frozenset, top: bool, spare: str | None = None) -> Any:
    """True exactly when the value at `p` is present with a class in `classes` (given it is one of
    `types`). With `spare`, the test may also hold for strings other than `spare` (the caller
    counts every such string as true anyway)."""
    classes = classes & types
    if not classes:
        return FALSE
    if classes == types:
        return {"$ex": {p: 1}}
    parts: list[dict] = []
    if NULL in classes:
        parts.append({p: None})
    scalars = classes & SCALARS
    if scalars and scalars == types & SCALARS:
        parts.append({"$neq": {p: None}})
    elif scalars:
        for cls in sorted(scalars):
            parts.append(_detect_scalar(p, cls, classes, types, top, spare))
    composites = classes & COMPOSITES
    if composites:
        if composites != types & COMPOSITES:
            raise Inexpressible("durable cannot tell a list from an object (both read as '')")
        regex = MT_COMPOSITE[1] if spare == "x" else MT_COMPOSITE[0]
        if STR in types and STR not in classes and (spare is None or spare == ""):
            raise Inexpressible("durable reads a list or object as the text '', like the string ''")
        parts.append({"$mt": {p: regex}})
    return OR(*parts)


def _detect_scalar(p: str, cls: str, classes: frozenset, types: frozenset, top: bool,
                   spare: str | None) -> Any:
    if cls == STR:
        if types & {BOOL, NUM} <= classes:
            return {"$neq": {p: None}}
        raise Inexpressible("durable has no test that tells a string from a number or boolean")
    text = MT_BOOL if cls == BOOL else MT_NUMBER
    caught = (spare in ("true", "false")) if cls == BOOL else (spare is not None and _numeric_text(spare))
    if STR not in types or STR in classes or (spare is not None and not caught):
        return {"$mt": {p: text}}
    if top:
        return AND(_numorbool(p), {"$mt": {p: text}})
    raise Inexpressible(f"inside a list durable cannot tell a {cls} from a string with the same text")


def _numeric_text(text: str) -> bool:
    """Could a number's "%lld"/"%f" text equal or match this string (MT_NUMBER)?"""
    return text[:1] != "" and text[:1] in "-0123456789"


# --- tests --------------------------------------------------------------------------------

def _eq(p: str, a: Any, types: frozenset, top: bool) -> Any:
    cls = type_of(a)
    if cls not in types:
        return FALSE
    test = {p: a}
    confined = {
        NULL: True,
        STR: not ((a in ("true", "false") and BOOL in types) or (_numeric_text(a) and NUM in types))
        if cls == STR else True,
        NUM: not (types & {BOOL, STR}),
        BOOL: not (types & {NUM, STR}),
    }[cls]
    return test if confined else AND(detect(p, frozenset({cls}), types, top), test)


def _ne(p: str, a: Any, types: frozenset, top: bool) -> Any:
    """present and not the same: every other class, plus `$neq` within the literal's class."""
    cls = type_of(a)
    others = types - {cls}
    if cls == STR:
        if a not in ("true", "false"):
            others -= {BOOL}
        if not _numeric_text(a):
            others -= {NUM}
    elif cls == NUM and a not in (0, 1):
        others -= {BOOL}
    if cls == NULL:
        return detect(p, others, types, top)
    spare = a if cls == STR else None
    return OR(detect(p, others, types, top, spare), {"$neq": {p: a}} if cls in types else FALSE)


def _order(p: str, op: str, a: Any, types: frozenset, top: bool) -> Any:
    if type_of(a) != NUM:
        raise Inexpressible("durable orders strings by their JSON-escaped bytes")
    if NUM not in types:
        return FALSE
    test = {DURABLE_CMP[op]: {p: a}}
    return AND(detect(p, frozenset({NUM}), types, top), test) if types & {BOOL, STR} else test


def _empty(p: str, want: bool, field: str, scope: Scope, types: frozenset) -> Any:
    parts: list[dict] = []
    if LIST in types:
        if not want:
            parts.append({"$iany": {p: TRUE_ITEM}})
        elif field not in scope.nonempty:
            raise Inexpressible("durable has no test for an empty list ($iall and $iany are false on [])")
    if DICT in types:
        raise Inexpressible("durable cannot tell an empty object from a non-empty one")
    if STR in types:
        if want:
            parts.append({p: ""})
        else:
            guard = detect(p, frozenset({STR}), types, scope.top) if types & {BOOL, NUM, NULL} else TRUE
            parts.append(AND(guard, {"$mt": {p: ".+"}}))
    return OR(*parts)


def _matches(p: str, pattern: str, types: frozenset) -> Any:
    if not pattern or any(c in REGEX_META or c in JSON_ESCAPE_TEXT or ord(c) < 0x20 for c in pattern):
        raise Inexpressible("only plain literal patterns without regex syntax, digits, a-f or JSON "
                            "escape letters translate: durable matches JSON-escaped text, and "
                            "\\d and ^ never match")
    if types & {BOOL, NUM}:
        raise Inexpressible("durable matches the text of numbers and booleans too")
    guard = {"$neq": {p: None}} if NULL in types else TRUE
    return AND(guard, {"$mt": {p: f".*{pattern}.*"}})


def _count_fn(cmp: str, n_arg: Any):
    ops = {"eq": lambda n: n == n_arg, "ne": lambda n: n != n_arg, "lt": lambda n: n < n_arg,
           "le": lambda n: n <= n_arg, "gt": lambda n: n > n_arg, "ge": lambda n: n >= n_arg}
    return ops[cmp]


def _count_split(fn) -> tuple[bool, bool | None]:
    """(f(0), the constant value of f(n) for every n >= 1, or None when it is not constant)."""
    first = fn(1)
    # a threshold comparison changes value at most once; past 2**53 floats stop counting
    probes = (2, 3, 10, 2 ** 20, 2 ** 53)
    return fn(0), first if all(fn(k) is first for k in probes) else None


class Translator:
    """Compiles one Condition tree; `negate` pushes `not` down to the tests."""

    def pos(self, c: Condition, scope: Scope) -> Any:
        if c.kind == "all":
            inner = replace(scope, nonempty=scope.nonempty | _nonempty_facts(c.children))
            return AND(*(self.pos(ch, inner) for ch in c.children))
        if c.kind == "any":
            return OR(*(self.pos(ch, scope) for ch in c.children))
        if c.kind == "not":
            return self.neg(c.children[0], scope)
        return self._test(c, scope)

    def neg(self, c: Condition, scope: Scope) -> Any:
        if c.kind == "all":
            return OR(*(self.neg(ch, scope) for ch in c.children))
        if c.kind == "any":
            return AND(*(self.neg(ch, scope) for ch in c.children))
        if c.kind == "not":
            return self.pos(c.children[0], scope)
        return self._neg_test(c, scope)

    def _test(self, c: Condition, scope: Scope) -> Any:
        if c.op in ("before", "after"):
            raise Inexpressible("durable has no calendar arithmetic (date tests)")
        p, types = scope.locate(c.field)
        if c.ref:
            return self._ref(c, scope, p, types)
        op, a = c.op, c.arg
        _check_literals(c)
        if op == "eq":
            return _eq(p, a, types, scope.top)
        if op == "ne":
            return _ne(p, a, types, scope.top)
        if op == "in":
            return OR(*(_eq(p, x, types, scope.top) for x in a))
        if op == "not_in":
            return AND(*(_ne(p, x, types, scope.top) for x in a))
        if op in FLIP:
            return _order(p, op, a, types, scope.top)
        if op == "exists":
            classes = types - {NULL} if a else frozenset()
            return detect(p, classes, types, scope.top) if a else OR({"$nex": {p: 1}}, detect(
                p, frozenset({NULL}), types, scope.top))
        if op == "empty":
            return _empty(p, a, c.field, scope, types)
        if op == "matches":
            return _matches(p, a, types)
        return self._quantifier(c, scope, p, types, c.op, c.arg)

    def _neg_test(self, c: Condition, scope: Scope) -> Any:
        if c.op in ("before", "after"):
            raise Inexpressible("durable has no calendar arithmetic (date tests)")
        p, types = scope.locate(c.field)
        if c.ref:
            raise Inexpressible("a negated field-vs-field comparison has no exact translation")
        op, a, top = c.op, c.arg, scope.top
        _check_literals(c)
        absent = {"$nex": {p: 1}}
        if op == "eq":
            return OR(absent, _ne(p, a, types, top))
        if op == "ne":
            return OR(absent, _eq(p, a, types, top))
        if op == "in":
            return OR(absent, AND(*(_ne(p, x, types, top) for x in a)))
        if op == "not_in":
            return OR(absent, *(_eq(p, x, types, top) for x in a))
        if op in FLIP:
            if type_of(a) != NUM:
                raise Inexpressible("durable orders strings by their JSON-escaped bytes")
            flipped = {DURABLE_CMP[FLIP[op]]: {p: a}} if NUM in types else FALSE
            return OR(absent, detect(p, types - {NUM}, types, top), flipped)
        if op == "exists":
            return self._test(replace(c, arg=not a), scope)
        if op == "empty":
            rest = detect(p, types - {LIST, DICT, STR}, types, top)
            return OR(absent, rest, _empty(p, not a, c.field, scope, types & {LIST, DICT, STR}))
        if op == "matches":
            raise Inexpressible("a negated regex match has no exact translation")
        non_list = detect(p, types - {LIST}, types, top)
        if op == "any":
            body = self._quantifier(c, scope, p, types, "none", c.arg)
        elif op == "all":
            body = self._quantifier(c, scope, p, types, "any", _Negated(c.arg))
        elif op == "none":
            body = self._quantifier(c, scope, p, types, "any", c.arg)
        else:
            cmp = next(k for k in c.arg if k != "where")
            fn = _count_fn(cmp, c.arg[cmp])
            body = self._count(c, scope, p, types, lambda n: not fn(n))
        return OR(absent, non_list, body)

    def _quantifier(self, c: Condition, scope: Scope, p: str, types: frozenset, op: str, inner) -> Any:
        if LIST not in types:
            return FALSE
        if op == "count":
            cmp = next(k for k in inner if k != "where")
            return self._count(c, scope, p, types, _count_fn(cmp, inner[cmp]))
        item = scope.item(c.field)
        if op == "any":
            return _iany(p, self._item(inner, item))
        body = self._item(_Negated(inner) if op == "none" else inner, item)
        if c.field not in scope.nonempty:
            raise Inexpressible(f"'{op}' over a list that may be empty: durable's $iall is false on [] "
                                "(state the list is non-empty beside it, e.g. with 'any')")
        return FALSE if body is FALSE else {"$iall": {p: TRUE_ITEM if body is TRUE else body}}

    def _count(self, c: Condition, scope: Scope, p: str, types: frozenset, fn) -> Any:
        if LIST not in types:
            return FALSE
        where = c.arg.get("where")
        at_zero, above = _count_split(fn)
        if above is None:
            raise Inexpressible("durable cannot count list items beyond 'none' and 'at least one'")
        item = scope.item(c.field)
        some = self._item(where, item) if where is not None else TRUE
        parts = [_iany(p, some)] if above else []
        if at_zero:
            if c.field in scope.nonempty and where is None:
                pass                                            # a non-empty list has items
            elif c.field not in scope.nonempty:
                raise Inexpressible("durable has no test for a list with no (matching) items; "
                                    "$iall is false on []")
            else:
                body = self._item(_Negated(where), item)
                parts.append(FALSE if body is FALSE else {"$iall": {p: TRUE_ITEM if body is TRUE else body}})
        return OR(*parts)

    def _item(self, inner, item: Scope) -> Any:
        if isinstance(inner, _Negated):
            return self.neg(inner.cond, item)
        return self.pos(inner, item)

    def _ref(self, c: Condition, scope: Scope, p: str, types: frozenset) -> Any:
        if not scope.top:
            raise Inexpressible("inside a list durable's $m reads the top-level fact, not the item")
        q, other = scope.locate(c.ref)
        both = types | other
        if not both:
            return FALSE
        ordering = c.op in FLIP
        if not (both <= {NUM} or (not ordering and (both <= {STR} or both <= {BOOL}))):
            raise Inexpressible("field-vs-field comparisons translate only between two numbers "
                                "(or two strings / two booleans for eq and ne)")
        test = {DURABLE_CMP[c.op]: {p: {"$m": q}}}
        return AND({"$ex": {q: 1}}, test)


@dataclass(frozen=True)
class _Negated:
    cond: Condition


def _iany(p: str, body: Any) -> Any:
    if body is FALSE:
        return FALSE
    return {"$iany": {p: TRUE_ITEM if body is TRUE else body}}


def _nonempty_facts(children: tuple) -> frozenset:
    """Fields that some conjunct can only be true for when they are not [] (any, empty: false,
    count >= 1), so a sibling `all`/`none` over them may use $iall."""
    out = set()
    for ch in children:
        if ch.kind != "test" or ch.ref:
            continue
        if ch.op == "any" or (ch.op == "empty" and ch.arg is False):
            out.add(ch.field)
        elif ch.op == "count":
            cmp = next(k for k in ch.arg if k != "where")
            if not _count_fn(cmp, ch.arg[cmp])(0):
                out.add(ch.field)
    return frozenset(out)


def _check_literals(c: Condition) -> None:
    values = c.arg if c.op in ("in", "not_in") else [c.arg] if c.op in DURABLE_CMP else []
    for v in values:
        if not literal_ok(v):
            raise Inexpressible(f"literal {v!r} is outside what durable's JSON reader takes "
                                "(exponent or beyond 64 bits)")


def translate(cond: Condition, shape: Shape) -> Any:
    """The durable expression of `cond` over a fact of `shape`: a dict, or TRUE / FALSE."""
    return Translator().pos(cond, Scope("", shape))


__all__ = ["FALSE", "Inexpressible", "MARKER", "TRUE", "translate", "literal_ok"]
