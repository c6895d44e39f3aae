"""Persistence for the two ledgers and the decision log, apart from their domain rules.

A store keeps and finds rows in one transaction at a time; it knows no state, guard or policy.
`open_finding_store(db)` / `open_evidence_store(db)` / `open_decision_store(db)` pick the backend from what `db` names: a
`postgresql://` (or `postgres://`) URI is PostgreSQL (the `postgres` extra), a file path (or
':memory:') is SQLite.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any


def is_postgres(db: Any) -> bool:
    """Does `db` name a PostgreSQL database (a postgresql:// or postgres:// URI)?"""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


def open_finding_store(db: str | Path, **options: Any):
    """The finding ledger's store for `db`."""
    if is_postgres(db):
        from .findings_postgres import PostgresFindingStore
        return PostgresFindingStore(str(db), **options)
    from .findings_sqlite import SqliteFindingStore
    return SqliteFindingStore(db, **options)


def open_evidence_store(db: str | Path | None = None, **options: Any):
    """The evidence ledger's store for `db` (None: in memory, gone with the process)."""
    if db is None:
        from .evidence_memory import MemoryEvidenceStore
        return MemoryEvidenceStore()
    if is_postgres(db):
        from .evidence_postgres import PostgresEvidenceStore
        return PostgresEvidenceStore(str(db), **options)
    from .evidence_sqlite import SqliteEvidenceStore
    return SqliteEvidenceStore(db, **options)


def open_decision_store(db: str | Path, **options: Any):
    """The decision log's store for `db` (the ledgers' database)."""
    if is_postgres(db):
        from .decisions_postgres import PostgresDecisionStore
        return PostgresDecisionStore(str(db), **options)
    from .decisions_sqlite import SqliteDecisionStore
    return SqliteDecisionStore(db, **options)
