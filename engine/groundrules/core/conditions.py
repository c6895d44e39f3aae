"""The condition grammar shared by every table: parsed and checked once, then compiled to Python.

A condition is a mapping. Combinators: `all: [..]`, `any: [..]`, `not: cond`. A test names a
`field` (dotted path; `.` is the value itself) and exactly one operator from OPERATORS. Inside a
list quantifier (`any`, `all`, `none`, `count` with a `field`) the inner fields are relative to
each item. Semantics, chosen so that a rule never fires on data it did not read:
- any test on a missing field is false (`ne` and `not_in` too); `exists: false` is the way to ask;
- `exists: true` means present and not null;
- equality is type-strict: true is not 1, "1" is not 1, but 1 equals 1.0;
- ordering compares two numbers or two strings, anything else is false;
- `all` over an empty list is true, `any` is false; quantifiers on a non-list are false.
The semantics live in the OPERATORS functions (operators.py); condgen.py compiles the same semantics into
straight-line Python for speed, and tests/cases/conditions/ pins both to the rules above.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field, replace
from typing import Any, Callable

from . import punctuation
from .canonical import detached
from .dates import Anchor, anchor_of
from .condgen import TooComplex, compile_getter, compile_test
from .errors import Fault, did_you_mean
from .operators import MISSING, OPERATORS, ROOT, is_num, path_parts, same
from .yamlsrc import dotted

# The grammar's public names: parts and tests import them from here.
__all__ = ["COMBINATORS", "COMPARE", "MISSING", "OPERATORS", "Condition",
           "compile_condition", "compile_path", "explain_failure", "path_parts", "same"]


COMBINATORS = ("all", "any", "not")
COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
# Spellings analysts bring from other languages, for hints only (never accepted as operators).
SPELLINGS = {"gte": "ge", "lte": "le", "neq": "ne", "equals": "eq", "==": "eq", "!=": "ne",
             ">": "gt", ">=": "ge", "<": "lt", "<=": "le", "regex": "matches", "nin": "not_in",
             "and": "all", "or": "any", "some": "any", "every": "all", "len": "count"}


def _suggest(word: object, choices) -> str:
    if isinstance(word, str) and SPELLINGS.get(word) in choices:
        return f"did you mean '{SPELLINGS[word]}'?"
    return did_you_mean(word, choices)


def compile_path(path: str) -> Callable[[Any], Any]:
    """Dotted path -> getter returning MISSING where the path does not lead."""
    return compile_getter(path_parts(path))


@dataclass(frozen=True)
class Condition:
    """A checked condition: `test(value) -> bool` plus its parts, for traces, lint and oracles.

    For a test node: `field`, `op`, and `arg` (the literal; the compiled inner Condition of a
    quantifier; `{"where": Condition | None, <cmp>: N}` for count; the pattern text for matches);
    `ref` is the other field of a field-vs-field comparison."""

    source: Any
    kind: str                      # 'all' | 'any' | 'not' | 'test'
    children: tuple = ()
    field: str = ""
    op: str = ""
    arg: Any = None
    ref: str = ""
    where: tuple = ()              # key path inside the table, for messages
    pattern: Any = None            # compiled regex of a `matches` test
    budget_s: float = 0.0          # its time per search (the compile context's table_budget_s)
    memo: dict = dataclass_field(default_factory=dict, compare=False, repr=False)

    @property
    def test(self) -> Callable[..., bool]:
        """`test(value, now=None) -> bool`, generated Python compiled on first use (a table's rows
        are compiled together with their table instead; the parts of a condition only for traces).
        `now` (dates.Now) is needed only by date tests against now."""
        try:
            return self.memo["test"]
        except KeyError:
            fn = self.memo["test"] = compile_test(self)
            return fn

    def fields(self, prefix: str = "") -> list[tuple[str, tuple]]:
        """Every (field path, key path) this condition reads; list items marked `[]` (missing[].reason)."""
        if self.kind != "test":
            return [f for c in self.children for f in c.fields(prefix)]
        own = _read_as(self.field, prefix)
        out = [(own, self.where + ("field",))]
        if self.ref:
            out.append((_read_as(self.ref, prefix), self.where + (self.op,)))
        inner = self.inner()
        if inner is not None:
            out += inner.fields(own + "[].")
        return out

    def inner(self) -> "Condition | None":
        """The per-item condition of a quantifier or of `count: {where: ...}`."""
        if isinstance(self.arg, Condition):
            return self.arg
        if isinstance(self.arg, dict):
            return self.arg.get("where")
        return None

    def regexes(self) -> list[str]:
        if self.kind != "test":
            return [r for c in self.children for r in c.regexes()]
        if self.op == "matches":
            return [self.arg]
        inner = self.inner()
        return inner.regexes() if inner is not None else []


def _read_as(field: str, prefix: str) -> str:
    """The path a field names from the input's top: `$.name` is the input's own, whatever the list."""
    if field.startswith(ROOT):
        return field[len(ROOT):]
    return prefix + field if field != "." else prefix.rstrip(".") or "."


class _Parser:
    """Checks a condition's shape and builds the Condition tree (condgen compiles its tests)."""

    def __init__(self, faults: list[Fault], budget_s: float):
        self.faults = faults
        self.budget_s = budget_s

    def fail(self, code: str, message: str, where: tuple, hint: str = "") -> None:
        self.faults.append(Fault(code, message, where, hint))

    def parse(self, node: Any, where: tuple) -> Condition | None:
        if not isinstance(node, dict) or not node:
            self.fail("bad-condition", "a condition must be a non-empty mapping", where,
                      "write e.g. {field: support_status, eq: partial} or {all: [...]}")
            return None
        for key in node:
            if punctuation.found(key):
                self.fail("full-width-punctuation", *punctuation.fault_words(key)[:1], where + (key,),
                          punctuation.fault_words(key)[1])
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
            inner = self.parse(node["not"], where + ("not",))
            return None if inner is None else Condition(node, "not", (inner,), where=where)
        items = node[op]
        if not isinstance(items, list) or not items:
            self.fail("bad-condition", f"'{op}' takes a non-empty list of conditions", where + (op,))
            return None
        children = [self.parse(c, where + (op, i)) for i, c in enumerate(items)]
        if any(c is None for c in children):
            return None
        return Condition(node, op, tuple(children), where=where)

    def _test(self, node: dict, where: tuple) -> Condition | None:
        field = node["field"]
        if not isinstance(field, str) or not field or (field != "." and (
                field.startswith(".") or field.endswith(".") or ".." in field)):
            self.fail("bad-field", f"field must be a dotted path, got {field!r}", where + ("field",))
            return None
        if "[" in field or "]" in field:
            head = field.split("[")[0] or "items"
            self.fail("bad-field", f"field '{field}' reads list items with [], which a test cannot do",
                      where + ("field",), f"quantify instead: {{field: {head}, any: {{field: ..., eq: ...}}}}")
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
        kind = OPERATORS[op][0]
        arg = node[op]
        at = where + (op,)
        base = Condition(node, "test", field=field, op=op, where=where)
        if kind in ("scalar_or_ref", "ordered_or_ref"):
            return self._compare(base, arg, kind, at)
        if kind == "scalar_list":
            if not isinstance(arg, list) or not arg or not all(_scalar(a) for a in arg):
                self.fail("bad-argument", f"'{op}' takes a non-empty list of scalars", at)
                return None
            return replace(base, arg=list(arg))
        if kind == "bool":
            if not isinstance(arg, bool):
                self.fail("bad-argument", f"'{op}' takes true or false, got {arg!r}", at)
                return None
            return replace(base, arg=arg)
        if kind == "date":
            return self._date(base, arg, at)
        if kind == "regex":
            if not isinstance(arg, str):
                self.fail("bad-argument", "'matches' takes a regular expression string", at)
                return None
            import regex                  # only tables that match patterns need it
            try:
                pattern = regex.compile(arg)
            except regex.error as exc:
                self.fail("bad-regex", f"regular expression does not compile: {exc}", at)
                return None
            return replace(base, arg=arg, pattern=pattern, budget_s=self.budget_s)
        if kind == "condition":
            inner = self.parse(arg, at)
            return None if inner is None else replace(base, arg=inner)
        return self._count(base, arg, at)

    def _compare(self, base: Condition, arg: Any, kind: str, at: tuple) -> Condition | None:
        op = base.op
        if isinstance(arg, dict):
            if sorted(arg) != ["field"] or not isinstance(arg["field"], str) or not arg["field"]:
                self.fail("bad-argument", f"'{op}' compares with a scalar or with {{field: PATH}}", at)
                return None
            return replace(base, ref=arg["field"])
        if not _scalar(arg) or (kind == "ordered_or_ref" and not (is_num(arg) or isinstance(arg, str))):
            want = "a number or a string" if kind == "ordered_or_ref" else "a scalar"
            self.fail("bad-argument", f"'{op}' takes {want}, got {type(arg).__name__}", at)
            return None
        return replace(base, arg=arg)

    def _date(self, base: Condition, arg: Any, at: tuple) -> Condition | None:
        op = base.op
        if isinstance(arg, dict) and sorted(arg) == ["field"] and isinstance(arg["field"], str) and arg["field"]:
            return replace(base, ref=arg["field"])
        anchor = anchor_of(arg)
        if anchor is None:
            hint = ("durations are ISO 8601: -P1Y, P30D, PT12H" if isinstance(arg, dict) and "now" in arg
                    else "write a date (2024-05-01), a date-time with offset (2024-05-01T08:00:00+08:00), "
                         "{now: -P1Y} or {field: PATH}")
            self.fail("bad-argument", f"'{op}' takes a date, a date-time, {{now: DURATION}} or {{field: PATH}}",
                      at, hint)
            return None
        return replace(base, arg=anchor)

    def _count(self, base: Condition, arg: Any, at: tuple) -> Condition | None:
        if not isinstance(arg, dict):
            self.fail("bad-argument", "'count' takes {where: cond?, <eq|ne|lt|le|gt|ge>: N}", at)
            return None
        cmp_ops = [k for k in arg if k != "where"]
        bad = [k for k in cmp_ops if k not in COMPARE]
        if bad or len(cmp_ops) != 1 or not is_num(arg[cmp_ops[0]]):
            word = bad[0] if bad else ""
            self.fail("bad-argument", "'count' needs exactly one numeric comparison "
                      "(eq, ne, lt, le, gt, ge) and an optional 'where'", at + ((word,) if word else ()),
                      _suggest(word, COMPARE + ("where",)))
            return None
        cmp = cmp_ops[0]
        inner = None
        if "where" in arg:
            inner = self.parse(arg["where"], at + ("where",))
            if inner is None:
                return None
        return replace(base, arg={"where": inner, cmp: arg[cmp]})


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def compile_condition(node: Any, where: tuple, faults: list[Fault], *, budget_s: float,
                      eager: bool = True) -> Condition | None:
    """Check and compile one condition; problems go to `faults` (located by key path), None if any.
    `budget_s`: how long each `matches` search may run (its table's CompileContext.table_budget_s).
    `eager: False` leaves the compiling to the caller (a decision table compiles its rows as one)."""
    before = len(faults)
    try:
        tree = _Parser(faults, budget_s).parse(node, where)
    except RecursionError:
        tree = None
        faults.append(Fault("condition-too-deep", "condition is nested too deeply", where,
                            "flatten it: all/any take lists"))
    if tree is None or len(faults) != before:
        return None
    if not eager:
        return tree
    try:
        tree.test
        return tree
    except TooComplex:
        faults.append(Fault("condition-too-deep", "condition is nested too deeply to compile", where,
                            "flatten it: all/any take lists"))
        return None


