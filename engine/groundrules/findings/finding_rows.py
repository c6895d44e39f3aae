"""A finding's row as a write uses it: found only within the caller's project, its version
checked against the caller's and raised by one with every change.

Optimistic concurrency (docs/spec/findings.md, errors, retries, concurrency): a caller names the version it read; the store updates only
the version read, so no update is lost even when a caller names none.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import codes
from ..core.errors import GroundrulesError
if TYPE_CHECKING:
    from .call import Call


def finding(call: Call, finding_id: str) -> dict:
    """The finding of this project; an id of another project is as unknown as one that never
    existed, so no answer tells a caller what other projects hold."""
    row = call.tx.finding(call.project, finding_id)
    if row is None:
        raise call.refuse(codes.NOT_FOUND, "not_found", finding_id=finding_id)
    return row


def expect_version(call: Call, row: dict, expected: int | None) -> None:
    """CONCURRENT_MODIFICATION with the current version when the caller read another one."""
    if expected is not None and expected != row["version"]:
        raise GroundrulesError(codes.CONCURRENT_MODIFICATION, call.vocab.message(
            "version_conflict", finding_id=row["id"], actual=row["version"], expected=expected),
            current_version=row["version"])


def bump(call: Call, row: dict, **columns: Any) -> int:
    """Set `columns`, raise the version by one; the store updates only the version read, so a
    lost update is impossible even if a caller skipped expect_version."""
    if not call.tx.update_finding(row["seq"], row["version"], call.now, columns):
        raise call.refuse(codes.CONCURRENT_MODIFICATION, "version_conflict", finding_id=row["id"],
                          actual="?", expected=row["version"])
    return row["version"] + 1
