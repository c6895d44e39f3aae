"""What the SQLite stores share: driver errors as StorageFailure, and the versioned migration runner."""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator

from ..core.errors import StorageFailure


@contextmanager
def failures() -> Iterator[None]:
    """sqlite3 errors -> StorageFailure with SQLite's error name only (no path, no message)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StorageFailure(getattr(exc, "sqlite_errorname", None) or type(exc).__name__) from None


def connect(path: str, busy_timeout_ms: int) -> sqlite3.Connection:
    """A connection for a store whose deleted pages must not linger (secure_delete: a redaction
    or an erasure is gone from the file), in WAL unless in memory, rows by name."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA secure_delete = ON")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    return conn


def version(conn: sqlite3.Connection, table: str) -> int:
    """The newest migration recorded in `table` (0 when the table does not exist yet)."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
    if row.fetchone() is None:
        return 0
    return conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {table}").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: tuple, table: str) -> int:
    """Apply every pending migration of `migrations` ((version, name, SQL), append only) in one
    transaction, recording each in `table`; safe when processes race (BEGIN IMMEDIATE)."""
    latest = migrations[-1][0]
    if version(conn, table) >= latest:
        return latest
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        current = version(conn, table)
        for number, name, sql in migrations:
            if number <= current:
                continue
            for statement in statements(sql):
                conn.execute(statement)
            conn.execute(f"INSERT INTO {table} (version, name) VALUES (?, ?)", (number, name))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return latest


def statements(sql: str) -> Iterator[str]:
    """Split a script into complete statements (trigger bodies keep their inner semicolons)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.strip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()
