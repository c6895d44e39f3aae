"""Decision tables: rows of condition -> code + outputs, under an explicit hit policy.

Hit policies (DMN): `unique` (at most one row may match), `first` (first matching row),
`collect` (every matching row, in row order) and `output_order` (every matching code, sorted by
the table's `priority`; a code fires once, from its first matching row). `default` is what a
table returns when nothing matched.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple

from . import codes
from .bindings import Binding, compile_binding, selectors
from .canonical import detached
from .condgen import Gen, TooComplex
from .conditions import Condition, compile_condition, explain_failure, path_parts
from .dates import now_of
from .errors import Fault, GroundrulesError, did_you_mean, refusal
from .examples import ExampleResult, failed_test
from .fieldtypes import check_fields, check_given, check_literals, contract_of
from .templates import Template, compile_template, emit

if TYPE_CHECKING:
    from .tables import CompileContext


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    code: str
    index: int
    when: Condition
    outputs: tuple            # ((key, Template | binding name), ...)
    examples: tuple
    where: tuple
    render: Callable[..., dict] | None = None     # set once the table's module is compiled


class Fired(NamedTuple):
    row: Row
    code: str
    outputs: dict


class Coverage(NamedTuple):
    """A table over a case corpus: rows as (row, cases its condition holds on, cases it fires on under
    the hit policy), tests as (row, test, held, failed); `corpus`: the folder under tests/cases/ whose
    cases these are ('' for the table's own). A row that holds but never fires is taken by rows before it."""

    cases: int
    rows: tuple
    tests: tuple
    corpus: str = ""


def tests_of(cond: Condition) -> list[Condition]:
    """The tests of a condition outside list quantifiers, in order."""
    if cond.kind == "test":
        return [cond]
    return [t for c in cond.children for t in tests_of(c)]


_new = tuple.__new__          # a NamedTuple without its Python-level __new__: rows fire per call


class Decision(NamedTuple):
    fired: tuple
    trace: tuple | None = None

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.fired]


