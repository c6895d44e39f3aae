"""Decision tables: rows of condition -> code + outputs, under an explicit hit policy.

Hit policies (DMN): `unique` (at most one row may match), `first` (first matching row),
`collect` (every matching row, in row order) and `output_order` (every matching code, sorted by
the table's `priority`; a code fires once, from its first matching row). `default` is what a
table returns when nothing matched.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from .bindings import Binding, compile_binding
from .canonical import detached
from .conditions import Condition, compile_condition, explain_failure
from .contracts import check_fields, contract_fields, normalise
from .errors import Fault, GroundrulesError, did_you_mean
from .examples import ExampleResult
from .templates import Template, compile_template


@dataclass(frozen=True)
class Row:
    id: str
    code: str
    index: int
    when: Condition
    outputs: tuple            # ((key, Template | binding name), ...)
    examples: tuple
    where: tuple


@dataclass(frozen=True)
class Fired:
    row: Row
    code: str
    outputs: dict


@dataclass(frozen=True)
class Decision:
    fired: tuple
    trace: tuple | None = None

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.fired]


@dataclass(frozen=True)
class DecisionTable:
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
    prefer_role: str = ""
    plan: tuple = ()          # (row, code, test) in evaluation order, unpacked once at compile
    otherwise: str = ""       # primary when no fired row has prefer_role: "" = the first fired, "default"

    def primary(self, decision: Decision, value: Any = None) -> Fired | None:
        """The first fired row whose code has the preferred role; else, when the table says
        `otherwise: default`, its default row rendered on `value` (no row of the preferred role
        explains the value), else the first fired row."""
        for f in decision.fired:
            if self.codes.get(f.code, {}).get("role") == self.prefer_role:
                return f
        if self.otherwise == "default" and self.default is not None:
            for f in decision.fired:
                if f.row is self.default:
                    return f
            return Fired(self.default, self.default.code, self._render(self.default, value, {}))
        return decision.fired[0] if decision.fired else None

    def evaluate(self, value: Any, *, trace: bool = False) -> Decision:
        """Rows that fire on `value`; with trace, why every other row did not."""
        if trace:
            return self._evaluate_traced(value)
        fired: list[Fired] = []
        cache: dict = {}
        once = self.hit_policy == "output_order"
        first = self.hit_policy == "first"
        seen: set = set()
        for row, code, test in self.plan:
            if once and code in seen:
                continue
            if test(value):
                fired.append(Fired(row, code, self._render(row, value, cache)))
                if first:
                    break
                seen.add(code)
        return self._finish(fired, value, cache, None)

    def _evaluate_traced(self, value: Any) -> Decision:
        fired: list[Fired] = []
        seen: set = set()
        notes: list[dict] = []
        cache: dict = {}
        for row in self.rows:
            note = {"row": row.id, "code": row.code, "fired": False}
            if self.hit_policy == "output_order" and row.code in seen:
                note["skipped"] = f"code '{row.code}' already fired"
            elif self.hit_policy == "first" and fired:
                note["skipped"] = "hit policy 'first': an earlier row fired"
            elif row.when.test(value):
                fired.append(Fired(row, row.code, self._render(row, value, cache)))
                seen.add(row.code)
                note["fired"] = True
            else:
                note["failed"] = explain_failure(row.when, value)
            notes.append(note)
        return self._finish(fired, value, cache, tuple(notes))

    def _finish(self, fired: list, value: Any, cache: dict, notes: tuple | None) -> Decision:
        if self.hit_policy == "unique" and len(fired) > 1:
            raise GroundrulesError("HIT_POLICY_VIOLATION",
                                   f"table '{self.id}' has hit policy 'unique' but rows "
                                   f"{', '.join(f.row.id for f in fired)} all matched")
        if not fired and self.default is not None:
            fired.append(Fired(self.default, self.default.code, self._render(self.default, value, cache)))
        return Decision(tuple(fired), notes)

    def _render(self, row: Row, value: Any, cache: dict) -> dict:
        out = {}
        for key, spec in row.outputs:
            if isinstance(spec, Template):
                out[key] = spec.render(value, self._binds(spec.names, value, cache))
            else:
                # copies, so a caller that edits the output never edits the evaluated value
                out[key] = detached(self._binds((spec,), value, cache)[spec])
        return out

    def _binds(self, names: tuple, value: Any, cache: dict) -> dict:
        for name in names:
            if name in self.bindings and name not in cache:
                cache[name] = self.bindings[name].select(value)
        return cache

    def check_examples(self) -> Iterator[ExampleResult]:
        """Row examples test one row's condition (and outputs); table examples test the fired codes."""
        for row in sorted(self.rows, key=lambda r: r.index):
            if not row.examples:
                yield ExampleResult(f"{self.id}:{row.id}", False, "row has no example", row.where + ("id",))
            for n, ex in enumerate(row.examples, 1):
                where = row.where + ("examples", n - 1)
                test_id = f"{self.id}:{row.id}:{n}"
                got = row.when.test(ex["given"])
                if got is not ex["fires"]:
                    failure = explain_failure(row.when, ex["given"])
                    why = f"; first failing test: {failure}" if failure else ""
                    yield ExampleResult(test_id, False, f"expected fires={ex['fires']}, got {got}{why}", where)
                    continue
                wrong = []
                if ex["fires"] and "output" in ex:
                    rendered = self._render(row, ex["given"], {})
                    wrong = [f"{k}: expected {v!r}, got {rendered.get(k)!r}"
                             for k, v in ex["output"].items() if rendered.get(k) != v]
                yield ExampleResult(test_id, not wrong, "; ".join(wrong), where + (("output",) if wrong else ()))
        for n, ex in enumerate(self.examples, 1):
            got = self.evaluate(ex["given"]).codes
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


