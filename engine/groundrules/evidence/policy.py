"""The merge policy (rules/merge.yaml), compiled: scopes, ops, slots and five decision tables.

The decision tables are ordinary `decide` tables embedded in the policy file (so their rows, hit
policy, conditions, templates and row examples work exactly like any decision table); their faults
are re-located under the policy's key path. `check_examples` also runs every whole-fold example.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import regex

from ..core.decide import DecisionTable, compile_table
from ..core.errors import Fault, did_you_mean
from ..core.examples import ExampleResult
from ..core.templates import Template, compile_template

if TYPE_CHECKING:
    from ..core.tables import CompileContext

TABLES = ("sources", "resolve", "status", "questions", "scope_fit")
SCOPE_OPS = ("open", "switch", "close")
# activity ops (docs/spec/evidence.md, events: tool receipts, action outcomes, questions asked): op -> the event key they are tallied under
ACTIVITY_OPS = {"ask": "slot", "outcome": "action", "receipt": "tool"}
RESOLVE_CODES = ("accept", "corroborate", "replace", "keep", "conflict")
QUESTION_NAMES = ("value", "current", "slot.label", "slot.id")     # what a slot's own question may name

# clarify.spacing: how a question's sentences are spaced where a template's Chinese meets a value's
# Latin letters or digits. A template cannot do it: the boundary lies between its text and its slot.
SPACINGS = {
    "none": None,
    "cjk_latin": regex.compile(r"(?<=\p{Han})(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=\p{Han})"),
}


@dataclass(frozen=True)
class Slot:
    id: str
    label: str
    inherit: bool
    lock_kinds: tuple
    lock_required: bool
    lock_match: str           # normalized_value | presence | '' (no locks)
    questions: dict | None = None    # a `questions` row code -> this slot's own sentence Template (seed 003 §七)


@dataclass(frozen=True)
class Binding:
    """A phrase that decides which slot an unresolved event's value is for (交付到 -> delivery_region)."""

    id: str
    slot: str
    phrases: tuple


@dataclass(frozen=True)
class MergePolicy:
    kind: str
    id: str
    file: str
    initial_scope: str
    ops: dict                 # event type -> op
    slots: dict               # slot id -> Slot, in table order
    question: Template
    spacing: str              # a key of SPACINGS
    reading_ops: tuple        # ops an event with an unresolved scope may read as
    validity_precedence: tuple
    policies: dict            # name -> description
    sources: DecisionTable
    resolve: DecisionTable
    status: DecisionTable
    questions: DecisionTable
    scope_fit: DecisionTable
    version_key: str          # the scope_context key a record's version is compared with
    examples: tuple
    bindings: tuple = ()      # Binding, in table order

    def bound(self, quotes: list[str]) -> dict:
        """{slot: binding id} of every binding whose phrase a quote holds (the first binding per slot)."""
        out: dict = {}
        for b in self.bindings:
            if b.slot not in out and any(p in q for q in quotes for p in b.phrases):
                out[b.slot] = b.id
        return out

    def sentence(self, text: str) -> str:
        """A rendered question sentence, spaced as `clarify.spacing` says (the seed writes "交付到 B 地分部吗")."""
        boundary = SPACINGS[self.spacing]
        return text if boundary is None else boundary.sub(" ", text)

    def layer(self, event_type: str) -> str:
        op = self.ops[event_type]
        return "scope" if op in SCOPE_OPS else "activity" if op in ACTIVITY_OPS else "field"

    @staticmethod
    def activity_key(op: str) -> str:
        """Which field of an activity event names what it counts (the slot asked, the action, the tool)."""
        return ACTIVITY_OPS[op]

    def source_of(self, facts: dict) -> tuple[str, int]:
        """(source class, rank) of a record: the first fired row of `sources`."""
        code = self.sources.evaluate(facts).fired[0].code
        return code, int(self.sources.codes[code].get("rank", 0))

    def fit(self, facts: dict) -> dict:
        """{verdict, label, decides, detail, by_row} of one record for a scope_context: scope_fit's
        first row (by_row false: no row fired, the default decided)."""
        fired = self.scope_fit.evaluate(facts).fired[0]
        attrs = self.scope_fit.codes.get(fired.code, {})
        return {"verdict": fired.code, "label": attrs.get("label", fired.code),
                "decides": bool(attrs.get("decides", True)), "detail": fired.outputs.get("detail", ""),
                "by_row": fired.row.index >= 0}

    def check_examples(self) -> Iterator[ExampleResult]:
        for name in TABLES:
            table: DecisionTable = getattr(self, name)
            for r in table.check_examples():
                yield ExampleResult(r.id, r.ok, r.message, (name,) + tuple(r.path))
        shown = {ex["policy"] for ex in self.examples}
        for name in self.policies:
            if name not in shown:
                yield ExampleResult(f"{self.id}:policies.{name}", False, "policy has no example",
                                    ("policies", name))
        from .examples import check_fold_example
        for n, ex in enumerate(self.examples, 1):
            ok, message, path = check_fold_example(self, ex)
            yield ExampleResult(f"{self.id}:{ex['policy']}:{n}", ok, message, ("examples", n - 1) + path)


