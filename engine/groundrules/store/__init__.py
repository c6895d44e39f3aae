"""Persistence for the two ledgers and the decision log, apart from their domain rules.

A store keeps and finds rows in one transaction at a time; it knows no state, guard or policy.
`open_finding_store(db)` / `open_evidence_store(db)` / `open_decision_store(db)` open the store
of the backend that `db` names (backends.py: `memory:`, `sqlite:PATH` or a file path,
`postgresql://…`, the `postgres` extra).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .backends import locate, open_store

if TYPE_CHECKING:
    from .protocols import DecisionStore, EvidenceStore, FindingStore


def is_postgres(db: Any) -> bool:
    """Does `db` name a PostgreSQL database (a postgresql:// or postgres:// URI)?"""
    return isinstance(db, (str, Path)) and locate(db)[0] == "postgresql"


def database(db: str) -> str | Path:
    """What a command line's --db names: a Path for a SQLite file (`sqlite:PATH` or a bare path),
    else the URL as given (`postgresql://…`, `memory:`)."""
    kind, target = locate(db)
    return Path(target) if kind == "sqlite" else db


def open_finding_store(db: str | Path, **options: Any) -> FindingStore:
    """The finding ledger's store for `db`."""
    return open_store("findings", db, **options)


def open_evidence_store(db: str | Path | None = None, **options: Any) -> EvidenceStore:
    """The evidence ledger's store for `db` (None or 'memory:': in memory, gone with the process)."""
    return open_store("evidence", db, **options)


def open_decision_store(db: str | Path, **options: Any) -> DecisionStore:
    """The decision log's store for `db` (the ledgers' database)."""
    return open_store("decisions", db, **options)
