"""The decision log's SQLite store: one row per logged call, kept per project, in the ledgers' file.

Rows are appended and never rewritten, enforced by a trigger: the one UPDATE allowed erases a
row's sealed payload (arguments and answer) while naming the redaction that erased it. The one
DELETE is retention's (`purge`), by tool and age. Plain columns hold what a reviewer filters on and
nothing personal (time, ids, principal, role, project, tool, rulebook version, outcome code,
duration, which paths were never kept); `sealed` is AES-GCM ciphertext (decisions/crypto.py).
Erased and purged payloads leave no copy in the file: `secure_delete` zeroes freed pages, and
`forget` checkpoints and truncates the WAL. Its tables are prefixed `decision_`, its migrations
tracked apart from the ledgers'.
"""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from . import sqlite_base
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
)

COLUMNS = ("seq", "project", "id", "at", "principal", "role", "tool", "rulebook", "ok", "error_code",
           "duration_us", "kept", "dropped", "key_id", "sealed", "erased_by")
INSERTED = COLUMNS[1:-1]
_SELECT = ", ".join(COLUMNS)


class SqliteDecisionStore:
    """One connection to the ledgers' SQLite file, shared by the log's writer thread and its
    readers under a lock."""

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
            sqlite_base.migrate(self.conn, MIGRATIONS, "decision_migrations")
        self._lock = threading.RLock()

    @contextmanager
    def _tx(self, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock, failures():
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield self.conn
                self.conn.execute("COMMIT" if write else "ROLLBACK")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def append(self, rows: list[dict]) -> None:
        """Every row in one transaction: all of them or none."""
        placeholders = ", ".join(f":{c}" for c in INSERTED)
        with self._tx(True) as conn:
            conn.executemany(f"INSERT INTO decision_log ({', '.join(INSERTED)}) VALUES ({placeholders})", rows)

    def page(self, project: str, *, decision_id: str | None = None, tool: str | None = None,
             since: str | None = None, ok: bool | None = None, before: int | None = None,
             limit: int = 20) -> list[dict]:
        """The project's rows newest first, filtered."""
        where, params = ["project = ?"], [project]
        for clause, value in (("id = ?", decision_id), ("tool = ?", tool), ("at >= ?", since),
                              ("ok = ?", None if ok is None else int(ok)), ("seq < ?", before)):
            if value is not None:
                where.append(clause)
                params.append(value)
        with self._tx(False) as conn:
            return [dict(r) for r in conn.execute(
                f"SELECT {_SELECT} FROM decision_log WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT ?",
                (*params, limit))]

    def seq_of(self, project: str, decision_id: str) -> int | None:
        with self._tx(False) as conn:
            r = conn.execute("SELECT seq FROM decision_log WHERE project = ? AND id = ?",
                             (project, decision_id)).fetchone()
        return r["seq"] if r else None

    def scan(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
             ids: list | None = None, size: int = 2000) -> Iterator[dict]:
        """Rows in append order across projects (replay), a page at a time."""
        where, params = ["seq > ?"], [0]
        for column, values in (("project", projects), ("tool", tools), ("id", ids)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params += list(values)
        if since is not None:
            where.append("at >= ?")
            params.append(since)
        last = 0
        while True:
            params[0] = last
            with self._tx(False) as conn:
                rows = [dict(r) for r in conn.execute(
                    f"SELECT {_SELECT} FROM decision_log WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
                    (*params, size))]
            yield from rows
            if len(rows) < size:
                return
            last = rows[-1]["seq"]

    def erase(self, project: str, ids: list[str], redaction_id: str) -> None:
        with self._tx(True) as conn:
            conn.executemany("UPDATE decision_log SET sealed = NULL, kept = 'erased', erased_by = ? "
                             "WHERE project = ? AND id = ? AND sealed IS NOT NULL",
                             [(redaction_id, project, i) for i in ids])

    def purge(self, cutoffs: dict, default_cutoff: str) -> int:
        """Delete rows older than their tool's cutoff (tools not named: `default_cutoff`)."""
        named = list(cutoffs)
        with self._tx(True) as conn:
            deleted = sum(conn.execute("DELETE FROM decision_log WHERE tool = ? AND at < ?", (tool, cut)).rowcount
                          for tool, cut in cutoffs.items())
            deleted += conn.execute(f"DELETE FROM decision_log WHERE tool NOT IN ({', '.join('?' * len(named))}) "
                                    "AND at < ?", (*named, default_cutoff)).rowcount
        return deleted

    def forget(self) -> None:
        """Copy the WAL into the file and empty it, so that erased and purged pages are gone."""
        with self._lock, failures():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.conn.close()
