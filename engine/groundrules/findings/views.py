"""Rows -> the plain dicts tools return, in a fixed key order."""
from __future__ import annotations



def finding(row: dict, tags: list[str]) -> dict:
    return {"finding_id": row["id"], "project": row["project"], "claim_kind": row["claim_kind"],
            "statement": row["statement"], "details": row["details"],
            "epistemic_state": row["epistemic_state"], "lifecycle_state": row["lifecycle_state"],
            "scope": row["scope"], "tags": tags, "retrieval_policy": row["retrieval_policy"],
            "version": row["version"], "created_at": row["created_at"], "updated_at": row["updated_at"],
            "last_validated_at": row["last_validated_at"]}


def summary(row: dict, tags: list[str], applicability: dict) -> dict:
    """A query hit: no details, and the applicability verdict computed for this caller."""
    return {"finding_id": row["id"], "claim_kind": row["claim_kind"], "statement": row["statement"],
            "epistemic_state": row["epistemic_state"], "lifecycle_state": row["lifecycle_state"],
            "tags": tags, "scope": row["scope"], "version": row["version"],
            "last_validated_at": row["last_validated_at"],
            "applicability": {k: applicability[k] for k in ("verdict", "label", "current", "detail")}}


def excerpt(text: str, limit: int | None) -> tuple[str, bool]:
    if limit is None or len(text) <= limit:
        return text, False
    return text[:limit] + "…", True


def evidence(row: dict, limit: int | None, support: dict) -> dict:
    """One evidence link; `limit` chars of excerpt (None: all of it); who linked it, what
    groundrules found checking its excerpt, and `support`: whether it counts as independent support
    (rules/independent_support.yaml's row) and whether it came after the finding's last demotion."""
    text, cut = excerpt(row["excerpt"], limit)
    return {"evidence_id": row["id"], "source_kind": row["source_kind"], "source_ref": row["source_ref"],
            "locator": row["locator"], "revision": row["revision"], "content_hash": row["content_hash"],
            "excerpt": text, "excerpt_truncated": cut, "relation": row["relation"], "method": row["method"],
            "rationale": row["rationale"], "linked_at": row["linked_at"], "writer": row["writer"],
            "source_check": row["source_check"], "support": support}


def event(row: dict) -> dict:
    return {"event_id": row["id"], "kind": row["kind"], "tool": row["tool"], "from_state": row["from_state"],
            "to_state": row["to_state"], "reason": row["reason"], "payload": row["payload"],
            "version": row["version"], "at": row["at"], "writer": row["writer"]}


def relation(row: dict) -> dict:
    return {"direction": row["direction"], "relation": row["relation"], "finding_id": row["id"],
            "statement": row["statement"], "epistemic_state": row["epistemic_state"],
            "lifecycle_state": row["lifecycle_state"], "note": row["note"], "created_at": row["created_at"]}


def document(row: dict) -> dict:
    return {"link_id": row["id"], "target_kind": row["target_kind"], "target": row["target"],
            "relation": row["relation"], "note": row["note"], "created_at": row["created_at"]}


def proposal(row: dict) -> dict:
    return {"proposal_id": row["id"], "status": row["status"], "rule_text": row["rule_text"],
            "target_path": row["target_path"], "rationale": row["rationale"], "version": row["version"],
            "created_at": row["created_at"], "decided_at": row["decided_at"], "decided_by": row["decided_by"]}