def compile_table(data: dict, ctx) -> DecisionTable | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    known = contract_fields(data, ctx)
    codes = {code: dict(attrs or {}) for code, attrs in data.get("outputs", {}).items()}
    _check_enum(data, codes, ctx)
    policy = data["hit_policy"]
    priority = tuple(data.get("priority", ()))
    prefer_role = data.get("primary", {}).get("prefer_role", "")
    if prefer_role and not any(a.get("role") == prefer_role for a in codes.values()):
        faults.append(Fault("unknown-role", f"primary prefers role '{prefer_role}', which no output has",
                            ("primary", "prefer_role"),
                            did_you_mean(prefer_role, {a.get("role", "") for a in codes.values()})))
    _check_priority(policy, priority, codes, faults, data)

    bindings: dict[str, Binding] = {}
    for name, spec in data.get("bind", {}).items():
        b = compile_binding(name, spec, ("bind", name), faults)
        if b is not None:
            bindings[name] = b
            check_fields(b.fields(("bind", name)), known, faults)

    def name_ok(name: str) -> bool:
        return name in bindings or known is None or normalise(name) in known

    choices = tuple(bindings) + tuple(sorted(known or ()))
    rows = []
    ids: dict[str, int] = {}
    for index, raw in enumerate(data["rows"]):
        where = ("rows", index)
        row_id = raw["id"]
        if row_id in ids:
            faults.append(Fault("duplicate-row-id", f"row id '{row_id}' is used twice", where + ("id",)))
        ids[row_id] = index
        code = raw.get("code", row_id)
        if code not in codes:
            faults.append(Fault("unknown-code", f"row '{row_id}' produces code '{code}', which is not in "
                                "'outputs'", where + ("code" if "code" in raw else "id",),
                                did_you_mean(code, codes)))
        row = _compile_row(raw, index, code, where, faults, bindings, name_ok, choices, known)
        if row is not None:
            rows.append(row)
    default = None
    if "default" in data:
        raw = dict(data["default"], id="default")
        code = raw.get("code")
        if code not in codes:
            faults.append(Fault("unknown-code", f"default produces code '{code}', which is not in 'outputs'",
                                ("default", "code"), did_you_mean(code, codes)))
        default = _compile_row(dict(raw, when={"all": [{"field": ".", "exists": True}]}), -1, code,
                               ("default",), faults, bindings, name_ok, choices, known)
    messages = {}
    for name, text in data.get("messages", {}).items():
        tmpl = compile_template(text, ("messages", name), faults)
        if tmpl is not None:
            messages[name] = tmpl
    used = {n for r in rows for _, s in r.outputs for n in (s.names if isinstance(s, Template) else (s,))}
    used |= {n for m in messages.values() for n in m.names}
    if default is not None:
        used |= {n for _, s in default.outputs for n in (s.names if isinstance(s, Template) else (s,))}
    for name in bindings:
        if name not in used:
            faults.append(Fault("unused-binding", f"binding '{name}' is never used", ("bind", name),
                                "remove it, or name it in an output", "warning"))
    if any(f.severity == "error" for f in faults[before:]):
        return None
    order = {code: i for i, code in enumerate(priority)}
    if policy == "output_order":
        rows.sort(key=lambda r: (order[r.code], r.index))
    return DecisionTable("decision_table", data["id"], ctx.source.file, policy, codes, priority,
                         tuple(rows), bindings, default, messages, tuple(data.get("examples", ())),
                         data.get("input", ""), prefer_role, tuple((r, r.code, r.when.test) for r in rows),
                         data.get("primary", {}).get("otherwise", ""))


def _compile_row(raw, index, code, where, faults, bindings, name_ok, choices, known) -> Row | None:
    before = len(faults)
    cond = compile_condition(raw["when"], where + ("when",), faults)
    if cond is not None:
        check_fields(cond.fields(), known, faults)
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
            tmpl = compile_template(spec, at, faults, name_ok, choices)
            if tmpl is not None:
                outputs.append((key, tmpl))
    if len(faults) != before:
        return None
    return Row(raw["id"], code, index, cond, tuple(outputs), tuple(raw.get("examples", ())), where)


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


def _check_enum(data: dict, codes: dict, ctx) -> None:
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
