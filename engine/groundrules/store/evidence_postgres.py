"""The evidence ledger's PostgreSQL store: append-only records and interpretations per project and
their redaction events, as evidence_sqlite keeps them, for ledgers shared by several hosts.

The rules are enforced by triggers, whoever connects: DELETE and TRUNCATE are refused, a record id
is unique per project, and the only UPDATE allowed clears `personal` of an unredacted row while
pointing at a redaction event for that very row. It shares a database with the finding ledger
(its tables are prefixed `ledger_`, its migrations tracked apart). Isolation, retries and error
mapping: see postgres_base.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from .postgres_base import PostgresStore, PostgresTx, failures

T = TypeVar("T")
C = 'TEXT COLLATE "C"'

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "records and redactions per project", f"""
CREATE TABLE ledger_records (
  seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project      {C} NOT NULL,
  id           {C} NOT NULL,
  type         {C} NOT NULL,
  message_id   {C},
  lock_id      {C},
  recorded_at  {C} NOT NULL,
  body         {C} NOT NULL,
  personal     {C},
  digests      {C} NOT NULL,
  redaction_id {C},
  UNIQUE (project, id)
);
CREATE INDEX ledger_records_message ON ledger_records(project, message_id);
CREATE INDEX ledger_records_lock ON ledger_records(project, lock_id);
CREATE TABLE ledger_redactions (
  seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project    {C} NOT NULL,
  id         {C} NOT NULL,
  record_id  {C} NOT NULL,
  event      {C} NOT NULL,
  UNIQUE (project, id)
);
CREATE FUNCTION ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION USING ERRCODE = 'restrict_violation', MESSAGE = TG_ARGV[0]; END $$;
CREATE FUNCTION ledger_only_redaction() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT DISTINCT FROM OLD.seq AND NEW.project IS NOT DISTINCT FROM OLD.project
     AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.type IS NOT DISTINCT FROM OLD.type
     AND NEW.message_id IS NOT DISTINCT FROM OLD.message_id AND NEW.lock_id IS NOT DISTINCT FROM OLD.lock_id
     AND NEW.recorded_at IS NOT DISTINCT FROM OLD.recorded_at AND NEW.body IS NOT DISTINCT FROM OLD.body
     AND NEW.digests IS NOT DISTINCT FROM OLD.digests
     AND OLD.redaction_id IS NULL AND OLD.personal IS NOT NULL
     AND NEW.personal IS NULL AND NEW.redaction_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id
                 AND r.record_id = OLD.id) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'evidence ledger is append-only: only the audited redaction may clear personal fields';
END $$;
CREATE TRIGGER ledger_records_no_delete BEFORE DELETE ON ledger_records FOR EACH ROW
EXECUTE FUNCTION ledger_refuse('evidence ledger is append-only: records are never deleted');
CREATE TRIGGER ledger_records_no_truncate BEFORE TRUNCATE ON ledger_records FOR EACH STATEMENT
EXECUTE FUNCTION ledger_refuse('evidence ledger is append-only: records are never deleted');
CREATE TRIGGER ledger_records_only_redaction BEFORE UPDATE ON ledger_records FOR EACH ROW
EXECUTE FUNCTION ledger_only_redaction();
CREATE TRIGGER ledger_redactions_append_only BEFORE UPDATE OR DELETE ON ledger_redactions FOR EACH ROW
EXECUTE FUNCTION ledger_refuse('redaction events are append-only');
CREATE TRIGGER ledger_redactions_no_truncate BEFORE TRUNCATE ON ledger_redactions FOR EACH STATEMENT
EXECUTE FUNCTION ledger_refuse('redaction events are append-only');
"""),
    (2, "interpretations per project (the event layer), withdrawn only by a redaction", f"""
CREATE TABLE ledger_interpretations (
  seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project      {C} NOT NULL,
  id           {C} NOT NULL,
  recorded_at  {C} NOT NULL,
  body         {C},
  redaction_id {C},
  UNIQUE (project, id)
);
CREATE FUNCTION ledger_only_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT DISTINCT FROM OLD.seq AND NEW.project IS NOT DISTINCT FROM OLD.project
     AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.recorded_at IS NOT DISTINCT FROM OLD.recorded_at
     AND OLD.redaction_id IS NULL AND OLD.body IS NOT NULL AND NEW.body IS NULL AND NEW.redaction_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'interpretations are append-only: only a redaction may withdraw one';
