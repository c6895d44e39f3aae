"""The evidence items a caller gives, checked and matched to the evidence the project holds:
each resolves to stored evidence it reuses, to a new record, or to a new record that conflicts
with another revision of the same source. Nothing is written here (evidence_links does that).

Seed 001 §3: evidence is reused when the source, kind, revision and the digest of the stored text
agree; the caller's word about the digest is checked, never trusted.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..core import codes
from ..core.errors import GroundrulesError
from . import source_check
from .arguments import choose
from .call import PROVENANCE_TABLE
if TYPE_CHECKING:
    from .call import Call

IDENTITY = ("source_kind", "source_ref", "locator", "revision", "excerpt", "content_hash")


def _signer(call: Call, item: dict, field: str) -> str:
    """The signer whose verified signature vouches for the item (a runner's result an agent relays
    keeps its weight: rules/independent_support.yaml reads writer.signer); refused otherwise."""
    from ..provenance import signatures            # joserfc, imported by the calls that carry a signature
    try:
        signer = signatures.verify(item, call.trust)
    except signatures.SignatureRefused as exc:
        raise call.refuse(codes.INVALID_ARGUMENT, f"signature_{exc.reason}", field=f"{field}.signature") from None
    if not signatures.vouches(signer, method=item["method"]):
        raise call.refuse(codes.INVALID_ARGUMENT, "signer_not_allowed", field=f"{field}.signature",
                          signer=signer.name, method=item["method"])
    return signer.name


def resolve_all(call: Call, items: list, field: str, default_relation: str | None = None,
                required_relation: str | None = None) -> list[dict]:
    """resolve for each item (`field[i]`), the sources they name asked for at once."""
    call.tx.evidence_by_sources(call.project, [
        (item["source_ref"], item.get("locator", "")) for item in items
        if isinstance(item, dict) and "evidence_id" not in item
        and isinstance(item.get("source_ref"), str) and isinstance(item.get("locator", ""), str)])
    return [resolve(call, item, f"{field}[{i}]", default_relation, required_relation)
            for i, item in enumerate(items)]


def resolve(call: Call, item: dict, field: str, default_relation: str | None = None,
            required_relation: str | None = None) -> dict:
    """Validate one evidence item and find (not yet write) the evidence it names."""
    relation = item.get("relation", default_relation)
    if relation is None:
        raise call.refuse(codes.INVALID_ARGUMENT, "invalid_argument", field=f"{field}.relation",
                          problem="missing required argument relation")
    choose(call, f"{field}.relation", relation, call.vocab.evidence_relations)
    if required_relation is not None and relation != required_relation:
        raise call.refuse(codes.INVALID_ARGUMENT, "evidence_relation", field=field, required=required_relation)
    choose(call, f"{field}.method", item["method"], call.vocab.methods)
    provenance = call.book.table(PROVENANCE_TABLE)
    if call.role:           # a library caller naming no role is the database's owner (finding_provenance.yaml)
        refused = provenance.refusal(call.role, item["method"], relation)
        if refused is not None:
            raise GroundrulesError(codes.PERMISSION_DENIED, refused, field=field)
    writer = call.writer if "signature" not in item else dict(call.writer, signer=_signer(call, item, field))
    link = {"relation": relation, "method": item["method"], "rationale": item.get("rationale", ""),
            "writer": writer}
    checked = call.rules_root if item["method"] in provenance.checked_methods else None
    if "evidence_id" in item:
        if any(k in item for k in IDENTITY):
            raise call.refuse(codes.INVALID_ARGUMENT, "evidence_identity", field=field)
        found = call.tx.evidence(call.project, item["evidence_id"])
        if found is None:
            raise call.refuse(codes.NOT_FOUND, "evidence_not_found", evidence_id=item["evidence_id"])
        return dict(link, evidence_seq=found["seq"], evidence_id=found["id"], source_kind=found["source_kind"],
                    reuse="reused", source_check=source_check.check(checked, found))
    if "source_kind" not in item or "source_ref" not in item:
        raise call.refuse(codes.INVALID_ARGUMENT, "evidence_identity", field=field)
    excerpt = item.get("excerpt", "")
    digest = content_hash(excerpt)
    if "content_hash" in item and item["content_hash"] != digest:
        # docs/spec/findings.md, evidence: reuse is decided on the digest of what is stored, never on the caller's word
        raise call.refuse(codes.INVALID_ARGUMENT, "content_hash_mismatch", field=f"{field}.content_hash")
    record = {"source_kind": item["source_kind"], "source_ref": item["source_ref"],
              "locator": item.get("locator", ""), "revision": item.get("revision", ""),
              "content_hash": digest, "excerpt": excerpt}
    link.update(source_kind=record["source_kind"], source_check=source_check.check(checked, record))
    same, others = same_source(call, record)
    if same is not None:
        return dict(link, evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
    return dict(link, record=record, reuse="conflict" if others else "new")


def same_source(call: Call, record: dict) -> tuple[dict | None, bool]:
    """(the evidence with the same source, kind, revision and content hash, or None; whether
    evidence with the same source_ref and locator exists at all)."""
    same_ref = call.tx.evidence_by_source(call.project, record["source_ref"], record["locator"])
    for row in same_ref:
        if (row["source_kind"], row["revision"], row["content_hash"]) == (
                record["source_kind"], record["revision"], record["content_hash"]):
            return row, True
    return None, bool(same_ref)


def content_hash(text: str) -> str:
    """The digest reuse is decided on: of the excerpt as stored, UTF-8."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
