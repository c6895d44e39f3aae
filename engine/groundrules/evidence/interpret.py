"""Checking an interpretation (the model's output) against the ledger, its locks and the tables.

Nothing here judges meaning. It refuses, with a stable code, what can be decided mechanically:
citations that do not resolve or do not quote the text, drafts and derived records cited as raw
evidence, values that rest on no valid lock or contradict the lock they rest on, and locks the
interpretation lost (never disposed of, or assigned to a slot no event then uses). A refused
interpretation is recomputed by the host; the ledger and its locks are never patched to fit it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core import codes
from . import records as rec

if TYPE_CHECKING:
    from .catalogue import EventCatalogue
    from .index import LedgerIndex
    from .policy import MergePolicy

NO_VALUE = object()       # an event that carries no value (a decline, a confirm of the value held)


@dataclass
class Event:
    """One event, checked: its citations resolved to records, its op and layer known."""

    id: str
    interpretation: str
    type: str
    op: str
    layer: str
    slot: str | None
    value: Any
    scope: str | None
    readings: list | None
    parent: str | None
    citations: list
    evidence: list
    resolves: tuple = ()
    at: str = ""
    locks: list = field(default_factory=list)     # lock record ids the citations cover
    turn: int | None = None                       # the conversation turn it was read at (shown, not folded)
    activity: dict = field(default_factory=dict)  # activity events: their action / outcome / tool


@dataclass
class Checked:
    events: list
    dispositions: dict        # lock record id -> {"slot"|"dismissed", "interpretation"}
    pending: tuple = ()       # lock record ids no interpretation has disposed of yet (a ledger's fold)


class Checker:
    def __init__(self, index: LedgerIndex, catalogue: EventCatalogue, policy: MergePolicy,
                 redaction_key: bytes | None = None, *, pending_locks: bool = False):
        self.index, self.catalogue, self.policy = index, catalogue, policy
        self.redaction_key = redaction_key
        # a ledger's fold: a lock no interpretation disposed of yet is pending, not lost (issue 32, item 3)
        self.pending_locks = pending_locks
        self.refuse = index.refusals.error

    def check(self, interpretations: list) -> Checked:
        dispositions = self._dispositions(interpretations)
        events: list[Event] = []
        ids: set = set()
        used: set = set()                  # (lock record id, slot) a field event rests on
        for i, interp in enumerate(interpretations):
            for j, raw in enumerate(interp["events"]):
                at = f"interpretations[{i}].events[{j}]"
                if raw["id"] in ids:
                    raise self.refuse(codes.DUPLICATE_ID, id=raw["id"], at=at)
                ids.add(raw["id"])
                event = self._event(raw, interp["id"], at, dispositions)
                if event.layer == "field":
                    for lock_rid in event.locks:
                        used.add((lock_rid, event.slot))
                events.append(event)
        pending = self._lost_locks(dispositions, used)
        return Checked(events, dispositions, pending)

    # -- dispositions and lost locks ------------------------------------------------------------
    def _dispositions(self, interpretations: list) -> dict:
        out: dict = {}
        seen_interp: set = set()
        for i, interp in enumerate(interpretations):
            if interp["id"] in seen_interp:
                raise self.refuse(codes.DUPLICATE_ID, id=interp["id"], at=f"interpretations[{i}]")
            seen_interp.add(interp["id"])
            for j, d in enumerate(interp["dispositions"]):
                at = f"interpretations[{i}].dispositions[{j}]"
                ref = self.index.refs.get(d["lock"])
                if ref is None or not rec.is_lock(self.index.entries[ref[1]].record):
                    raise self.refuse(codes.UNKNOWN_EVIDENCE, ref=d["lock"], at=at)
                if "slot" in d:
                    self._known_slot(d["slot"], at + ".slot")
                    out[ref[1]] = {"slot": d["slot"], "interpretation": interp["id"]}
                else:
                    out[ref[1]] = {"dismissed": d["dismissed"], "interpretation": interp["id"]}
        return out

    def _lost_locks(self, dispositions: dict, used: set) -> tuple:
        """The locks pending (a ledger's fold: none disposed of them yet); refuses a lost lock."""
        entries = self.index.entries
        locks = self.index.lock_records()
        missing = [rid for rid in locks if rid not in dispositions]
        if missing and not self.pending_locks:
            raise self.refuse(codes.LOCK_DROPPED, locks=[entries[r].record["lock"]["id"] for r in missing],
                              why="no disposition")
        unused = [rid for rid in locks if "slot" in dispositions.get(rid, {})
                  and (rid, dispositions[rid]["slot"]) not in used]
        if unused:
            raise self.refuse(codes.LOCK_DROPPED, locks=[entries[r].record["lock"]["id"] for r in unused],
                              why="assigned to a slot that no event uses")
        return tuple(missing)

    # -- one event ------------------------------------------------------------------------------
    def _event(self, raw: dict, interp_id: str, at: str, dispositions: dict) -> Event:
        etype = self.catalogue.events.get(raw["type"])
        if etype is None or raw["type"] not in self.policy.ops:
            raise self.refuse(codes.UNKNOWN_EVENT, name=raw["type"], at=at + ".type")
        layer = self.policy.layer(raw["type"])
        if layer != etype.layer:
            raise self.refuse(codes.FOLD_INTERNAL, problem=f"events.yaml and merge.yaml disagree on the layer "
                              f"of '{raw['type']}'")
        problem = etype.shape_problem(raw)
        if problem:
            raise self.refuse(problem[0], event=raw["id"], type=raw["type"], key=problem[1])
        slot = raw.get("slot")
        if slot is not None:
            self._known_slot(slot, at + ".slot")
        scope = raw.get("scope")
        readings = self._readings(raw, at) if isinstance(scope, dict) else None
        citations, evidence, locks = [], [], []
        for n, cite in enumerate(raw["evidence"]):
            c, covered = self._cite(cite, f"{at}.evidence[{n}]")
            citations.append(c)
            if c["record"] not in evidence:
                evidence.append(c["record"])
            locks += [rid for rid in covered if rid not in locks]
        event = Event(raw["id"], interp_id, raw["type"], self.policy.ops[raw["type"]], layer, slot,
                      raw.get("value", NO_VALUE), scope if isinstance(scope, str) else None, readings,
                      raw.get("parent"), citations, evidence, tuple(raw.get("resolves", ())), at, locks,
                      raw.get("turn"), {k: raw[k] for k in ("action", "outcome", "tool") if k in raw})
        if layer == "field" and event.value is not NO_VALUE:
            self._grounded(event, raw, dispositions)
        return event

    def _known_slot(self, slot: str, at: str) -> None:
        if slot not in self.policy.slots:
            raise self.refuse(codes.UNKNOWN_SLOT, slot=slot, at=at)

    def _readings(self, raw: dict, at: str) -> list:
        if "value" not in raw:           # the readings are places for a value: without one there is no question
            raise self.refuse(codes.EVENT_INCOMPLETE, event=raw["id"], type=raw["type"], key="value")
        out, ids = [], set()
        for n, r in enumerate(raw["scope"]["unresolved"]):
            where = f"{at}.scope.unresolved[{n}]"
            if r["id"] in ids:
                raise self.refuse(codes.DUPLICATE_ID, id=r["id"], at=where)
            ids.add(r["id"])
            rtype = r.get("type", raw["type"])
            if rtype not in self.catalogue.events or rtype not in self.policy.ops:
                raise self.refuse(codes.UNKNOWN_EVENT, name=rtype, at=where + ".type")
            if self.policy.ops[rtype] not in self.policy.reading_ops:
                raise self.refuse(codes.EVENT_INVALID, event=raw["id"], type=rtype, key="scope.unresolved")
            slot = r.get("slot", raw.get("slot"))
            if slot is None:
                raise self.refuse(codes.EVENT_INCOMPLETE, event=raw["id"], type=rtype, key="slot")
            self._known_slot(slot, where + ".slot")
            reading = {"id": r["id"], "type": rtype, "slot": slot}
            for key in ("scope", "new_scope"):
                if key in r:
                    reading[key] = r[key]
            out.append(reading)
        return out

    # -- citations ------------------------------------------------------------------------------
    def _cite(self, cite: Any, at: str) -> tuple[dict, list]:
        index = self.index
        if isinstance(cite, str):
            ref = index.refs.get(cite)
            if ref is None:
                raise self.refuse(codes.UNKNOWN_EVIDENCE, ref=cite, at=at)
            kind, rid = ref
            record = index.entries[rid].record
            self._raw(rid, cite, at)
            if rec.is_lock(record):
                covered = [rid]
            else:                            # a raw source covers the locks inside it
                sid = index.source_ids.get(rid)
                covered = list(index.locks_in[sid]) if sid is not None else []
            return {"ref": cite, "kind": kind, "record": rid}, covered
        mid = cite["message_id"]
        source = index.sources.get(mid)
        if source is None:
            raise self.refuse(codes.UNKNOWN_EVIDENCE, ref=mid, at=at + ".message_id")
        rid = source.record_id
        start, end = cite["start"], cite["end"]
        problem = rec.span_problem(source.text, start, end, cite["quote"])
        if problem == "redacted":
            raise self.refuse(codes.EVIDENCE_REDACTED, ref=rid, at=at, redaction=source.text["redaction"])
        if problem:
            raise self.refuse(codes.QUOTE_MISMATCH, at=at, message_id=mid, start=start, end=end)
        self._raw(rid, mid, at)
        covered = [lid for lid in index.locks_in[mid]
                   if start <= index.entries[lid].record["lock"]["locator"]["start"]
                   and index.entries[lid].record["lock"]["locator"]["end"] <= end]
        return {"ref": mid, "kind": "span", "record": rid, "start": start, "end": end}, covered

    def _raw(self, rid: str, ref: str, at: str) -> None:
        entry = self.index.entries[rid]
        rtype = self.catalogue.records[entry.record["type"]]
        facts = {"record": entry.record, "message": entry.message} if entry.message else {"record": entry.record}
        if not rtype.is_raw(facts):
            raise self.refuse(codes.NOT_RAW_EVIDENCE, ref=ref, at=at, reason=rtype.not_raw)

    # -- values against locks -------------------------------------------------------------------
    def _grounded(self, event: Event, raw: dict, dispositions: dict) -> None:
        slot = self.policy.slots[event.slot]
        if not slot.lock_kinds:
            return
        entries = self.index.entries
        direct = {c["record"] for c in event.citations if rec.is_lock(entries[c["record"]].record)}
        assigned = []
        for lock_rid in event.locks:
            lock = entries[lock_rid].record["lock"]
            disposition = dispositions.get(lock_rid, {})
            if disposition.get("slot") == event.slot:
                if lock["valid"] and lock["kind"] in slot.lock_kinds:
                    assigned.append(lock)
            elif lock_rid in direct and disposition:
                shown = (f"slot '{disposition['slot']}'" if "slot" in disposition
                         else f"dismissed ({disposition['dismissed']})")
                raise self.refuse(codes.DISPOSITION_CONFLICT, event=event.id, lock=lock["id"], slot=event.slot,
                                  disposition=shown)
        if slot.lock_required and not assigned:
            raise self.refuse(codes.INSUFFICIENT_EVIDENCE, event=event.id, slot=event.slot,
                              kinds=list(slot.lock_kinds))
        if slot.lock_match == "normalized_value" and assigned and not any(
                rec.value_matches(event.value, lock["normalized_value"], self.redaction_key) for lock in assigned):
            raise self.refuse(codes.LOCK_CONFLICT, event=event.id, slot=event.slot, lock=assigned[0]["id"])
