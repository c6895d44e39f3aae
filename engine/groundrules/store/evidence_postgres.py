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
_SELECT = layout.SELECT


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

    def unkeyed(self) -> list[dict]:
        """The interpretations stored before their keys were (migration 4): {project, seq, body}."""
        with failures(), self.connection() as conn:
            return [layout.interpretation(r) for r in conn.execute(
                "SELECT project, seq, body FROM ledger_interpretations WHERE seq <= "
                "(SELECT MAX(through) FROM ledger_keys_pending) ORDER BY seq").fetchall()]

    def keyed_all(self) -> None:
        """Every interpretation has its keys now: nothing is pending any more."""
        with failures(), self.connection() as conn:
            conn.execute("UPDATE ledger_keys_pending SET through = 0")


class PgEvidenceTx(PostgresTx):
    """The persistence operations of one transaction within one project, in the shapes of
    evidence_rows (filed records in, records with their JSON read out)."""

    def __init__(self, conn, project: str):
        super().__init__(conn)
        self.project = project

    def insert(self, filed: list[dict]) -> None:
        for f in filed:
            self.conn.send(
                "INSERT INTO ledger_records (project, id, type, message_id, lock_id, recorded_at, body, personal, "
                "digests, subject, source_id, observed_s) VALUES (%(project)s, %(id)s, %(type)s, %(message_id)s, "
                "%(lock_id)s, %(recorded_at)s, %(body)s, %(personal)s, %(digests)s, %(subject)s, %(source_id)s, "
                "%(observed_s)s)",
                dict(layout.row(f), project=self.project))

    def rows(self) -> list[dict]:
        return [layout.record(r) for r in self.conn.execute(
            f"SELECT {_SELECT} FROM ledger_records WHERE project = %s ORDER BY seq", (self.project,)).fetchall()]

    def row(self, record_id: str) -> dict | None:
        r = self.conn.execute(f"SELECT {_SELECT} FROM ledger_records WHERE project = %s AND id = %s",
                              (self.project, record_id)).fetchone()
        return layout.record(r) if r else None

    def rows_about(self, subject: str) -> list[dict]:
        """The records whose subject this is, in ledger order (each with its `seq`)."""
        return self._seq_rows("subject = %s", (subject,))

    def locks_inside(self, sources: list[str]) -> list[dict]:
        """The lock records inside these sources, in ledger order (each with its `seq`)."""
        return self._seq_rows("source_id IS NOT NULL AND source_id = ANY(%s::text[])", (list(sources),)) if sources else []

    def rows_named(self, ids: list[str]) -> list[dict]:
        """The records with these ids, in ledger order (each with its `seq`)."""
        return self._seq_rows("id = ANY(%s::text[])", (list(ids),)) if ids else []

    def observed_from(self, second: int) -> list[dict]:
        """The records observed in or after this second (UTC, since 1970), in ledger order (read in
        the index's order: there are few, and the project has many rows before them)."""
        return sorted((layout.record(r) for r in self.conn.execute(
            f"SELECT seq, {_SELECT} FROM ledger_records WHERE project = %s AND observed_s >= %s ORDER BY observed_s",
            (self.project, second)).fetchall()), key=lambda r: r["seq"])

    def _seq_rows(self, where: str, params: tuple) -> list[dict]:
        return [layout.record(r) for r in self.conn.execute(
            f"SELECT seq, {_SELECT} FROM ledger_records WHERE project = %s AND {where} ORDER BY seq",
            (self.project, *params)).fetchall()]

    def owner(self, name: str) -> str | None:
        """The id of the first record that answers to `name` (as record id, message id or lock id):
        three searches of their indexes, not one of the project's rows."""
        r = self.conn.execute(
            "SELECT id FROM (SELECT seq, id FROM ledger_records WHERE project = %s AND id = %s UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = %s AND message_id = %s UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = %s AND lock_id = %s) named ORDER BY seq LIMIT 1",
            (self.project, name) * 3).fetchone()
        return r["id"] if r else None

    def redaction_rows(self) -> list[dict]:
        return [layout.redaction(r) for r in self.conn.execute(
            "SELECT id, record_id, event FROM ledger_redactions WHERE project = %s ORDER BY seq", (self.project,)).fetchall()]

    def redaction(self, redaction_id: str) -> dict | None:
        r = self.conn.execute("SELECT id, record_id, event FROM ledger_redactions WHERE project = %s AND id = %s",
                              (self.project, redaction_id)).fetchone()
        return layout.redaction(r) if r else None

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: list[str] = ()) -> None:
        """Store an interpretation and the keys it is found by (evidence.touches), in one message."""
        self.conn.send("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES (%s, %s, %s, %s)",
                       (self.project, interpretation["id"], recorded_at, layout.dumps(interpretation)))
        if keys:
            self.conn.send("INSERT INTO ledger_interpretation_keys (project, key, interpretation_seq) SELECT %s, k, "
                           "(SELECT seq FROM ledger_interpretations WHERE project = %s AND id = %s) "
                           "FROM unnest(%s::text[]) k ON CONFLICT DO NOTHING",
                           (self.project, self.project, interpretation["id"], list(keys)))

    def add_keys(self, seq: int, keys: list[str]) -> None:
        self.conn.send("INSERT INTO ledger_interpretation_keys (project, key, interpretation_seq) SELECT %s, k, %s "
                       "FROM unnest(%s::text[]) k ON CONFLICT DO NOTHING", (self.project, seq, list(keys)))

    def interpretation_rows(self) -> list[dict]:
        return [layout.interpretation(r) for r in self.conn.execute(
            "SELECT seq, id, recorded_at, body, redaction_id FROM ledger_interpretations WHERE project = %s ORDER BY seq",
            (self.project,)).fetchall()]

    def keyed(self, keys: list[str]) -> list[int]:
        """The seqs of the stored interpretations found by any of these keys, in append order."""
        if not keys:
            return []
        return [r["interpretation_seq"] for r in self.conn.execute(
            "SELECT DISTINCT interpretation_seq FROM ledger_interpretation_keys WHERE project = %s "
            "AND key = ANY(%s::text[]) ORDER BY interpretation_seq", (self.project, list(keys))).fetchall()]

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        """These stored interpretations (withdrawn ones without their body) with their keys, in append order."""
        if not seqs:
            return []
        out = {r["seq"]: dict(layout.interpretation(r), keys=[]) for r in self.conn.execute(
            "SELECT seq, id, recorded_at, body, redaction_id FROM ledger_interpretations WHERE project = %s "
            "AND seq = ANY(%s::bigint[]) ORDER BY seq", (self.project, list(seqs))).fetchall()}
        for r in self.conn.execute("SELECT interpretation_seq, key FROM ledger_interpretation_keys "
                                   "WHERE interpretation_seq = ANY(%s::bigint[])", (list(seqs),)).fetchall():
            if r["interpretation_seq"] in out:
                out[r["interpretation_seq"]]["keys"].append(r["key"])
        return list(out.values())

    def interpretation_named(self, interpretation_id: str) -> int | None:
        r = self.conn.execute("SELECT seq FROM ledger_interpretations WHERE project = %s AND id = %s",
                              (self.project, interpretation_id)).fetchone()
        return r["seq"] if r else None

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        """Clear the bodies of these interpretations, pointing at the redaction that withdrew them."""
        for i in ids:
            self.conn.send("UPDATE ledger_interpretations SET body = NULL, redaction_id = %s "
                              "WHERE project = %s AND id = %s", (redaction_id, self.project, i))

    def clear(self, events: list[dict]) -> None:
        """Record each redaction event and clear its record's personal fields."""
        for event in events:
            self.conn.send("INSERT INTO ledger_redactions (project, id, record_id, event) VALUES (%s, %s, %s, %s)",
                              (self.project, event["id"], event["record"], layout.dumps(event)))
            self.conn.send("UPDATE ledger_records SET personal = NULL, redaction_id = %s "
                              "WHERE project = %s AND id = %s", (event["id"], self.project, event["record"]))
