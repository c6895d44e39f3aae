"""What both PostgreSQL stores share: the connection pool, the transaction runner with its bounded
retry of serialization failures, error mapping, and versioned migrations.

Isolation: every write transaction is SERIALIZABLE. The domain's guarantees (a version check and
the update it guards, an idempotency key looked up then remembered, a relation cycle check) are
all "read, then write on what was read"; under SERIALIZABLE PostgreSQL guarantees the outcome of
some serial order, so they hold across any number of hosts without the domain taking a single
lock, exactly as SQLite's one writer gives them on one host. The price is that PostgreSQL may
abort a transaction it cannot order (SQLSTATE 40001) or a deadlock victim (40P01): `run_write`
retries those, bounded, and a caller never sees them unless the bound is exhausted. Reads run
REPEATABLE READ READ ONLY: one snapshot per call, never aborted.

Retries go through a gate, so that two busy hosts cannot starve each other: every write first
locks the store's gate table, a first attempt in ACCESS SHARE mode (writers run side by side), a
retry in ACCESS EXCLUSIVE mode (it waits for the writes in flight and runs alone). LOCK TABLE takes
no snapshot, so the retry's snapshot follows every write it waited for, and a transaction no other
write overlaps cannot be aborted to keep a serial order. (Concurrent inserts conflict more than
their rows suggest: a foreign key check reads the parent's index page, where the other writers'
new rows land too.)

Every driver or pool error leaves as a StorageFailure whose kind is psycopg's class name for the
SQLSTATE (SerializationFailure, OperationalError, ...): never the connection string, a host, a
password or the server's message.
"""
from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ..errors import StorageFailure

T = TypeVar("T")
RETRYABLE = frozenset({"SerializationFailure", "DeadlockDetected"})


@contextmanager
def failures() -> Iterator[None]:
    """psycopg errors -> StorageFailure naming only the error's class."""
    try:
        yield
    except psycopg.Error as exc:
        raise StorageFailure(type(exc).__name__) from None


