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

from . import abandon, attempts
from . import evidence_rows as layout
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
_SELECT = layout.SELECT


class SqliteEvidenceStore:
    """One connection to one SQLite file (or ':memory:'); `write(project)` / `read(project)` are
    the only ways to touch it, one thread at a time (a server calls from a pool of threads)."""

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout_ms: int = 5000):
        self.path = str(path)
        with failures():
            self.conn = sqlite_base.connect(self.path, busy_timeout_ms)
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

    def unkeyed(self) -> list[dict]:
        """The interpretations stored before their keys were (migration 3): {project, seq, body}."""
        with self._lock, failures():
            return [layout.interpretation(r) for r in self.conn.execute(
                "SELECT project, seq, body FROM ledger_interpretations WHERE seq <= "
                "(SELECT MAX(through) FROM ledger_keys_pending) ORDER BY seq")]

    def keyed_all(self) -> None:
        """Every interpretation has its keys now: nothing is pending any more."""
        with self._lock, failures():
            self.conn.execute("UPDATE ledger_keys_pending SET through = 0")

    def close(self) -> None:
        self.conn.close()


class EvidenceTx:
    """The persistence operations of one transaction within one project, in the shapes of
    evidence_rows (filed records in, records with their JSON read out)."""

    def __init__(self, conn: sqlite3.Connection, project: str):
        self.conn, self.project = conn, project

    def insert(self, filed: list[dict]) -> None:
        self.conn.executemany(
            "INSERT INTO ledger_records (project, id, type, message_id, lock_id, recorded_at, body, personal, digests, "
            "subject, source_id, observed_s) VALUES (:project, :id, :type, :message_id, :lock_id, :recorded_at, :body, "
            ":personal, :digests, :subject, :source_id, :observed_s)",
            [dict(layout.row(f), project=self.project) for f in filed])

    def rows(self) -> list[dict]:
        return [layout.record(r) for r in self.conn.execute(
            f"SELECT {_SELECT} FROM ledger_records WHERE project = ? ORDER BY seq", (self.project,))]

    def row(self, record_id: str) -> dict | None:
        r = self.conn.execute(f"SELECT {_SELECT} FROM ledger_records WHERE project = ? AND id = ?",
                              (self.project, record_id)).fetchone()
        return layout.record(r) if r else None

    def rows_about(self, subject: str) -> list[dict]:
        """The records whose subject this is, in ledger order (each with its `seq`)."""
        return self._seq_rows("subject = ?", (subject,))

    def locks_inside(self, sources: list[str]) -> list[dict]:
        """The lock records inside these sources, in ledger order (each with its `seq`)."""
        return self._seq_rows(f"source_id IS NOT NULL AND source_id IN ({', '.join('?' * len(sources))})",
                              tuple(sources)) if sources else []

    def rows_named(self, ids: list[str]) -> list[dict]:
        """The records with these ids, in ledger order (each with its `seq`)."""
        return self._seq_rows(f"id IN ({', '.join('?' * len(ids))})", tuple(ids)) if ids else []

    def observed_from(self, second: int) -> list[dict]:
        """The records observed in or after this second (UTC, since 1970), in ledger order (read in
        the index's order: there are few, and the project has many rows before them)."""
        return sorted((layout.record(r) for r in self.conn.execute(
            f"SELECT seq, {_SELECT} FROM ledger_records WHERE project = ? AND observed_s >= ? ORDER BY observed_s",
            (self.project, second))), key=lambda r: r["seq"])

    def _seq_rows(self, where: str, params: tuple) -> list[dict]:
        return [layout.record(r) for r in self.conn.execute(
            f"SELECT seq, {_SELECT} FROM ledger_records WHERE project = ? AND {where} ORDER BY seq",
            (self.project, *params))]

    def owner(self, name: str) -> str | None:
        """The id of the first record that answers to `name` (as record id, message id or lock id):
        three searches of their indexes, not one of the project's rows."""
        r = self.conn.execute(
            "SELECT id FROM (SELECT seq, id FROM ledger_records WHERE project = ? AND id = ? UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = ? AND message_id = ? UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = ? AND lock_id = ?) ORDER BY seq LIMIT 1",
            (self.project, name) * 3).fetchone()
        return r["id"] if r else None

    def redaction_rows(self) -> list[dict]:
        return [layout.redaction(r) for r in self.conn.execute(
            "SELECT id, record_id, event FROM ledger_redactions WHERE project = ? ORDER BY seq", (self.project,))]

    def redaction(self, redaction_id: str) -> dict | None:
        r = self.conn.execute("SELECT id, record_id, event FROM ledger_redactions WHERE project = ? AND id = ?",
                              (self.project, redaction_id)).fetchone()
        return layout.redaction(r) if r else None

    def clear(self, events: list[dict]) -> None:
        """Record each redaction event and clear its record's personal fields."""
        for event in events:
            self.conn.execute("INSERT INTO ledger_redactions (project, id, record_id, event) VALUES (?, ?, ?, ?)",
                              (self.project, event["id"], event["record"], layout.dumps(event)))
            self.conn.execute("UPDATE ledger_records SET personal = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                              (event["id"], self.project, event["record"]))

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: list[str] = ()) -> None:
        """Store an interpretation and the keys it is found by (evidence.touches)."""
        seq = self.conn.execute("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES (?, ?, ?, ?)",
                                (self.project, interpretation["id"], recorded_at, layout.dumps(interpretation))).lastrowid
        self.add_keys(seq, keys)

    def add_keys(self, seq: int, keys: list[str]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO ledger_interpretation_keys (project, key, interpretation_seq) "
                              "VALUES (?, ?, ?)", [(self.project, k, seq) for k in keys])

    def interpretation_rows(self) -> list[dict]:
        return [layout.interpretation(r) for r in self.conn.execute(
            "SELECT seq, id, recorded_at, body, redaction_id FROM ledger_interpretations WHERE project = ? "
            "ORDER BY seq", (self.project,))]

    def keyed(self, keys: list[str]) -> list[int]:
        """The seqs of the stored interpretations found by any of these keys, in append order."""
        if not keys:
            return []
        marks = ", ".join("?" * len(keys))
        return [r[0] for r in self.conn.execute(
            f"SELECT DISTINCT interpretation_seq FROM ledger_interpretation_keys WHERE project = ? AND key IN ({marks}) "
            "ORDER BY interpretation_seq", (self.project, *keys))]

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        """These stored interpretations (withdrawn ones without their body) with their keys, in append order."""
        if not seqs:
            return []
        marks = ", ".join("?" * len(seqs))
        out = {r["seq"]: dict(layout.interpretation(r), keys=[]) for r in self.conn.execute(
            f"SELECT seq, id, recorded_at, body, redaction_id FROM ledger_interpretations WHERE project = ? "
            f"AND seq IN ({marks}) ORDER BY seq", (self.project, *seqs))}
        for r in self.conn.execute(f"SELECT interpretation_seq, key FROM ledger_interpretation_keys "
                                   f"WHERE interpretation_seq IN ({marks})", tuple(seqs)):
            if r[0] in out:
                out[r[0]]["keys"].append(r[1])
        return list(out.values())

    def interpretation_named(self, interpretation_id: str) -> int | None:
        r = self.conn.execute("SELECT seq FROM ledger_interpretations WHERE project = ? AND id = ?",
                              (self.project, interpretation_id)).fetchone()
        return r[0] if r else None

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        """Clear the bodies of these interpretations, pointing at the redaction that withdrew them."""
        self.conn.executemany("UPDATE ledger_interpretations SET body = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                              [(redaction_id, self.project, i) for i in ids])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in one transaction; safe when processes race."""
    return sqlite_base.migrate(conn, MIGRATIONS, "ledger_migrations")
