"""Resolved evidence written: each new record once (an item identical to an earlier one in the
same call reuses it), stamped with an id, project and time, and linked to its finding by the call's writer."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .evidence_items import same_source
if TYPE_CHECKING:
    from .call import Call

KEY = ("source_kind", "source_ref", "locator", "revision", "content_hash")   # what makes two records one


def attach(call: Call, finding_seq: int, resolved: dict, version: int) -> dict:
    """Write the evidence (if new) and its link, made at the finding's `version` (the one this call
    leaves it at); returns the link with evidence_id and `linked`.
    Evidence resolved as new is looked up once more: an identical item earlier in the same call
    has written it by now, and is reused rather than duplicated."""
    if "record" in resolved:
        same, _ = same_source(call, resolved["record"])
        if same is not None:
            del resolved["record"]
            resolved.update(evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
    if "record" in resolved:
        record = _stamped(call, resolved.pop("record"))
        resolved.update(evidence_seq=call.tx.add_evidence(record), evidence_id=record["id"])
    return link(call, finding_seq, resolved, version)


def new_records(call: Call, evidence: list[dict]) -> list[dict]:
    """The evidence records a new finding's items resolved as new must write (attach's rule,
    decided for all items before any is written, so that a store can write them with the
    finding): each once, an item identical to an earlier new one reusing its record."""
    records: list[dict] = []
    first: dict[tuple, dict] = {}
    for resolved in evidence:
        if "record" not in resolved:
            continue
        record = resolved.pop("record")
        key = tuple(record[k] for k in KEY)
        if key in first:
            resolved.update(evidence_id=first[key]["id"], reuse="reused")
            continue
        first[key] = _stamped(call, record)
        records.append(first[key])
        resolved["evidence_id"] = first[key]["id"]
    return records


def link(call: Call, finding_seq: int, resolved: dict, version: int) -> dict:
    """Link written evidence to the finding, stamped with the call's writer and the finding's
    `version` it was linked at (a guard tells links made after a demotion by it); `linked` says
    whether the link is new."""
    resolved["finding_version"] = version
    resolved["linked"] = call.tx.link_evidence(finding_seq, resolved["evidence_seq"], resolved, call.now)
    return resolved


def _stamped(call: Call, record: dict) -> dict:
    """A new evidence record as it is written: its id, project and time."""
    return dict(record, id=call.ids.new("E"), project=call.project, created_at=call.now)