class PostgresStore:
    """A connection pool on one database, migrated on open, with one way in: a transaction.

    `retries` bounds how often one call is re-run after a serialization failure or deadlock;
    `on_connect(conn)` runs on every new pooled connection (hosts: settings; tests: faults).
    """

    MIGRATIONS: tuple[tuple[int, str, str], ...] = ()
    MIGRATIONS_TABLE = ""
    LOCK_KEY = 0
    GATE = ""                           # the table whose lock lets a retried write run alone

    def __init__(self, conninfo: str, *, pool_size: int = 4, retries: int = 10, timeout: float = 10.0,
                 on_connect: Callable[[psycopg.Connection], None] | None = None):
        self.retries = retries
        self._conninfo = conninfo
        with failures():
            with psycopg.connect(conninfo, autocommit=True, connect_timeout=int(timeout)) as conn:
                self.migrate(conn)

            def configure(conn: psycopg.Connection) -> None:
                conn.autocommit = True      # transactions are begun and ended explicitly below
                # lazy results are read a page at a time: plan cursors for their first rows (an index
                # walk newest first) rather than for the whole result (a sort of every match)
                conn.execute("SET cursor_tuple_fraction = 0.01")
                if on_connect is not None:
                    on_connect(conn)
            self.pool = ConnectionPool(conninfo, min_size=1, max_size=pool_size, timeout=timeout,
                                       kwargs={"row_factory": dict_row, "autocommit": True,
                                               # no server-side prepared statements: a pipeline aborted by a
                                               # serialization failure can leave psycopg believing one exists
                                               # that the server skipped (InvalidSqlStatementName on the next
                                               # call); the statements are small, planning them is cheap
                                               "prepare_threshold": None},
                                       configure=configure, open=True, name="groundrules")

    # -- transactions ---------------------------------------------------------------------------
    @contextmanager
    def _transaction(self, begin: str, commit: bool, pipeline: bool = False,
                     gate: str | None = None) -> Iterator[psycopg.Connection]:
        """One transaction on a pooled connection. With `pipeline`, statements are sent without
        waiting for their answers until one is fetched; BEGIN leaves with the first statement,
        COMMIT with the last ones, and leaving the pipeline waits for every answer (an error in
        any statement is raised there, and the transaction rolls back)."""
        with failures(), self.pool.connection() as conn:
            try:
                with conn.pipeline() if pipeline else nullcontext() as queue:
                    try:
                        conn.execute(begin)
                        if gate is not None:
                            conn.execute(f"LOCK TABLE {self.GATE} IN {gate} MODE")
                        yield conn
                        conn.execute("COMMIT" if commit else "ROLLBACK")
                    except BaseException:
                        _drain(conn, queue)
                        raise
            except BaseException:
                try:
                    conn.execute("ROLLBACK")
                except psycopg.Error:
                    pass        # the connection is gone; the pool discards it, the server rolled back
                raise

    def _run_write(self, make_tx: Callable[[psycopg.Connection], Any], body: Callable[[Any], T]) -> T:
        """`body(tx)` in one SERIALIZABLE transaction, returning after COMMIT; re-run (bounded)
        when PostgreSQL aborts it to keep the serial order. `body` must be safe to re-run: it
        only touches the database through `tx`, and the rolled-back attempt left nothing."""
        for attempt in range(self.retries + 1):
            try:
                with self._transaction("BEGIN ISOLATION LEVEL SERIALIZABLE", commit=True, pipeline=True,
                                       gate="ACCESS EXCLUSIVE" if attempt else "ACCESS SHARE") as conn:
                    tx = make_tx(conn)
                    try:
                        return body(tx)
                    finally:
                        tx.close_cursors()
            except StorageFailure as exc:
                if exc.kind not in RETRYABLE or attempt == self.retries:
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def _read(self, make_tx: Callable[[psycopg.Connection], Any]) -> Iterator[Any]:
        with self._transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", commit=False) as conn:
            tx = make_tx(conn)
            try:
                yield tx
            finally:
                tx.close_cursors()

    def close(self) -> None:
        self.pool.close()

    # -- migrations -----------------------------------------------------------------------------
    def migrate(self, conn: psycopg.Connection) -> int:
        """Apply every pending migration in one transaction; hosts opening the database at once
        wait on an advisory lock, and the second finds nothing left to do."""
        latest = self.MIGRATIONS[-1][0]
        table = self.MIGRATIONS_TABLE
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.LOCK_KEY,))
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            current = conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {table}").fetchone()[0]
            for version, name, sql in self.MIGRATIONS:
                if version > current:
                    conn.execute(sql)
                    conn.execute(f"INSERT INTO {table} (version, name) VALUES (%s, %s)", (version, name))
        return latest


def _drain(conn: psycopg.Connection, queue: psycopg.Pipeline | None) -> None:
    """Collect the answers still in the pipeline when the call failed (any statement's execute may
    raise the error of one sent before it): the failure is the call's own, and a statement it left
    unanswered may not replace it (the transaction rolls back)."""
    if queue is None:
        return
    for _ in range(10):     # an error raised while answers are still in flight leaves them for the next sync
        try:
            queue.sync()
            return
        except psycopg.Error:
            if conn.broken:
                return


class PostgresTx:
    """The base of a transaction's operations: one connection, and the server-side cursors opened
    for lazy results, closed before the transaction ends."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self._cursors: list[psycopg.ServerCursor] = []

    def pages(self, sql: str, params: list, size: int = 64) -> Iterator[list[dict]]:
        """Rows of `sql` in pages of `size`, fetched as they are consumed (a caller that stops early
        never pulls the rest over the wire)."""
        cursor = self.conn.cursor(name=f"gr_{len(self._cursors)}", row_factory=dict_row)
        self._cursors.append(cursor)
        cursor.execute(sql, params)
        while page := cursor.fetchmany(size):
            yield page

    def close_cursors(self) -> None:
        while self._cursors:
            cursor = self._cursors.pop()
            try:
                cursor.close()
            except psycopg.Error:
                pass        # an aborted transaction: its ROLLBACK drops the cursor anyway
