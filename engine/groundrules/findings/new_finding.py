"""A new finding written (log_finding, supersede_finding, a material revalidation): its requested
state checked as a move from the initial one, its row, tags, new evidence records and links, and
its first event, in one store call where the store can."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import events, evidence_links, moves
if TYPE_CHECKING:
    from .call import Call


def create(call: Call, body: dict, evidence: list[dict], *, validated_at: str | None = None,
           event_payload: dict | None = None) -> tuple[int, str, list[dict]]:
    """Insert a finding in its requested state (checked as a move from the initial state, with
    the new evidence as basis), its tags, search terms, evidence links and 'created' event."""
    epistemic = call.states.machine("epistemic")
    lifecycle = call.states.machine("lifecycle")
    links = [{"relation": e["relation"], "method": e["method"], "evidence_id": e.get("evidence_id", ""),
              "source_kind": e["source_kind"], "writer": e["writer"], "source_check": e["source_check"],
              "after_demotion": True} for e in evidence]       # a new finding was never demoted
    if body["epistemic_state"] != epistemic.initial:
        moves.check_move(call, "epistemic", epistemic.initial, body["epistemic_state"], {
            "finding": {"claim_kind": body["claim_kind"], "epistemic_state": epistemic.initial,
                        "lifecycle_state": lifecycle.initial},
            "basis": links, "links": links, "new_links": links, "manual_exception": body.get("manual_exception"),
            "reason": ""})
    finding_id = call.ids.new("F")
    records = evidence_links.new_records(call, evidence)
    seq, seqs = call.tx.add_finding_with_evidence({
        "id": finding_id, "project": call.project, "claim_kind": body["claim_kind"],
        "statement": body["statement"], "details": body["details"], "epistemic_state": body["epistemic_state"],
        "lifecycle_state": lifecycle.initial, "scope": body["scope"], "retrieval_policy": body["retrieval_policy"],
        "created_at": call.now, "last_validated_at": validated_at}, body["tags"], records)
    written = {record["id"]: s for record, s in zip(records, seqs)}
    for resolved in evidence:
        resolved.setdefault("evidence_seq", written.get(resolved["evidence_id"]))
    attached = [evidence_links.link(call, seq, resolved, 1) for resolved in evidence]
    payload = {"evidence_ids": [e["evidence_id"] for e in attached]}
    if body.get("manual_exception"):
        payload["manual_exception"] = body["manual_exception"]
    events.record(call, seq, 1, key="new_finding", to_state=body["epistemic_state"],
                  payload=dict(payload, **(event_payload or {})))
    return seq, finding_id, attached
