"""The decision log's SQLite store: one row per logged call, kept per project, in the ledgers' file.

Rows are appended and never rewritten, enforced by triggers: the one UPDATE allowed erases a
row's sealed payload (arguments and answer) while naming the redaction that erased it. The one
DELETE is retention's (`purge`), by tool and age: its transaction first writes the cutoffs it
enforces into `decision_retention`, and the DELETE trigger refuses any row that is not older than
its tool's cutoff there; the transaction empties the table before it commits, so a DELETE of
any other transaction finds no cutoff and is refused. (Whoever can write the file can write a
cutoff too: the trigger tells retention from a stray or mistaken DELETE, it is no access control.) Plain columns hold what a reviewer filters on and
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
)

COLUMNS = ("seq", "project", "id", "at", "principal", "role", "tool", "rulebook", "ok", "error_code",
           "duration_us", "kept", "dropped", "key_id", "sealed", "erased_by")
INSERTED = COLUMNS[1:-1]
RETAIN_OTHERS = "*"                 # decision_retention's row for every tool the masking table does not name
_SELECT = ", ".join(COLUMNS)


class SqliteDecisionStore:
    """One connection to the ledgers' SQLite file, shared by the log's writer thread and its
    readers under a lock."""

    def __init__(self, path: str | Path = ":memory:", *, busy_timeout_ms: int = 5000):
        self.path = str(path)
        with failures():
            self.conn = sqlite_base.connect(self.path, busy_timeout_ms)
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

    def scan(self, **filters) -> Iterator[dict]:
        """Rows in append order across projects, one at a time (erasure, promote)."""
        for page in self.pages(**filters):
            yield from page

    def pages(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
              ids: list | None = None, size: int = 2000) -> Iterator[list[dict]]:
        """Rows in append order across projects, `size` at a time (replay). The filters on project,
        tool and time are read off the rows of a scan in `seq` order ('+column' keeps SQLite from
        choosing their indexes, which would sort every match again for every page)."""
        where, params = ["seq > ?"], [0]
        for column, values in (("+project", projects), ("+tool", tools), ("id", ids)):
            if values is not None:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params += list(values)
        if since is not None:
            where.append("+at >= ?")
            params.append(since)
        sql = f"SELECT {_SELECT} FROM decision_log WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?"
        while True:
            with self._tx(False) as conn:
                rows = [dict(r) for r in conn.execute(sql, (*params, size))]
            if rows:
                yield rows
            if len(rows) < size:
                return
            params[0] = rows[-1]["seq"]

    def erase(self, project: str, ids: list[str], redaction_id: str) -> None:
        with self._tx(True) as conn:
            conn.executemany("UPDATE decision_log SET sealed = NULL, kept = 'erased', erased_by = ? "
                             "WHERE project = ? AND id = ? AND sealed IS NOT NULL",
                             [(redaction_id, project, i) for i in ids])

    def purge(self, cutoffs: dict, default_cutoff: str) -> int:
        """Delete rows older than their tool's cutoff (tools not named: `default_cutoff`). The
        transaction first writes the cutoffs into decision_retention, which the DELETE trigger
        reads (no other DELETE passes it), and empties it before it commits."""
        named = list(cutoffs)
        with self._tx(True) as conn:
            conn.executemany("INSERT INTO decision_retention (tool, cutoff) VALUES (?, ?)",
                             [*cutoffs.items(), (RETAIN_OTHERS, default_cutoff)])
            deleted = sum(conn.execute("DELETE FROM decision_log WHERE tool = ? AND at < ?", (tool, cut)).rowcount
                          for tool, cut in cutoffs.items())
            deleted += conn.execute(f"DELETE FROM decision_log WHERE tool NOT IN ({', '.join('?' * len(named))}) "
                                    "AND at < ?", (*named, default_cutoff)).rowcount
            conn.execute("DELETE FROM decision_retention")
        return deleted

    def forget(self) -> None:
        """Copy the WAL into the file and empty it, so that erased and purged pages are gone."""
        with self._lock, failures():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self.conn.close()