class DecisionTable(NamedTuple):
    kind: str
    id: str
    file: str
    hit_policy: str
    codes: dict               # code -> attributes (label, role, ...)
    priority: tuple
    rows: tuple               # in evaluation order
    bindings: dict            # name -> Binding
    default: Row | None
    messages: dict            # name -> Template, rendered by the part with parameters it passes
    examples: tuple
    input: str
    run: Callable[..., list]  # the rows' tests under the hit policy, compiled as one function
    prefer_role: str = ""
    preferred: frozenset = frozenset()    # the codes whose role is prefer_role
    otherwise: str = ""       # primary when no fired row has prefer_role: "" = the first fired, "default"
    output_keys: tuple = ()   # with `output_item`: the keys of the answer's item, in schema order

    def primary(self, decision: Decision, value: Any = None) -> Fired | None:
        """The first fired row whose code has the preferred role; else, when the table says
        `otherwise: default`, its default row rendered on `value` (no row of the preferred role
        explains the value), else the first fired row."""
        for f in decision.fired:
            if f.code in self.preferred:
                return f
        if self.otherwise == "default" and self.default is not None:
            for f in decision.fired:
                if f.row is self.default:
                    return f
            render = self.default.render
            assert render is not None, "_with_renderers gives every row of a table its renderer"
            return Fired(self.default, self.default.code, render(value, {}))
        return decision.fired[0] if decision.fired else None

    def evaluate(self, value: Any, *, trace: bool = False, now: str | None = None) -> Decision:
        """Rows that fire on `value` under the hit policy; with `trace`, a note for every row: fired,
        skipped by the hit policy, or the first failing test with the values it read. One generated
        function (`run`) serves both, so a trace always tells how the untraced run decided. `now`
        (RFC 3339 with offset) is what date tests against now compare with: never the clock."""
        notes: list[dict] | None = [] if trace else None
        cache: dict = {}
        moment = None if now is None else now_of(now)
        try:
            fired = self.run(value, cache, notes, moment)
        except GroundrulesError as exc:
            if exc.code == codes.NOW_REQUIRED:
                raise refusal(exc.code, "now.required", table=self.id) from None
            raise
        if self.hit_policy == "unique" and len(fired) > 1:
            raise refusal(codes.HIT_POLICY_VIOLATION, "decide.unique", table=self.id, rows=[f.row.id for f in fired])
        if not fired and self.default is not None:
            render = self.default.render
            assert render is not None, "_with_renderers gives every row of a table its renderer"
            fired.append(Fired(self.default, self.default.code, render(value, cache, moment)))
        return _new(Decision, (tuple(fired), None if notes is None else tuple(notes)))

    def check_examples(self) -> Iterator[ExampleResult]:
        """Row examples test one row's condition (and outputs); table examples test the fired codes."""
        for row in sorted(self.rows, key=lambda r: r.index):
            if not row.examples:
                yield ExampleResult(f"{self.id}:{row.id}", False, "row has no example", row.where + ("id",),
                                    "missing-example")
            for n, ex in enumerate(row.examples, 1):
                where = row.where + ("examples", n - 1)
                test_id = f"{self.id}:{row.id}:{n}"
                try:
                    now = None if "now" not in ex else now_of(ex["now"])
                    got = row.when.test(ex["given"], now)
                except GroundrulesError as exc:
                    yield ExampleResult(test_id, False, f"{exc.code}: {exc.message}", where)
                    continue
                if got is not ex["fires"]:
                    if got:
                        yield ExampleResult(test_id, False, f"example {n} expects fires: false, but the row "
                                            "held", where)
                    else:                    # a test failed: most likely its literal, so point at it
                        words, test = failed_test(explain_failure(row.when, ex["given"], now))
                        yield ExampleResult(test_id, False, f"example {n} expects fires: true, but {words}",
                                            test or where, example=where)
                    continue
                wrong = []
                if ex["fires"] and "output" in ex:
                    assert row.render is not None, "_with_renderers gives every row of a table its renderer"
                    rendered = row.render(ex["given"], {}, now)
                    wrong = [f"{k}: expected {v!r}, got {rendered.get(k)!r}"
                             for k, v in ex["output"].items() if rendered.get(k) != v]
                yield ExampleResult(test_id, not wrong, "; ".join(wrong), where + (("output",) if wrong else ()))
        for n, ex in enumerate(self.examples, 1):
            try:
                got = self.evaluate(ex["given"], now=ex.get("now")).codes
            except GroundrulesError as exc:
                got = [exc.code]
            yield ExampleResult(f"{self.id}:examples:{n}", got == ex["fired"],
                                "" if got == ex["fired"] else f"expected {ex['fired']}, got {got}",
                                ("examples", n - 1))

    def lint_faults(self) -> list[Fault]:
        return [Fault("missing-example", f"row '{r.id}' has no inline example", r.where + ("id",),
                      "add examples: [{given: ..., fires: true}] under the row")
                for r in sorted(self.rows, key=lambda r: r.index) if not r.examples]

    def coverage(self, values: list) -> list[str]:
        """Ids of rows that fire on none of `values` (a malformed value fires nothing)."""
        fired: set = set()
        for value in values:
            for row in self.rows:
                try:
                    if row.when.test(value):
                        fired.add(row.id)
                except Exception:  # noqa: BLE001 - coverage reads a corpus that may hold broken cases
                    continue
        return [r.id for r in sorted(self.rows, key=lambda r: r.index) if r.id not in fired]

    def render_message(self, name: str, value: Any, extra: dict | None = None) -> str:
        tmpl = self.messages[name]
        return tmpl.render(value, dict(extra or {}))


def compile_table(data: dict, ctx: CompileContext) -> DecisionTable | None:
    """A decision table from its checked YAML, in stages: its outputs and order, its bindings, its
    rows and default, its messages; then, when no stage found an error, its compiled runner.
    Every stage adds its faults to `ctx.faults` in table order, and none stops the others, so one
    load names every problem."""
    before = len(ctx.faults)
    contract = contract_of(data, ctx)
    codes, priority, prefer_role, output_keys = _outputs(data, ctx)
    bindings = _bindings(data, contract, ctx)
    rows, default = _rows(data, codes, bindings, contract, ctx)
    messages = _messages(data, ctx.faults)
    _check_used(bindings, rows, default, messages, ctx.faults)
    if any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    return _assembled(data, ctx, codes, priority, prefer_role, output_keys, bindings, rows, default, messages)


