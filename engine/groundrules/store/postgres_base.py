"""What both PostgreSQL stores share: the connection pool, the transaction runner with its bounded
retry of serialization failures, error mapping, and versioned migrations.

Isolation: a write transaction is SERIALIZABLE unless its store says the write only appends
(below). The domain's guarantees (a version check and the update it guards, an idempotency key
looked up then remembered, a relation cycle check) are all "read, then write on what was read";
under SERIALIZABLE PostgreSQL guarantees the outcome of some serial order, so they hold across any
number of hosts without the domain taking a single lock, exactly as SQLite's one writer gives them
on one host. The price is that PostgreSQL may abort a transaction it cannot order (SQLSTATE 40001),
a deadlock victim (40P01), or a write that a unique index finds another committed meanwhile
(23505): `run_write` re-runs those from a fresh snapshot, bounded, and a caller never sees them
unless the bound is exhausted. Reads run REPEATABLE READ READ ONLY: one snapshot per call, never
aborted.

A write that only appends (log_finding: new rows, read against rows that never change or against
unique keys) runs REPEATABLE READ: SERIALIZABLE's predicate locks are kept per index page, so two
hosts appending side by side read and write the same pages and one was aborted nearly every time
(98 rolled-back transactions per 100 commits with four writers citing sources of their own). Each
read such a write depends on is instead backed by a unique index, which makes the contrary write
of a concurrent call fail (23505), and the retry then sees it: an idempotency key (its primary
key), an evidence record for the same source and content (one only), the first record of a source
(one only, so a second content for a new source is told apart as it is on SQLite).

Retries go through a gate, so that two busy hosts cannot starve each other: every write first
locks the store's gate table, in ACCESS SHARE mode (writers run side by side) for its first
RUN_ALONE_AFTER attempts, then in ACCESS EXCLUSIVE mode (it waits for the writes in flight and runs
alone). LOCK TABLE takes no snapshot, so that retry's snapshot follows every write it waited for,
and a transaction no other write overlaps cannot be aborted to keep a serial order. A first retry
beside the others, before one alone, stops every host less often (measured with four SERIALIZABLE
writers: 785 -> 869 committed log_finding/s).

Foreign keys are checked at COMMIT (DEFERRABLE INITIALLY DEFERRED; the same constraints, the same
refusal, later). Checked per statement, the check of a child row reads the parent's index page
where every concurrent writer's new parent lands, and SERIALIZABLE aborted one of two writers that
had merely inserted side by side (measured: 23 rolled-back transactions per 100 raw INSERT commits
with four writers; with the checks at COMMIT, none).

Every driver or pool error leaves as a StorageFailure whose kind is psycopg's class name for the
SQLSTATE (SerializationFailure, OperationalError, ...): never the connection string, a host, a
password or the server's message.

A restart of the server ends every pooled connection; the pool learns it only when a call uses one.
A call whose transaction meets such a connection with its first message (BEGIN, and for a write the
statements batched with it, never COMMIT) has had nothing of it done, so it runs again on a fresh
connection, after the pool has dropped every other connection the restart ended (`pool.check`),
at most pool_size + 1 times: a call that starts once the server answers again never fails for
the restart. While the server is away the pool does not back off (`reconnect_timeout=0`: it gives
up a connection attempt at once), and a call waiting for a connection asks it to try again every
WAIT_SLICE seconds (`connection`), so the calls waiting when the server is back connect within a
slice, not at the end of a backoff that grew while it was away (1, 2, 4 … s, which made calls
time out after it was back). Measured against psycopg_pool's `check` callback (a round trip before
every call, and a sleep of 1, 2, 4 … s for each stale connection it finds): see docs/storage.md.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import psycopg
from psycopg.rows import DictRow, TupleRow, dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from ..core.errors import StorageFailure
from .sql import Primitives, distinct
from .lifecycle import Lifecycle

T = TypeVar("T")
RETRYABLE = frozenset({"SerializationFailure", "DeadlockDetected", "UniqueViolation"})
RUN_ALONE_AFTER = 2                 # attempts that run beside other writes before a retry runs alone
WAIT_SLICE = 0.25                   # seconds a call waits for a connection before the pool tries again


@contextmanager
def failures() -> Iterator[None]:
    """psycopg errors -> StorageFailure naming only the error's class."""
    try:
        yield
    except psycopg.Error as exc:
        raise StorageFailure(type(exc).__name__) from None


