"""A person approves or rejects a rule proposal; approving appends the rule to its target document.

Not an MCP tool: an agent can only propose (seed 001 §3, §6). The target path is confined to the
project root the person names: relative, no '..', after resolving symlinks still inside the root,
and a regular file (or a new file in an existing folder), never a folder, FIFO or device.

The file and the record change together or not at all. The decision is recorded first, inside the
call's transaction; only then is the document replaced, by writing the new content to a temporary
file beside it and renaming it over the old one (a reader sees the old or the new document, never
half of it). The rename registers an undo that puts the old content back: if anything after it
fails, the COMMIT included, the ledger rolls back and the document is as it was.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .call import Call
from .tools import safe_relative


def _proposal(call: Call, proposal_id: str) -> dict:
    row = call.tx.proposal(call.project, proposal_id)
    if row is None:
        raise call.refuse("NOT_FOUND", "proposal_not_found", proposal_id=proposal_id)
    return row


def confined(root: Path, target_path: str) -> Path | None:
    """The file `target_path` names inside `root`, or None if it would leave the root or is not a
    regular file (an existing folder, FIFO, socket or device)."""
    if not safe_relative(target_path):
        return None
    base = root.resolve(strict=True)
    target = (base / target_path).resolve(strict=False)
    if not target.is_relative_to(base) or target == base or not target.parent.is_dir():
        return None
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        return None
    return target


def _with_rule(old: bytes, text: str) -> bytes:
    """`old` with `text` appended as its own line(s), ending in a newline."""
    separator = b"\n" if old and not old.endswith(b"\n") else b""
    return old + separator + (text if text.endswith("\n") else text + "\n").encode("utf-8")


def _write_atomically(path: Path, content: bytes, mode: int) -> None:
    """Replace `path` by `content` through a temporary file in the same folder and one rename."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def append_rule(call: Call, path: Path, text: str) -> None:
    """Append `text` to `path` atomically, and register the undo that restores the old document."""
    existed = path.exists()
    old = path.read_bytes() if existed else b""
    mode = stat.S_IMODE(path.stat().st_mode) if existed else 0o644
    _write_atomically(path, _with_rule(old, text), mode)

    def undo() -> None:
        if existed:
            _write_atomically(path, old, mode)
        else:
            path.unlink(missing_ok=True)
    call.on_rollback(undo)


def _target(call: Call, target_path: str) -> Path:
    base = call.rules_root
    if base is None or not base.is_dir():
        raise call.refuse("INVALID_ARGUMENT", "root_missing", field="root")
    if not safe_relative(target_path):
        raise call.refuse("INVALID_ARGUMENT", "target_path", field="target_path")
    path = confined(base, target_path)
    if path is None:
        raise call.refuse("INVALID_ARGUMENT", "target_not_file", field="target_path")
    return path


def decide(call: Call, a: dict) -> tuple[dict, None]:
    """approve_rule / reject_rule: {proposal_id, note?}; the decider is the authenticated caller,
    and the document root the one the ledger was opened with."""
    row = _proposal(call, a["proposal_id"])
    target = "applied" if call.tool == "approve_rule" else "rejected"
    call.check_move("proposal", row["status"], target, {})
    path = _target(call, row["target_path"]) if target == "applied" else None
    if not call.tx.decide_proposal(row["seq"], row["version"], target, call.now, call.principal, a.get("note", "")):
        raise call.refuse("CONCURRENT_MODIFICATION", "proposal_conflict", proposal_id=row["id"])
    call.event(row["finding_seq"], f"rule_{target}", row["finding_version"], reason=a.get("note", ""),
               payload={"proposal_id": row["id"], "decided_by": call.principal})
    if path is not None:
        append_rule(call, path, row["rule_text"])
    return {"proposal_id": row["id"], "finding_id": row["finding_id"], "status": target,
            "target_path": row["target_path"], "version": row["version"] + 1}, None


DECISIONS = {"approve_rule": decide, "reject_rule": decide}