def explain_failure(cond: Condition, value: Any, now: Any = None, root: Any = None) -> dict | None:
    """Why `cond` is false on `value`: the first failing test with the values it read (None if true).
    Values are copies: a caller editing the trace edits neither the value nor the table. `now` is
    the evaluation's (dates.Now), for date tests; `root` the whole input when `value` is a list item
    (what a `$.name` field reads)."""
    root = value if root is None else root
    if cond.test(value, now, root):
        return None
    if cond.kind == "all":
        for child in cond.children:
            failure = explain_failure(child, value, now, root)
            if failure:
                return failure
    if cond.kind == "any":
        return {"at": dotted(cond.where), "op": "any",
                "failed": [explain_failure(c, value, now, root) for c in cond.children]}
    if cond.kind == "not":
        return {"at": dotted(cond.where), "op": "not", "inner_held": detached(cond.children[0].source)}
    out = {"at": dotted(cond.where), "field": cond.field, "op": cond.op, "read": _shown(cond.field, value, root)}
    if cond.ref:
        out["expected"] = {"field": cond.ref, "read": _shown(cond.ref, value, root)}
    elif isinstance(cond.arg, Condition):
        out["expected"] = detached(cond.arg.source)
        out.update(_items(cond, _reader(cond.field, value, root), now, root))
    elif isinstance(cond.arg, dict):
        out["expected"] = detached(cond.source["count"])
        out.update(_items(cond, _reader(cond.field, value, root), now, root))
    elif isinstance(cond.arg, Anchor):
        out["expected"] = detached(cond.source[cond.op])
        if cond.arg.offset is not None and now is not None:
            out["anchor"] = _anchor_text(cond.arg, now)
    else:
        out["expected"] = cond.arg
    return out


