"""What the decision log's tests share besides fixtures: the key kept outside the database, the
clock's start, and a database's raw bytes on disk. (A module of its own: `from conftest import`
finds another folder's conftest when pytest is given several folders.)"""
from __future__ import annotations

from pathlib import Path

KEY_MATERIAL = b"the operator's decision key, 32+ bytes, kept outside the database"
START = "2025-03-01T08:00:00Z"


def raw_bytes(db, pg_cluster=None) -> bytes:
    """Every byte the database holds on disk: the SQLite file and its WAL, or the PostgreSQL
    database's files and the cluster's WAL (after a checkpoint)."""
    if isinstance(db, Path):
        return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    import psycopg
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    data = Path(pg_cluster.folder) / "data"
    files = [p for p in (data / "base" / str(oid)).rglob("*") if p.is_file()]
    files += [p for p in (data / "pg_wal").glob("0*") if p.is_file()]
    return b"".join(p.read_bytes() for p in files)
