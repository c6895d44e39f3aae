"""Decision tables evaluated by durable-rules, through the guarded wrapper of notes/durable-rules.md.

This is an oracle, not an engine: it is ~60x slower than the native evaluator and its C core
segfaults or loops on inputs the wrapper therefore never gives it. The wrapper:
1. translates every row (translate.py) and checks the result in our own code (`check`: known
   operators only, `$i.` paths inside $iany/$iall, the measured regex subset, a marker test first
   so no rule is a bare `$nex`); a row without an exact translation is reported, never approximated;
2. one rule per row, `{'all': [{'m': cond}], 'pri': index + 1, 'run': row}`, plus a lowest-priority
   catch-all on the marker so every fact is handled and its session can be deleted safely;
3. a Host whose background dispatcher never starts (`_run` does nothing);
4. per evaluation, under one lock: assert the context as a fact on a fixed session id, and delete
   that session in `finally`; the fired rows are collected by the action closures.
durable-rules is imported here, lazily: the library imports and works without it.
"""
from __future__ import annotations

import copy
import json
import threading
from typing import Any

from ...core import codes
from ...core.decide import DecisionTable
from ...core.errors import refusal
from .shapes import Shape, conforms
from .translate import (AND, FALSE, MARKER, MT_BOOL, MT_COMPOSITE, MT_NUMBER, Inexpressible, literal_ok,
                        translate)

SLOT = "groundrules-oracle"
RULESET = "table"
CATCH_ALL = "__groundrules_catch_all__"
MAX_PROPERTIES = 250                       # durable's MAX_OBJECT_PROPERTIES is 255; the wrapper adds 2
COMPARISONS = ("$eq", "$neq", "$lt", "$lte", "$gt", "$gte")


def compile_table(table: DecisionTable, contract: dict | None = None) -> tuple[dict, list[tuple[str, str]]]:
    """(durable ruleset, [(row id, reason)] for rows without an exact translation).

    `contract` is the JSON Schema of the table's input: it says which types each field holds,
    which many rows need (durable compares "1" == 1). Without it every field may hold anything."""
    shape = Shape(contract)
    rules: dict = {}
    inexpressible: list[tuple[str, str]] = []
    for index, row in enumerate(table.rows):
        try:
            expr = translate(row.when, shape)
        except Inexpressible as exc:
            inexpressible.append((row.id, str(exc)))
            continue
        if expr is FALSE:
            continue                                  # can never fire on a conforming value
        cond = AND({MARKER: 1}, expr)
        cond = cond if list(cond) == ["$and"] else {"$and": [cond]}
        check(cond)
        rules[f"r{index}"] = {"all": [{"m": cond}], "pri": index + 1, "run": row.id}
    rules[CATCH_ALL] = {"all": [{"m": {MARKER: 1}}], "pri": len(table.rows) + 1, "run": CATCH_ALL}
    return {RULESET: rules}, inexpressible


def check(cond: dict) -> None:
    """Refuse, in our own code, any expression outside the subset measured to behave."""
    if not (list(cond) == ["$and"] and cond["$and"][0] == {MARKER: 1}):
        raise refusal(codes.DURABLE_UNSAFE, "durable.marker")
    _check(cond, "")


def _check(expr: Any, prefix: str) -> None:
    if not isinstance(expr, dict) or len(expr) != 1:
        raise refusal(codes.DURABLE_UNSAFE, "durable.single_key", expr=repr(expr))
    (key, body), = expr.items()
    if key in ("$and", "$or"):
        if not isinstance(body, list) or not body:
            raise refusal(codes.DURABLE_UNSAFE, "durable.list", key=key)
        for sub in body:
            _check(sub, prefix)
        return
    if not key.startswith("$") or key == "$i" or key.startswith("$i."):
        _path(key, prefix)
        _scalar(body)
        return
    if not isinstance(body, dict) or len(body) != 1:
        raise refusal(codes.DURABLE_UNSAFE, "durable.one_path", key=key)
    (path, arg), = body.items()
    _path(path, prefix)
    if key in ("$iany", "$iall"):
        _check(arg, "$i")
    elif key in ("$ex", "$nex"):
        if arg != 1:
            raise refusal(codes.DURABLE_UNSAFE, "durable.takes_one", key=key)
    elif key == "$mt":
        if not _regex_ok(arg):
            raise refusal(codes.DURABLE_UNSAFE, "durable.regex", regex=repr(arg))
    elif key in COMPARISONS:
        if isinstance(arg, dict):
            _operand(arg, path, prefix)
        else:
            _scalar(arg)
    else:
        raise refusal(codes.DURABLE_UNSAFE, "durable.operator", key=key)


def _path(path: str, prefix: str) -> None:
    inside = path == "$i" or path.startswith("$i.")
    if bool(prefix) != inside:
        raise refusal(codes.DURABLE_UNSAFE, "durable.path_prefixed" if prefix else "durable.path_plain", path=repr(path))


def _operand(arg: dict, path: str, prefix: str) -> None:
    if prefix:
        raise refusal(codes.DURABLE_UNSAFE, "durable.m_in_list")
    if arg == {"$add": {"$l": {"$m": path}, "$r": 0}}:
        return
    if list(arg) != ["$m"] or not isinstance(arg["$m"], str):
        raise refusal(codes.DURABLE_UNSAFE, "durable.operand", operand=repr(arg))


def _scalar(value: Any) -> None:
    if isinstance(value, (dict, list)) or not literal_ok(value):
        raise refusal(codes.DURABLE_UNSAFE, "durable.literal", value=repr(value))


