"""Conditions compiled to straight-line Python: one small function per condition node.

Closures per operator cost a call per test and per path step; generated code reads each path
with inline dict lookups and compares literals directly, several times faster for the same
semantics (conditions.py states them; tests/cases/conditions/ and the durable oracle pin them).
Only literals (via repr, or as named constants) and field names (via repr) reach the source, so
nothing from a table is ever executed as code.
"""
from __future__ import annotations

import functools
import math
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable

from .operators import DATE_REFS, MISSING, OPERATORS, ROOT, path_parts

if TYPE_CHECKING:
    from .conditions import Condition


class TooComplex(Exception):
    """A condition nested too deeply for Python to compile."""


def _literal_ok(value: Any) -> bool:
    """Whether repr(value) is a Python literal with the same value (inf, nan and ints too long
    for repr become named constants instead)."""
    if value is None or value.__class__ in (bool, str):
        return True
    if value.__class__ is int:
        return -10 ** 18 < value < 10 ** 18
    return value.__class__ is float and math.isfinite(value)


class Gen:
    """Source for one function: expressions for paths and conditions, named constants, helpers."""

    def __init__(self, share_reads: bool = False) -> None:
        self.names: dict[str, Any] = {"M": MISSING}
        self.helpers: list[str] = []
        self.n = 0
        # With share_reads, every path of `v` is read once, into a local, by `reads` (lines for the
        # top of the function): a table's rows read the same fields many times.
        self.shared: dict[tuple, str] | None = {} if share_reads else None
        self.reads: list[str] = []
        self.top_root = "v"       # the whole input outside any list helper (compile_test may pass another)
        self.depth = 0            # inside a list helper the whole input is its parameter `r`

    def root(self) -> str:
        return "r" if self.depth else self.top_root

    def read(self, var: str, field: str) -> str:
        """An expression reading `field` from the item `var`, or from the whole input for `$.name`."""
        if field.startswith(ROOT):
            return self.get(self.root(), path_parts(field[len(ROOT):]))
        return self.get(var, path_parts(field))

    def fresh(self, prefix: str = "_t") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any) -> str:
        name = self.fresh("_k")
        self.names[name] = value
        return name

    def lit(self, value: Any) -> str:
        return repr(value) if _literal_ok(value) else self.const(value)

    def get(self, var: str, parts: tuple) -> str:
        """An expression reading the path `parts` from `var`: the value, or M where it leads nowhere."""
        if self.shared is not None and var == "v" and parts:
            return self._shared(self.shared, parts)
        expr = var
        for p in parts:
            expr = self._step(expr, p)
        return expr

    def _step(self, expr: str, p: str | int) -> str:
        t = self.fresh()
        if isinstance(p, str):
            return f"({t}.get({p!r}, M) if ({t} := {expr}).__class__ is dict else M)"
        return f"({t}[{p}] if ({t} := {expr}).__class__ is list and len({t}) > {p} else M)"

    def _shared(self, shared: dict[tuple, str], parts: tuple) -> str:
        if parts not in shared:
            base = self._shared(shared, parts[:-1]) if len(parts) > 1 else "v"
            name = shared[parts] = self.fresh("_p")
            self.reads.append(f"    {name} = {self._step(base, parts[-1])}\n")
        return shared[parts]

    def expr(self, c: Condition, var: str) -> str:
        if c.kind in ("all", "any"):
            joiner = " and " if c.kind == "all" else " or "
            return "(" + joiner.join(self.expr(x, var) for x in c.children) + ")"
        if c.kind == "not":
            return f"(not {self.expr(c.children[0], var)})"
        return self.test(c, var)

    def test(self, c: Condition, var: str) -> str:
        get = self.read(var, c.field)
        op, arg, t = c.op, c.arg, self.fresh()
        if c.ref:
            other, u = self.read(var, c.ref), self.fresh()
            fn = self.const(DATE_REFS.get(op) or OPERATORS[op][1])
            return f"((({t} := {get}) is not M) and (({u} := {other}) is not M) and {fn}({t}, {u}))"
        if op in ("before", "after"):
            return f"{self.const(OPERATORS[op][1])}({get}, {self.const(arg)}, n)"
        num = f"({t}.__class__ is int or {t}.__class__ is float)"
        if op == "eq":
            if arg.__class__ is str:
                return f"({get} == {arg!r})"
            if arg is None or arg.__class__ is bool:
                return f"({get} is {arg!r})"
            return f"((({t} := {get}).__class__ is int or {t}.__class__ is float) and {t} == {self.lit(arg)})"
        if op == "ne":
            if arg.__class__ is str:
                return f"((({t} := {get}) is not M) and {t} != {arg!r})"
            if arg is None or arg.__class__ is bool:
                return f"((({t} := {get}) is not M) and {t} is not {arg!r})"
            return f"((({t} := {get}) is not M) and not ({num} and {t} == {self.lit(arg)}))"
        if op in ("lt", "le", "gt", "ge"):
            sign = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
            if arg.__class__ is str:
                return f"((({t} := {get}).__class__ is str) and {t} {sign} {arg!r})"
            return f"((({t} := {get}).__class__ is int or {t}.__class__ is float) and {t} {sign} {self.lit(arg)})"
        if op in ("in", "not_in"):
            if all(a.__class__ is str for a in arg):
                k = self.const(frozenset(arg))
                held = f"({t}.__class__ is str and {t} in {k})"
                if op == "in":
                    return f"((({t} := {get}).__class__ is str) and {t} in {k})"
                return f"((({t} := {get}) is not M) and not {held})"
            return f"{self.const(OPERATORS[op][1])}({get}, {self.const(tuple(arg))})"
        if op == "exists":
            if arg:
                return f"((({t} := {get}) is not M) and {t} is not None)"
            return f"((({t} := {get}) is M) or {t} is None)"
        if op == "empty":
            return f"{self.const(OPERATORS['empty'][1])}({get}, {arg!r})"
        if op == "matches":
            return f"{self.const(OPERATORS['matches'][1])}({get}, {self.const(c.pattern)}, {c.budget_s!r})"
        if op in ("any", "all", "none"):
            return f"{self.quantifier(op, arg)}({get}, n, {self.root()})"
        return f"{self.count(arg)}({get}, n, {self.root()})"

    def _inside(self, cond: Condition, var: str) -> str:
        """`cond` on a list item `var`, in a helper whose parameter `r` is the whole input."""
        self.depth += 1
        try:
            return self.expr(cond, var)
        finally:
            self.depth -= 1

    def quantifier(self, op: str, inner: Condition) -> str:
        name = self.fresh("_q")
        body = self._inside(inner, "i")
        hit, miss = {"any": ("True", "False"), "all": ("False", "True"), "none": ("False", "True")}[op]
        check = f"not {body}" if op == "all" else body
        self.helpers.append(
            f"def {name}(items, n, r):\n"
            f"    if items.__class__ is not list:\n        return False\n"
            f"    for i in items:\n        if {check}:\n            return {hit}\n"
            f"    return {miss}\n")
        return name

    def count(self, arg: dict) -> str:
        name = self.fresh("_c")
        cmp = next(k for k in arg if k != "where")
        sign = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[cmp]
        where = arg["where"]
        tally = ("    k = len(items)\n" if where is None else
                 f"    k = 0\n    for i in items:\n        if {self._inside(where, 'i')}:\n            k += 1\n")
        self.helpers.append(
            f"def {name}(items, n, r):\n"
            f"    if items.__class__ is not list:\n        return False\n"
            f"{tally}    return k {sign} {self.lit(arg[cmp])}\n")
        return name

    def build(self, body: str, name: str) -> Callable[..., Any]:
        """`def name(v, n=None): return body`, with the helpers it calls (`n`: the caller's now)."""
        return self.build_function(f"def {name}(v, n=None):\n    return {body}\n", name)

    def build_function(self, source: str, name: str) -> Callable[..., Any]:
        return self.build_module(source, name)[name]

    def build_module(self, source: str, name: str) -> dict:
        """The namespace of the helpers plus `source`, compiled as one module (one compile() call
        costs less than many small ones: start-up compiles a whole decision table at once)."""
        source = "\n".join(self.helpers) + "\n" + source
        try:
            code = compiled(source, f"<groundrules {name}>")
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            raise TooComplex(str(exc)) from None
        namespace = dict(self.names)
        exec(code, namespace)  # noqa: S102 - source built above from repr'd literals and field names only
        return namespace


@functools.lru_cache(maxsize=4096)
def compiled(source: str, filename: str) -> CodeType:
    """The code object of generated source, kept per process: code objects are immutable and each
    use executes one into a fresh namespace, so a table compiled again (a reload, an edit of
    another table) compiles no Python. Only what compiles is kept; an error is raised again."""
    return compile(source, filename, "exec")


def compile_test(cond: "Condition") -> Callable[..., bool]:
    """`test(v, n=None, r=None) -> bool` for one condition node, `r` the whole input when `v` is a
    list item (a trace explaining an item: `$.name` still reads the input); raises TooComplex on
    absurd nesting."""
    gen = Gen()
    gen.top_root = "_root"
    try:
        body = gen.expr(cond, "v")
    except RecursionError:
        raise TooComplex("nested too deeply") from None
    return gen.build_function(f"def test(v, n=None, r=None):\n    _root = v if r is None else r\n"
                              f"    return {body}\n", "test")


def compile_getter(parts: tuple) -> Callable[[Any], Any]:
    """A getter for a path: the value, or MISSING where the path does not lead."""
    gen = Gen()
    return gen.build(gen.get("v", parts), "get")