class StaleConnection(StorageFailure):
    """A transaction's first message met a connection the server had ended: nothing of the
    transaction was done, and it may run again on a fresh connection."""


def stale(conn: psycopg.Connection[Any], exc: psycopg.Error) -> StorageFailure:
    """What a failure of a transaction's first message is: StaleConnection when it left the
    connection broken (the server had ended it), else the failure itself."""
    kind = type(exc).__name__
    return StaleConnection(kind) if isinstance(exc, psycopg.OperationalError) and conn.broken else StorageFailure(kind)


class PostgresStore:
    """A connection pool on one database, migrated on open, with one way in: a transaction.

    `retries` bounds how often one call is re-run after a serialization failure or deadlock;
    `on_connect(conn)` runs on every new pooled connection (hosts: settings; tests: faults).
    """

    kind = "postgresql"  # the backend (backends.py), as a server reports it

    MIGRATIONS: tuple[tuple[int, str, str], ...] = ()
    MIGRATIONS_TABLE = ""
    LOCK_KEY = 0
    GATE = ""                           # the table whose lock lets a retried write run alone

    def __init__(self, conninfo: str, *, pool_size: int = 4, retries: int = 10, timeout: float = 10.0,
                 on_connect: Callable[[psycopg.Connection[DictRow]], None] | None = None):
        self.retries = retries
        self.timeout = timeout
        self._conninfo = conninfo
        with failures():
            with psycopg.connect(conninfo, autocommit=True, connect_timeout=int(timeout)) as conn:
                self.migrate(conn)

            def configure(conn: psycopg.Connection[DictRow]) -> None:
                conn.autocommit = True      # transactions are begun and ended explicitly below
                # lazy results are read a page at a time: plan cursors for their first rows (an index
                # walk newest first) rather than for the whole result (a sort of every match)
                conn.execute("SET cursor_tuple_fraction = 0.01")
                if on_connect is not None:
                    on_connect(conn)
            self.pool = ConnectionPool(conninfo, min_size=1, max_size=pool_size, timeout=timeout, reconnect_timeout=0,
                                       kwargs={"row_factory": dict_row, "autocommit": True,
                                               # no server-side prepared statements: writes bind
                                               # client-side (Statements), and a read's statements
                                               # vary with its filters
                                               "prepare_threshold": None},
                                       configure=configure, open=True, name="groundrules")

    # -- connections ----------------------------------------------------------------------------
    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[DictRow]]:
        """A pooled connection for one transaction, waited for up to `timeout` seconds. The wait is
        cut in slices: after each, the pool is asked to connect again when it holds none (it gave
        up its attempts while the server was away), so a call never waits out a reconnection
        backoff once the server answers."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                conn = self.pool.getconn(timeout=max(0.001, min(WAIT_SLICE, deadline - time.monotonic())))
                break
            except PoolTimeout:
                if time.monotonic() >= deadline:
                    raise
                self.pool.check()
        try:
            yield conn
        finally:
            self.pool.putconn(conn)

    # -- transactions ---------------------------------------------------------------------------
    @contextmanager
    def _write_transaction(self, gate: str, isolation: str = "SERIALIZABLE",
                           lifecycle: Lifecycle | None = None) -> Iterator["Statements"]:
        """One transaction on a pooled connection, its statements batched (see
        Statements): BEGIN and the gate's lock leave with the first statement that is read, COMMIT
        with the last ones, and the block returns once the server has committed. `lifecycle`: the
        call's, whose attempt this is and which is given up before COMMIT once abandoned."""
        if lifecycle is not None:
            lifecycle.attempt()
        with failures(), self.connection() as conn:
            statements = Statements(conn)
            try:
                statements.send(f"BEGIN ISOLATION LEVEL {isolation}")
                statements.send(f"LOCK TABLE {self.GATE} IN {gate} MODE")
                yield statements
                if lifecycle is not None:
                    lifecycle.before_commit()
                statements.commit()
            except BaseException:
                if statements.sent:
                    _rollback(conn)
                raise

    @contextmanager
    def _read_transaction(self) -> Iterator[psycopg.Connection[DictRow]]:
        for attempt in range(self._stale_attempts()):
            with failures(), self.connection() as conn:
                try:
                    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                except psycopg.Error as exc:
                    failure = stale(conn, exc)
                    if not isinstance(failure, StaleConnection) or attempt == self._stale_attempts() - 1:
                        raise failure from None
                    self._drop_stale()
                    continue
                try:
                    yield conn
                finally:
                    _rollback(conn)
                return

    def _stale_attempts(self) -> int:
        """How often a call may meet a connection the server ended: once per pooled connection, and
        once more on the fresh one."""
        return self.pool.max_size + 1

    def _drop_stale(self) -> None:
        """Drop every idle pooled connection the server ended (a restart ends them all at once), so
        that the next attempt gets a live one or a new one."""
        try:
            self.pool.check()
        except psycopg.Error:
            pass            # the pool replaces what it could not check

    def _run_write(self, make_tx: Callable[["Statements"], Any], body: Callable[[Any], T],
                   isolation: str = "SERIALIZABLE", *, lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` in one transaction, returning after COMMIT; re-run (bounded) when PostgreSQL
        aborts it to keep the serial order or a unique index refuses its write, alone from the
        RUN_ALONE_AFTER-th retry on. `body` must be safe to re-run: it only touches the database
        through `tx`, and the rolled-back attempt left nothing."""
        attempt, stale_left = 0, self._stale_attempts() - 1
        while True:
            try:
                with self._write_transaction("ACCESS EXCLUSIVE" if attempt >= RUN_ALONE_AFTER
                                             else "ACCESS SHARE", isolation, lifecycle) as statements:
                    tx = make_tx(statements)
                    try:
                        return body(tx)
                    finally:
                        tx.close_cursors()
            except StaleConnection:
                if stale_left == 0:
                    raise
                stale_left -= 1
                self._drop_stale()
            except StorageFailure as exc:
                if exc.kind not in RETRYABLE or attempt == self.retries:
                    raise
                attempt += 1

    @contextmanager
    def _write(self, make_tx: Callable[["Statements"], Any], lifecycle: Lifecycle | None = None) -> Iterator[Any]:
        """One write transaction without retries (run_write is the retrying form)."""
        with self._write_transaction("ACCESS SHARE", "SERIALIZABLE", lifecycle) as statements:
            tx = make_tx(statements)
            try:
                yield tx
            finally:
                tx.close_cursors()

    @contextmanager
    def _read(self, make_tx: Callable[[psycopg.Connection[DictRow]], Any]) -> Iterator[Any]:
        with self._read_transaction() as conn:
            tx = make_tx(conn)
            try:
                yield tx
            finally:
                tx.close_cursors()

    def close(self) -> None:
        self.pool.close()

    # -- migrations -----------------------------------------------------------------------------
    def migrate(self, conn: psycopg.Connection[TupleRow]) -> int:
        """Apply every pending migration in one transaction; hosts opening the database at once
        wait on an advisory lock, and the second finds nothing left to do."""
        latest = self.MIGRATIONS[-1][0]
        table = self.MIGRATIONS_TABLE
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.LOCK_KEY,))
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            found = conn.execute(f"SELECT COALESCE(MAX(version), 0) FROM {table}").fetchone()
            assert found is not None, "an aggregate answers one row"
            current = found[0]
            for version, name, sql in self.MIGRATIONS:
                if version > current:
                    conn.execute(sql)
                    conn.execute(f"INSERT INTO {table} (version, name) VALUES (%s, %s)", (version, name))
        return latest


def _rollback(conn: psycopg.Connection[Any]) -> None:
    try:
        conn.execute("ROLLBACK")
    except psycopg.Error:
        pass    # the connection is gone; the pool discards it, and the server rolled back


class Statements:
    """A write transaction's statements on one connection, sent in as few round trips as their
    answers allow: a statement whose answer nobody reads waits (`send`) and travels with the next
    one that is read (`execute`) or with COMMIT, all in one simple-query message. Values are bound
    client-side by psycopg's ClientCursor, with its quoting; nothing of ours formats a value into
    SQL. `answers` reads several statements' answers from one message (a new finding and its new
    evidence records). Measured on log_finding's statements against the same statements in
    psycopg's pipeline mode: client CPU 0.41 -> 0.28 ms, server CPU 0.76 -> 0.67 ms per call.
    An error in any statement of a message is raised by the call that sent it."""

    def __init__(self, conn: psycopg.Connection[DictRow]):
        self._conn = conn
        self._cursor = psycopg.ClientCursor(conn, row_factory=dict_row)
        self._pending: list[str] = []
        self.sent = False
        self._committing = False

    def send(self, sql: str, params: Sequence | Mapping | None = None) -> None:
        self._pending.append(self._cursor.mogrify(sql, params) if params else sql)

    def execute(self, sql: str, params: Sequence | Mapping | None = None) -> psycopg.ClientCursor[DictRow]:
        """Send what waits and `sql`; the cursor holds `sql`'s answer."""
        self.send(sql, params)
        return self.flush()

    def answers(self, statements: list[tuple[str, Sequence | Mapping | None]]) -> list[list[dict]]:
        """Send what waits and these statements in one message; the rows each of them answers."""
        for sql, params in statements:
            self.send(sql, params)
        cursor, results = self._send_pending(), []
        while True:
            results.append(cursor.fetchall() if cursor.description is not None else [])
            if not cursor.nextset():
                return results[-len(statements):]

    def flush(self) -> psycopg.ClientCursor[DictRow]:
        """Send what waits; the cursor holds the last statement's answer."""
        cursor = self._send_pending()
        while cursor.nextset():
            pass
        return cursor

    def commit(self) -> None:
        """Send what waits and COMMIT; returns once the server has committed."""
        self._committing = True
        self.send("COMMIT")
        self.flush()

    def _send_pending(self) -> psycopg.ClientCursor[DictRow]:
        text, self._pending = "; ".join(self._pending), []
        first, self.sent = not self.sent, True
        try:
            self._cursor.execute(text)
        except psycopg.Error as exc:
            if first and not self._committing:       # nothing of the transaction had reached the server
                raise stale(self._conn, exc) from None
            raise
        return self._cursor


class PostgresTx(Primitives):
    """The base of a transaction's operations: `conn`, a write's Statements (statements whose
    answer nobody reads wait to travel with the next) or a connection (each runs at once), the
    shared statements' primitives on it (store/sql.py), and the server-side cursors a read opens
    for lazy results, closed before the transaction ends."""

    def __init__(self, conn: "psycopg.Connection[DictRow] | Statements"):
        self.conn = conn
        self._cursors: list[psycopg.ServerCursor[DictRow]] = []

    def _one(self, sql: str, params: Sequence = ()) -> dict | None:
        return self.conn.execute(pyformat(sql), params).fetchone()

    def _all(self, sql: str, params: Sequence = ()) -> list[dict]:
        return self.conn.execute(pyformat(sql), params).fetchall()

    def _changed(self, sql: str, params: Sequence) -> bool:
        return self.conn.execute(pyformat(sql + " RETURNING 1"), params).fetchone() is not None

    def _count(self, sql: str, params: Sequence) -> int:
        return self.conn.execute(pyformat(sql), params).rowcount

    def _send(self, sql: str, params: Sequence = ()) -> None:
        if isinstance(self.conn, Statements):
            self.conn.send(pyformat(sql), params)
        else:
            self.conn.execute(pyformat(sql), params)

    def _send_many(self, sql: str, rows: Iterable[Sequence]) -> None:
        if isinstance(self.conn, Statements):
            for params in rows:
                self.conn.send(pyformat(sql), params)
        else:
            with self.conn.cursor() as cursor:
                cursor.executemany(pyformat(sql), list(rows))

    def _insert(self, sql: str, params: Sequence) -> int:
        row = self.conn.execute(pyformat(sql + " RETURNING seq"), params).fetchone()
        assert row is not None, "an INSERT ... RETURNING answers the row it wrote"
        return row["seq"]

    def _in(self, column: str, values: Sequence, kind: str = "text") -> tuple[str, tuple]:
        return f"{column} = ANY(?::{kind}[])", (list(values),)

    def _lists(self, values: Iterable) -> Iterator[list]:
        # whole: a list is one array, values are bound client-side (no count of parameters), and
        # each statement more is a round trip (in chunks of 256, 128 k keys took 4x as long)
        every = distinct(values)
        if every:
            yield every

    def pages(self, sql: str, params: list, size: int = 64) -> Iterator[list[dict]]:
        """Rows of `sql` in pages of `size`, fetched as they are consumed (a caller that stops early
        never pulls the rest over the wire)."""
        assert not isinstance(self.conn, Statements), "a lazy read runs on a read transaction's connection"
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


def pyformat(sql: str) -> str:
    """The shared statements' `?` placeholders as psycopg's `%s` (they hold no literal ? or %)."""
    return sql.replace("?", "%s")
