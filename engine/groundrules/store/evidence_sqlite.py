"""The evidence ledger's SQLite store: append-only records and interpretations per project, and
their redaction events.

The rules are enforced by triggers, not by the caller: DELETE is refused, an INSERT that would
reuse a record id is refused, and the only UPDATE allowed clears `personal` of an unredacted row
while pointing at a redaction event for that very row; an interpretation is only ever withdrawn
(its body cleared) by a redaction event. It shares a file with the finding ledger
when given the same path (its tables are prefixed `ledger_`, its migrations tracked apart).
Every driver error leaves as a StorageFailure naming only the kind of failure. Cleared fields
leave no copy in the file: `secure_delete` zeroes freed space, and `forget` checkpoints the WAL
(which still holds the old pages) and truncates it.
"""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from .. import abandon, attempts
from . import sqlite_base
from .sqlite_base import failures

T = TypeVar("T")

# (version, name, SQL). Append only: a released migration is never edited.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "records and redactions per project", """
CREATE TABLE ledger_records (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  project      TEXT NOT NULL,
  id           TEXT NOT NULL,
  type         TEXT NOT NULL,
  message_id   TEXT,
  lock_id      TEXT,
  recorded_at  TEXT NOT NULL,
  body         TEXT NOT NULL,
  personal     TEXT,
  digests      TEXT NOT NULL,
  redaction_id TEXT,
  UNIQUE (project, id)
);
CREATE INDEX ledger_records_message ON ledger_records(project, message_id);
CREATE INDEX ledger_records_lock ON ledger_records(project, lock_id);
CREATE TABLE ledger_redactions (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  project    TEXT NOT NULL,
  id         TEXT NOT NULL,
  record_id  TEXT NOT NULL,
  event      TEXT NOT NULL,
  UNIQUE (project, id)
);
CREATE TRIGGER ledger_records_no_delete BEFORE DELETE ON ledger_records
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: records are never deleted'); END;
CREATE TRIGGER ledger_records_no_replace BEFORE INSERT ON ledger_records
WHEN EXISTS (SELECT 1 FROM ledger_records WHERE (project = NEW.project AND id = NEW.id) OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: a record id is never reused'); END;
CREATE TRIGGER ledger_records_only_redaction BEFORE UPDATE ON ledger_records
WHEN NOT (NEW.seq IS OLD.seq AND NEW.project IS OLD.project AND NEW.id IS OLD.id AND NEW.type IS OLD.type
          AND NEW.message_id IS OLD.message_id AND NEW.lock_id IS OLD.lock_id
          AND NEW.recorded_at IS OLD.recorded_at AND NEW.body IS OLD.body AND NEW.digests IS OLD.digests
          AND OLD.redaction_id IS NULL AND OLD.personal IS NOT NULL
          AND NEW.personal IS NULL AND NEW.redaction_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id
                      AND r.record_id = OLD.id))
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: only the audited redaction may clear personal fields'); END;
CREATE TRIGGER ledger_redactions_no_update BEFORE UPDATE ON ledger_redactions
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
CREATE TRIGGER ledger_redactions_no_delete BEFORE DELETE ON ledger_redactions
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
CREATE TRIGGER ledger_redactions_no_replace BEFORE INSERT ON ledger_redactions
WHEN EXISTS (SELECT 1 FROM ledger_redactions WHERE (project = NEW.project AND id = NEW.id) OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
"""),
    (2, "interpretations per project (the event layer), withdrawn only by a redaction", """
CREATE TABLE ledger_interpretations (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  project      TEXT NOT NULL,
  id           TEXT NOT NULL,
  recorded_at  TEXT NOT NULL,
  body         TEXT,
  redaction_id TEXT,
  UNIQUE (project, id)
);
CREATE TRIGGER ledger_interpretations_no_delete BEFORE DELETE ON ledger_interpretations
BEGIN SELECT RAISE(ABORT, 'interpretations are append-only: never deleted'); END;
CREATE TRIGGER ledger_interpretations_no_replace BEFORE INSERT ON ledger_interpretations
WHEN EXISTS (SELECT 1 FROM ledger_interpretations WHERE (project = NEW.project AND id = NEW.id) OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'interpretations are append-only: an id is never reused'); END;
CREATE TRIGGER ledger_interpretations_only_withdrawal BEFORE UPDATE ON ledger_interpretations
WHEN NOT (NEW.seq IS OLD.seq AND NEW.project IS OLD.project AND NEW.id IS OLD.id
          AND NEW.recorded_at IS OLD.recorded_at AND OLD.redaction_id IS NULL AND OLD.body IS NOT NULL
          AND NEW.body IS NULL AND NEW.redaction_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id))
