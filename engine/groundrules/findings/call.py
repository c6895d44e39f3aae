"""What one tool call may use, and the steps every tool shares: refusals worded by the vocabulary,
finding lookup, version checks, events, state-machine checks, evidence resolution and creation.

Everything here is domain: it reads the tables and asks the store (one transaction, `tx`) to find
and keep rows. Which SQL, which database, is the store's business.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import GroundrulesError
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..rulebook import Rulebook
from . import events, evidence_links, moves
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
        records = evidence_links.new_records(self, evidence)
        seq, seqs = self.tx.add_finding_with_evidence({
            "id": finding_id, "project": self.project, "claim_kind": body["claim_kind"],
            "statement": body["statement"], "details": body["details"], "epistemic_state": body["epistemic_state"],
            "lifecycle_state": lifecycle.initial, "scope": body["scope"], "retrieval_policy": body["retrieval_policy"],
            "created_at": self.now, "last_validated_at": validated_at}, body["tags"], records)
        written = {record["id"]: s for record, s in zip(records, seqs)}
        for resolved in evidence:
            resolved.setdefault("evidence_seq", written.get(resolved["evidence_id"]))
        attached = [evidence_links.link(self, seq, resolved) for resolved in evidence]
        payload = {"evidence_ids": [e["evidence_id"] for e in attached]}
        if body.get("manual_exception"):
            payload["manual_exception"] = body["manual_exception"]
        events.record(self, seq, 1, key="new_finding", to_state=body["epistemic_state"],
                      payload=dict(payload, **(event_payload or {})))
        return seq, finding_id, attached
