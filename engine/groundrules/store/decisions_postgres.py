"""The decision log's PostgreSQL store: the rows decisions_sqlite keeps, in the ledgers' database,
for logs shared by several hosts.

Triggers refuse, whoever connects, any UPDATE but the erasure of a payload by a redaction, and
TRUNCATE; DELETE is retention's: the trigger lets a row go only when the transaction deleting it
has first written a cutoff for its tool in `decision_retention` (keyed by that transaction's id,
so a cutoff another transaction left behind opens nothing) and the row is older than it. Appends only add rows under unique (project, id) keys, so they
run READ COMMITTED: nothing they read could be changed under them. `forget` VACUUMs the table so
that erased and purged row versions leave no readable copy. Error mapping: see postgres_base.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .decisions_sql import DecisionOps
from .postgres_base import PostgresStore, PostgresTx, failures

C = 'TEXT COLLATE "C"'

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
    (2, "only retention deletes, older than the cutoffs it writes first", f"""
CREATE TABLE decision_retention (
  xact    xid8 NOT NULL DEFAULT pg_current_xact_id(),
  tool    {C} NOT NULL,
  cutoff  {C} NOT NULL,
  PRIMARY KEY (xact, tool)
);
CREATE FUNCTION decision_log_only_retention() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM decision_retention g WHERE g.xact = pg_current_xact_id() AND OLD.at < g.cutoff
             AND (g.tool = OLD.tool OR (g.tool = '*' AND NOT EXISTS (
               SELECT 1 FROM decision_retention n WHERE n.xact = g.xact AND n.tool = OLD.tool)))) THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'decision log is append-only: only retention deletes, older than its cutoff';
END $$;
CREATE TRIGGER decision_log_only_retention BEFORE DELETE ON decision_log FOR EACH ROW
EXECUTE FUNCTION decision_log_only_retention();
"""),
    (3, "a payload may also be re-sealed under another key (key rotation)", """
CREATE OR REPLACE FUNCTION decision_log_only_erasure() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT DISTINCT FROM OLD.seq AND NEW.project IS NOT DISTINCT FROM OLD.project
     AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.at IS NOT DISTINCT FROM OLD.at
     AND NEW.principal IS NOT DISTINCT FROM OLD.principal AND NEW.role IS NOT DISTINCT FROM OLD.role
     AND NEW.tool IS NOT DISTINCT FROM OLD.tool AND NEW.rulebook IS NOT DISTINCT FROM OLD.rulebook
     AND NEW.ok IS NOT DISTINCT FROM OLD.ok AND NEW.error_code IS NOT DISTINCT FROM OLD.error_code
     AND NEW.duration_us IS NOT DISTINCT FROM OLD.duration_us AND NEW.dropped IS NOT DISTINCT FROM OLD.dropped
     AND OLD.erased_by IS NULL AND OLD.sealed IS NOT NULL
     AND ((NEW.key_id IS NOT DISTINCT FROM OLD.key_id
           AND NEW.sealed IS NULL AND NEW.kept = 'erased' AND NEW.erased_by IS NOT NULL)
          OR (NEW.key_id IS NOT NULL AND NEW.key_id IS DISTINCT FROM OLD.key_id AND NEW.sealed IS NOT NULL
              AND NEW.kept IS NOT DISTINCT FROM OLD.kept
              AND NEW.erased_by IS NULL)) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'decision log is append-only: only a redaction may erase a payload, and a rekey re-seal it';
END $$;
"""),
)


class PostgresDecisionStore(PostgresStore, DecisionOps):
    """A pool of connections to the ledgers' database; its statements are decisions_sql's."""

    MIGRATIONS = MIGRATIONS
    MIGRATIONS_TABLE = "decision_migrations"
    LOCK_KEY = 0x6772_0003          # 'gr', decision log
    OWN_RETENTION = " WHERE xact = pg_current_xact_id()"

    @contextmanager
    def _tx(self, write: bool) -> Iterator[PostgresTx]:
        with failures(), self.connection() as conn:
            with conn.transaction():
                if not write:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield PostgresTx(conn)

    def _row(self, row: dict) -> dict:
        if row.get("sealed") is not None:
            row["sealed"] = bytes(row["sealed"])
        return row

    def forget(self) -> None:
        with failures(), self.connection() as conn:
            conn.execute("VACUUM decision_log")