BEGIN SELECT RAISE(ABORT, 'interpretations are append-only: only a redaction may withdraw one'); END;
"""),
)

LATEST = MIGRATIONS[-1][0]
COLUMNS = ("id", "type", "message_id", "lock_id", "recorded_at", "body", "personal", "digests", "redaction_id")


class SqliteEvidenceStore:
    """One connection to one SQLite file (or ':memory:'); `write(project)` / `read(project)` are
    the only ways to touch it, one thread at a time (a server calls from a pool of threads)."""

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout_ms: int = 5000):
        self.path = str(path)
        with failures():
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                        timeout=busy_timeout_ms / 1000)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self.conn.execute("PRAGMA secure_delete = ON")
            if self.path != ":memory:":
                self.conn.execute("PRAGMA journal_mode = WAL")
            migrate(self.conn)
        self._lock = threading.RLock()

    def run_write(self, project: str, body: Callable[["EvidenceTx"], T]) -> T:
        """`body(tx)` in one write transaction of `project`, returning after COMMIT."""
        with self.write(project) as tx:
            return body(tx)

    @contextmanager
    def write(self, project: str) -> Iterator["EvidenceTx"]:
        with self._lock, failures():
            attempts.attempt()
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield EvidenceTx(self.conn, project)
                abandon.before_commit()
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self, project: str) -> Iterator["EvidenceTx"]:
        with self._lock, failures():
            self.conn.execute("BEGIN")
            try:
                yield EvidenceTx(self.conn, project)
            finally:
                self.conn.execute("ROLLBACK")

    def forget(self) -> None:
        """Copy the WAL into the file and empty it, so that the pages a redaction replaced are gone."""
        with self._lock, failures():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.conn.close()


class EvidenceTx:
    """The persistence operations of one transaction within one project; rows are plain dicts."""

    def __init__(self, conn: sqlite3.Connection, project: str):
        self.conn, self.project = conn, project

    def insert(self, rows: list[dict]) -> None:
        self.conn.executemany(
            "INSERT INTO ledger_records (project, id, type, message_id, lock_id, recorded_at, body, personal, digests) "
            "VALUES (:project, :id, :type, :message_id, :lock_id, :recorded_at, :body, :personal, :digests)",
            [dict(r, project=self.project) for r in rows])

    def rows(self) -> list[dict]:
        return [self._row(r) for r in self.conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM ledger_records WHERE project = ? ORDER BY seq", (self.project,))]

    def row(self, record_id: str) -> dict | None:
        r = self.conn.execute(f"SELECT {', '.join(COLUMNS)} FROM ledger_records WHERE project = ? AND id = ?",
                              (self.project, record_id)).fetchone()
        return self._row(r) if r else None

    def owner(self, name: str) -> str | None:
        """The id of the record that answers to `name` (as record id, message id or lock id)."""
        r = self.conn.execute("SELECT id FROM ledger_records WHERE project = ? AND (id = ? OR message_id = ? "
                              "OR lock_id = ?) ORDER BY seq LIMIT 1", (self.project, name, name, name)).fetchone()
        return r["id"] if r else None

    def redaction_rows(self) -> list[dict]:
        return [dict(r) for r in self.conn.execute(
            "SELECT id, record_id, event FROM ledger_redactions WHERE project = ? ORDER BY seq", (self.project,))]

    def clear(self, events: list[dict]) -> None:
        """Record each redaction event and clear its record's personal fields."""
        for event in events:
            self.conn.execute("INSERT INTO ledger_redactions (project, id, record_id, event) VALUES (?, ?, ?, ?)",
                              (self.project, event["id"], event["record"], event["json"]))
            self.conn.execute("UPDATE ledger_records SET personal = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                              (event["id"], self.project, event["record"]))

    def add_interpretation(self, row: dict) -> None:
        self.conn.execute("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES (?, ?, ?, ?)",
                          (self.project, row["id"], row["recorded_at"], row["body"]))

    def interpretation_rows(self) -> list[dict]:
        return [dict(r) for r in self.conn.execute(
            "SELECT id, recorded_at, body, redaction_id FROM ledger_interpretations WHERE project = ? ORDER BY seq",
            (self.project,))]

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        """Clear the bodies of these interpretations, pointing at the redaction that withdrew them."""
        self.conn.executemany("UPDATE ledger_interpretations SET body = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                              [(redaction_id, self.project, i) for i in ids])

    @staticmethod
    def _row(r: sqlite3.Row) -> dict:
        return {k: r[k] for k in COLUMNS}


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in one transaction; safe when processes race."""
    return sqlite_base.migrate(conn, MIGRATIONS, "ledger_migrations")
