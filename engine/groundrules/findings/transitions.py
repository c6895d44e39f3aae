"""The `transition_table` kind: state machines whose moves, guards and refusal codes are data.

A table holds one or more machines (states, initial, terminal states, allowed transitions, the
operations allowed to make each move) and named guards written in the shared condition grammar.
`check()` answers one question for the service: may this record move from A to B, given these
facts? A refusal carries the table's code (a guard's own code, or `refusal_code`) and a message
rendered from the facts, never from stored text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from ..core.conditions import Condition, compile_condition, explain_failure
from ..core.errors import Fault, did_you_mean
from ..core.examples import ExampleResult, failed_test
from ..core.fieldtypes import Contract, check_given, contract_of
from ..core.messages import Messages, compile_localized

if TYPE_CHECKING:
    from ..core.tables import CompileContext

REQUIRED_MESSAGES = ("not_allowed", "not_via")


@dataclass(frozen=True)
class Guard:
    id: str
    when: Condition
    code: str
    examples: tuple
    where: tuple


@dataclass(frozen=True)
class Transition:
    id: str
    sources: tuple
    to: str
    via: tuple            # empty: any operation may make the move
    guards: tuple         # guard ids, checked in order
    where: tuple
    roles: tuple = ()     # empty: any caller role may make the move


@dataclass(frozen=True)
class Stay:
    """Guards a write must pass that leaves a record in one of `states` (via one of `via`)."""
    id: str
    states: tuple
    via: tuple            # empty: any operation
    guards: tuple
    where: tuple


@dataclass(frozen=True)
class Machine:
    name: str
    initial: str
    terminal: tuple
    states: dict          # state -> {label, description}
    requires: tuple       # guard ids checked before every move of this machine
    transitions: tuple
    where: tuple
    stays: tuple = ()

    def find(self, source: str, target: str) -> Transition | None:
        for t in self.transitions:
            if t.to == target and source in t.sources:
                return t
        return None

    def label(self, state: str) -> str:
        return self.states.get(state, {}).get("label", state)

    def is_current(self, state: str) -> bool:
        """May a record in `state` be presented as current knowledge? (the state's `current`, default true)"""
        return bool(self.states.get(state, {}).get("current", True))

    def shows_conflict(self, state: str) -> bool:
        return bool(self.states.get(state, {}).get("shows_conflict", False))

    def demotes(self, source: str, target: str) -> bool:
        """Is source -> target a demotion: both states ranked (`rank`), the target lower?"""
        before, after = self.states.get(source, {}).get("rank"), self.states.get(target, {}).get("rank")
        return before is not None and after is not None and after < before


@dataclass(frozen=True)
class Blocked:
    """Why a move may not be made: the refusal code, the guard that said no, the sentence."""

    code: str
    guard: str            # the guard that refused, '' when the move itself is not allowed
    message: str


@dataclass(frozen=True)
class TransitionTable:
    kind: str
    id: str
    file: str
    refusal_code: str
    machines: dict
    guards: dict
    messages: Messages     # not_allowed, not_via, not_role and each guard's (guards.<id>), in the bound language
    examples: tuple
    role_refusal_code: str = ""

    def machine(self, name: str) -> Machine:
        return self.machines[name]

    def check(self, machine: str, source: str, target: str, facts: dict,
              via: str | None = None, role: str | None = None) -> Blocked | None:
        """None when the move is allowed; else the refusal (first failing guard wins). `role` is the
        caller's, as Service.call authenticated it; guards read it as the fact `role`."""
        m = self.machines[machine]
        params = {"machine": machine, "from": source, "to": target, "via": via or "", "role": role or ""}
        move = m.find(source, target)
        if move is None:
            return Blocked(self.refusal_code, "", self.messages["not_allowed"].render(params))
        if move.via and via not in move.via:
            return Blocked(self.refusal_code, "",
                           self.messages["not_via"].render(dict(params, allowed=list(move.via))))
        if move.roles and role not in move.roles:
            return Blocked(self.role_refusal_code or self.refusal_code, "",
                           self.messages["not_role"].render(dict(params, roles=list(move.roles))))
        return self._guarded(m.requires + move.guards, dict(facts, **params))

    def check_stay(self, machine: str, state: str, facts: dict, via: str | None = None,
                   role: str | None = None) -> Blocked | None:
        """A write that keeps the record in `state` (e.g. a revalidation confirming it) still needs the
        machine's `requires` guards (a superseded record's belief is history, re-confirmed or not)
        and the guards of the machine's `stays` for that state and operation."""
        m = self.machines[machine]
        params = {"machine": machine, "from": state, "to": state, "via": via or "", "role": role or ""}
        stays = tuple(g for stay in m.stays if state in stay.states and (not stay.via or via in stay.via)
                      for g in stay.guards)
        return self._guarded(m.requires + stays, dict(facts, **params))

    def check_requires(self, machine: str, state: str, facts: dict, via: str | None = None,
                       role: str | None = None) -> Blocked | None:
        """Only the machine's `requires` guards: may this record be written to at all?"""
        params = {"machine": machine, "from": state, "to": state, "via": via or "", "role": role or ""}
        return self._guarded(self.machines[machine].requires, dict(facts, **params))

    def trace(self, machine: str, source: str, target: str, facts: dict, via: str | None = None,
              role: str | None = None) -> dict:
        """Why `check` answers what it answers, step by step: the move (or the transitions that leave
        `source`), the operation, the caller's role, then every guard with the test that failed and
        the value it read; `result` is `check`'s code ('ok'), `decided_by` the step that refused."""
        m = self.machines[machine]
        params = {"machine": machine, "from": source, "to": target, "via": via or "", "role": role or ""}
        move = m.find(source, target)
        steps: list[dict] = [{"step": "move", "ok": move is not None,
                              "transition": move.id if move else None, "where": move.where if move else m.where,
                              "leaving": [t.id for t in m.transitions if source in t.sources]}]
        if move is not None:
            steps.append({"step": "via", "ok": not move.via or via in move.via, "allowed": list(move.via),
                          "read": via or "", "where": move.where})
            steps.append({"step": "role", "ok": not move.roles or role in move.roles, "allowed": list(move.roles),
                          "read": role or "", "where": move.where})
            value = dict(facts, **params)
            for guard_id in m.requires + move.guards:
                guard = self.guards[guard_id]
                ok = guard.when.test(value)
                steps.append({"step": "guard", "guard": guard_id, "ok": ok, "code": guard.code,
                              "required_by": "machine" if guard_id in m.requires else "transition",
                              "where": guard.where, "failed": None if ok else explain_failure(guard.when, value)})
        blocked = self.check(machine, source, target, facts, via, role)
        decided = next((i for i, st in enumerate(steps) if not st["ok"]), None)
        return {"machine": machine, "from": source, "to": target, "via": via or "", "role": role or "",
                "steps": steps, "result": "ok" if blocked is None else blocked.code,
                "decided_by": decided, "message": blocked.message if blocked else ""}

    def _guarded(self, guard_ids: tuple, value: dict) -> Blocked | None:
        for guard_id in guard_ids:
            guard = self.guards[guard_id]
            if not guard.when.test(value):
                return Blocked(guard.code, guard_id, self.messages[f"guards.{guard_id}"].render(value))
        return None

    def check_examples(self) -> Iterator[ExampleResult]:
        for guard_id in sorted(self.guards):
            guard = self.guards[guard_id]
            if not guard.examples:
                yield ExampleResult(f"{self.id}:{guard_id}", False, "guard has no example",
                                    guard.where)
            for n, ex in enumerate(guard.examples, 1):
                got = guard.when.test(ex["given"])
                at = guard.where + ("examples", n - 1)
                if got is ex["passes"]:
                    yield ExampleResult(f"{self.id}:{guard_id}:{n}", True, "", at)
                elif not got:                # a test failed: most likely its literal, so point at it
                    words, test = failed_test(explain_failure(guard.when, ex["given"]))
                    yield ExampleResult(f"{self.id}:{guard_id}:{n}", False, f"example {n}{_named(ex)} expects "
                                        f"passes: true, but {words}", test or at, example=at)
                else:
                    yield ExampleResult(f"{self.id}:{guard_id}:{n}", False, f"example {n}{_named(ex)} expects "
                                        "passes: false, but the guard held", at)
        for n, ex in enumerate(self.examples, 1):
            traced = self.trace(ex["machine"], ex["from"], ex["to"], ex["given"], ex.get("via"), ex.get("role"))
            got = traced["result"]
            yield ExampleResult(f"{self.id}:examples:{n}", got == ex["result"],
                                "" if got == ex["result"] else f"expected {ex['result']}, got {got}{_why(traced)}",
                                ("examples", n - 1))

    def lint_faults(self) -> list[Fault]:
        """Unreachable states, dead ends (non-terminal, no way out), exits from terminal states."""
        out: list[Fault] = []
        for name, m in sorted(self.machines.items()):
            exits = {s: [t for t in m.transitions if s in t.sources] for s in m.states}
            for state in sorted(set(m.states) - _reachable(m)):
                out.append(Fault("unreachable-state", f"state '{state}' of machine '{name}' cannot be "
                                 f"reached from '{m.initial}'", m.where + ("states", state),
                                 "add a transition into it, or remove it"))
            for state in sorted(m.states):
                if state not in m.terminal and not exits[state]:
                    out.append(Fault("dead-end-state", f"state '{state}' of machine '{name}' is not "
                                     "terminal but has no transition out", m.where + ("states", state),
                                     "add a transition out of it, or list it under 'terminal'"))
                if state in m.terminal and exits[state]:
                    out.append(Fault("terminal-has-exit", f"terminal state '{state}' of machine "
                                     f"'{name}' has a transition out ('{exits[state][0].id}')",
                                     m.where + ("terminal",), "remove the transition or the terminal mark"))
        used = {g for m in self.machines.values() for g in m.requires}
        used |= {g for m in self.machines.values() for t in m.transitions for g in t.guards}
        used |= {g for m in self.machines.values() for stay in m.stays for g in stay.guards}
        for guard_id in sorted(set(self.guards) - used):
            out.append(Fault("unused-guard", f"guard '{guard_id}' is used by no transition",
                             ("guards", guard_id), "name it under a transition's 'guards'", "warning"))
        return out


def _why(traced: dict) -> str:
    """`: guard 'g' refused: <its failing test>`, or the step that refused the move."""
    if traced["decided_by"] is None:
        return ""
    step = traced["steps"][traced["decided_by"]]
    if step["step"] == "guard":
        return f": guard '{step['guard']}' refused: {failed_test(step['failed'])[0]}"
    if step["step"] == "move":
        return f": no transition moves {traced['from']} to {traced['to']} (leaving it: {', '.join(step['leaving']) or 'none'})"
    return f": {step['step']} {step['read'] or '(none)'} is not one of {', '.join(step['allowed'])}"


def _named(example: dict) -> str:
    return f" ({example['name']})" if example.get("name") else ""


def _reachable(m: Machine) -> set:
    seen = {m.initial}
    frontier = [m.initial]
    while frontier:
        state = frontier.pop()
        for t in m.transitions:
            if state in t.sources and t.to not in seen:
                seen.add(t.to)
                frontier.append(t.to)
    return seen


def compile_transition_table(data: dict, ctx: CompileContext) -> TransitionTable | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    contract = contract_of(data, ctx)
    enum = _codes_enum(data, ctx)
    if enum is not None and data["refusal_code"] not in enum:
        ctx.fault("code-not-in-contract", f"refusal code '{data['refusal_code']}' is not in "
                  f"{data['codes_enum']}", ("refusal_code",), did_you_mean(data["refusal_code"], enum))
    messages = {}
    roles_named = any("roles" in t for m in data["machines"].values() for t in m.get("transitions", ()))
    for name in REQUIRED_MESSAGES + (("not_role",) if roles_named else ()):
        if name not in data.get("messages", {}):
            ctx.fault("missing-message", f"messages.{name} is required", ("messages",),
                      f"add messages: {{{name}: <one sentence>}}")
    role_code = data.get("role_refusal_code", "")
    if role_code and enum is not None and role_code not in enum + _surface_codes(ctx):
        ctx.fault("code-not-in-contract", f"role refusal code '{role_code}' is neither in {data['codes_enum']} "
                  "nor a code of the registry (envelope.v1 surface_error_code)", ("role_refusal_code",),
                  did_you_mean(role_code, enum + _surface_codes(ctx)))
    for name, text in data.get("messages", {}).items():
        localized = compile_localized(text, ("messages", name), faults)
        if localized is not None:
            messages[name] = localized
    guards = {}
    for guard_id, raw in data.get("guards", {}).items():
        guard = _compile_guard(guard_id, raw, contract, enum, ctx)
        localized = compile_localized(raw["message"], ("guards", guard_id, "message"), faults)
        if guard is not None and localized is not None:
            guards[guard_id], messages[f"guards.{guard_id}"] = guard, localized
    machines = {}
    for name, raw in data["machines"].items():
        machine = _compile_machine(name, raw, data.get("guards", {}), ctx)
        if machine is not None:
            machines[name] = machine
    for n, ex in enumerate(data.get("examples", ())):
        where = ("examples", n)
        check_given(ex["given"], contract, where + ("given",), faults)
        m = machines.get(ex["machine"])
        if m is None and ex["machine"] in data["machines"]:
            continue                    # the machine has a problem of its own, reported where it is
        if m is None:
            ctx.fault("unknown-machine", f"example names machine '{ex['machine']}'", where + ("machine",),
                      did_you_mean(ex["machine"], data["machines"]))
            continue
        for key in ("from", "to"):
            if ex[key] not in m.states:
                ctx.fault("unknown-state", f"example names state '{ex[key]}', not a state of "
                          f"'{ex['machine']}'", where + (key,), did_you_mean(ex[key], m.states))
        if ex["result"] not in ("ok", role_code) and enum is not None and ex["result"] not in enum:
            ctx.fault("code-not-in-contract", f"example expects '{ex['result']}', not 'ok' nor a known code",
                      where + ("result",), did_you_mean(ex["result"], list(enum) + ["ok"]))
    if any(f.severity == "error" for f in faults[before:]):
        return None
    return TransitionTable("transition_table", data["id"], ctx.source.file, data["refusal_code"],
                           machines, guards, Messages(messages), tuple(data.get("examples", ())), role_code)


def _compile_guard(guard_id: str, raw: dict, contract: Contract | None, enum, ctx: CompileContext) -> Guard | None:
    where = ("guards", guard_id)
    before = len(ctx.faults)
    cond = compile_condition(raw["when"], where + ("when",), ctx.faults, budget_s=ctx.table_budget_s)
    if cond is not None and contract is not None:
        for f, at in cond.fields():
            if not contract.knows(f):
                ctx.fault("unknown-field", f"'{f}' is not a field of the guard facts", at,
                          contract.unknown_field_hint(f))
    if enum is not None and raw["code"] not in enum:
        ctx.fault("code-not-in-contract", f"guard code '{raw['code']}' is not a known refusal code",
                  where + ("code",), did_you_mean(raw["code"], enum))
    for n, ex in enumerate(raw.get("examples", ())):
        check_given(ex["given"], contract, where + ("examples", n, "given"), ctx.faults)
    if cond is None or len(ctx.faults) != before:     # (no condition only ever comes with a fault)
        return None
    return Guard(guard_id, cond, raw["code"], tuple(raw.get("examples", ())), where)


def _compile_machine(name: str, raw: dict, guards: dict, ctx: CompileContext) -> Machine | None:
    where = ("machines", name)
    before = len(ctx.faults)
    states = {s: dict(attrs or {}) for s, attrs in raw["states"].items()}

    def state_ok(state: str, at: tuple) -> None:
        if state not in states:
            ctx.fault("unknown-state", f"'{state}' is not a state of machine '{name}'", at,
                      did_you_mean(state, states) or "states: " + ", ".join(states))

    def guard_ok(guard_id: str, at: tuple) -> None:
        if guard_id not in guards:
            ctx.fault("unknown-guard", f"guard '{guard_id}' is not declared under 'guards'", at,
                      did_you_mean(guard_id, guards))

    state_ok(raw["initial"], where + ("initial",))
    for i, state in enumerate(raw.get("terminal", ())):
        state_ok(state, where + ("terminal", i))
    for i, guard_id in enumerate(raw.get("requires", ())):
        guard_ok(guard_id, where + ("requires", i))
    transitions = []
    seen: dict = {}
    for i, t in enumerate(raw["transitions"]):
        at = where + ("transitions", i)
        if t["id"] in seen:
            ctx.fault("duplicate-transition-id", f"transition id '{t['id']}' is used twice", at + ("id",),
                      also=where + ("transitions", seen[t["id"]], "id"))
        seen.setdefault(t["id"], i)
        for j, state in enumerate(t["from"]):
            state_ok(state, at + ("from", j))
        state_ok(t["to"], at + ("to",))
        for j, guard_id in enumerate(t.get("guards", ())):
            guard_ok(guard_id, at + ("guards", j))
        for state in t["from"]:
            if state == t["to"]:
                ctx.fault("self-transition", f"transition '{t['id']}' moves '{state}' to itself", at,
                          "a move must change the state")
        transitions.append(Transition(t["id"], tuple(t["from"]), t["to"], tuple(t.get("via", ())),
                                      tuple(t.get("guards", ())), at, tuple(t.get("roles", ()))))
    pairs: dict = {}
    for t in transitions:
        for state in t.sources:
            if (state, t.to) in pairs:
                ctx.fault("duplicate-transition", f"'{state}' -> '{t.to}' is allowed by both "
                          f"'{pairs[(state, t.to)]}' and '{t.id}'", t.where, "keep one transition per move")
            pairs[(state, t.to)] = t.id
    stays = []
    for i, raw_stay in enumerate(raw.get("stays", ())):
        at = where + ("stays", i)
        for j, state in enumerate(raw_stay["states"]):
            state_ok(state, at + ("states", j))
        for j, guard_id in enumerate(raw_stay["guards"]):
            guard_ok(guard_id, at + ("guards", j))
        stays.append(Stay(raw_stay["id"], tuple(raw_stay["states"]), tuple(raw_stay.get("via", ())),
                          tuple(raw_stay["guards"]), at))
    if len(ctx.faults) != before:
        return None
    return Machine(name, raw["initial"], tuple(raw.get("terminal", ())), states,
                   tuple(raw.get("requires", ())), tuple(transitions), where, tuple(stays))


def _surface_codes(ctx: CompileContext) -> tuple:
    """The tool registry's own refusal codes (PERMISSION_DENIED, ...), from the envelope contract."""
    defs = (ctx.schemas.get("envelope.v1.schema.json") or {}).get("$defs", {})
    return tuple(alt.get("const") for alt in defs.get("surface_error_code", {}).get("oneOf", ()))


def _codes_enum(data: dict, ctx: CompileContext) -> tuple | None:
    ref = data.get("codes_enum")
    if not ref:
        return None
    name, _, pointer = ref.partition("#")
    node: Any = ctx.schemas.get(name)
    for part in [p for p in pointer.split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    enum = node.get("enum") if isinstance(node, dict) else None
    if not isinstance(enum, list):
        ctx.fault("unknown-contract", f"codes_enum '{ref}' does not point at an enum under schemas/",
                  ("codes_enum",))
        return None
    return tuple(enum)
