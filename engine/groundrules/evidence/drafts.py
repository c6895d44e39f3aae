"""A drafted interpretation: every lock a model still has to place, disposed of by default.

Writing an interpretation by hand means an id for it and a disposition for every lock, including
the irrelevant ones; forgetting one used to fail the fold. A draft lists the locks of one message
(or, without one, every lock no stored interpretation disposes of), each with the event catalogue's
default disposition (`draft.dismissed`: still to be judged) and, beside the draft, the lock's kind,
quote and the slots whose merge policy takes that kind, for the caller to edit: a lock moved to a
slot needs the event that uses it; one left as drafted decides nothing.
"""
from __future__ import annotations

from typing import Any

from .catalogue import EventCatalogue
from .policy import MergePolicy


def interpretation_draft(records: list, stored: list, catalogue: EventCatalogue, policy: MergePolicy,
                         new_id: str, message_id: str | None = None) -> dict:
    """{interpretation: {id, events: [], dispositions}, locks: [{lock, record, kind, quote, valid, slots}]}."""
    disposed = {d.get("lock") for interp in stored for d in interp.get("dispositions", ())}
    sources = None if message_id is None else {
        r.get("message_id", r["id"]) for r in records if message_id in (r["id"], r.get("message_id"))}
    dispositions, locks = [], []
    for record in records:
        if record.get("type") != "lock":
            continue
        lock = record["lock"]
        if sources is not None:
            if lock["locator"]["message_id"] not in sources:
                continue
        elif record["id"] in disposed or lock["id"] in disposed:
            continue
        dispositions.append({"lock": lock["id"], "dismissed": catalogue.draft["dismissed"]})
        quote: Any = lock["quote"] if isinstance(lock["quote"], str) else None   # a redacted one reads as none
        locks.append({"lock": lock["id"], "record": record["id"], "kind": lock["kind"], "quote": quote,
                      "valid": lock["valid"],
                      "slots": [sid for sid, slot in policy.slots.items() if lock["kind"] in slot.lock_kinds]})
    return {"interpretation": {"id": new_id, "events": [], "dispositions": dispositions}, "locks": locks}