def _outputs(data: dict, ctx: CompileContext) -> tuple[dict, tuple, str, tuple]:
    """(codes with their attributes, the priority, the role primary prefers, the output item's
    keys), each checked: against the contract's enum, against each other."""
    faults = ctx.faults
    codes = {code: dict(attrs or {}) for code, attrs in data.get("outputs", {}).items()}
    _check_enum(data, codes, ctx)
    output_keys = _output_item(data, ctx)
    priority = tuple(data.get("priority", ()))
    prefer_role = data.get("primary", {}).get("prefer_role", "")
    if prefer_role and not any(a.get("role") == prefer_role for a in codes.values()):
        faults.append(Fault("unknown-role", f"primary prefers role '{prefer_role}', which no output has",
                            ("primary", "prefer_role"),
                            did_you_mean(prefer_role, {a.get("role", "") for a in codes.values()})))
    _check_priority(data["hit_policy"], priority, codes, faults, data)
    return codes, priority, prefer_role, output_keys


def _bindings(data: dict, contract: Any, ctx: CompileContext) -> dict[str, Binding]:
    """The table's named selections, each checked against the contract's fields and literals."""
    shapes = contract.shapes if contract is not None else None
    bindings: dict[str, Binding] = {}
    for name, spec in data.get("bind", {}).items():
        b = compile_binding(name, spec, ("bind", name), ctx.faults, ctx.table_budget_s)
        if b is not None:
            bindings[name] = b
            check_fields(b.fields(("bind", name)), contract, ctx.faults)
            check_literals(b.where_cond, shapes, ctx.faults, spec["from"] + "[].")
    return bindings


def _rows(data: dict, codes: dict, bindings: dict, contract: Any,
          ctx: CompileContext) -> tuple[list[Row], Row | None]:
    """The compiled rows and default, each row's id unique and code an output; every example's
    `given` (the rows' and the table's) checked against the contract."""
    faults = ctx.faults

    def name_ok(name: str) -> bool:
        return name in bindings or contract is None or contract.knows(name)

    def name_hint(name: str) -> str:
        return contract.unknown_field_hint(name, tuple(bindings)) if contract is not None \
            else did_you_mean(name, bindings)
    rows = []
    ids: dict[str, int] = {}
    for index, raw in enumerate(data["rows"]):
        where = ("rows", index)
        row_id = raw["id"]
        if row_id in ids:
            faults.append(Fault("duplicate-row-id", f"row id '{row_id}' is used twice", where + ("id",),
                                also=("rows", ids[row_id], "id")))
        ids[row_id] = index
        code = raw.get("code", row_id)
        if code not in codes:
            faults.append(Fault("unknown-code", f"row '{row_id}' produces code '{code}', which is not in "
                                "'outputs'", where + ("code" if "code" in raw else "id",),
                                did_you_mean(code, codes)))
        row = _compile_row(raw, index, code, where, faults, bindings, name_ok, name_hint, contract,
                           ctx.table_budget_s)
        if row is not None:
            rows.append(row)
        for n, ex in enumerate(raw.get("examples", ())):
            check_given(ex["given"], contract, where + ("examples", n, "given"), faults)
    default = None
    if "default" in data:
        raw = dict(data["default"], id="default")
        code = raw.get("code")
        if code not in codes:
            faults.append(Fault("unknown-code", f"default produces code '{code}', which is not in 'outputs'",
                                ("default", "code"), did_you_mean(code, codes)))
        default = _compile_row(dict(raw, when={"all": [{"field": ".", "exists": True}]}), -1, code,
                               ("default",), faults, bindings, name_ok, name_hint, contract, ctx.table_budget_s)
    for n, ex in enumerate(data.get("examples", ())):
        check_given(ex["given"], contract, ("examples", n, "given"), faults)
    return rows, default


def _messages(data: dict, faults: list) -> dict[str, Template]:
    """The table's message templates, by name."""
    messages = {}
    for name, text in data.get("messages", {}).items():
        tmpl = compile_template(text, ("messages", name), faults)
        if tmpl is not None:
            messages[name] = tmpl
    return messages


