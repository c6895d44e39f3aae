"""The evidence ledger's one audited change: a redaction clears a record's personal fields (and
those of the locks inside a source), withdraws the interpretations that cite them and destroys the
data keys every copy was sealed under, in one transaction (docs/erasure.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..core import codes
from ..store import sealing
from . import filing, reach
from .sealed_tx import reading, row_of, writing
if TYPE_CHECKING:
    from ..store.lifecycle import Lifecycle
    from ..store.protocols import EvidenceStore, EvidenceTx
    from .context import LedgerContext


def erase(ctx: LedgerContext, store: EvidenceStore, copies: list[Callable[[str, list], Any]], record_id: str, *,
          by: str, reason: str, project: str, lifecycle: Lifecycle | None = None) -> dict:
    """Replace the personal fields of a record (and of the locks inside a source) by tombstones,
    recording who and why, withdraw the interpretations that cite them, and erase every copy:
    the data keys they were sealed under are destroyed (store/keystore.py), with those of the
    copies elsewhere (`copies`: each answers an erasure plan), in the ledger's transaction before
    it commits. So a redaction is whole or nothing: a copy that cannot be found or a key store
    that fails refuses it before anything changed, and a commit that fails after the keys went
    leaves values that no longer open, which a retry records. Answers the events and what was
    erased where. `lifecycle`: the call's, whose write it is."""
    if not (isinstance(by, str) and by and isinstance(reason, str) and reason):
        raise ctx.refusals.error(codes.PAYLOAD_INVALID, problem="redact needs a non-empty 'by' and 'reason'")
    with reading(ctx, store, project) as tx:
        targets = _targets(ctx, tx, record_id)
        materials = ctx.sealer.materials(r["personal"] for r in targets)
        removed = [filing.personal(ctx, tx, r, materials) or {} for r in targets]
    plans = [plan(project, removed) for plan in copies]

    def attempt(tx: EvidenceTx) -> tuple[list[dict], list[dict], list[str]]:
        rows = _targets(ctx, tx, record_id)
        at = ctx.clock()
        events = [_event(ctx, rows[0], by, reason, at, None)]
        events += [_event(ctx, r, by, reason, at, events[0]["id"]) for r in rows[1:]]
        withdrawn = _citing(ctx, tx, events)
        if withdrawn:                     # their values and quotes copy what is being removed
            events[0]["withdrawn_interpretations"] = [w["id"] for w in withdrawn]
        tx.clear(events)
        tx.withdraw([w["id"] for w in withdrawn], events[0]["id"])
        keys = [r["personal"]["key"] for r in rows if sealing.is_sealed(r["personal"])]
        keys += [w["sealed_key"] for w in withdrawn if w.get("sealed_key")]
        keys += [k for plan in plans for k in plan.keys]
        ctx.sealer.destroy(keys)          # the erasure itself: every copy sealed under them is unreadable
        return events, withdrawn, keys
    events, withdrawn, keys = writing(ctx, store, project, attempt, lifecycle)
    elsewhere = {}
    for plan in plans:
        elsewhere.update(plan.finish(events[0]["id"]))
    store.forget()
    return {"redactions": events,
            "erased": {"records": [e["record"] for e in events], "interpretations": [w["id"] for w in withdrawn],
                       **elsewhere, "keys_destroyed": len(keys)}}


def _targets(ctx: LedgerContext, tx: EvidenceTx, record_id: Any) -> list[dict]:
    """The rows a redaction of `record_id` clears: its own, and a source's locks not yet redacted."""
    owner = tx.owner(record_id) if isinstance(record_id, str) else None
    if owner is None:
        raise ctx.refusals.error(codes.UNKNOWN_EVIDENCE, ref=str(record_id), at="redact")
    row = row_of(tx, owner)
    if row["redaction_id"] is not None:
        raise ctx.refusals.error(codes.ALREADY_REDACTED, record=row["id"], redaction=row["redaction_id"])
    rows = [row]
    sid = (row["message_id"] or row["id"]) if ctx.catalogue.records[row["type"]].locked else None
    if sid is not None:                       # a source's locks copy its text: they go with it
        rows += [r for r in tx.locks_inside([sid]) if r["redaction_id"] is None]
    return rows


def _citing(ctx: LedgerContext, tx: EvidenceTx, events: list[dict]) -> list[dict]:
    """The stored interpretations that cite a record being redacted (by record, message or lock
    id, or a span of its text), in any event or disposition: their rows ({id, sealed_key})."""
    names: set = set()
    keys: set = set()
    for event in events:
        row = row_of(tx, event["record"])
        names.update(n for n in (row["id"], row["message_id"], row["lock_id"]) if n)
        keys.add(reach.key_of(ctx, row)[0])
    cited = []
    for row in tx.interpretations_at(tx.keyed(sorted(keys))):    # those that touch it, by their keys
        if row["body"] is None:
            continue
        body = row["body"]
        refs = {d.get("lock") for d in body.get("dispositions", []) if isinstance(d, dict)}
        for event in body.get("events", []):
            for cite in event.get("evidence", []) if isinstance(event, dict) else []:
                refs.add(cite.get("message_id") if isinstance(cite, dict) else cite)
            refs.update(event.get("evidence_ids", []) if isinstance(event, dict) else [])
        if refs & names:
            cited.append({"id": row["id"], "sealed_key": row.get("sealed_key")})
    return cited


def _event(ctx: LedgerContext, row: dict, by: str, reason: str, at: str, cascade_of: str | None) -> dict:
    event = {"id": ctx.ids(), "record": row["id"], "by": by, "reason": reason, "at": at,
             "fields": list(row["digests"])}
    if cascade_of:
        event["cascade_of"] = cascade_of
    return event