END $$;
CREATE TRIGGER ledger_interpretations_no_delete BEFORE DELETE ON ledger_interpretations FOR EACH ROW
EXECUTE FUNCTION ledger_refuse('interpretations are append-only: never deleted');
CREATE TRIGGER ledger_interpretations_no_truncate BEFORE TRUNCATE ON ledger_interpretations FOR EACH STATEMENT
EXECUTE FUNCTION ledger_refuse('interpretations are append-only: never deleted');
CREATE TRIGGER ledger_interpretations_only_withdrawal BEFORE UPDATE ON ledger_interpretations FOR EACH ROW
EXECUTE FUNCTION ledger_only_withdrawal();
"""),
    (3, "write gate", "CREATE TABLE ledger_write_gate ()  -- never holds a row: its lock orders retried writes"),
)

LATEST = MIGRATIONS[-1][0]
COLUMNS = ("id", "type", "message_id", "lock_id", "recorded_at", "body", "personal", "digests", "redaction_id")
_SELECT = ", ".join(COLUMNS)


class PostgresEvidenceStore(PostgresStore):
    """A pool of connections to one database; `run_write(project, body)` / `write(project)` /
    `read(project)` are the only ways to touch it."""

    MIGRATIONS = MIGRATIONS
    MIGRATIONS_TABLE = "ledger_migrations"
    LOCK_KEY = 0x6772_0002          # 'gr', evidence ledger
    GATE = "ledger_write_gate"

    def run_write(self, project: str, body: Callable[["PgEvidenceTx"], T]) -> T:
        """`body(tx)` in one write transaction of `project`, returning after COMMIT; serialization
        failures are retried (bounded) by re-running `body`."""
        return self._run_write(lambda conn: PgEvidenceTx(conn, project), body)

    @contextmanager
    def write(self, project: str) -> Iterator["PgEvidenceTx"]:
        with self._write(lambda statements: PgEvidenceTx(statements, project)) as tx:
            yield tx

    @contextmanager
    def read(self, project: str) -> Iterator["PgEvidenceTx"]:
        with self._read(lambda conn: PgEvidenceTx(conn, project)) as tx:
            yield tx

    def forget(self) -> None:
        """Reclaim the row versions a redaction replaced, so that no readable copy stays in the
        table's pages (VACUUM runs outside any transaction; the pool's connections autocommit)."""
        with failures(), self.connection() as conn:
            conn.execute("VACUUM ledger_records")
            conn.execute("VACUUM ledger_interpretations")


class PgEvidenceTx(PostgresTx):
    """The persistence operations of one transaction within one project; rows are plain dicts."""

    def __init__(self, conn, project: str):
        super().__init__(conn)
        self.project = project

    def insert(self, rows: list[dict]) -> None:
        for r in rows:
            self.conn.send(
                "INSERT INTO ledger_records (project, id, type, message_id, lock_id, recorded_at, body, personal, "
                "digests) VALUES (%(project)s, %(id)s, %(type)s, %(message_id)s, %(lock_id)s, %(recorded_at)s, "
                "%(body)s, %(personal)s, %(digests)s)", dict(r, project=self.project))

    def rows(self) -> list[dict]:
        return self.conn.execute(f"SELECT {_SELECT} FROM ledger_records WHERE project = %s ORDER BY seq",
                                 (self.project,)).fetchall()

    def row(self, record_id: str) -> dict | None:
        return self.conn.execute(f"SELECT {_SELECT} FROM ledger_records WHERE project = %s AND id = %s",
                                 (self.project, record_id)).fetchone()

    def owner(self, name: str) -> str | None:
        """The id of the record that answers to `name` (as record id, message id or lock id)."""
        r = self.conn.execute("SELECT id FROM ledger_records WHERE project = %s AND (id = %s OR message_id = %s "
                              "OR lock_id = %s) ORDER BY seq LIMIT 1", (self.project, name, name, name)).fetchone()
        return r["id"] if r else None

    def redaction_rows(self) -> list[dict]:
        return self.conn.execute("SELECT id, record_id, event FROM ledger_redactions WHERE project = %s ORDER BY seq",
                                 (self.project,)).fetchall()

    def add_interpretation(self, row: dict) -> None:
        self.conn.send("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES (%s, %s, %s, %s)",
                          (self.project, row["id"], row["recorded_at"], row["body"]))

    def interpretation_rows(self) -> list[dict]:
        return self.conn.execute("SELECT id, recorded_at, body, redaction_id FROM ledger_interpretations "
                                 "WHERE project = %s ORDER BY seq", (self.project,)).fetchall()

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        """Clear the bodies of these interpretations, pointing at the redaction that withdrew them."""
        for i in ids:
            self.conn.send("UPDATE ledger_interpretations SET body = NULL, redaction_id = %s "
                              "WHERE project = %s AND id = %s", (redaction_id, self.project, i))

    def clear(self, events: list[dict]) -> None:
        """Record each redaction event and clear its record's personal fields."""
        for event in events:
            self.conn.send("INSERT INTO ledger_redactions (project, id, record_id, event) VALUES (%s, %s, %s, %s)",
                              (self.project, event["id"], event["record"], event["json"]))
            self.conn.send("UPDATE ledger_records SET personal = NULL, redaction_id = %s "
                              "WHERE project = %s AND id = %s", (event["id"], self.project, event["record"]))
