"""A person approves or rejects a rule proposal; approving appends the rule to its target document.

Not an MCP tool: an agent can only propose (docs/spec/findings.md: what the tools never do). Where a rule may go is a table
(rules/rule_targets.yaml), checked when the agent proposes and again when a person approves.

Approval applies a rule exactly once, whatever crashes: the decision is recorded and committed
first; only then is the document written (rule_files.py: through directory descriptors, a marker
line with the proposal id before the rule). Approving an applied proposal again writes the rule
only if its marker is missing, so a re-run after a crash at any step neither loses nor repeats it.
"""
from __future__ import annotations

from pathlib import Path

from ..core import codes
from ..core.errors import GroundrulesError
from . import events, moves
from .call import Call
from .rule_files import Unwritable, apply_rule, probe

TARGETS_TABLE = "rule_targets"
MACHINE = "proposal"
WRITES_RULE = "approve_rule"        # the decision that appends the rule to its document


def targets_via(states, tool: str) -> list[str]:
    """The states the proposal machine lets `tool` move a proposal to (its transitions naming the
    tool under `via`, finding_states.yaml); the ledger opens only when each decision has one."""
    return list(dict.fromkeys(t.to for t in states.machine(MACHINE).transitions if tool in t.via))


def _proposal(call: Call, proposal_id: str) -> dict:
    row = call.tx.proposal(call.project, proposal_id)
    if row is None:
        raise call.refuse(codes.NOT_FOUND, "proposal_not_found", proposal_id=proposal_id)
    return row


def target_refusal(call: Call, target_path: str, rule_text: str = ""):
    """INVALID_ARGUMENT (field target_path) when the rule_targets table refuses the path or the text
    forges a marker; None when it may receive the rule."""
    targets = call.book.table(TARGETS_TABLE)
    reason = targets.refusal(target_path)
    if reason is None and targets.forges_marker(target_path, rule_text):
        return call.refuse(codes.INVALID_ARGUMENT, "invalid_argument", field="rule_text",
                           problem=targets.message("marker_in_text"))
    if reason is not None:
        return call.refuse(codes.INVALID_ARGUMENT, "invalid_argument", field="target_path", problem=reason)
    return None


def _probe(call: Call, root: Path, row: dict) -> None:
    """Refuse, before anything is recorded, a target that cannot receive the rule now."""
    try:
        probe(root, row["target_path"])
    except Unwritable as exc:
        raise call.refuse(codes.INVALID_ARGUMENT, f"target_{exc.reason}",
                          field="root" if exc.reason == "root" else "target_path") from None


def _apply(call: Call, root: Path, row: dict) -> None:
    """Write the rule of the (recorded) decision into its document under `root`; refusals say the
    decision stands."""
    marker = call.book.table(TARGETS_TABLE).marker(row["target_path"], row["id"])
    try:
        apply_rule(root, row["target_path"], marker, row["rule_text"])
    except Unwritable as exc:
        field = "root" if exc.reason == "root" else "target_path"
        raise GroundrulesError(codes.INVALID_ARGUMENT, call.vocab.message(
            "rule_not_applied", proposal_id=row["id"], problem=call.vocab.message(f"target_{exc.reason}")),
            field=field, proposal_id=row["id"], decision_recorded=True) from None


def decide(call: Call, a: dict) -> tuple[dict, None]:
    """approve_rule / reject_rule: {proposal_id, note?}; the decider is the authenticated caller,
    and the document root the one the ledger was opened with."""
    row = _proposal(call, a["proposal_id"])
    [target] = targets_via(call.states, call.tool)
    writes = call.tool == WRITES_RULE
    answer = {"proposal_id": row["id"], "finding_id": row["finding_id"], "status": target,
              "target_path": row["target_path"], "version": row["version"] + 1}
    root = call.rules_root
    if writes:
        if root is None or not root.is_dir():
            raise call.refuse(codes.INVALID_ARGUMENT, "root_missing", field="root")
        refused = target_refusal(call, row["target_path"], row["rule_text"])
        if refused is not None:
            raise refused
        _probe(call, root, row)
        if row["status"] == target:                   # approved before: make sure the document has it
            call.after_commit(lambda: _apply(call, root, row))
            return dict(answer, version=row["version"]), None
    moves.check_move(call, MACHINE, row["status"], target, {})
    if not call.tx.decide_proposal(row["seq"], row["version"], target, call.now, call.principal, a.get("note", "")):
        raise call.refuse(codes.CONCURRENT_MODIFICATION, "proposal_conflict", proposal_id=row["id"])
    events.record(call, row["finding_seq"], row["finding_version"], reason=a.get("note", ""),
                  payload={"proposal_id": row["id"], "decided_by": call.principal})
    if writes and root is not None:
        call.after_commit(lambda: _apply(call, root, row))
    return answer, None


DECISIONS = {"approve_rule": decide, "reject_rule": decide}
