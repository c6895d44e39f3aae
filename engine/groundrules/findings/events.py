"""A finding's history: one event per change, of the kind findings_vocabulary.yaml names for the
tool that made it, with the call's tool, time, writer and a new id."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .call import Call


def record(call: Call, finding_seq: int, version: int, *, key: str | None = None, from_state: str | None = None,
           to_state: str | None = None, reason: str = "", payload: dict | None = None) -> None:
    """Append the event this call's tool records (or `key`'s: new_finding) at `version`: its kind
    is a table's word (event_kinds), so a rename there renames the history's kinds."""
    kind = call.vocab.event_kinds[key or call.tool]
    call.tx.add_event({"id": call.ids.new("EV"), "finding_seq": finding_seq, "kind": kind, "tool": call.tool,
                       "from_state": from_state, "to_state": to_state, "reason": reason,
                       "payload": payload or {}, "version": version, "at": call.now, "writer": call.writer})
