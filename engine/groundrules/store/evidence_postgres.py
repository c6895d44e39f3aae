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

from . import evidence_rows as layout
from .evidence_sql import KEYED_ALL, UNKEYED, EvidenceOps
from .postgres_base import PostgresStore, PostgresTx, failures
from .lifecycle import Lifecycle

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
    (4, "what each lookup reads by: a record's subject and source, an interpretation's keys", f"""
-- as evidence_sqlite's migration 3: every lookup a call makes searches an index on its whole key
ALTER TABLE ledger_records ADD COLUMN subject {C};
ALTER TABLE ledger_records ADD COLUMN source_id {C};
ALTER TABLE ledger_records ADD COLUMN observed_s BIGINT;
ALTER TABLE ledger_records DISABLE TRIGGER ledger_records_only_redaction;
UPDATE ledger_records SET subject = body::jsonb ->> 'subject' WHERE jsonb_typeof(body::jsonb -> 'subject') = 'string';
UPDATE ledger_records SET source_id = body::jsonb #>> '{{lock,locator,message_id}}' WHERE type = 'lock';
UPDATE ledger_records SET observed_s = floor(extract(epoch FROM (body::jsonb ->> 'observed_at')::timestamptz));
ALTER TABLE ledger_records ENABLE TRIGGER ledger_records_only_redaction;
-- a name is searched among the rows that have one: most rows have no message id, lock id, source
DROP INDEX ledger_records_message;
DROP INDEX ledger_records_lock;
CREATE INDEX ledger_records_message ON ledger_records(project, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX ledger_records_lock ON ledger_records(project, lock_id) WHERE lock_id IS NOT NULL;
CREATE INDEX ledger_records_subject ON ledger_records(project, subject) WHERE subject IS NOT NULL;
CREATE INDEX ledger_records_source ON ledger_records(project, source_id) WHERE source_id IS NOT NULL;
CREATE INDEX ledger_records_observed ON ledger_records(project, observed_s);
CREATE OR REPLACE FUNCTION ledger_only_redaction() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq IS NOT DISTINCT FROM OLD.seq AND NEW.project IS NOT DISTINCT FROM OLD.project
     AND NEW.id IS NOT DISTINCT FROM OLD.id AND NEW.type IS NOT DISTINCT FROM OLD.type
     AND NEW.message_id IS NOT DISTINCT FROM OLD.message_id AND NEW.lock_id IS NOT DISTINCT FROM OLD.lock_id
     AND NEW.recorded_at IS NOT DISTINCT FROM OLD.recorded_at AND NEW.body IS NOT DISTINCT FROM OLD.body
     AND NEW.digests IS NOT DISTINCT FROM OLD.digests
     AND NEW.subject IS NOT DISTINCT FROM OLD.subject AND NEW.source_id IS NOT DISTINCT FROM OLD.source_id
     AND NEW.observed_s IS NOT DISTINCT FROM OLD.observed_s
     AND OLD.redaction_id IS NULL AND OLD.personal IS NOT NULL
     AND NEW.personal IS NULL AND NEW.redaction_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM ledger_redactions r WHERE r.project = OLD.project AND r.id = NEW.redaction_id
                 AND r.record_id = OLD.id) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'restrict_violation',
    MESSAGE = 'evidence ledger is append-only: only the audited redaction may clear personal fields';
END $$;
CREATE TABLE ledger_interpretation_keys (
  project            {C} NOT NULL,
  key                {C} NOT NULL,
  interpretation_seq BIGINT NOT NULL REFERENCES ledger_interpretations(seq) DEFERRABLE INITIALLY DEFERRED,
  PRIMARY KEY (project, key, interpretation_seq)
);
CREATE INDEX ledger_interpretation_keys_of ON ledger_interpretation_keys(interpretation_seq);
CREATE TRIGGER ledger_interpretation_keys_append_only BEFORE UPDATE OR DELETE ON ledger_interpretation_keys
FOR EACH ROW EXECUTE FUNCTION ledger_refuse('interpretation keys are append-only');
CREATE TRIGGER ledger_interpretation_keys_no_truncate BEFORE TRUNCATE ON ledger_interpretation_keys
FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse('interpretation keys are append-only');
CREATE TABLE ledger_keys_pending (through BIGINT NOT NULL);
INSERT INTO ledger_keys_pending SELECT COALESCE(MAX(seq), 0) FROM ledger_interpretations;
"""),
)

LATEST = MIGRATIONS[-1][0]


class PostgresEvidenceStore(PostgresStore):
    """A pool of connections to one database; `run_write(project, body)` / `write(project)` /
    `read(project)` are the only ways to touch it."""

    MIGRATIONS = MIGRATIONS
    MIGRATIONS_TABLE = "ledger_migrations"
    LOCK_KEY = 0x6772_0002          # 'gr', evidence ledger
    GATE = "ledger_write_gate"

    def run_write(self, project: str, body: Callable[["PgEvidenceTx"], T], *, lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` in one write transaction of `project`, returning after COMMIT; serialization
        failures are retried (bounded) by re-running `body`."""
        return self._run_write(lambda conn: PgEvidenceTx(conn, project), body, lifecycle=lifecycle)

    @contextmanager
    def write(self, project: str, *, lifecycle: Lifecycle | None = None) -> Iterator["PgEvidenceTx"]:
        with self._write(lambda statements: PgEvidenceTx(statements, project), lifecycle) as tx:
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

    def unkeyed(self) -> list[dict]:
        """The interpretations stored before their keys were (migration 4): {project, seq, body}."""
        with failures(), self.connection() as conn:
            return [layout.interpretation(r) for r in conn.execute(UNKEYED).fetchall()]

    def keyed_all(self) -> None:
        """Every interpretation has its keys now: nothing is pending any more."""
        with failures(), self.connection() as conn:
            conn.execute(KEYED_ALL)


class PgEvidenceTx(PostgresTx, EvidenceOps):
    """The persistence operations of one transaction within one project (evidence_sql) on one
    pooled connection."""

    def __init__(self, conn, project: str):
        PostgresTx.__init__(self, conn)
        EvidenceOps.__init__(self, project)
