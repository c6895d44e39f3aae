"""What one tool call may use, and the steps every tool shares: refusals worded by the vocabulary,
finding lookup, version checks, events, state-machine checks, evidence resolution and creation.

Everything here is domain: it reads the tables and asks the store (one transaction, `tx`) to find
and keep rows. Which SQL, which database, is the store's business.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import GroundrulesError
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..rulebook import Rulebook
from . import arguments, events, moves
from .clock import Ids
from .write_warnings import WarningRows

STATES_TABLE = "finding_states"
VOCABULARY_TABLE = "findings_vocabulary"
APPLICABILITY_TABLE = "applicability"
CHANGE_TABLE = "findings_material_change"


class Call:
    """One tool call: its transaction, tables, project, caller, time and ids."""

    def __init__(self, book: Rulebook, tx: Any, tool: str, project: str, principal: str, now: str, ids: Ids,
                 rules_root: Path | None = None, role: str = ""):
        self.tx, self.tool, self.project, self.principal = tx, tool, project, principal
        self.role = role                  # the caller's, as Service.call authenticated it: moves may need one
        self.rules_root = rules_root      # the project root rule documents live under (approve_rule)
        self.book = book
        self.vocab = book.table(VOCABULARY_TABLE)
        self.states = book.table(STATES_TABLE)
        self.names = self.vocab.acts_on
        self.ids = ids
        self.now = now
        self.warning_rows = WarningRows(book)
        self._after: list[Callable[[], None]] = []

    def after_commit(self, effect: Callable[[], None]) -> None:
        """Register an effect outside the database (writing an approved rule) to run once the
        transaction has committed: the decision is recorded first, the effect is idempotent."""
        self._after.append(effect)

    def committed(self) -> None:
        while self._after:
            self._after.pop(0)()

    # -- refusals -------------------------------------------------------------------------
    def refuse(self, code: str, message: str, *, field: str | None = None, **params: Any) -> GroundrulesError:
        """The refusal `code` worded by the vocabulary's message `message` (which may name {field})."""
        return GroundrulesError(code, self.vocab.message(message, field=field, **params), field=field)

    def invalid(self, field: str, problem: str) -> GroundrulesError:
        return self.refuse("INVALID_ARGUMENT", "invalid_argument", field=field, problem=problem)

    # -- evidence --------------------------------------------------------------------------
    def resolve_evidence_items(self, items: list, field: str, default_relation: str | None = None,
                               required_relation: str | None = None) -> list[dict]:
        """resolve_evidence for each item (`field[i]`), the sources they name asked for at once."""
        self.tx.evidence_by_sources(self.project, [
            (item["source_ref"], item.get("locator", "")) for item in items
            if isinstance(item, dict) and "evidence_id" not in item
            and isinstance(item.get("source_ref"), str) and isinstance(item.get("locator", ""), str)])
        return [self.resolve_evidence(item, f"{field}[{i}]", default_relation, required_relation)
                for i, item in enumerate(items)]

    def resolve_evidence(self, item: dict, field: str, default_relation: str | None = None,
                         required_relation: str | None = None) -> dict:
        """Validate one evidence item and find (not yet write) the evidence it names."""
        relation = item.get("relation", default_relation)
        if relation is None:
            raise self.invalid(f"{field}.relation", "missing required argument relation")
        arguments.choose(self, f"{field}.relation", relation, self.vocab.evidence_relations)
        if required_relation is not None and relation != required_relation:
            raise self.refuse("INVALID_ARGUMENT", "evidence_relation", field=field, required=required_relation)
        arguments.choose(self, f"{field}.method", item["method"], self.vocab.methods)
        link = {"relation": relation, "method": item["method"], "rationale": item.get("rationale", "")}
        if "evidence_id" in item:
            if any(k in item for k in ("source_kind", "source_ref", "locator", "revision", "excerpt", "content_hash")):
                raise self.refuse("INVALID_ARGUMENT", "evidence_identity", field=field)
            found = self.tx.evidence(self.project, item["evidence_id"])
            if found is None:
                raise self.refuse("NOT_FOUND", "evidence_not_found", evidence_id=item["evidence_id"])
            return dict(link, evidence_seq=found["seq"], evidence_id=found["id"], source_kind=found["source_kind"],
                        reuse="reused")
        if "source_kind" not in item or "source_ref" not in item:
            raise self.refuse("INVALID_ARGUMENT", "evidence_identity", field=field)
        excerpt = item.get("excerpt", "")
        digest = content_hash(excerpt)
        if "content_hash" in item and item["content_hash"] != digest:
            # seed 001 §3: reuse is decided on the digest of what is stored, never on the caller's word
            raise self.refuse("INVALID_ARGUMENT", "content_hash_mismatch", field=f"{field}.content_hash")
        record = {"source_kind": item["source_kind"], "source_ref": item["source_ref"],
                  "locator": item.get("locator", ""), "revision": item.get("revision", ""),
                  "content_hash": digest, "excerpt": excerpt}
        link["source_kind"] = record["source_kind"]
        same, others = self._same_source(record)
        if same is not None:
            return dict(link, evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
        return dict(link, record=record, reuse="conflict" if others else "new")

    def _same_source(self, record: dict) -> tuple[dict | None, bool]:
        """(the evidence with the same source, kind, revision and content hash, or None; whether
        evidence with the same source_ref and locator exists at all)."""
        same_ref = self.tx.evidence_by_source(self.project, record["source_ref"], record["locator"])
        for row in same_ref:
            if (row["source_kind"], row["revision"], row["content_hash"]) == (
                    record["source_kind"], record["revision"], record["content_hash"]):
                return row, True
        return None, bool(same_ref)

    def attach(self, finding_seq: int, resolved: dict) -> dict:
        """Write the evidence (if new) and its link; returns the link with evidence_id and `linked`.
        Evidence resolved as new is looked up once more: an identical item earlier in the same call
        has written it by now, and is reused rather than duplicated."""
        if "record" in resolved:
            same, _ = self._same_source(resolved["record"])
            if same is not None:
                del resolved["record"]
                resolved.update(evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
        if "record" in resolved:
            record = self._stamped(resolved.pop("record"))
            resolved.update(evidence_seq=self.tx.add_evidence(record), evidence_id=record["id"])
        return self._link(finding_seq, resolved)

    def _stamped(self, record: dict) -> dict:
        """A new evidence record as it is written: its id, project and time."""
        return dict(record, id=self.ids.new("E"), project=self.project, created_at=self.now)

    def _link(self, finding_seq: int, resolved: dict) -> dict:
        resolved["linked"] = self.tx.link_evidence(finding_seq, resolved["evidence_seq"], resolved["relation"],
                                                   resolved["method"], resolved["rationale"], self.now)
        return resolved

    def _new_records(self, evidence: list[dict]) -> list[dict]:
        """The evidence records a new finding's items resolved as new must write (attach's rule,
        decided for all items before any is written, so that a store can write them with the
        finding): each once, an item identical to an earlier new one reusing its record."""
        records: list[dict] = []
        first: dict[tuple, dict] = {}
        for resolved in evidence:
            if "record" not in resolved:
                continue
            record = resolved.pop("record")
            key = tuple(record[k] for k in ("source_kind", "source_ref", "locator", "revision", "content_hash"))
            if key in first:
                resolved.update(evidence_id=first[key]["id"], reuse="reused")
                continue
            first[key] = self._stamped(record)
            records.append(first[key])
            resolved["evidence_id"] = first[key]["id"]
        return records

    def create(self, body: dict, evidence: list[dict], *, validated_at: str | None = None,
               event_payload: dict | None = None) -> tuple[int, str, list[dict]]:
        """Insert a finding in its requested state (checked as a move from the initial state, with
        the new evidence as basis), its tags, search terms, evidence links and 'created' event."""
        epistemic = self.states.machine("epistemic")
        lifecycle = self.states.machine("lifecycle")
        links = [{"relation": e["relation"], "method": e["method"], "evidence_id": e.get("evidence_id", ""),
                  "source_kind": e["source_kind"]} for e in evidence]
        if body["epistemic_state"] != epistemic.initial:
            moves.check_move(self, "epistemic", epistemic.initial, body["epistemic_state"], {
                "finding": {"claim_kind": body["claim_kind"], "epistemic_state": epistemic.initial,
                            "lifecycle_state": lifecycle.initial},
                "basis": links, "links": links, "manual_exception": body.get("manual_exception"),
                "reason": ""})
        finding_id = self.ids.new("F")
        records = self._new_records(evidence)
        seq, seqs = self.tx.add_finding_with_evidence({
            "id": finding_id, "project": self.project, "claim_kind": body["claim_kind"],
            "statement": body["statement"], "details": body["details"], "epistemic_state": body["epistemic_state"],
            "lifecycle_state": lifecycle.initial, "scope": body["scope"], "retrieval_policy": body["retrieval_policy"],
            "created_at": self.now, "last_validated_at": validated_at}, body["tags"], records)
        written = {record["id"]: s for record, s in zip(records, seqs)}
        for resolved in evidence:
            resolved.setdefault("evidence_seq", written.get(resolved["evidence_id"]))
        attached = [self._link(seq, resolved) for resolved in evidence]
        payload = {"evidence_ids": [e["evidence_id"] for e in attached]}
        if body.get("manual_exception"):
            payload["manual_exception"] = body["manual_exception"]
        events.record(self, seq, 1, key="new_finding", to_state=body["epistemic_state"],
                      payload=dict(payload, **(event_payload or {})))
        return seq, finding_id, attached


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
