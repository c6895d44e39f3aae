"""Issue 19, item 5: a ledger written before records had their subject, source and observation
columns and interpretations their keys is upgraded in place (SQLite migration 3, PostgreSQL 4):
the columns are filled from the stored bodies, and the stored interpretations get their keys when
the ledger opens, so that a fold for a subject and a redaction find them as they find new ones."""
from __future__ import annotations

import itertools
import json
import sqlite3

import pytest

from groundrules import EvidenceLedger
from groundrules.store import evidence_postgres, evidence_rows, evidence_sqlite, sealing

MESSAGE = {"id": "m1", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
           "content": "不方便接电话，微信 wx_wang01"}
NOW = "2030-01-02T00:00:00+08:00"
OLD_COLUMNS = ("project", "id", "type", "message_id", "lock_id", "recorded_at", "body", "personal", "digests")


def ledger_on(db, rulebook, keys=None) -> EvidenceLedger:
    n = itertools.count()
    return EvidenceLedger(db, ids=lambda: f"R{next(n)}", clock=lambda: "2030-01-01T00:00:00+08:00", keys=keys,
                          rulebook=rulebook, project="p1")


def old_rows(rulebook, tmp_path) -> tuple[list[dict], dict]:
    """The rows a ledger wrote for one message (with its lock) and an interpretation of it."""
    scratch = ledger_on(str(tmp_path / "scratch.sqlite"), rulebook)
    stored = scratch.append_message(MESSAGE)
    lock = stored[1]["id"]
    interpretation = {"id": "I1", "events": [{"id": "e1", "type": "set", "slot": "wechat", "value": "wx_wang01",
                                              "evidence": [lock]}], "dispositions": [{"lock": lock, "slot": "wechat"}]}
    filed = [scratch._filed(r, "p1") for r in stored]          # as they were kept then: in the clear
    rows = [dict(evidence_rows.row(dict(f, personal=scratch.sealer.open(f["personal"], sealing.record_data("p1", f["id"])))),
                 project="p1") for f in filed]
    scratch.close()
    return rows, interpretation


@pytest.fixture(params=["sqlite", "postgres"])
def old_ledger(request, rulebook, tmp_path):
    """A database at the schema before the upgrade, holding a message, its lock and an
    interpretation as that schema held them."""
    rows, interpretation = old_rows(rulebook, tmp_path)
    body = json.dumps(interpretation, ensure_ascii=False)
    if request.param == "sqlite":
        path = str(tmp_path / "old.sqlite")
        conn = sqlite3.connect(path, isolation_level=None)
        evidence_sqlite.sqlite_base.migrate(conn, evidence_sqlite.MIGRATIONS[:2], "ledger_migrations")
        conn.executemany(f"INSERT INTO ledger_records ({', '.join(OLD_COLUMNS)}) VALUES "
                         f"({', '.join(':' + c for c in OLD_COLUMNS)})", rows)
        conn.execute("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES ('p1', 'I1', 'x', ?)",
                     (body,))
        conn.close()
        return path, interpretation
    import psycopg
    uri = request.getfixturevalue("pg_db")
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("DROP TABLE ledger_records, ledger_redactions, ledger_interpretations, ledger_write_gate, "
                     "ledger_interpretation_keys, ledger_keys_pending, ledger_migrations CASCADE")
        conn.execute("DROP FUNCTION ledger_refuse, ledger_only_redaction, ledger_only_withdrawal CASCADE")
        store = type("Old", (evidence_postgres.PostgresEvidenceStore,), {"MIGRATIONS": evidence_postgres.MIGRATIONS[:3]})
        with conn.transaction():
            store.migrate(store, conn)
        for row in rows:
            conn.execute(f"INSERT INTO ledger_records ({', '.join(OLD_COLUMNS)}) VALUES "
                         f"({', '.join('%(' + c + ')s' for c in OLD_COLUMNS)})", row)
        conn.execute("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES ('p1', 'I1', 'x', %s)",
                     (body,))
    return uri, interpretation


def test_an_old_ledger_is_upgraded_and_its_interpretations_found_by_their_keys(old_ledger, rulebook, tmp_path):
    db, interpretation = old_ledger
    ledger = ledger_on(db, rulebook, tmp_path / "keys")
    try:
        with ledger.store.read("p1") as tx:
            assert [r["id"] for r in tx.rows_about("demand_1")] == ["m1"]
            assert len(tx.locks_inside(["m1"])) == 1
            assert tx.keyed(["src:m1"]) != []                     # keyed as the ledger opened
        folded = ledger.fold(None, NOW, subject="demand_1")
        assert folded["state"]["scopes"]["demand_1"]["slots"]["wechat"]["value"] == "wx_wang01"
        events = ledger.redact("m1", by="dpo", reason="erasure")
        assert events[0]["withdrawn_interpretations"] == ["I1"]     # found by its keys
        assert ledger.interpretations() == []
    finally:
        ledger.close()
    again = ledger_on(db, rulebook, tmp_path / "keys")                                # keyed once: nothing is pending
    assert again.store.unkeyed() == []
    again.close()
