"""A person approves or rejects a rule proposal; approving appends the rule to its target document.

Not an MCP tool: an agent can only propose (seed 001 §3, §6). The target path is confined to the
project root the person names: relative, no '..', and after resolving symlinks still inside the
root. The file is appended first, then the proposal is recorded `applied`, in the same
transaction that re-checked it was still `proposed`; nothing is recorded if the append fails.
"""
from __future__ import annotations

import os
from pathlib import Path

from .service import Call, Refusal
from .tools import safe_relative


def _proposal(call: Call, proposal_id: str):
    row = call.conn.execute("SELECT p.*, f.id AS finding_id, f.version AS finding_version FROM rule_proposals p "
                            "JOIN findings f ON f.seq = p.finding_seq WHERE p.id = ?", (proposal_id,)).fetchone()
    if row is None:
        raise call.refuse("NOT_FOUND", "proposal_not_found", proposal_id=proposal_id)
    if row["project"] != call.project:
        raise call.refuse("PROJECT_SCOPE_MISMATCH", "record_in_other_project", what="proposal", ref=proposal_id,
                          project=call.project)
    return row


def confined(root: Path, target_path: str) -> Path | None:
    """The file `target_path` names inside `root`, or None if it would leave the root."""
    if not safe_relative(target_path):
        return None
    base = root.resolve(strict=True)
    target = (base / target_path).resolve(strict=False)
    if not target.is_relative_to(base) or target == base or not target.parent.is_dir():
        return None
    return target


def _append(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "a", encoding="utf-8") as out:
        if path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            out.write("\n")
        out.write(text if text.endswith("\n") else text + "\n")


def decide(call: Call, a: dict) -> tuple[dict, None]:
    """approve_rule / reject_rule: {proposal_id, decided_by, note?, root? (approve only)}."""
    row = _proposal(call, a["proposal_id"])
    target = "applied" if call.tool == "approve_rule" else "rejected"
    call.check_move("proposal", row["status"], target, {})
    if target == "applied":
        path = confined(Path(a["root"]), row["target_path"])
        if path is None:
            raise Refusal("INVALID_ARGUMENT", call.vocab.message("target_path"), field="target_path")
        _append(path, row["rule_text"])
    done = call.conn.execute("UPDATE rule_proposals SET status = ?, version = version + 1, decided_at = ?, "
                             "decided_by = ?, decision_note = ? WHERE seq = ? AND version = ?",
                             (target, call.now, a["decided_by"], a.get("note", ""), row["seq"], row["version"]))
    if done.rowcount != 1:
        raise call.refuse("CONCURRENT_MODIFICATION", "proposal_conflict", proposal_id=row["id"])
    call.event(row["finding_seq"], f"rule_{target}", row["finding_version"], reason=a.get("note", ""),
               payload={"proposal_id": row["id"], "decided_by": a["decided_by"]})
    return {"proposal_id": row["id"], "finding_id": row["finding_id"], "status": target,
            "target_path": row["target_path"], "version": row["version"] + 1}, None


PEOPLE = {"approve_rule": decide, "reject_rule": decide}
