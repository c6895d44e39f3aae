"""The decision log's persistence operations, written once for both SQL backends (as findings_sql
is for the finding ledger). Each operation is one transaction of its own (`_tx`, per backend,
yields the primitives of store/sql.py); the statements are in SQLite's placeholder style.

What differs is a backend's word: `UNINDEXED`, the prefix that keeps a scan from choosing a
column's index (SQLite's unary `+`; PostgreSQL plans a scan in `seq` order by itself), and
`OWN_RETENTION`, which rows of `decision_retention` the purging transaction wrote (on PostgreSQL
they are keyed by its transaction id), and `_row`, how a row read comes back (bytes for `sealed`).
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Iterator

from .sql import Primitives, marks

COLUMNS = ("seq", "project", "id", "at", "principal", "role", "tool", "rulebook", "ok", "error_code",
           "duration_us", "kept", "dropped", "key_id", "sealed", "erased_by")
INSERTED = COLUMNS[1:-1]
RETAIN_OTHERS = "*"                 # decision_retention's row for every tool the masking table does not name
SELECT = f"SELECT {', '.join(COLUMNS)} FROM decision_log"
INSERT = f"INSERT INTO decision_log ({', '.join(INSERTED)}) VALUES ({marks(len(INSERTED))})"


class DecisionOps:
    """The decision log's operations over the ledgers' database."""

    UNINDEXED = ""
    OWN_RETENTION = ""

    def _tx(self, write: bool) -> AbstractContextManager[Primitives]:
        """One transaction: a write commits when the block ends; a read sees one snapshot."""
        raise NotImplementedError

    def _row(self, row: dict) -> dict:
        return row

    def append(self, rows: list[dict]) -> None:
        """Every row in one transaction: all of them or none."""
        with self._tx(True) as tx:
            tx._send_many(INSERT, [tuple(bool(r[c]) if c == "ok" else r[c] for c in INSERTED) for r in rows])

    def page(self, project: str, *, decision_id: str | None = None, tool: str | None = None,
             since: str | None = None, ok: bool | None = None, before: int | None = None,
             limit: int = 20) -> list[dict]:
        """The project's rows newest first, filtered."""
        where: list[str] = ["project = ?"]
        params: list = [project]
        for clause, value in (("id = ?", decision_id), ("tool = ?", tool), ("at >= ?", since),
                              ("ok = ?", ok), ("seq < ?", before)):
            if value is not None:
                where.append(clause)
                params.append(value)
        with self._tx(False) as tx:
            return [self._row(r) for r in tx._all(f"{SELECT} WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT ?",
                                                  (*params, limit))]

    def seq_of(self, project: str, decision_id: str) -> int | None:
        with self._tx(False) as tx:
            r = tx._one("SELECT seq FROM decision_log WHERE project = ? AND id = ?", (project, decision_id))
        return r["seq"] if r else None

    def scan(self, **filters) -> Iterator[dict]:
        """Rows in append order across projects, one at a time (erasure, promote)."""
        for page in self.pages(**filters):
            yield from page

    def pages(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
              ids: list | None = None, size: int = 2000) -> Iterator[list[dict]]:
        """Rows in append order across projects, `size` at a time (replay), each page a transaction
        of its own. The filters on project, tool and time are read off the rows of a scan in `seq`
        order (UNINDEXED: a search of their indexes would sort every match again for every page)."""
        after = 0
        while True:
            with self._tx(False) as tx:
                where, params = self._filters(tx, after, projects, tools, since, ids)
                rows = [self._row(r) for r in tx._all(f"{SELECT} WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?",
                                                      (*params, size))]
            if rows:
                yield rows
            if len(rows) < size:
                return
            after = rows[-1]["seq"]

    def _filters(self, tx: Primitives, after: int, projects: list | None, tools: list | None, since: str | None,
                 ids: list | None) -> tuple[list[str], list]:
        where: list[str] = ["seq > ?"]
        params: list = [after]
        for column, values in ((self.UNINDEXED + "project", projects), (self.UNINDEXED + "tool", tools),
                               ("id", ids)):
            if values is not None:
                condition, values_params = tx._in(column, list(values))
                where.append(condition)
                params += values_params
        if since is not None:
            where.append(f"{self.UNINDEXED}at >= ?")
            params.append(since)
        return where, params

    def erase(self, project: str, ids: list[str], redaction_id: str) -> None:
        with self._tx(True) as tx:
            tx._send_many("UPDATE decision_log SET sealed = NULL, kept = 'erased', erased_by = ? "
                          "WHERE project = ? AND id = ? AND sealed IS NOT NULL",
                          [(redaction_id, project, i) for i in ids])

    def reseal(self, updates: list[tuple]) -> None:
        """Re-seal rows under another key: each (project, id, the key it was under, the new key id,
        the new payload), in one transaction; a row re-sealed or erased meanwhile is left alone."""
        with self._tx(True) as tx:
            tx._send_many("UPDATE decision_log SET key_id = ?, sealed = ? "
                          "WHERE project = ? AND id = ? AND key_id = ? AND sealed IS NOT NULL",
                          [(new, sealed, project, i, old) for project, i, old, new, sealed in updates])

    def purge(self, cutoffs: dict, default_cutoff: str) -> int:
        """Delete rows older than their tool's cutoff (tools not named: `default_cutoff`). The
        transaction first writes the cutoffs into decision_retention, which the DELETE trigger
        reads (no other DELETE passes it), and empties it before it commits."""
        with self._tx(True) as tx:
            tx._send_many("INSERT INTO decision_retention (tool, cutoff) VALUES (?, ?)",
                          [*cutoffs.items(), (RETAIN_OTHERS, default_cutoff)])
            deleted = sum(tx._count("DELETE FROM decision_log WHERE tool = ? AND at < ?", (tool, cut))
                          for tool, cut in cutoffs.items())
            named, params = tx._in("tool", list(cutoffs))
            deleted += tx._count(f"DELETE FROM decision_log WHERE NOT ({named}) AND at < ?", (*params, default_cutoff))
            tx._send(f"DELETE FROM decision_retention{self.OWN_RETENTION}")
        return deleted
