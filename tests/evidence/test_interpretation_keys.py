"""Issue 19, item 1: an interpretation's keys (touches.py: one per event id it resolves, per source it
cites) are stored and looked up on SQLite in statements of at most sqlite_base.ROWS_PER_STATEMENT
values (PostgreSQL binds a list as one array, client-side: one statement). One statement listing
all of them cost SQLite 0.96 s of 1.2 s for a resolves[] of 32,768 ids (256 KB), and failed outright
past the parameters one SQLite statement may have (999 in builds before 3.32). Chunked, the
lookups answer the rows one statement did, on both backends."""
from __future__ import annotations

import itertools
import sqlite3

import pytest

from groundrules import Caller, EvidenceLedger, Service, default_rulebook
from groundrules.store.sqlite_base import ROWS_PER_STATEMENT
from test_evidence_plans import served  # noqa: F401  (the fixture: a service over each backend)

AGENT = Caller("tester", "agent", ("p1",))
MESSAGE = {"id": "M-1", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
           "content": "不方便接电话，微信 wx_wang01"}
OLD_SQLITE_VARIABLES = 999                # SQLITE_MAX_VARIABLE_NUMBER's default before SQLite 3.32


@pytest.fixture
def stored(served):
    """The plans test's service and ledger (SQLite, PostgreSQL), holding the message M-1."""
    service, ledger = served
    assert service.call("append_evidence", {"record": MESSAGE}, AGENT)["ok"]
    return service, ledger


def interpretation(name: str, resolves: list[str], event: str | None = None) -> dict:
    return {"id": name, "events": [{"id": event or f"e-{name}", "type": "decline", "slot": "phone",
                                    "evidence": ["M-1"], "resolves": resolves}], "dispositions": []}


def unchunked_keyed(tx, project: str, keys: list[str]) -> list[int]:
    """The lookup as one statement of every key (what keyed() sent before)."""
    wanted, params = tx._in("key", keys)
    return [r["interpretation_seq"] for r in tx._all(
        f"SELECT DISTINCT interpretation_seq FROM ledger_interpretation_keys WHERE project = ? AND {wanted} "
        "ORDER BY interpretation_seq", (project, *params))]


def test_a_resolves_longer_than_the_chunk_answers_as_one_statement_would(stored):
    service, ledger = stored
    n = 2 * ROWS_PER_STATEMENT + 3
    first = [f"q{i:05d}" for i in range(n)]
    assert service.call("append_interpretation", {"interpretation": interpretation("I-a", first)}, AGENT)["ok"]
    # the second touches the first only through a key of its last chunk (keys are looked up sorted)
    assert service.call("append_interpretation", {"interpretation": interpretation(
        "I-b", [f"r{i:05d}" for i in range(n)] + [first[-1]])}, AGENT)["ok"]
    refused = service.call("append_interpretation", {"interpretation": interpretation(
        "I-c", [f"s{i:05d}" for i in range(n)] + ["zz"], event="e-I-a")}, AGENT)
    assert refused["error"]["code"] == "DUPLICATE_ID"           # found through I-a's event key
    keys = [f"e:{k}" for k in first + [f"r{i:05d}" for i in range(n)] + ["missing"]]
    with ledger.store.read("p1") as tx:
        seqs = tx.keyed(keys)
        assert seqs == unchunked_keyed(tx, "p1", keys) and len(seqs) == 2
        stored = tx.interpretations_at(seqs)
        assert [r["id"] for r in stored] == ["I-a", "I-b"]
        for row in stored:
            of, params = tx._in("interpretation_seq", [row["seq"]], "bigint")
            assert sorted(row["keys"]) == sorted(r["key"] for r in tx._all(
                f"SELECT key FROM ledger_interpretation_keys WHERE {of}", params))
        assert {f"e:{k}" for k in first} <= set(stored[0]["keys"])     # every chunk of them was stored
        ids = [f"R{i}" for i in range(3 * ROWS_PER_STATEMENT)] + ["M-1"]
        named = tx.rows_named(ids)
        among, params = tx._in("id", ids)
        assert [r["seq"] for r in named] == [r["seq"] for r in tx._all(
            f"SELECT seq FROM ledger_records WHERE project = ? AND {among} ORDER BY seq", ("p1", *params))]


def test_more_keys_than_one_statement_may_carry_are_stored_and_found(tmp_path):
    """The store's connection is given the old builds' limit of parameters per statement: the one
    statement of every key failed (STORAGE_ERROR)."""
    n = itertools.count()
    ledger = EvidenceLedger(str(tmp_path / "l.sqlite"), ids=lambda: f"R{next(n)}",
                            clock=lambda: "2030-01-01T00:00:00+08:00", rulebook=default_rulebook(), project="p1")
    service = Service(ledger._book, evidence=ledger)
    assert service.call("append_evidence", {"record": MESSAGE}, AGENT)["ok"]
    ledger.store.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, OLD_SQLITE_VARIABLES)
    resolves = [f"q{i}" for i in range(OLD_SQLITE_VARIABLES + 1)]
    envelope = service.call("append_interpretation", {"interpretation": interpretation("I-many", resolves)}, AGENT)
    assert envelope["ok"], envelope["error"]
    with ledger.store.read("p1") as tx:
        (row,) = tx.interpretations_at(tx.keyed([f"e:{resolves[-1]}"]))
    assert row["id"] == "I-many" and {f"e:{k}" for k in resolves} <= set(row["keys"])
    ledger.close()
