"""The `provenance_table` kind (rules/provenance.yaml), compiled.

A record's class comes from an embedded decision table (so its rows, conditions, trace, lint and row
examples work as every decision table's); the class's `writers` give each role a verdict, and the
verdict's `effect` says whether the record decides a slot, is kept but set aside, or is refused.
The roles are checked against the role table by `unknown_writer_roles` (lint and server start).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from ..core.decide import DecisionTable, compile_table
from ..core.errors import Fault, Problem, did_you_mean
from ..core.examples import ExampleResult
from ..core.messages import Messages, compile_messages

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook
    from ..core.tables import CompileContext

UNKNOWN_ROLE = "unknown"          # the role a record stored before writers were stamped reads as
DECIDES, SET_ASIDE, REFUSED = "decides", "set_aside", "refused"


@dataclass(frozen=True)
class Verdict:
    """What the table says of one record by one writer."""

    cls: str                  # the record's class (a code of `classes`)
    label: str                # the class's label
    verdict: str              # a key of `verdicts`
    verdict_label: str
    effect: str               # decides | set_aside | refused
    by: str                   # writer | signed | unknown_writer | unlisted: which rule of the table gave it

    @property
    def decides(self) -> bool:
        return self.effect == DECIDES

    def as_json(self) -> dict:
        return {"class": self.cls, "label": self.label, "verdict": self.verdict,
                "verdict_label": self.verdict_label, "effect": self.effect, "by": self.by}


@dataclass(frozen=True)
class ProvenanceTable:
    kind: str
    id: str
    file: str
    verdicts: dict            # name -> {label, effect}
    unlisted: str
    unknown_writer: str
    signed: str
    classes: DecisionTable
    writers: dict             # class -> {role: verdict}
    examples: tuple
    messages: Messages          # name -> Template, in the bound language

    def class_of(self, record: dict) -> str:
        """The record's class; a lock is classed as the raw source it is inside (give that)."""
        facts = {k: record[k] for k in ("type", "role", "state", "origin", "tool") if isinstance(record.get(k), str)}
        return self.classes.evaluate({"record": facts}).fired[0].code

    def judge(self, record: dict, writer: dict | None, cls: str | None = None) -> Verdict:
        """The verdict on `record` (a raw source, or the source a lock is inside) by `writer` (a
        record's stamp: principal, role, auth, and `signer` when a signer of the trust store vouched
        for it by a verified signature; None: stored before records named their writer); `cls`: the
        record's class when the caller knows it already."""
        cls = cls or self.class_of(record)
        if writer is None or writer.get("role") == UNKNOWN_ROLE:
            name, by = self.unknown_writer, "unknown_writer"
        elif writer.get("signer"):
            name, by = self.signed, "signed"
        elif writer.get("role") in self.writers[cls]:
            name, by = self.writers[cls][writer["role"]], "writer"
        else:
            name, by = self.unlisted, "unlisted"
        spec = self.verdicts[name]
        return Verdict(cls, self.classes.codes.get(cls, {}).get("label", cls), name, spec["label"], spec["effect"], by)

    def message(self, name: str, **params: Any) -> str:
        return self.messages[name].render(params)

    def roles(self) -> Iterator[tuple[str, tuple]]:
        """(role, where) of every role the table names."""
        for cls, writers in self.writers.items():
            for role in writers:
                yield role, ("classes", "outputs", cls, "writers", role)

    def check_examples(self) -> Iterator[ExampleResult]:
        for r in self.classes.check_examples():
            yield ExampleResult(r.id, r.ok, r.message, ("classes",) + tuple(r.path))
        for n, ex in enumerate(self.examples, 1):
            writer = dict(ex["given"]["writer"])
            got = self.judge(ex["given"]["record"], writer)
            ok = got.cls == ex["class"] and got.verdict == ex["verdict"]
            yield ExampleResult(f"{self.id}:examples:{n}", ok,
                                "" if ok else f"expected {ex['class']}/{ex['verdict']}, got {got.cls}/{got.verdict}",
                                ("examples", n - 1))


def compile_provenance(data: dict, ctx: CompileContext) -> ProvenanceTable | None:
    from ..core.tables import CompileContext
    before = len(ctx.faults)
    verdicts = {name: dict(spec) for name, spec in data["verdicts"].items()}

    def verdict_ok(name: str, at: tuple) -> None:
        if name not in verdicts:
            ctx.fault("unknown-verdict", f"'{name}' is not a verdict of 'verdicts'", at,
                      did_you_mean(name, verdicts) or "verdicts: " + ", ".join(verdicts))

    for key in ("unlisted", "unknown_writer", "signed"):
        verdict_ok(data[key], (key,))
    sub = CompileContext(ctx.schemas, ctx.source, table_budget_s=ctx.table_budget_s)
    spec = data["classes"]
    outputs = {cls: {k: v for k, v in out.items() if k != "writers"} for cls, out in spec["outputs"].items()}
    classes = compile_table({"kind": "decision_table", "id": f"{data['id']}.classes", **dict(spec, outputs=outputs)}, sub)
    for f in sub.faults:
        ctx.faults.append(Fault(f.code, f.message, ("classes",) + tuple(f.path), f.hint, f.severity))
    writers = {}
    for cls, out in spec["outputs"].items():
        writers[cls] = dict(out["writers"])
        for role, name in out["writers"].items():
            verdict_ok(name, ("classes", "outputs", cls, "writers", role))
    for n, ex in enumerate(data.get("examples", ())):
        if ex["class"] not in writers:
            ctx.fault("unknown-code", f"example names class '{ex['class']}', which 'classes' does not produce",
                      ("examples", n, "class"), did_you_mean(ex["class"], writers))
        verdict_ok(ex["verdict"], ("examples", n, "verdict"))
    messages = compile_messages(data["messages"], ctx.faults)
    if classes is None or any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    return ProvenanceTable("provenance_table", data["id"], ctx.source.file, verdicts, data["unlisted"],
                           data["unknown_writer"], data["signed"], classes, writers,
                           tuple(data.get("examples", ())), messages)


def of(book: Rulebook) -> ProvenanceTable | None:
    """The rulebook's provenance table (None: a rulebook without one judges no writer)."""
    found = book.of_kind("provenance_table")
    return found[0] if found else None


def unknown_writer_roles(book: Rulebook) -> Iterator[Problem]:
    """A provenance table naming a role the role table does not declare (lint, and server start)."""
    from ..core.tables import location
    declared = {role for table in book.of_kind("role_table") for role in table.roles}
    if not declared:
        return
    for table in book.of_kind("provenance_table"):
        source = book.sources[table.id]
        for role, where in table.roles():
            if role not in declared:
                line, col, key = location(source, where)
                yield Problem(source.file, line, col, "unknown-role", f"role '{role}' is not declared by a role table",
                              key, did_you_mean(role, declared) or "roles: " + ", ".join(sorted(declared)))