def _check_used(bindings: dict, rows: list, default: Row | None, messages: dict, faults: list) -> None:
    """A warning for each binding no output or message names."""
    used = {n for r in rows for _, s in r.outputs for n in (s.names if isinstance(s, Template) else (s,))}
    used |= {n for m in messages.values() for n in m.names}
    if default is not None:
        used |= {n for _, s in default.outputs for n in (s.names if isinstance(s, Template) else (s,))}
    for name in bindings:
        if name not in used:
            faults.append(Fault("unused-binding", f"binding '{name}' is never used", ("bind", name),
                                "remove it, or name it in an output", "warning"))


def _assembled(data: dict, ctx: CompileContext, codes: dict, priority: tuple, prefer_role: str, output_keys: tuple,
               bindings: dict, rows: list, default: Row | None, messages: dict) -> DecisionTable | None:
    """The table of checked parts: rows in the policy's order, renderers and runner compiled as
    one module (None, its fault located, when that module is too complex)."""
    policy = data["hit_policy"]
    order = {code: i for i, code in enumerate(priority)}
    if policy == "output_order":
        rows.sort(key=lambda r: (order[r.code], r.index))
    try:
        rows, default = _with_renderers(rows, default, bindings, data["id"])
        run = _runner(tuple(rows), policy, data["id"])
    except TooComplex:
        _locate_too_complex(rows, bindings, ctx.faults)
        return None
    return DecisionTable("decision_table", data["id"], ctx.source.file, policy, codes, priority,
                         tuple(rows), bindings, default, messages, tuple(data.get("examples", ())),
                         data.get("input", ""), run, prefer_role,
                         frozenset(c for c, a in codes.items() if prefer_role and a.get("role") == prefer_role),
                         data.get("primary", {}).get("otherwise", ""), output_keys)


def _with_renderers(rows: list, default: Row | None, bindings: dict, table_id: str) -> tuple[list, Row | None]:
    """The rows (and default) with their renderers, compiled together with the bindings' selections
    as one module."""
    gen = Gen()
    select = selectors(bindings, gen)
    every = rows + ([default] if default is not None else [])
    names = {r.index: _row_renderer(r.outputs, select, gen) for r in every}
    module = gen.build_module("", f"table {table_id}")
    done = {r.index: replace(r, render=module[names[r.index]]) for r in every}
    return [done[r.index] for r in rows], (done[-1] if default is not None else None)


def _locate_too_complex(rows: list, bindings: dict, faults: list) -> None:
    """Python could not compile the table at once: name the condition at fault."""
    conditions = [(b.where_cond, ("bind", name, "where")) for name, b in bindings.items() if b.where_cond]
    for cond, where in conditions + [(row.when, row.where + ("when",)) for row in rows]:
        try:
            cond.test
        except TooComplex:
            faults.append(Fault("condition-too-deep", "condition is nested too deeply to compile",
                                where, "flatten it: all/any take lists"))
            return
    faults.append(Fault("table-too-complex", "the table's rows are too many or too nested to compile",
                        ("rows",), "split the table"))


def _compile_row(raw, index, code, where, faults, bindings, name_ok, name_hint, contract,
                 budget_s: float) -> Row | None:
    """One row (or the default), checked; its test and renderer are compiled with the table's."""
    before = len(faults)
    cond = compile_condition(raw["when"], where + ("when",), faults, budget_s=budget_s, eager=False)
    if cond is not None:
        check_fields(cond.fields(), contract, faults)
        check_literals(cond, contract.shapes if contract is not None else None, faults)
    outputs = []
    for key, spec in raw.get("output", {}).items():
        at = where + ("output", key)
        if isinstance(spec, dict):
            name = spec.get("bind")
            if name not in bindings:
                faults.append(Fault("unknown-binding", f"output '{key}' names binding {name!r}, "
                                    "which the table does not declare under 'bind'", at + ("bind",),
                                    did_you_mean(name, bindings)))
            outputs.append((key, name))
        else:
            tmpl = compile_template(spec, at, faults, name_ok, hint=name_hint)
            if tmpl is not None:
                outputs.append((key, tmpl))
    if cond is None or len(faults) != before:     # (no condition only ever comes with a fault)
        return None
    return Row(raw["id"], code, index, cond, tuple(outputs), tuple(raw.get("examples", ())), where)


