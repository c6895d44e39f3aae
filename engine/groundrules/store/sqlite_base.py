"""What the SQLite stores share: driver errors as StorageFailure, the versioned migration runner,
and the primitives the shared statements run on (store/sql.py)."""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence, cast

from ..core.errors import StorageFailure
from .sql import Primitives, distinct, marks
from .lifecycle import Lifecycle

# values one SQLite statement lists (IN, or VALUES rows): a list of 32,768 keys as one VALUES made a
# statement of 0.96 s, growing faster than the list, and an older build refuses past 999 parameters
ROWS_PER_STATEMENT = 256


@contextmanager
def failures() -> Iterator[None]:
    """sqlite3 errors -> StorageFailure with SQLite's error name only (no path, no message)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise StorageFailure(getattr(exc, "sqlite_errorname", None) or type(exc).__name__) from None


@contextmanager
def transaction(conn: sqlite3.Connection, lock: threading.RLock, *, write: bool,
                lifecycle: Lifecycle | None = None) -> Iterator[None]:
    """One transaction on a store's shared connection, under its lock. A write takes the write
    lock up front (BEGIN IMMEDIATE: a version check and the update it guards see the same
    database), commits when the block ends and rolls back on any exception, a failed COMMIT
    included; a read sees one snapshot and is rolled back. `lifecycle`: the write is a call's
    (lifecycle.py: its attempt counted, and given up before COMMIT when its server abandoned it)."""
    with lock, failures():
        if write and lifecycle is not None:
            lifecycle.attempt()
        conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield
            if write:
                if lifecycle is not None:
                    lifecycle.before_commit()
                conn.execute("COMMIT")
        except BaseException:
            # a failed COMMIT (e.g. a deferred constraint, a full disk) leaves the transaction open
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if not write:
            conn.execute("ROLLBACK")


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


class SqliteStatements(Primitives):
    """The shared statements' primitives on one SQLite connection (inside its store's transaction)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def _one(self, sql: str, params: Sequence = ()) -> dict | None:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else dict(row)

    def _all(self, sql: str, params: Sequence = ()) -> list[dict]:
        return [dict(r) for r in self.conn.execute(sql, params)]

    def _changed(self, sql: str, params: Sequence) -> bool:
        return self.conn.execute(sql, params).rowcount == 1

    def _count(self, sql: str, params: Sequence) -> int:
        return self.conn.execute(sql, params).rowcount

    def _send(self, sql: str, params: Sequence = ()) -> None:
        self.conn.execute(sql, params)

    def _send_many(self, sql: str, rows: Iterable[Sequence]) -> None:
        self.conn.executemany(sql, rows)

    def _insert(self, sql: str, params: Sequence) -> int:
        # a one-row INSERT into a rowid table always sets lastrowid
        return cast(int, self.conn.execute(sql, params).lastrowid)

    def _in(self, column: str, values: Sequence, kind: str = "text") -> tuple[str, tuple]:
        return f"{column} IN ({marks(len(values))})", tuple(values)

    def _lists(self, values: Iterable) -> Iterator[list]:
        every = distinct(values)
        for start in range(0, len(every), ROWS_PER_STATEMENT):
            yield every[start:start + ROWS_PER_STATEMENT]
