"""The condition grammar shared by every table, compiled once into plain closures.

A condition is a mapping. Combinators: `all: [..]`, `any: [..]`, `not: cond`. A test names a
`field` (dotted path; `.` is the value itself) and exactly one operator from OPERATORS. Inside a
list quantifier (`any`, `all`, `none`, `count` with a `field`) the inner fields are relative to
each item. Semantics, chosen so that a rule never fires on data it did not read:
- any test on a missing field is false (`ne` and `not_in` too); `exists: false` is the way to ask;
- `exists: true` means present and not null;
- equality is type-strict: true is not 1, "1" is not 1, but 1 equals 1.0;
- ordering compares two numbers or two strings, anything else is false;
- `all` over an empty list is true, `any` is false; quantifiers on a non-list are false.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import regex

from .errors import Fault, did_you_mean
from .yamlsrc import dotted

MISSING = object()
REGEX_TIMEOUT_S = 0.05

COMBINATORS = ("all", "any", "not")
# Spellings analysts bring from other languages, for hints only (never accepted as operators).
SPELLINGS = {"gte": "ge", "lte": "le", "neq": "ne", "equals": "eq", "==": "eq", "!=": "ne",
             ">": "gt", ">=": "ge", "<": "lt", "<=": "le", "regex": "matches", "nin": "not_in",
             "and": "all", "or": "any", "some": "any", "every": "all", "len": "count"}


def _suggest(word: object, choices) -> str:
    if isinstance(word, str) and SPELLINGS.get(word) in choices:
        return f"did you mean '{SPELLINGS[word]}'?"
    return did_you_mean(word, choices)
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")


def _is_num(v: Any) -> bool:
    return (type(v) is int or type(v) is float)


def same(a: Any, b: Any) -> bool:
    """Type-strict equality of JSON scalars (bool is not a number)."""
    if _is_num(a) and _is_num(b):
        return a == b
    return type(a) is type(b) and a == b


def _ordered(a: Any, b: Any) -> bool:
    return (_is_num(a) and _is_num(b)) or (type(a) is str and type(b) is str)


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
    if type(v) not in (list, dict, str):
        return False
    return (len(v) == 0) is arg


def _op_matches(v, arg):
    return type(v) is str and arg.search(v, timeout=REGEX_TIMEOUT_S) is not None


# Operator name -> (kind of argument, test). Behaviour as data: one dispatch table.
OPERATORS: dict[str, tuple[str, Callable[[Any, Any], bool] | None]] = {
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
    "any": ("condition", None),
    "all": ("condition", None),
    "none": ("condition", None),
    "count": ("count", None),
}


def compile_path(path: str) -> Callable[[Any], Any]:
    """Dotted path -> getter returning MISSING where the path does not lead."""
    if path == ".":
        return lambda value: value
    parts = tuple(int(p) if p.isdigit() else p for p in path.split("."))
    if len(parts) == 1 and isinstance(parts[0], str):
        key = parts[0]
        return lambda value: value.get(key, MISSING) if type(value) is dict else MISSING
    if len(parts) == 2 and all(isinstance(p, str) for p in parts):
        k1, k2 = parts

        def get2(value: Any) -> Any:
            if type(value) is not dict:
                return MISSING
            inner = value.get(k1, MISSING)
            return inner.get(k2, MISSING) if type(inner) is dict else MISSING
        return get2

    def get(value: Any) -> Any:
        for part in parts:
            if type(value) is dict and type(part) is str:
                value = value.get(part, MISSING)
            elif type(value) is list and type(part) is int:
                value = value[part] if part < len(value) else MISSING
            else:
                return MISSING
            if value is MISSING:
                return MISSING
        return value
    return get


@dataclass(frozen=True)
class Condition:
    """A compiled condition: `test(value) -> bool` plus its source, for traces and linting."""

    source: Any
    test: Callable[[Any], bool]
    kind: str                      # 'all' | 'any' | 'not' | 'test'
    children: tuple = ()
    field: str = ""
    op: str = ""
    arg: Any = None                # the literal argument, or the compiled inner Condition
    ref: str = ""                  # field-vs-field comparison: the other field's path
    where: tuple = ()              # key path inside the table, for messages

    def fields(self, prefix: str = "") -> list[tuple[str, tuple]]:
        """Every (field path, key path) this condition reads; list items marked `[]` (missing[].reason)."""
        if self.kind != "test":
            return [f for c in self.children for f in c.fields(prefix)]
        own = prefix + self.field if self.field != "." else prefix.rstrip(".") or "."
        out = [(own, self.where + ("field",))]
        if self.ref:
            out.append((prefix + self.ref, self.where + (self.op,)))
        if isinstance(self.arg, Condition):
            out += self.arg.fields(own + "[].")
        if isinstance(self.arg, dict) and isinstance(self.arg.get("where"), Condition):
            out += self.arg["where"].fields(own + "[].")
        return out

    def regexes(self) -> list[str]:
        if self.kind != "test":
            return [r for c in self.children for r in c.regexes()]
        if self.op == "matches":
            return [self.source["matches"]]
        if isinstance(self.arg, Condition):
            return self.arg.regexes()
        if isinstance(self.arg, dict) and isinstance(self.arg.get("where"), Condition):
            return self.arg["where"].regexes()
        return []


class _Compiler:
    def __init__(self, faults: list[Fault]):
        self.faults = faults

    def fail(self, code: str, message: str, where: tuple, hint: str = "") -> None:
        self.faults.append(Fault(code, message, where, hint))

    def compile(self, node: Any, where: tuple) -> Condition | None:
        if not isinstance(node, dict) or not node:
            self.fail("bad-condition", "a condition must be a non-empty mapping", where,
                      "write e.g. {field: support_status, eq: partial} or {all: [...]}")
            return None
        if "field" not in node:
            return self._combinator(node, where)
        return self._test(node, where)

    def _combinator(self, node: dict, where: tuple) -> Condition | None:
        keys = sorted(node)
        if len(keys) != 1 or keys[0] not in COMBINATORS:
            unknown = [k for k in keys if k not in COMBINATORS]
            word = unknown[0] if unknown else keys[0]
            hint = _suggest(word, COMBINATORS + ("field",) + tuple(OPERATORS))
            if word in OPERATORS:
                hint = f"operator '{word}' needs a 'field' beside it"
            self.fail("unknown-operator" if unknown else "bad-condition",
                      f"'{word}' is not a combinator (all, any, not), and the condition has no 'field'",
                      where + (word,), hint)
            return None
        op = keys[0]
        if op == "not":
            inner = self.compile(node["not"], where + ("not",))
            if inner is None:
                return None
            t = inner.test
            return Condition(node, lambda v: not t(v), "not", (inner,), where=where)
        items = node[op]
        if not isinstance(items, list) or not items:
            self.fail("bad-condition", f"'{op}' takes a non-empty list of conditions", where + (op,))
            return None
        children = [self.compile(c, where + (op, i)) for i, c in enumerate(items)]
        if any(c is None for c in children):
            return None
        tests = tuple(c.test for c in children)
        if len(tests) == 1:
            test = tests[0]
        elif len(tests) == 2:
            a, b = tests
            test = (lambda v: a(v) and b(v)) if op == "all" else (lambda v: a(v) or b(v))
        elif op == "all":
            test = lambda v: all(t(v) for t in tests)
        else:
            test = lambda v: any(t(v) for t in tests)
        return Condition(node, test, op, tuple(children), where=where)

    def _test(self, node: dict, where: tuple) -> Condition | None:
        field = node["field"]
        if not isinstance(field, str) or not field or (field != "." and (
                field.startswith(".") or field.endswith(".") or ".." in field)):
            self.fail("bad-field", f"field must be a dotted path, got {field!r}", where + ("field",))
            return None
        ops = [k for k in node if k != "field"]
        if len(ops) != 1:
            if not ops:
                self.fail("bad-condition", f"test on '{field}' names no operator", where,
                          "add one of: " + ", ".join(OPERATORS))
            else:
                self.fail("bad-condition", f"test on '{field}' names {len(ops)} operators "
                          f"({', '.join(map(str, ops))}); write one test per operator inside 'all'", where)
            return None
        op = ops[0]
        if op not in OPERATORS:
            self.fail("unknown-operator", f"unknown operator '{op}'", where + (op,),
                      _suggest(op, OPERATORS) or "operators: " + ", ".join(OPERATORS))
            return None
        kind, fn = OPERATORS[op]
        get = compile_path(field)
        arg = node[op]
        at = where + (op,)
        if kind in ("scalar_or_ref", "ordered_or_ref"):
            return self._compare(node, field, op, arg, fn, get, where, kind)
        if kind == "scalar_list":
            if not isinstance(arg, list) or not arg or not all(_scalar(a) for a in arg):
                self.fail("bad-argument", f"'{op}' takes a non-empty list of scalars", at)
                return None
            frozen = tuple(arg)
            test = lambda v: fn(get(v), frozen)
            if all(type(a) is str for a in arg):
                strings = frozenset(arg)
                test = ((lambda v: type(x := get(v)) is str and x in strings) if op == "in" else
                        (lambda v: (x := get(v)) is not MISSING and not (type(x) is str and x in strings)))
            return Condition(node, test, "test", field=field, op=op, arg=list(frozen), where=where)
        if kind == "bool":
            if not isinstance(arg, bool):
                self.fail("bad-argument", f"'{op}' takes true or false, got {arg!r}", at)
                return None
            return Condition(node, lambda v: fn(get(v), arg), "test", field=field, op=op, arg=arg,
                             where=where)
        if kind == "regex":
            if not isinstance(arg, str):
                self.fail("bad-argument", f"'matches' takes a regular expression string", at)
                return None
            try:
                pattern = regex.compile(arg)
            except regex.error as exc:
                self.fail("bad-regex", f"regular expression does not compile: {exc}", at)
                return None
            return Condition(node, lambda v: fn(get(v), pattern), "test", field=field, op=op,
                             arg=arg, where=where)
        if kind == "condition":
            inner = self.compile(arg, at)
            if inner is None:
                return None
            return Condition(node, _quantifier(op, get, inner.test), "test", field=field, op=op,
                             arg=inner, where=where)
        return self._count(node, field, arg, get, where)

    def _compare(self, node, field, op, arg, fn, get, where, kind) -> Condition | None:
        at = where + (op,)
        if isinstance(arg, dict):
            if sorted(arg) != ["field"] or not isinstance(arg["field"], str):
                self.fail("bad-argument", f"'{op}' compares with a scalar or with {{field: PATH}}", at)
                return None
            other = compile_path(arg["field"])

            def test(v: Any) -> bool:
                a, b = get(v), other(v)
                return a is not MISSING and b is not MISSING and fn(a, b)
            return Condition(node, test, "test", field=field, op=op, ref=arg["field"], where=where)
        if not _scalar(arg) or (kind == "ordered_or_ref" and not (_is_num(arg) or isinstance(arg, str))):
            want = "a number or a string" if kind == "ordered_or_ref" else "a scalar"
            self.fail("bad-argument", f"'{op}' takes {want}, got {type(arg).__name__}", at)
            return None
        return Condition(node, _specialised(op, get, arg) or (lambda v: fn(get(v), arg)), "test",
                         field=field, op=op, arg=arg, where=where)

    def _count(self, node, field, arg, get, where) -> Condition | None:
        at = where + ("count",)
        if not isinstance(arg, dict):
            self.fail("bad-argument", "'count' takes {where: cond?, <eq|ne|lt|le|gt|ge>: N}", at)
            return None
        cmp_ops = [k for k in arg if k != "where"]
        bad = [k for k in cmp_ops if k not in COMPARE]
        if bad or len(cmp_ops) != 1 or not _is_num(arg[cmp_ops[0]]):
            word = bad[0] if bad else ""
            self.fail("bad-argument", "'count' needs exactly one numeric comparison "
                      "(eq, ne, lt, le, gt, ge) and an optional 'where'", at + ((word,) if word else ()),
                      _suggest(word, COMPARE + ("where",)))
            return None
        cmp, number = cmp_ops[0], arg[cmp_ops[0]]
        inner = None
        if "where" in arg:
            inner = self.compile(arg["where"], at + ("where",))
            if inner is None:
                return None
        cmp_fn = OPERATORS[cmp][1]
        item_test = inner.test if inner else None

        def test(v: Any) -> bool:
            items = get(v)
            if type(items) is not list:
                return False
            n = len(items) if item_test is None else sum(1 for i in items if item_test(i))
            return cmp_fn(n, number)
        return Condition(node, test, "test", field=field, op="count",
                         arg={"where": inner, cmp: number}, where=where)


def _specialised(op: str, get: Callable, arg: Any) -> Callable[[Any], bool] | None:
    """Faster closures with the same semantics for the common literal cases of eq / ne."""
    if type(arg) is str and op == "eq":
        return lambda v: get(v) == arg        # only a str equals a str, and MISSING never does
    if type(arg) is str and op == "ne":
        def ne(v: Any) -> bool:
            x = get(v)
            return x is not MISSING and not (type(x) is str and x == arg)
        return ne
    if type(arg) is int and op == "eq":
        return lambda v: type(x := get(v)) in (int, float) and x == arg
    if type(arg) is bool and op == "eq":
        return lambda v: get(v) is arg
    return None


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def _quantifier(op: str, get: Callable, inner: Callable) -> Callable[[Any], bool]:
    def some(v: Any) -> bool:
        items = get(v)
        if type(items) is not list:
            return False
        for i in items:
            if inner(i):
                return True
        return False

    def every(v: Any) -> bool:
        items = get(v)
        if type(items) is not list:
            return False
        for i in items:
            if not inner(i):
                return False
        return True

    def no(v: Any) -> bool:
        items = get(v)
        return type(items) is list and not some(v)
    return {"any": some, "all": every, "none": no}[op]


def compile_condition(node: Any, where: tuple, faults: list[Fault]) -> Condition | None:
    """Compile one condition; problems go to `faults` (located by key path), None if any."""
    before = len(faults)
    cond = _Compiler(faults).compile(node, where)
    return cond if len(faults) == before else None


def explain_failure(cond: Condition, value: Any) -> dict | None:
    """Why `cond` is false on `value`: the first failing test with the values it read (None if true)."""
    if cond.test(value):
        return None
    if cond.kind == "all":
        for child in cond.children:
            failure = explain_failure(child, value)
            if failure:
                return failure
    if cond.kind == "any":
        return {"at": _where(cond.where), "op": "any",
                "failed": [explain_failure(c, value) for c in cond.children]}
    if cond.kind == "not":
        return {"at": _where(cond.where), "op": "not", "inner_held": cond.children[0].source}
    read = compile_path(cond.field)(value)
    out = {"at": _where(cond.where), "field": cond.field, "op": cond.op,
           "read": "<missing>" if read is MISSING else read}
    if cond.ref:
        other = compile_path(cond.ref)(value)
        out["expected"] = {"field": cond.ref, "read": "<missing>" if other is MISSING else other}
    elif isinstance(cond.arg, Condition):
        out["expected"] = cond.arg.source
    elif isinstance(cond.arg, dict):
        out["expected"] = cond.source["count"]
    else:
        out["expected"] = cond.arg
    return out


def _where(path: tuple) -> str:
    return dotted(path)