# What the trace says of a row its hit policy passes over (rows are grouped: see _runner).
SKIPPED = {"output_order": "code '{code}' already fired", "first": "hit policy 'first': an earlier row fired"}


def _runner(rows: tuple, policy: str, table_id: str) -> Callable[..., list]:
    """`run(v, c, notes, now) -> [Fired]`, generated: the table's rows in evaluation order, each test
    inlined. Rows form groups in which only the first match fires and the rest are skipped: under
    output_order the rows of one code (adjacent once sorted by priority), under first all rows,
    under unique and collect each row alone. With `notes` a list, every row adds its trace note."""
    groups: list[list[Row]] = []
    for row in rows:
        if groups and (policy == "first" or policy == "output_order" and groups[-1][0].code == row.code):
            groups[-1].append(row)
        else:
            groups.append([row])
    gen = Gen(share_reads=True)
    gen.names["_new"] = _new
    fire, why = gen.const(Fired), gen.const(explain_failure)
    body = []
    for group in groups:
        shared = len(group) > 1
        if shared:
            body.append("    hit = False\n")
        for n, row in enumerate(group):
            r, note = gen.const(row), f"'row': {row.id!r}, 'code': {row.code!r}, 'fired'"
            if n:
                skipped = SKIPPED[policy].format(code=row.code)
                body.append(f"    if hit:\n        if notes is not None:\n"
                            f"            notes.append({{{note}: False, 'skipped': {skipped!r}}})\n    el")
            else:
                body.append("    ")
            body.append(f"if {gen.expr(row.when, 'v')}:\n"
                        f"        fired.append(_new({fire}, ({r}, {row.code!r}, {gen.const(row.render)}(v, c, n))))\n"
                        f"        if notes is not None:\n            notes.append({{{note}: True}})\n"
                        + ("        hit = True\n" if shared else "")
                        + f"    elif notes is not None:\n"
                        f"        notes.append({{{note}: False, 'failed': {why}({r}.when, v, n)}})\n")
    source = "def run(v, c, notes, n):\n    fired = []\n" + "".join(gen.reads + body) + "    return fired\n"
    try:
        return gen.build_module(source, f"table {table_id}")["run"]
    except RecursionError:
        raise TooComplex("nested too deeply") from None


def _row_renderer(outputs: tuple, select: dict, gen: Gen) -> str:
    """The name of `render(v, c) -> {key: value}` for one row, added to `gen`: each binding the row
    reads is selected once per evaluation (kept in `c`, shared by the rows that fire), templates
    read bindings or paths directly, and bound outputs are copies, so a caller that edits the
    output never edits the evaluated value or another row's output."""
    lines: list[str] = []
    bound: dict[str, str] = {}

    def read(name: str) -> str:
        if name not in select:
            return gen.get("v", path_parts(name))
        if name not in bound:
            var = bound[name] = gen.fresh("_b")
            lines.append(f"    {var} = c.get({name!r}, M)\n    if {var} is M:\n"
                         f"        {select[name]}(v, c, n)\n        {var} = c[{name!r}]\n")
        return bound[name]

    items = []
    for key, spec in outputs:
        if isinstance(spec, Template):
            items.append(f"{key!r}: {emit(spec.parts, gen, read, lines)}")
        else:
            x, copy = read(spec), gen.const(detached)
            items.append(f"{key!r}: ([e if e.__class__ is str else {copy}(e) for e in {x}] "
                         f"if {x}.__class__ is list else {copy}({x}))")
    name = gen.fresh("_render")
    gen.helpers.append(f"def {name}(v, c, n=None):\n" + "".join(lines) + "    return {" + ", ".join(items) + "}\n")
    return name


