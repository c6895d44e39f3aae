"""The `acceptance` kind: invariants an analyst's edit must keep, stated in YAML and run by
`groundrules test` beside the tables' inline examples.

A seed's acceptance checks (a case from the corpus, a registry tool, a condition its answer must
meet), the codes and tables that must exist, and the priority relations a seed requires are data,
so an analyst who reorders two priorities learns it from `groundrules test` at the line of the
relation, not from a Python assertion. Checks call tools through the registry (a `run` the caller
gives), so they hold for what a host receives.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..core.canonical import detached
from ..core.conditions import Condition, compile_condition, explain_failure, path_parts
from ..core.errors import did_you_mean
from ..core.examples import ExampleResult
from ..core.fieldtypes import check_fields, check_literals, tool_data_contract

if TYPE_CHECKING:
    from ..core.tables import CompileContext

Run = Callable[[str, dict], dict]       # (tool, arguments) -> the registry's envelope


@dataclass(frozen=True)
class Check:
    id: str
    cases: tuple
    change: tuple              # ((path parts, value), ...)
    expect: Condition
    where: tuple
    group: int | None = None   # the seed group of a g<N>- id; None for a local- one


# A check id names the seed's acceptance group it belongs to, or says it belongs to none.
CHECK_ID = re.compile(r"g(?P<group>[1-9][0-9]*)-[a-z0-9][a-z0-9-]*|local-[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class Acceptance:
    kind: str
    id: str
    file: str
    tool: str
    argument: str
    cases: str
    requires: tuple
    checks: tuple
    groups: dict = field(default_factory=dict)     # seed group number -> what it holds

    def check_acceptance(self, book: Any, run: Run) -> Iterator[ExampleResult]:
        """Every requirement and check, each an ExampleResult located in this file."""
        yield from self._requirements(book)
        if not self.checks:
            return
        folder = Path(book.root) / "tests" / "cases" / self.cases
        for check in self.checks:
            failures, at = [], check.where + ("expect",)
            for stem in check.cases:
                problem, where = self._run_case(check, folder, stem, run)
                if problem:
                    failures.append(problem)
                    at = where if len(failures) == 1 else at
            yield ExampleResult(f"{self.id}:{check.id}", not failures, "; ".join(failures),
                                at if failures else check.where, "failing-acceptance")

    def _run_case(self, check: Check, folder: Path, stem: str, run: Run) -> tuple[str, tuple]:
        """What went wrong with one case ('' if nothing) and where in the check to point."""
        at = check.where + ("expect",)
        path = folder / f"{stem}.json"
        shown = f"tests/cases/{self.cases}/{stem}.json"
        try:
            case = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            known = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
            hint = did_you_mean(stem, known)
            return f"case {shown} does not exist" + (f" ({hint})" if hint else ""), check.where
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return f"case {shown} is not readable JSON: {exc.__class__.__name__}", check.where
        for parts, value in check.change:
            if not _set(case, parts, value):
                return f"case {stem}: change {'.'.join(map(str, parts))} leads nowhere in the case", check.where
        envelope = run(self.tool, {self.argument: case})
        data = envelope.get("data")
        if not envelope.get("ok") and data is None:
            error = envelope.get("error") or {}
            return f"case {stem}: {self.tool} refused: {error.get('code')}: {error.get('message')}", check.where
        failure = explain_failure(check.expect, data)
        if failure is None:
            return "", at
        return f"case {stem}: {_said(failure)}", _failing(check.expect, data)

    def _requirements(self, book: Any) -> Iterator[ExampleResult]:
        for n, req in enumerate(self.requires):
            at = ("requires", n)
            table = book.tables.get(req["table"])
            if table is None:
                hint = did_you_mean(req["table"], sorted(book.tables))
                yield self._result(f"requires.{req['table']}", f"table '{req['table']}' is required and missing"
                                   + (f" ({hint})" if hint else ""), at + ("table",))
                continue
            yield self._result(f"requires.{req['table']}", "", at)
            for i, code in enumerate(req.get("codes", ())):
                known = getattr(table, "codes", None) or {}
                yield self._result(f"requires.{req['table']}.codes.{code}",
                                   "" if code in known else f"code '{code}' is required in {req['table']} and is not there",
                                   at + ("codes", i))
            priority = list(getattr(table, "priority", None) or ())
            for i, chain in enumerate(req.get("order", ())):
                yield self._result(f"requires.{req['table']}.order.{i + 1}", *_order(chain, priority, req["table"], at + ("order", i)))
            machines = getattr(table, "machines", None) or {}
            for name, states in req.get("states", {}).items():
                machine = machines.get(name)
                for i, state in enumerate(states):
                    ok = machine is not None and state in machine.states
                    yield self._result(f"requires.{req['table']}.states.{name}.{state}",
                                       "" if ok else f"state '{state}' is required in machine '{name}' of {req['table']}"
                                       " and is not there", at + ("states", name, i))
            if req.get("every_row_fires"):
                yield from self._every_row_fires(book, table, req["table"], at + ("every_row_fires",))
            for name, state in req.get("initial", {}).items():
                machine = machines.get(name)
                got = None if machine is None else machine.initial
                yield self._result(f"requires.{req['table']}.initial.{name}",
                                   "" if got == state else f"machine '{name}' of {req['table']} must start in "
                                   f"'{state}' (it starts in {got!r})", at + ("initial", name))

    def _every_row_fires(self, book: Any, table: Any, name: str, at: tuple) -> Iterator[ExampleResult]:
        """One result per row of the decision table: it fires on some case of its corpus
        (tests/cases/<table>/), so a row added without a case is named here, at its own line."""
        if not hasattr(table, "coverage"):
            yield self._result(f"requires.{name}.every_row_fires", f"'{name}' is no decision table", at)
            return
        folder = Path(book.root) / "tests" / "cases" / name
        values = [case for _, case in _corpus(folder)]
        never = set(table.coverage(values))
        source = book.sources.get(name)
        for row in sorted(table.rows, key=lambda r: r.index):
            problem = ""
            if row.id in never:
                line = source.where(row.where)[0] if source is not None else 0
                problem = (f"row {row.id} ({table.file}:{line}) fires on none of the {len(values)} case(s) of "
                           f"tests/cases/{name}/: add one it fires on (groundrules case add {name} FILE)")
            yield self._result(f"requires.{name}.every_row_fires.{row.id}", problem, at)

    def _result(self, name: str, problem: str, where: tuple) -> ExampleResult:
        return ExampleResult(f"{self.id}:{name}", not problem, problem, where, "failing-acceptance")


def _corpus(folder: Path) -> list[tuple[str, Any]]:
    """(name, value) of the readable JSON cases of a folder, by name."""
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            out.append((path.stem, json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
    return out


def _order(chain: list, priority: list, table: str, where: tuple) -> tuple[str, tuple]:
    """What breaks a required order ('' if it holds) and where to point."""
    missing = [c for c in chain if c not in priority]
    if missing:
        return f"{table}'s priority lacks {', '.join(missing)}, which this order names", where
    for i, (a, b) in enumerate(zip(chain, chain[1:])):
        if priority.index(a) > priority.index(b):
            return (f"'{a}' must come before '{b}' in {table}'s priority (now {b} is at "
                    f"{priority.index(b) + 1}, {a} at {priority.index(a) + 1})", where + (i + 1,))
    return "", where


def _failing(cond: Condition, data: Any) -> tuple:
    """The key path of the test that decided a failure: inside `all`, its first failing part."""
    while cond.kind == "all":
        cond = next(c for c in cond.children if not c.test(data))
    return cond.where


def _said(failure: dict) -> str:
    """A failed expectation in one line: what was read, what was wanted."""
    if "field" not in failure:
        return f"{failure.get('op')} did not hold: " + _cut(json.dumps(detached(failure), ensure_ascii=False))
    read = json.dumps(failure.get("read"), ensure_ascii=False)
    wanted = json.dumps(failure.get("expected"), ensure_ascii=False)
    out = f"{failure['field']} {failure['op']} {wanted} did not hold; read {_cut(read)}"
    if "item" in failure:
        out += "; item " + json.dumps(failure["item"], ensure_ascii=False)
    return out


def _cut(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _set(value: Any, parts: tuple, new: Any) -> bool:
    for part in parts[:-1]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return False
    last = parts[-1]
    if isinstance(value, dict):
        value[last] = copy.deepcopy(new)
        return True
    if isinstance(value, list) and isinstance(last, int) and 0 <= last < len(value):
        value[last] = copy.deepcopy(new)
        return True
    return False


def compile_acceptance(data: dict, ctx: CompileContext) -> Acceptance | None:
    before = len(ctx.faults)
    tool = data.get("tool", "")
    if "tool" in data and ctx.schemas.get(f"tools/{tool}.schema.json") is None:
        tools = sorted(n[len("tools/"):-len(".schema.json")] for n in ctx.schemas.by_name if n.startswith("tools/"))
        ctx.fault("unknown-tool", f"no tool '{tool}' in the registry", ("tool",),
                  did_you_mean(tool, tools) or "a tool is a file schemas/tools/<tool>.schema.json")
    answers = tool_data_contract(ctx.schemas, tool) if tool else None
    checks: list = []
    seen: dict[str, int] = {}
    groups = {int(n[1:]): text for n, text in data.get("groups", {}).items()}
    for n, raw in enumerate(data.get("checks", ())):
        where = ("checks", n)
        if raw["id"] in seen:
            ctx.fault("duplicate-id", f"check id '{raw['id']}' is used twice", where + ("id",),
                      "give each check its own id", also=("checks", seen[raw["id"]], "id"))
        seen.setdefault(raw["id"], n)
        group = _group(raw["id"], groups, ctx, where + ("id",))
        expect = compile_condition(raw["expect"], where + ("expect",), ctx.faults, budget_s=ctx.table_budget_s)
        if expect is not None and answers is not None:      # a check on a field the answer lacks passes vacuously
            check_fields(expect.fields(), answers, ctx.faults,
                         of=f"{tool}'s answer (a check on it would hold or fail on nothing)")
            check_literals(expect, answers.shapes, ctx.faults)
        change = tuple((path_parts(k), v) for k, v in raw.get("change", {}).items())
        cases = tuple(raw["cases"]) if "cases" in raw else (raw["case"],)
        if expect is not None:
            checks.append(Check(raw["id"], cases, change, expect, where, group))
    if len(ctx.faults) != before:
        return None
    return Acceptance("acceptance", data["id"], ctx.source.file, tool, data.get("argument", ""),
                      data.get("cases", ""), tuple(detached(data.get("requires", []))), tuple(checks), groups)


def _group(check_id: str, groups: dict, ctx: CompileContext, where: tuple) -> int | None:
    """The seed group a check id names (g<N>-…), None for local-…; with `groups` declared, an id of
    neither form, or naming an undeclared group, is a fault."""
    m = CHECK_ID.fullmatch(check_id)
    group = int(m["group"]) if m and m["group"] else None
    if not groups:
        return group
    if m is None:
        ctx.fault("bad-check-id", f"check id '{check_id}' names no group: ids here are g<N>-<name> (a check "
                  "of the seed's acceptance group N) or local-<name> (a check of your own)", where,
                  f"write g<N>-{check_id} with g<N> one of {', '.join(f'g{n}' for n in sorted(groups))}, or local-{check_id}")
    elif group is not None and group not in groups:
        ctx.fault("bad-check-id", f"check id '{check_id}' names group g{group}, which 'groups' does not declare",
                  where, f"groups: {', '.join(f'g{n}' for n in sorted(groups))}; or make it local-{check_id.split('-', 1)[1]}")
    return group
