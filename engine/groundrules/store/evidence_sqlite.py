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

from . import evidence_rows as layout
from . import sqlite_base
from .evidence_sql import KEYED_ALL, UNKEYED, EvidenceOps
from .sqlite_base import failures
from .lifecycle import Lifecycle

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
    (3, "what each lookup reads by: a record's subject and source, an interpretation's keys", """
-- Each lookup a call makes searches an index on its whole key, so a call costs what it reads, not
-- what the project holds. A record's subject, (for a lock) the source it is inside and when it
-- was observed (whole seconds since 1970, UTC) are columns; an interpretation's keys
-- (evidence.touches: what it cites, opens, names) are rows.
DROP TRIGGER ledger_records_only_redaction;
ALTER TABLE ledger_records ADD COLUMN subject TEXT;
ALTER TABLE ledger_records ADD COLUMN source_id TEXT;
ALTER TABLE ledger_records ADD COLUMN observed_s INTEGER;
UPDATE ledger_records SET subject = json_extract(body, '$.subject') WHERE json_type(body, '$.subject') = 'text';
UPDATE ledger_records SET source_id = json_extract(body, '$.lock.locator.message_id') WHERE type = 'lock';
UPDATE ledger_records SET observed_s = CAST(strftime('%s', json_extract(body, '$.observed_at')) AS INTEGER);
-- a name is searched among the rows that have one: most rows have no message id, lock id, source
DROP INDEX ledger_records_message;
DROP INDEX ledger_records_lock;
CREATE INDEX ledger_records_message ON ledger_records(project, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX ledger_records_lock ON ledger_records(project, lock_id) WHERE lock_id IS NOT NULL;
CREATE INDEX ledger_records_subject ON ledger_records(project, subject) WHERE subject IS NOT NULL;
CREATE INDEX ledger_records_source ON ledger_records(project, source_id) WHERE source_id IS NOT NULL;
CREATE INDEX ledger_records_observed ON ledger_records(project, observed_s);
CREATE TRIGGER ledger_records_only_redaction BEFORE UPDATE ON ledger_records
WHEN NOT (NEW.seq IS OLD.seq AND NEW.project IS OLD.project AND NEW.id IS OLD.id AND NEW.type IS OLD.type
          AND NEW.message_id IS OLD.message_id AND NEW.lock_id IS OLD.lock_id
          AND NEW.recorded_at IS OLD.recorded_at AND NEW.body IS OLD.body AND NEW.digests IS OLD.digests
          AND NEW.subject IS OLD.subject AND NEW.source_id IS OLD.source_id AND NEW.observed_s IS OLD.observed_s
          AND OLD.redaction_id IS NULL AND OLD.personal IS NOT NULL
          AND NEW.personal IS NULL AND NEW.redaction_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id
                      AND r.record_id = OLD.id))
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: only the audited redaction may clear personal fields'); END;
CREATE TABLE ledger_interpretation_keys (
  project            TEXT NOT NULL,
  key                TEXT NOT NULL,
  interpretation_seq INTEGER NOT NULL REFERENCES ledger_interpretations(seq),
  PRIMARY KEY (project, key, interpretation_seq)
) WITHOUT ROWID;
CREATE INDEX ledger_interpretation_keys_of ON ledger_interpretation_keys(interpretation_seq);
CREATE TRIGGER ledger_interpretation_keys_no_update BEFORE UPDATE ON ledger_interpretation_keys
BEGIN SELECT RAISE(ABORT, 'interpretation keys are append-only'); END;
CREATE TRIGGER ledger_interpretation_keys_no_delete BEFORE DELETE ON ledger_interpretation_keys
BEGIN SELECT RAISE(ABORT, 'interpretation keys are append-only'); END;
-- the interpretations stored before this migration, keyed once by the ledger (unkeyed_interpretations)
CREATE TABLE ledger_keys_pending (through INTEGER NOT NULL);
INSERT INTO ledger_keys_pending SELECT COALESCE(MAX(seq), 0) FROM ledger_interpretations;
"""),
)

LATEST = MIGRATIONS[-1][0]


class SqliteEvidenceStore:
    """One connection to one SQLite file (or ':memory:'); `write(project)` / `read(project)` are
    the only ways to touch it, one thread at a time (a server calls from a pool of threads)."""

    kind = "sqlite"  # the backend (backends.py), as a server reports it

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout_ms: int = 5000):
        self.path = str(path)
        with failures():
            self.conn = sqlite_base.connect(self.path, busy_timeout_ms)
            migrate(self.conn)
        self._lock = threading.RLock()

    def run_write(self, project: str, body: Callable[["EvidenceTx"], T], *, lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` in one write transaction of `project`, returning after COMMIT."""
        with self.write(project, lifecycle=lifecycle) as tx:
            return body(tx)

    @contextmanager
    def write(self, project: str, *, lifecycle: Lifecycle | None = None) -> Iterator["EvidenceTx"]:
        with sqlite_base.transaction(self.conn, self._lock, write=True, lifecycle=lifecycle):
            yield EvidenceTx(self.conn, project)

    @contextmanager
    def read(self, project: str) -> Iterator["EvidenceTx"]:
        with sqlite_base.transaction(self.conn, self._lock, write=False):
            yield EvidenceTx(self.conn, project)

    def forget(self) -> None:
        """Copy the WAL into the file and empty it, so that the pages a redaction replaced are gone."""
        with self._lock, failures():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def unkeyed(self) -> list[dict]:
        """The interpretations stored before their keys were (migration 3): {project, seq, body}."""
        with self._lock, failures():
            return [layout.interpretation(r) for r in self.conn.execute(UNKEYED)]

    def keyed_all(self) -> None:
        """Every interpretation has its keys now: nothing is pending any more."""
        with self._lock, failures():
            self.conn.execute(KEYED_ALL)

    def close(self) -> None:
        self.conn.close()


class EvidenceTx(sqlite_base.SqliteStatements, EvidenceOps):
    """The persistence operations of one transaction within one project (evidence_sql) on one
    SQLite connection."""

    def __init__(self, conn: sqlite3.Connection, project: str):
        sqlite_base.SqliteStatements.__init__(self, conn)
        EvidenceOps.__init__(self, project)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in one transaction; safe when processes race."""
    return sqlite_base.migrate(conn, MIGRATIONS, "ledger_migrations")
