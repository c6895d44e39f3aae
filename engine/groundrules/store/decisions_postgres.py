"""The decision log's PostgreSQL store: the rows decisions_sqlite keeps, in the ledgers' database,
for logs shared by several hosts.

Triggers refuse, whoever connects, any UPDATE but the erasure of a payload by a redaction, and
TRUNCATE; DELETE is retention's. Appends only add rows under unique (project, id) keys, so they
run READ COMMITTED: nothing they read could be changed under them. `forget` VACUUMs the table so
that erased and purged row versions leave no readable copy. Error mapping: see postgres_base.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .postgres_base import PostgresStore, failures
from .decisions_sqlite import COLUMNS, INSERTED

C = 'TEXT COLLATE "C"'
_SELECT = ", ".join(COLUMNS)

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "decision log per project, erased only by a redaction", f"""
CREATE TABLE decision_log (
  seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project      {C} NOT NULL,
  id           {C} NOT NULL,
  at           {C} NOT NULL,
  principal    {C} NOT NULL,
  role         {C} NOT NULL,
  tool         {C} NOT NULL,
  rulebook     {C},
  ok           BOOLEAN NOT NULL,
  error_code   {C},
  duration_us  BIGINT NOT NULL,
  kept         {C} NOT NULL,
  dropped      {C} NOT NULL,
  key_id       {C},
  sealed       BYTEA,
  erased_by    {C},
  UNIQUE (project, id)
);
CREATE INDEX decision_log_at ON decision_log(project, at);
CREATE INDEX decision_log_tool ON decision_log(tool, at);
CREATE FUNCTION decision_log_only_erasure() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT DISTINCT FROM OLD.seq AND NEW.project IS NOT DISTINCT FROM OLD.project
     AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.at IS NOT DISTINCT FROM OLD.at
     AND NEW.principal IS NOT DISTINCT FROM OLD.principal AND NEW.role IS NOT DISTINCT FROM OLD.role
     AND NEW.tool IS NOT DISTINCT FROM OLD.tool AND NEW.rulebook IS NOT DISTINCT FROM OLD.rulebook
     AND NEW.ok IS NOT DISTINCT FROM OLD.ok AND NEW.error_code IS NOT DISTINCT FROM OLD.error_code
     AND NEW.duration_us IS NOT DISTINCT FROM OLD.duration_us AND NEW.dropped IS NOT DISTINCT FROM OLD.dropped
     AND NEW.key_id IS NOT DISTINCT FROM OLD.key_id
     AND OLD.erased_by IS NULL AND OLD.sealed IS NOT NULL
     AND NEW.sealed IS NULL AND NEW.kept = 'erased' AND NEW.erased_by IS NOT NULL THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'decision log is append-only: only a redaction may erase a payload';
END $$;
CREATE FUNCTION decision_log_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION USING ERRCODE = 'restrict_violation', MESSAGE = TG_ARGV[0]; END $$;
CREATE TRIGGER decision_log_only_erasure BEFORE UPDATE ON decision_log FOR EACH ROW
EXECUTE FUNCTION decision_log_only_erasure();
CREATE TRIGGER decision_log_no_truncate BEFORE TRUNCATE ON decision_log FOR EACH STATEMENT
EXECUTE FUNCTION decision_log_refuse('decision log is append-only: only retention deletes, row by row');
"""),
)


class PostgresDecisionStore(PostgresStore):
    MIGRATIONS = MIGRATIONS
    MIGRATIONS_TABLE = "decision_migrations"
    LOCK_KEY = 0x6772_0003          # 'gr', decision log

    @contextmanager
    def _tx(self, write: bool) -> Iterator:
        with failures(), self.pool.connection() as conn:
            with conn.transaction():
                if not write:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield conn

    def append(self, rows: list[dict]) -> None:
        values = ", ".join(f"%({c})s" for c in INSERTED)
        with self._tx(True) as conn, conn.cursor() as cur:
            cur.executemany(f"INSERT INTO decision_log ({', '.join(INSERTED)}) VALUES ({values})",
                            [dict(r, ok=bool(r["ok"])) for r in rows])

    def page(self, project: str, *, decision_id: str | None = None, tool: str | None = None,
             since: str | None = None, ok: bool | None = None, before: int | None = None,
             limit: int = 20) -> list[dict]:
        where, params = ["project = %s"], [project]
        for clause, value in (("id = %s", decision_id), ("tool = %s", tool), ("at >= %s", since),
                              ("ok = %s", ok), ("seq < %s", before)):
            if value is not None:
                where.append(clause)
                params.append(value)
        with self._tx(False) as conn:
            return [_row(r) for r in conn.execute(
                f"SELECT {_SELECT} FROM decision_log WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT %s",
                (*params, limit)).fetchall()]

    def seq_of(self, project: str, decision_id: str) -> int | None:
        with self._tx(False) as conn:
            r = conn.execute("SELECT seq FROM decision_log WHERE project = %s AND id = %s",
                             (project, decision_id)).fetchone()
        return r["seq"] if r else None

    def scan(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
             ids: list | None = None, size: int = 2000) -> Iterator[dict]:
        where, params = ["seq > %s"], [0]
        for column, values in (("project", projects), ("tool", tools), ("id", ids)):
            if values is not None:
                where.append(f"{column} = ANY(%s)")
                params.append(list(values))
        if since is not None:
            where.append("at >= %s")
            params.append(since)
        last = 0
        while True:
            params[0] = last
            with self._tx(False) as conn:
                rows = [_row(r) for r in conn.execute(
                    f"SELECT {_SELECT} FROM decision_log WHERE {' AND '.join(where)} ORDER BY seq LIMIT %s",
                    (*params, size)).fetchall()]
            yield from rows
            if len(rows) < size:
                return
            last = rows[-1]["seq"]

    def erase(self, project: str, ids: list[str], redaction_id: str) -> None:
        with self._tx(True) as conn, conn.cursor() as cur:
            cur.executemany("UPDATE decision_log SET sealed = NULL, kept = 'erased', erased_by = %s "
                            "WHERE project = %s AND id = %s AND sealed IS NOT NULL",
                            [(redaction_id, project, i) for i in ids])

    def purge(self, cutoffs: dict, default_cutoff: str) -> int:
        with self._tx(True) as conn:
            deleted = sum(conn.execute("DELETE FROM decision_log WHERE tool = %s AND at < %s", (tool, cut)).rowcount
                          for tool, cut in cutoffs.items())
            deleted += conn.execute("DELETE FROM decision_log WHERE NOT (tool = ANY(%s)) AND at < %s",
                                    (list(cutoffs), default_cutoff)).rowcount
        return deleted

    def forget(self) -> None:
        with failures(), self.pool.connection() as conn:
            conn.execute("VACUUM decision_log")


def _row(r: dict) -> dict:
    r = dict(r)
    if r.get("sealed") is not None:
        r["sealed"] = bytes(r["sealed"])
    return r
