"""The fold proper: checked events + the ledger index -> current slot state per scope.

Three linear passes. Scopes: which scopes exist, and which one is current at every position of the
event stream, walked interpretation by interpretation in the order of the ledger records the events
cite, scope events first at each record (seed 003 §五), so a field event lands in the scope it
belongs to whatever the order the model listed the events in. Fields: every field event folds into its scope's slot through the
`resolve` table, resting only on the evidence that may decide the context asked for (`fits`); one
that rests on none folds nowhere (set_aside); an event whose scope is unresolved only flags the
slots of its readings and adds a clarification question. Finish: inheritance along new_scope parents, then every slot's status from
the `status` table at `now`. Nothing reads a clock; `now` comes in.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core import codes
from .interpret import NO_VALUE, Event

if TYPE_CHECKING:
    from .index import LedgerIndex
    from .policy import MergePolicy

CLEARING_OPS = ("decline", "retract")     # the field ops that need no value: they clear the slot
READING_KEYS = ("id", "type", "slot", "label", "scope", "new_scope", "value", "current", "question")


@dataclass
class Candidate:
    value: Any
    source: str
    rank: int
    evidence: list
    events: list

    def out(self) -> dict:
        return {"value": self.value, "source": self.source, "evidence": list(self.evidence),
                "events": list(self.events)}


@dataclass
class SlotState:
    core: str = "empty"                           # empty | filled | declined | conflicting
    candidates: list = field(default_factory=list)   # one when filled, several when conflicting
    confirmed: bool = False
    evidence: list = field(default_factory=list)  # behind a decline / retract (no candidate)
    events: list = field(default_factory=list)
    clarifying: list = field(default_factory=list)
    inherited_from: str | None = None
    history: list = field(default_factory=list)


@dataclass
class Scope:
    id: str
    parent: str | None
    opened_by: str | None
    closed_by: str | None = None
    slots: dict = field(default_factory=dict)


@dataclass
class Result:
    outcome: str
    rule: str | None
    scope: str | None


class Folder:
    def __init__(self, index: LedgerIndex, policy: MergePolicy, fits: dict | None = None):
        self.index, self.policy = index, policy
        self.fits = fits                           # record id -> scope_fit verdict (None: no context asked for)
        self.refuse = index.refusals.error
        self.scopes: dict[str, Scope] = {policy.initial_scope: Scope(policy.initial_scope, None, None)}
        self.results: dict[str, Result] = {}
        self.clarifications: dict[str, dict] = {}
        self.bindings: dict[str, dict] = {}        # event id -> {reading, binding} a binding decided
        self.current = policy.initial_scope
        self.order: list[int] = []                 # the positions of the events, in the order they fold
        self.activity: dict[str, dict] = {}        # activity event type -> key -> tally

    # -- pass 1: scopes -------------------------------------------------------------------------
    def scope_pass(self, events: list[Event]) -> list:
        """Register every scope, then walk the events in the order `_layered` gives (scope events
        before the field events read from the same record, whatever the order of the list);
        returns the current scope at each position."""
        for ev in events:
            if ev.op == "open":
                assert ev.scope is not None, "an opening event names its scope (events.yaml: requires [scope])"
                if ev.scope in self.scopes:
                    raise self.refuse(codes.SCOPE_EXISTS, scope=ev.scope, at=ev.at + ".scope")
                self.scopes[ev.scope] = Scope(ev.scope, None, ev.id)
        opened = {self.policy.initial_scope}
        current, at_position = self.policy.initial_scope, [self.policy.initial_scope] * len(events)
        self.order = _layered(events, {rid: n for n, rid in enumerate(self.index.entries)})
        for i in self.order:
            ev = events[i]
            if ev.op == "open":
                assert ev.scope is not None, "an opening event names its scope (events.yaml: requires [scope])"
                parent = ev.parent or current
                if parent not in opened:
                    raise self.refuse(codes.UNKNOWN_SCOPE, scope=parent, at=ev.at + ".parent")
                self.scopes[ev.scope].parent = parent
                opened.add(ev.scope)
                current = ev.scope
                self.results[ev.id] = Result("open", None, ev.scope)
            elif ev.op in ("switch", "close"):
                target = ev.scope or current
                if target not in self.scopes:
                    raise self.refuse(codes.UNKNOWN_SCOPE, scope=target, at=ev.at + ".scope")
                if ev.op == "switch":
                    current = target
                elif self.scopes[target].closed_by is None:
                    self.scopes[target].closed_by = ev.id
                self.results[ev.id] = Result(ev.op, None, target)
            at_position[i] = current
        self.current = current
        return at_position

    # -- pass 2: fields -------------------------------------------------------------------------
    def field_pass(self, events: list[Event], at_position: list) -> None:
        """Fold every field event, in the order scope_pass walked them."""
        for i in self.order:
            ev, current = events[i], at_position[i]
            for ref in ev.resolves:          # any event may answer a question: "yes, a new demand" opens a scope
                self._resolve_clarification(ref, ev)
            if ev.layer == "activity":
                self._tally(ev, current)
                continue
            if ev.layer != "field":
                continue
            if self.fits is not None:
                deciding = [rid for rid in ev.evidence if self.fits[rid]["decides"]]
                if not deciding:
                    self._set_aside(ev, current)
                    continue
                if len(deciding) < len(ev.evidence):
                    ev = replace(ev, evidence=deciding)
            if ev.readings is not None:
                bound = self._bound(ev)
                if bound is None:
                    self._clarify(ev, current)
                    continue
                ev = bound
            target = ev.scope or self._subject(ev) or current
            if target not in self.scopes:
                raise self.refuse(codes.UNKNOWN_SCOPE, scope=target, at=ev.at + (".scope" if ev.scope else ".evidence"))
            state = self.scopes[target].slots.setdefault(ev.slot, SlotState())
            outcome, rule = self._apply(ev, state)
            state.history.append({"event": ev.id, "type": ev.type, "outcome": outcome, "rule": rule,
                                  "value": None if ev.value is NO_VALUE else ev.value})
            self.results[ev.id] = Result(outcome, rule, target)

    def _set_aside(self, ev: Event, current: str) -> None:
        """A field event whose every record was set aside for the context decides nothing there:
        its slot shows it in the history, with the verdict of the first record it cites."""
        assert self.fits is not None, "events are set aside only when a context was weighed"
        target = ev.scope or self._subject(ev) or current
        rule = self.fits[ev.evidence[0]]["verdict"] if ev.evidence else None
        if ev.slot is not None and target in self.scopes:
            state = self.scopes[target].slots.setdefault(ev.slot, SlotState())
            state.history.append({"event": ev.id, "type": ev.type, "outcome": "set_aside", "rule": rule,
                                  "value": None if ev.value is NO_VALUE else ev.value})
        self.results[ev.id] = Result("set_aside", rule, None)

    def _tally(self, ev: Event, current: str) -> None:
        """An activity event (a question asked about a slot, an action's outcome, a tool's receipt):
        counted under its key with the events and evidence behind it, so every such write is
        traceable like a slot's."""
        key = ev.slot if ev.slot is not None else ev.activity[self.policy.activity_key(ev.op)]
        entry = self.activity.setdefault(ev.type, {}).setdefault(
            key, {"count": 0, "last": None, "events": [], "evidence": []})
        entry["count"] += 1
        entry["last"] = ev.activity.get("outcome")
        entry["events"].append(ev.id)
        entry["evidence"] += [rid for rid in ev.evidence if rid not in entry["evidence"]]
        self.results[ev.id] = Result("recorded", None, current)

    def _subject(self, ev: Event) -> str | None:
        """The scope the records an event cites are about (docs/spec/evidence.md: whom a record is about), when they
        name one: two demands' evidence never folds into one slot through the current scope alone."""
        subjects = sorted({self.index.entries[rid].record["subject"] for rid in ev.evidence
                           if "subject" in self.index.entries[rid].record})
        if len(subjects) > 1:
            raise self.refuse(codes.SUBJECTS_DIFFER, event=ev.id, subjects=", ".join(subjects), at=ev.at + ".evidence")
        return subjects[0] if subjects else None

    def _source(self, ev: Event) -> tuple[str, int]:
        best = None
        for rid in ev.evidence:
            entry = self.index.entries[rid]
            if best is None or entry.rank > best[1]:
                best = (entry.source, entry.rank)
        assert best is not None, "a field event cites at least one record (interpret.py checks)"
        return best

    def _apply(self, ev: Event, state: SlotState) -> tuple[str, str | None]:
        if ev.op in CLEARING_OPS:
            state.core = "declined" if ev.op == "decline" else "empty"
            state.candidates, state.confirmed = [], False
            state.evidence, state.events = list(ev.evidence), [ev.id]
            return ev.op, None
        value = ev.value
        if value is NO_VALUE:
            if state.core != "filled":
                raise self.refuse(codes.EVENT_INCOMPLETE, event=ev.id, type=ev.type, key="value")
            value = state.candidates[0].value
        source, rank = self._source(ev)
        same = next((c for c in state.candidates if _same(c.value, value)), None)
        best = self._best(state)
        current = {"status": state.core, "same_value": same is not None, "confirmed": state.confirmed}
        if best is not None:
            current["source"], current["rank"] = best.source, best.rank
        facts = {"event": {"type": ev.type, "slot": ev.slot, "source": source, "rank": rank},
                 "current": current}
        fired = self.policy.resolve.evaluate(facts).fired[0]
        code, rule = fired.code, (fired.row.id if fired.row.index >= 0 else "default")
        new = Candidate(value, source, rank, list(ev.evidence), [ev.id])
        if code == "corroborate" and same is not None:
            for rid in ev.evidence:
                if rid not in same.evidence:
                    same.evidence.append(rid)
            same.events.append(ev.id)
            if rank > same.rank:
                same.source, same.rank = source, rank
        elif code in ("accept", "replace") or (code == "corroborate" and same is None):
            if self.policy.resolve.codes.get(code, {}).get("replaced_evidence") == "history":
                replaced = {rid for c in state.candidates for rid in c.evidence}
                new.evidence = [rid for rid in new.evidence if rid not in replaced] or new.evidence
            state.core, state.candidates, state.confirmed = "filled", [new], False
            state.evidence, state.events = [], []
        elif code == "conflict":
            state.candidates.append(new)
            state.core = "conflicting" if len(state.candidates) > 1 else "filled"
            state.confirmed, state.evidence, state.events = False, [], []
        if ev.op == "confirm" and code != "keep" and state.core == "filled":
            state.confirmed = True
        return code, rule

    @staticmethod
    def _best(state: SlotState) -> Candidate | None:
        best = None
        for c in state.candidates:
            if best is None or c.rank > best.rank:
                best = c
        return best

    # -- unresolved scope -----------------------------------------------------------------------
    def _bound(self, ev: Event) -> Event | None:
        """The event read as the one reading a binding decides (seed 003 §七: 能判定就判定: 交付到 B 地分部
        is the delivery address when the slots tell it from the company's), or None to ask: no
        binding phrase in the event's quotes, phrases of several readings' slots, or a reading that
        opens a scope (a phrase tells a slot, not a scope)."""
        assert ev.readings is not None, "only an event with readings is bound"
        quotes = []
        for c in ev.citations:                 # the spans it quotes, never a whole record it cites beside them
            text = self.index.entries[c["record"]].record.get("content") if c.get("kind") == "span" else None
            if isinstance(text, str):
                quotes.append(text[c["start"]:c["end"]])
        found = self.policy.bound(quotes) if quotes else {}
        fits = [r for r in ev.readings if r["slot"] in found]
        if len(fits) != 1 or any("new_scope" in r for r in ev.readings) or len({r["slot"] for r in ev.readings if r["slot"] in found}) != 1:
            return None
        r = fits[0]
        self.bindings[ev.id] = {"reading": r["id"], "binding": found[r["slot"]]}
        return replace(ev, type=r["type"], op=self.policy.ops[r["type"]], slot=r["slot"], scope=r.get("scope"),
                       readings=None)

    def _clarify(self, ev: Event, current: str) -> None:
        assert ev.readings is not None, "only an event with readings is clarified"
        readings, sentences = [], []
        for r in ev.readings:
            slot = self.policy.slots[r["slot"]]
            facts = {"reading": r, "slot": {"id": slot.id, "label": slot.label}, "value": ev.value}
            shown = dict(r)
            if "new_scope" not in r:
                target = r.get("scope", current)
                if target not in self.scopes:
                    raise self.refuse(codes.UNKNOWN_SCOPE, scope=target, at=ev.at + ".scope.unresolved")
                shown["scope"] = target
                state = self.scopes[target].slots.setdefault(r["slot"], SlotState())
                if state.core == "filled":
                    facts["current"] = shown["current"] = state.candidates[0].value
                state.clarifying.append(ev.id)
                state.history.append({"event": ev.id, "type": ev.type, "outcome": "clarify", "rule": None,
                                      "value": ev.value, "reading": r["id"]})
            decision = self.policy.questions.evaluate(facts)
            own = slot.questions.get(decision.fired[0].code) if decision.fired and slot.questions else None
            text = own.render(facts) if own is not None else \
                decision.fired[0].outputs.get("text", "") if decision.fired else ""
            sentence = self.policy.sentence(text)
            shown.update(label=slot.label, value=ev.value, question=sentence)
            readings.append({k: shown[k] for k in READING_KEYS if k in shown})
            sentences.append(sentence)
        question = self.policy.question.render({}, {"sentences": sentences})
        self.clarifications[ev.id] = {"event": ev.id, "status": "open", "readings": readings,
                                      "question": question}
        self.results[ev.id] = Result("clarify", None, None)

    def _resolve_clarification(self, ref: str, ev: Event) -> None:
        clar = self.clarifications.get(ref)
        if clar is None:
            raise self.refuse(codes.UNKNOWN_EVENT, name=ref, at=ev.at + ".resolves")
        if clar["status"] == "open":
            clar["status"], clar["resolved_by"] = "resolved", ev.id
            for reading in clar["readings"]:
                if "scope" in reading:
                    state = self.scopes[reading["scope"]].slots[reading["slot"]]
                    state.clarifying = [c for c in state.clarifying if c != ref]

    # -- pass 3: inheritance and status ---------------------------------------------------------
    def finish(self) -> dict:
        for scope in self.scopes.values():
            if scope.parent is None:
                continue
            parent = self.scopes[scope.parent]
            for sid, slot in self.policy.slots.items():
                own = scope.slots.get(sid)
                theirs = parent.slots.get(sid)
                if not slot.inherit or theirs is None or theirs.core == "empty" or (own and own.history):
                    continue
                scope.slots[sid] = SlotState(theirs.core, [Candidate(c.value, c.source, c.rank, list(c.evidence),
                                                                     list(c.events)) for c in theirs.candidates],
                                             theirs.confirmed, list(theirs.evidence), list(theirs.events),
                                             [], theirs.inherited_from or parent.id, [])
        scopes = {}
        for scope in self.scopes.values():
            slots = {}
            for sid, slot in self.policy.slots.items():
                if sid in scope.slots:
                    slots[sid] = self._slot_out(scope, slot, scope.slots[sid])
            scopes[scope.id] = {"status": "closed" if scope.closed_by else "open", "parent": scope.parent,
                                "opened_by": scope.opened_by, "closed_by": scope.closed_by, "slots": slots}
        return scopes

    def _slot_out(self, scope: Scope, slot, state: SlotState) -> dict:
        evidence, events = list(state.evidence), list(state.events)
        for c in state.candidates:
            evidence += [r for r in c.evidence if r not in evidence]
            events += [e for e in c.events if e not in events]
        facts = {"scope": {"id": scope.id, "status": "closed" if scope.closed_by else "open"},
                 "slot": {"id": slot.id, "core": state.core, "confirmed": state.confirmed,
                          "clarifying": bool(state.clarifying), "validity": self._validity(evidence),
                          "inherited": state.inherited_from is not None}}
        status = self.policy.status.evaluate(facts).fired[0].code
        single = state.candidates[0] if state.core == "filled" else None
        ranked = sorted(state.candidates, key=lambda c: -c.rank) if state.core == "conflicting" else []
        return {"label": slot.label, "status": status, "value": single.value if single else None,
                "source": single.source if single else None, "confirmed": state.confirmed,
                "evidence": evidence, "events": events, "candidates": [c.out() for c in ranked],
                "inherited_from": state.inherited_from,
                "clarification": state.clarifying[-1] if state.clarifying else None,
                "history": list(state.history)}

    def _validity(self, evidence: list) -> str:
        """The first validity of merge.yaml's `validity_precedence` that some evidence has."""
        seen = {self.index.validity(rid) for rid in evidence}
        order = self.policy.validity_precedence
        return next((v for v in order if v in seen), order[0])


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _layered(events: list[Event], position: dict) -> list[int]:
    """The order the fold walks the events in: interpretation by interpretation as listed; within
    one, by the latest ledger record each cites, scope events before field events at one record,
    then as listed. A field event read from the message that opened a scope folds into that scope
    wherever the model listed it."""
    groups: dict[str, list[int]] = {}
    for i, ev in enumerate(events):
        groups.setdefault(ev.interpretation, []).append(i)

    def key(i: int) -> tuple:
        ev = events[i]
        return max(position.get(r, -1) for r in ev.evidence), ev.layer != "scope", i
    return [i for g in groups.values() for i in sorted(g, key=key)]
