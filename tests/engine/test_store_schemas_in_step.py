"""The SQL backends keep each ledger's tables in step: the finding ledger, the evidence ledger and the
decision log, migrated to the newest version on SQLite and on PostgreSQL, have the same tables with
the same columns, each of the same kind of value and the same nullability. Each backend's own
machinery (SQLite's full-text index and sequence table, PostgreSQL's write gates) is named here
with why; anything else on one side only fails."""
from __future__ import annotations

import sqlite3

import pytest

from groundrules.store import open_decision_store, open_evidence_store, open_finding_store

OPENERS = (open_finding_store, open_evidence_store, open_decision_store)
# SQLite: the FTS5 keyword index of findings and its shadow tables, AUTOINCREMENT's counters
SQLITE_OWN = {"findings_search", "findings_search_config", "findings_search_data", "findings_search_docsize",
              "findings_search_idx", "sqlite_sequence"}
# PostgreSQL: the tables a write locks first (postgres_base.GATE: a retried write can run alone)
POSTGRES_OWN = {"write_gate", "ledger_write_gate"}
# PostgreSQL: a finding's keyword index (SQLite keeps it in the FTS5 table findings_search); the
# transaction a retention cutoff was set in, so that the purge's trigger admits only its own deletes
POSTGRES_OWN_COLUMNS = {("findings", "search"), ("decision_retention", "xact")}
# the kind of value a column holds, as each backend names its type
KINDS = {"integer": "integer", "bigint": "integer", "boolean": "integer", "text": "text", "bytea": "bytes",
         "blob": "bytes", "xid8": "xid8", "tsvector": "tsvector", "": "any"}


def sqlite_tables(path) -> dict:
    for opener in OPENERS:
        opener(path).close()
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: {(c[1], KINDS[c[2].lower()], bool(c[3]) or bool(c[5])) for c in
                       conn.execute(f"PRAGMA table_info({name})")} for name in names if name not in SQLITE_OWN}


def postgres_tables(uri) -> dict:
    psycopg = pytest.importorskip("psycopg")
    for opener in OPENERS:
        opener(uri).close()
    with psycopg.connect(uri) as conn:
        names = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = 'public'")]
        rows = conn.execute("SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                            "WHERE table_schema = 'public'").fetchall()
    assert POSTGRES_OWN <= set(names)
    tables: dict = {name: set() for name in names if name not in POSTGRES_OWN}
    for table, column, kind, nullable in rows:
        if table not in POSTGRES_OWN and (table, column) not in POSTGRES_OWN_COLUMNS:
            tables[table].add((column, KINDS[kind], nullable == "NO"))
    return tables


def test_both_sql_backends_hold_the_same_tables_and_columns(tmp_path, pg_db):
    lite, pg = sqlite_tables(tmp_path / "l.sqlite"), postgres_tables(pg_db)
    assert len(lite) >= 15 and sorted(lite) == sorted(pg)
    for table in sorted(lite):
        assert sorted(lite[table]) == sorted(pg[table]), table

