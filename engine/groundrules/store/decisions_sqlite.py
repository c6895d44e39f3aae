"""The decision log's SQLite store: one row per logged call, kept per project, in the ledgers' file.

Rows are appended and never rewritten, enforced by triggers: the one UPDATE allowed erases a
row's sealed payload (arguments and answer) while naming the redaction that erased it. The one
DELETE is retention's (`purge`), by tool and age: its transaction first writes the cutoffs it
enforces into `decision_retention`, and the DELETE trigger refuses any row that is not older than
its tool's cutoff there; the transaction empties the table before it commits, so a DELETE of
any other transaction finds no cutoff and is refused. (Whoever can write the file can write a
cutoff too: the trigger tells retention from a stray or mistaken DELETE, it is no access control.) Plain columns hold what a reviewer filters on and
nothing personal (time, ids, principal, role, project, tool, rulebook version, outcome code,
duration, which paths were never kept); `sealed` is AES-GCM ciphertext (decision_log/crypto.py).
Erased and purged payloads leave no copy in the file: `secure_delete` zeroes freed pages, and
`forget` checkpoints and truncates the WAL. Its tables are prefixed `decision_`, its migrations
tracked apart from the ledgers'.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import sqlite_base
from .decisions_sql import DecisionOps
from .sqlite_base import failures

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "decision log per project, erased only by a redaction", """
CREATE TABLE decision_log (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  project      TEXT NOT NULL,
  id           TEXT NOT NULL,
  at           TEXT NOT NULL,
  principal    TEXT NOT NULL,
  role         TEXT NOT NULL,
  tool         TEXT NOT NULL,
  rulebook     TEXT,
  ok           INTEGER NOT NULL,
  error_code   TEXT,
  duration_us  INTEGER NOT NULL,
  kept         TEXT NOT NULL,
  dropped      TEXT NOT NULL,
  key_id       TEXT,
  sealed       BLOB,
  erased_by    TEXT,
  UNIQUE (project, id)
);
CREATE INDEX decision_log_at ON decision_log(project, at);
CREATE INDEX decision_log_tool ON decision_log(tool, at);
CREATE TRIGGER decision_log_no_replace BEFORE INSERT ON decision_log
WHEN EXISTS (SELECT 1 FROM decision_log WHERE (project = NEW.project AND id = NEW.id) OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'decision log is append-only: a decision id is never reused'); END;
CREATE TRIGGER decision_log_only_erasure BEFORE UPDATE ON decision_log
WHEN NOT (NEW.seq IS OLD.seq AND NEW.project IS OLD.project AND NEW.id IS OLD.id AND NEW.at IS OLD.at
          AND NEW.principal IS OLD.principal AND NEW.role IS OLD.role AND NEW.tool IS OLD.tool
          AND NEW.rulebook IS OLD.rulebook AND NEW.ok IS OLD.ok AND NEW.error_code IS OLD.error_code
          AND NEW.duration_us IS OLD.duration_us AND NEW.dropped IS OLD.dropped AND NEW.key_id IS OLD.key_id
          AND OLD.erased_by IS NULL AND OLD.sealed IS NOT NULL
          AND NEW.sealed IS NULL AND NEW.kept = 'erased' AND NEW.erased_by IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'decision log is append-only: only a redaction may erase a payload'); END;
"""),
    (2, "only retention deletes, older than the cutoffs it writes first", """
CREATE TABLE decision_retention (
  tool    TEXT PRIMARY KEY,
  cutoff  TEXT NOT NULL
);
CREATE TRIGGER decision_log_only_retention BEFORE DELETE ON decision_log
WHEN NOT EXISTS (SELECT 1 FROM decision_retention g WHERE OLD.at < g.cutoff AND (g.tool = OLD.tool
                 OR (g.tool = '*' AND NOT EXISTS (SELECT 1 FROM decision_retention n WHERE n.tool = OLD.tool))))
BEGIN SELECT RAISE(ABORT, 'decision log is append-only: only retention deletes, older than its cutoff'); END;
"""),
    (3, "a payload may also be re-sealed under another key (key rotation)", """
DROP TRIGGER decision_log_only_erasure;
CREATE TRIGGER decision_log_only_erasure BEFORE UPDATE ON decision_log
WHEN NOT (NEW.seq IS OLD.seq AND NEW.project IS OLD.project AND NEW.id IS OLD.id AND NEW.at IS OLD.at
          AND NEW.principal IS OLD.principal AND NEW.role IS OLD.role AND NEW.tool IS OLD.tool
          AND NEW.rulebook IS OLD.rulebook AND NEW.ok IS OLD.ok AND NEW.error_code IS OLD.error_code
          AND NEW.duration_us IS OLD.duration_us AND NEW.dropped IS OLD.dropped
          AND OLD.erased_by IS NULL AND OLD.sealed IS NOT NULL
          AND ((NEW.key_id IS OLD.key_id AND NEW.sealed IS NULL AND NEW.kept = 'erased' AND NEW.erased_by IS NOT NULL)
               OR (NEW.key_id IS NOT NULL AND NEW.key_id IS NOT OLD.key_id AND NEW.sealed IS NOT NULL AND NEW.kept IS OLD.kept
                   AND NEW.erased_by IS NULL)))
BEGIN SELECT RAISE(ABORT, 'decision log is append-only: only a redaction may erase a payload, and a rekey re-seal it'); END;
"""),
)


class SqliteDecisionStore(DecisionOps):
    """One connection to the ledgers' SQLite file, shared by the log's writer thread and its
    readers under a lock; its statements are decisions_sql's."""

    kind = "sqlite"  # the backend (backends.py), as a server reports it

    UNINDEXED = "+"                 # SQLite's unary plus: the column's index is not a candidate

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout_ms: int = 5000):
        self.path = str(path)
        with failures():
            self.conn = sqlite_base.connect(self.path, busy_timeout_ms)
            sqlite_base.migrate(self.conn, MIGRATIONS, "decision_migrations")
        self._lock = threading.RLock()

    @contextmanager
    def _tx(self, write: bool) -> Iterator[sqlite_base.SqliteStatements]:
        # the log writes for calls already answered (its appends in a thread of its own): none of its
        # transactions is a call's attempt, nor given up with one
        with sqlite_base.transaction(self.conn, self._lock, write=write):
            yield sqlite_base.SqliteStatements(self.conn)

    def forget(self) -> None:
        """Copy the WAL into the file and empty it, so that erased and purged pages are gone."""
        with self._lock, failures():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.conn.close()
