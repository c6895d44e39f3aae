"""Redaction cannot be undone from the database (issue 9): the brute force that recovered a redacted
mobile number from the unsalted sha256 in 0.31 s (10^6 candidates with a known prefix) is run against
the database file alone, and finds nothing; nor is the number left anywhere in the file's bytes."""
from __future__ import annotations

import functools
import hashlib
import re
import sqlite3
from pathlib import Path

import pytest

from groundrules import Caller, EvidenceLedger, Service

MOBILE, PREFIX = "13812345678", "13812"
REVIEWER = Caller("user:alice", "reviewer", ("alpha",))
HEX = re.compile(r"[0-9a-f]{64}")


def file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def every_text(db: Path) -> str:
    """Whatever an attacker holding only the database reads out of it: every value of every table."""
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(str(value) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"') for value in row)
    finally:
        conn.close()


@functools.lru_cache(maxsize=1)
def brute_force_digests() -> frozenset:
    """The sha256 of every number with the known prefix: what the attack tries."""
    return frozenset(hashlib.sha256(b"%s%06d" % (PREFIX.encode(), i)).hexdigest() for i in range(10**6))


@pytest.mark.parametrize("key", [b"a redaction key kept outside the database", None])
def test_the_brute_force_finds_nothing_in_the_database(rulebook, tmp_path, key):
    db = tmp_path / "ledger.db"
    n = iter(range(1, 1000))
    ledger = EvidenceLedger(db, ids=lambda: f"R-{next(n)}", clock=lambda: "2024-05-01T10:00:00+08:00",
                            rulebook=rulebook, redaction_key=key)
    service = Service(rulebook, evidence=ledger)
    record = {"id": "m_7", "type": "message", "role": "user", "state": "sent", "content": f"我的手机是 {MOBILE}"}
    stored = service.call("append_evidence", {"record": record}, REVIEWER)["data"]["records"]
    assert any(r["type"] == "lock" and r["lock"]["normalized_value"] == MOBILE for r in stored)
    assert MOBILE.encode() not in file_bytes(db)                 # sealed: never in the database in the clear
    assert service.call("redact_evidence", {"record_id": "m_7", "reason": "用户要求删除"}, REVIEWER)["ok"]
    assert MOBILE.encode() not in file_bytes(db)                 # a copy taken while the server runs
    ledger.close()
    assert MOBILE.encode() not in file_bytes(db)
    stored_hex = set(HEX.findall(every_text(db)))
    candidates = brute_force_digests()
    assert hashlib.sha256(MOBILE.encode()).hexdigest() in candidates          # the search covers the number
    assert stored_hex.isdisjoint(candidates)
    if key is None:
        assert stored_hex == set()                                           # no key: no digest at all