def _anchor_text(anchor: Anchor, now: Any) -> str:
    try:
        return anchor.resolve(now).isoformat()
    except OverflowError:
        return "<out of range>"


SHOWN_ITEMS = 3     # an `any` that held for no item explains its first few items


def _items(cond: Condition, items: Any, now: Any, root: Any) -> dict:
    """For a list operator, the item that decided: the first that failed `all`, the first that held
    for `none`, the first few that failed `any`, or how many `count` counted."""
    if items.__class__ is not list:
        return {}
    inner = cond.inner()
    if cond.op == "count":
        return {"counted": len(items) if inner is None else sum(1 for i in items if inner.test(i, now, root))}
    assert inner is not None, "all, any and none always carry an item condition (the parser requires one)"
    if cond.op == "all":
        for index, item in enumerate(items):
            if not inner.test(item, now, root):
                return {"item": {"index": index, "failed": explain_failure(inner, item, now, root)}}
    if cond.op == "none":
        for index, item in enumerate(items):
            if inner.test(item, now, root):
                return {"item": {"index": index, "held": detached(item)}}
    if cond.op == "any":
        return {"items": [{"index": index, "failed": explain_failure(inner, item, now, root)}
                          for index, item in enumerate(items[:SHOWN_ITEMS])], "of": len(items)}
    return {}


def _reader(field: str, value: Any, root: Any) -> Any:
    """What `field` reads: from the item `value`, or from the whole input `root` for `$.name`."""
    if field.startswith(ROOT):
        return compile_path(field[len(ROOT):])(root)
    return compile_path(field)(value)


def _shown(field: str, value: Any, root: Any = None) -> Any:
    read = _reader(field, value, value if root is None else root)
    return "<missing>" if read is MISSING else detached(read)