def _embedded(name: str, data: dict, ctx: CompileContext, policy_id: str) -> DecisionTable | None:
    from ..core.tables import CompileContext
    sub = CompileContext(ctx.schemas, ctx.source, table_budget_s=ctx.table_budget_s)
    table = compile_table({"kind": "decision_table", "id": f"{policy_id}.{name}", **data}, sub)
    for f in sub.faults:
        ctx.faults.append(Fault(f.code, f.message, (name,) + tuple(f.path), f.hint, f.severity))
    return table


def compile_policy(data: dict, ctx: CompileContext) -> MergePolicy | None:
    embedded = {name: _embedded(name, data[name], ctx, data["id"]) for name in TABLES}
    tables = {name: table for name, table in embedded.items() if table is not None}
    _check_outputs(data, ctx)
    slots = {}
    codes = [row["id"] for row in data["questions"]["rows"]]
    for sid, spec in data["slots"].items():
        locks = spec.get("locks", {})
        own = {}
        for code, text in spec.get("questions", {}).items():
            where = ("slots", sid, "questions", code)
            if code not in codes:
                ctx.fault("unknown-code", f"'{code}' is no row of the questions table", where,
                          did_you_mean(code, codes) or "rows: " + ", ".join(codes))
            template = compile_template(text, where, ctx.faults, lambda n: n in QUESTION_NAMES, QUESTION_NAMES)
            if template is not None:
                own[code] = template
        slots[sid] = Slot(sid, spec["label"], spec.get("inherit", False), tuple(locks.get("kinds", ())),
                          locks.get("required", False), locks.get("match", ""), own)
    bindings = []
    for n, raw in enumerate(data.get("bindings", ())):
        if raw["slot"] not in data["slots"]:
            ctx.fault("unknown-slot", f"binding names slot '{raw['slot']}', which 'slots' does not list",
                      ("bindings", n, "slot"), did_you_mean(raw["slot"], data["slots"]))
        bindings.append(Binding(raw["id"], raw["slot"], tuple(raw["phrases"])))
    question = compile_template(data["clarify"]["question"], ("clarify", "question"), ctx.faults,
                                lambda n: n == "sentences", ("sentences",))
    for n, ex in enumerate(data["examples"]):
        if ex["policy"] not in data["policies"]:
            ctx.fault("unknown-policy", f"example names policy '{ex['policy']}', which 'policies' does not list",
                      ("examples", n, "policy"), did_you_mean(ex["policy"], data["policies"]))
    if any(f.severity == "error" for f in ctx.faults) or len(tables) != len(TABLES) or question is None:
        return None
    return MergePolicy("merge_policy", data["id"], ctx.source.file, data["scopes"]["initial"],
                       dict(data["events"]), slots, question, data["clarify"].get("spacing", "none"),
                       tuple(data["clarify"].get("reading_ops", ())), tuple(data["validity_precedence"]),
                       dict(data["policies"]),
                       tables["sources"], tables["resolve"], tables["status"], tables["questions"],
                       tables["scope_fit"], data["scope_context"]["version_key"], tuple(data["examples"]),
                       tuple(bindings))


def _check_outputs(data: dict, ctx: CompileContext) -> None:
    """resolve may only produce the engine's ops; questions rows must render `text`."""
    for code in data["resolve"]["outputs"]:
        if code not in RESOLVE_CODES:
            ctx.fault("unknown-code", f"resolve output '{code}' is not an op the fold knows",
                      ("resolve", "outputs", code), did_you_mean(code, RESOLVE_CODES)
                      or "ops: " + ", ".join(RESOLVE_CODES))
    for n, row in enumerate(data["questions"]["rows"]):
        if "text" not in row.get("output", {}):
            ctx.fault("missing-key", "a questions row must output 'text'", ("questions", "rows", n),
                      "add output: {text: <sentence template>}")
    for name in ("sources", "resolve", "status", "scope_fit"):
        if "default" not in data[name]:
            ctx.fault("missing-key", f"{name} needs a default: the fold must get an answer for every input",
                      (name,), "add default: {code: <code>}")