def _check_priority(policy, priority, codes, faults, data) -> None:
    if policy != "output_order":
        if priority:
            faults.append(Fault("unused-priority", "'priority' only applies to hit policy output_order",
                                ("priority",), severity="warning"))
        return
    if not priority:
        faults.append(Fault("missing-key", "hit policy output_order needs a 'priority' list", (),
                        "list every code of 'outputs' once, most important first"))
        return
    seen: dict = {}
    default_code = data.get("default", {}).get("code")
    for i, code in enumerate(priority):
        if code in seen:
            faults.append(Fault("duplicate-code", f"'{code}' appears twice in priority", ("priority", i)))
        elif code not in codes:
            faults.append(Fault("unknown-code", f"priority names '{code}', which is not in 'outputs'",
                                ("priority", i), did_you_mean(code, codes)))
        seen[code] = i
    for code in codes:
        if code not in seen and code != default_code:
            faults.append(Fault("priority-missing-code", f"code '{code}' is missing from priority",
                                ("priority",), "add it where it ranks; every code appears exactly once"))


def _output_item(data: dict, ctx: CompileContext) -> tuple:
    """`output_item: file#/pointer`: the keys the part's answer keeps of a fired row; every output
    key of a row (and of the default) must be one of them, or the part would drop it silently."""
    ref = data.get("output_item")
    if not ref:
        return ()
    name, _, pointer = ref.partition("#")
    node = ctx.schemas.get(name)
    for part in [p for p in pointer.split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    keys = tuple(node.get("properties", {})) if isinstance(node, dict) else ()
    if not keys:
        ctx.fault("unknown-contract", f"output_item '{ref}' does not point at an object schema with properties "
                  "under schemas/", ("output_item",))
        return ()
    rows: list[tuple[tuple, Any]] = [(("rows", i), raw) for i, raw in enumerate(data.get("rows", ()))]
    rows += [(("default",), data["default"])] if isinstance(data.get("default"), dict) else []
    for where, raw in rows:
        for key in raw.get("output", {}):
            if key not in keys:
                ctx.fault("unknown-output-key", f"output '{key}' is not a key of the answer's item ({ref}): the "
                          "answer would drop it, whatever eval prints", where + ("output", key),
                          did_you_mean(key, keys) or f"the item holds: {', '.join(keys)}; declare '{key}' there "
                          f"(schemas/{name} {pointer}/properties) or remove it")
    return keys


def _check_enum(data: dict, codes: dict, ctx: CompileContext) -> None:
    """`output_enum: file#/pointer`: the table's codes must be exactly the contract's enum."""
    ref = data.get("output_enum")
    if not ref:
        return
    name, _, pointer = ref.partition("#")
    node = ctx.schemas.get(name)
    for part in [p for p in pointer.split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    enum = node.get("enum") if isinstance(node, dict) else None
    if not isinstance(enum, list):
        ctx.fault("unknown-contract", f"output_enum '{ref}' does not point at an enum under schemas/",
                  ("output_enum",))
        return
    for code in codes:
        if code not in enum:
            ctx.fault("code-not-in-contract", f"code '{code}' is not in the contract enum {ref}",
                      ("outputs", code), "add it to the schema's enum in the same change")
    for code in enum:
        if code not in codes:
            ctx.fault("code-missing-from-table", f"the contract enum {ref} has '{code}', which the table "
                      "does not produce", ("outputs",), did_you_mean(code, codes) or f"add '{code}' to outputs")


def outcome(table: DecisionTable | None, value: Any) -> dict:
    """What a table decides on one value: the primary code and the fired rows with their outputs
    (the code's attributes, e.g. its label, then the rendered templates); or the error it raised."""
    if table is None:
        return {"error": None, "primary": None, "fired": []}
    try:
        decision = table.evaluate(value)
    except GroundrulesError as exc:
        return {"error": exc.code, "primary": None, "fired": []}
    except Exception as exc:  # noqa: BLE001 - a hostile case (a regex timeout, absurd nesting) is an outcome
        return {"error": type(exc).__name__, "primary": None, "fired": []}
    primary = table.primary(decision)
    fired = [{"row": f.row.id, "code": f.code, "outputs": {**table.codes.get(f.code, {}), **f.outputs}}
             for f in decision.fired]
    return {"error": None, "primary": primary.code if primary else None, "fired": fired}
