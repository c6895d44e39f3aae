"""The SQLite store itself (issue 4, deliverable 1): WAL, synchronous NORMAL or stricter, versioned
migrations that an older ledger file picks up. SQLite-only by nature: pragmas and file layout."""
from __future__ import annotations

import sqlite3

import pytest

from findings_support import finding, ok
from groundrules.store.findings_sqlite import SqliteFindingStore
from groundrules.store.findings_sqlite import LATEST, MIGRATIONS, migrate

SYNCHRONOUS_LEVELS = {1: "NORMAL", 2: "FULL", 3: "EXTRA"}


@pytest.mark.parametrize("level", ["NORMAL", "FULL", "EXTRA"])
def test_sqlite_wal_and_synchronous(sqlite_db, level):
    store = SqliteFindingStore(sqlite_db, synchronous=level)
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert SYNCHRONOUS_LEVELS[store.conn.execute("PRAGMA synchronous").fetchone()[0]] == level
    store.close()


def test_sqlite_weaker_durability_is_refused(sqlite_db):
    with pytest.raises(ValueError):
        SqliteFindingStore(sqlite_db, synchronous="OFF")


def test_an_older_sqlite_ledger_is_migrated_and_keeps_its_data(sqlite_db, make_ledger):
    conn = sqlite3.connect(sqlite_db, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    first_version, name, sql = MIGRATIONS[0]
    conn.executescript(sql)
    conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (first_version, name))
    conn.close()
    ledger = make_ledger("p1", path=sqlite_db)
    versions = [r[0] for r in ledger.store.conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [v for v, _, _ in MIGRATIONS] and versions[-1] == LATEST
    fid = ok(ledger.call("log_finding", finding(statement="迁移后的漂移")))["finding_id"]
    assert [f["finding_id"] for f in ok(ledger.call("query_findings", {"keyword": "漂移"}))["findings"]] == [fid]
    assert migrate(ledger.store.conn) == LATEST       # a second run is a no-op
