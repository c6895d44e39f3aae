"""The event catalogue (rules/events.yaml): record types and event types, compiled.

Record types say whether a record may be cited as raw evidence (a condition over {record, message}),
which fields hold personal data, and how the lock tables read it (which field is its raw text, and
as what role and state); event types say which keys an event must and must not carry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from ..core import codes
from ..core.conditions import Condition, compile_condition
from ..core.examples import ExampleResult

if TYPE_CHECKING:
    from ..core.tables import CompileContext


@dataclass(frozen=True)
class Locked:
    """How the lock tables read a record type: its raw text is `text`, scanned as written by `role`
    in `state` (a constant, or the record's own field named by ("field", name))."""

    text: str
    role: Any
    state: Any
    json_strings: bool

    def reading(self, record: dict) -> tuple[str, str, Any]:
        """(role, state, raw text) of `record`; the text is a string, a redaction's tombstone, or the
        JSON text of a scalar (an injected number is scanned as it is written)."""
        text = record[self.text]
        if not isinstance(text, (str, dict)):
            text = json.dumps(text, ensure_ascii=False)
        return self._of(self.role, record), self._of(self.state, record), text

    @staticmethod
    def _of(spec: Any, record: dict) -> str:
        return record.get(spec[1], "") if isinstance(spec, tuple) else spec


@dataclass(frozen=True)
class RecordType:
    name: str
    label: str
    raw: Any                  # bool or Condition over {record, message}
    not_raw: str
    personal: tuple
    examples: tuple
    locked: Locked | None = None      # a raw source the lock tables scan (message, receipt, injected field)

    def is_raw(self, facts: dict) -> bool:
        return self.raw if isinstance(self.raw, bool) else self.raw.test(facts)


@dataclass(frozen=True)
class EventType:
    name: str
    layer: str
    label: str
    requires: tuple
    forbids: tuple
    examples: tuple

    def shape_problem(self, event: dict) -> tuple[str, str] | None:
        """(code, key) of the first missing required or present forbidden key, or None."""
        for key in self.requires:
            if key not in event:
                return codes.EVENT_INCOMPLETE, key
        for key in self.forbids:
            if key in event:
                return codes.EVENT_INVALID, key
        if self.layer == "scope" and isinstance(event.get("scope"), dict):
            return codes.EVENT_INVALID, "scope"
        return None


@dataclass(frozen=True)
class EventCatalogue:
    kind: str
    id: str
    file: str
    records: dict             # type -> RecordType
    events: dict              # name -> EventType
    draft: dict = field(default_factory=dict)   # what a drafted interpretation starts with (`draft:`)

    def check_examples(self) -> Iterator[ExampleResult]:
        for name, rt in self.records.items():
            for n, ex in enumerate(rt.examples, 1):
                got = rt.is_raw(ex["given"])
                yield ExampleResult(f"{self.id}:records.{name}:{n}", got is ex["raw"],
                                    "" if got is ex["raw"] else f"expected raw={ex['raw']}, got {got}",
                                    ("records", name, "examples", n - 1))
        for name, et in self.events.items():
            for n, ex in enumerate(et.examples, 1):
                problem = et.shape_problem(ex["given"])
                got = problem[0] if problem else None
                want = ex.get("refusal")
                yield ExampleResult(f"{self.id}:events.{name}:{n}", got == want,
                                    "" if got == want else f"expected refusal {want}, got {got}",
                                    ("events", name, "examples", n - 1))


def _locked(spec: dict | None) -> Locked | None:
    if spec is None:
        return None
    role, state = (("field", v["field"]) if isinstance(v, dict) else v for v in (spec["role"], spec["state"]))
    return Locked(spec["text"], role, state, spec.get("json_strings", False))


def compile_catalogue(data: dict, ctx: CompileContext) -> EventCatalogue | None:
    records = {}
    for name, spec in data["records"].items():
        raw = spec["raw"]
        if isinstance(raw, dict):
            raw = compile_condition(raw, ("records", name, "raw"), ctx.faults, budget_s=ctx.table_budget_s)
        if raw is False and "not_raw" not in spec or isinstance(raw, Condition) and "not_raw" not in spec:
            ctx.fault("missing-key", f"record type '{name}' can be non-raw but has no 'not_raw' reason",
                      ("records", name), "add not_raw: <why it is not raw evidence>")
        if "locks" in spec and spec["locks"]["text"] not in spec["personal"]:
            ctx.fault("bad-value", f"record type '{name}' is locked on '{spec['locks']['text']}', which is not "
                      "personal: its locks copy it, so a redaction must remove it", ("records", name, "locks", "text"),
                      f"add {spec['locks']['text']} to personal")
        records[name] = RecordType(name, spec["label"], raw, spec.get("not_raw", ""),
                                   tuple(spec["personal"]), tuple(spec["examples"]), _locked(spec.get("locks")))
    events = {}
    for name, spec in data["events"].items():
        both = set(spec["requires"]) & set(spec.get("forbids", ()))
        if both:
            ctx.fault("bad-value", f"event '{name}' both requires and forbids {sorted(both)}",
                      ("events", name, "forbids"))
        events[name] = EventType(name, spec["layer"], spec["label"], tuple(spec["requires"]),
                                 tuple(spec.get("forbids", ())), tuple(spec["examples"]))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return EventCatalogue("event_catalogue", data["id"], ctx.source.file, records, events, dict(data["draft"]))