def _regex_ok(rx: Any) -> bool:
    if rx in (MT_NUMBER, MT_BOOL, ".+") + MT_COMPOSITE:
        return True
    return (isinstance(rx, str) and rx.startswith(".*") and rx.endswith(".*") and len(rx) > 4
            and not any(c in ".^$*+?{}[]\\|()" for c in rx[2:-2]))


def _durable_engine():
    """The durable-rules engine module, imported on first use (a test extra, never required)."""
    try:
        from durable import engine
    except Exception as exc:  # noqa: BLE001 - ImportError, or the C core failing to load (3.13)
        raise refusal(codes.DURABLE_UNAVAILABLE, "durable.unavailable", problem=f"{type(exc).__name__}: {exc}") from exc
    return engine


def _host(engine, actions: dict):
    class QuietHost(engine.Host):
        """A Host whose dispatcher thread never starts; actions are looked up by name."""

        def __init__(self):
            super().__init__()

        def _run(self):
            pass

        def get_action(self, name):
            return actions[name]
    return QuietHost()


class DurableBackend:
    """One decision table compiled to durable-rules; `fired_rows(ctx)` mirrors
    `table.evaluate(ctx).fired` row ids (hit policy and default included)."""

    def __init__(self, table: DecisionTable, contract: dict | None = None):
        engine = _durable_engine()
        self.table = table
        self.shape = Shape(contract)
        self.ruleset, self.inexpressible = compile_table(table, contract)
        self._fired: list[str] = []
        self._lock = threading.Lock()
        actions = {row.id: self._recorder(row.id) for row in table.rows}
        actions[CATCH_ALL] = lambda c: None
        self._host = _host(engine, actions)
        self._host.register_rulesets(copy.deepcopy(self.ruleset))

    def _recorder(self, row_id: str):
        def record(_closure) -> None:
            self._fired.append(row_id)
        return record

    def matching_rows(self, ctx: Any) -> list[str]:
        """Ids of the expressible rows whose condition holds, in the order durable fired them."""
        if ctx.__class__ is not dict:
            return []
        problem = conforms(ctx, self.shape)
        if problem is not None:
            raise refusal(codes.DURABLE_OUTSIDE_CONTRACT, "durable.outside_contract", at=str(problem))
        _check_values(ctx)
        with self._lock:
            self._fired = []
            asserted = False
            try:
                self._host.assert_fact(RULESET, dict(ctx, sid=SLOT, **{MARKER: 1}))
                asserted = True
            except Exception as exc:  # noqa: BLE001 - the C core reports numeric codes only
                raise refusal(codes.DURABLE_FAILED, "durable.failed", problem=str(exc)) from exc
            finally:
                if asserted:      # the catch-all fired, so the session exists and may be deleted
                    self._host.delete_state(RULESET, SLOT)
            fired = self._fired
        return list(dict.fromkeys(fired))

    def out_of_reach(self) -> str:
        """One line naming the rows this translation cannot express and why ('' when it expresses
        them all): a table edit that uses what durable lacks (dates, regex classes) is reported, and
        the rows within reach are still checked (`agreement`)."""
        return "; ".join(f"{self.table.id}:{row}: {why}" for row, why in self.inexpressible)

    def agreement(self, ctx: Any) -> tuple[list[str], list[str]]:
        """(native, durable) row ids for `ctx`: the rows fired after the hit policy when every row is
        within reach, else the rows within reach whose condition holds (a hit policy over a partial
        table would guess at the rows it cannot see)."""
        if not self.inexpressible:
            return [f.row.id for f in self.table.evaluate(ctx).fired], self.fired_rows(ctx)
        outside = {r for r, _ in self.inexpressible}
        native = [r.id for r in self.table.rows if r.id not in outside and r.when.test(ctx)]
        return native, self.matching_rows(ctx)

    def fired_rows(self, ctx: Any) -> list[str]:
        """The row ids the table fires on `ctx`, after its hit policy; refuses partial tables."""
        if self.inexpressible:
            raise refusal(codes.DURABLE_INEXPRESSIBLE, "durable.inexpressible", rows=[r for r, _ in self.inexpressible])
        rows = {r.id: r for r in self.table.rows}
        fired: list[str] = []
        taken: set = set()
        for row_id in self.matching_rows(ctx):
            code = rows[row_id].code
            policy = self.table.hit_policy
            if (policy == "output_order" and code in taken) or (policy == "first" and fired):
                continue
            fired.append(row_id)
            taken.add(code)
        if self.table.hit_policy == "unique" and len(fired) > 1:
            raise refusal(codes.HIT_POLICY_VIOLATION, "decide.unique", table=self.table.id, rows=list(fired))
        if not fired and self.table.default is not None:
            fired.append(self.table.default.id)
        return fired


def _check_values(value: Any) -> None:
    """Refuse what durable's reader misreads or rejects: numbers with exponents or beyond 64 bits,
    and objects that flatten to more than MAX_PROPERTIES names (its limit is 255 per fact or item)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if v.__class__ is dict:
            if _flat_size(v) > MAX_PROPERTIES:
                raise refusal(codes.DURABLE_UNSUPPORTED_VALUE, "durable.properties", most=MAX_PROPERTIES)
            stack.extend(v.values())
        elif v.__class__ is list:
            stack.extend(v)
        elif not literal_ok(v):
            raise refusal(codes.DURABLE_UNSUPPORTED_VALUE, "durable.number", number=json.dumps(v))


def _flat_size(obj: dict) -> int:
    """How many dotted names durable makes of an object (nested objects flatten, lists do not)."""
    return sum(1 + (_flat_size(v) if v.__class__ is dict else 0) for v in obj.values())
