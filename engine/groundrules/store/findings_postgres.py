"""The finding ledger's PostgreSQL store: the same rows and operations as findings_sqlite, for
hosts on several machines sharing one ledger.

Isolation, retries and error mapping: see postgres_base (SERIALIZABLE writes retried inside the
call, REPEATABLE READ READ ONLY reads). Findings, events and their links are never deleted or
rewritten: triggers refuse UPDATE of a finding's meaning, any UPDATE or DELETE of an event, and
DELETE or TRUNCATE of every table, whoever connects. Text is COLLATE "C" so every ORDER BY is the
byte order SQLite uses, whatever the database's locale.

Keyword search: the bigram expansion of cjk_search, stored as a tsvector built from its tokens
(positions kept, no parser or dictionary in between) and queried as a tsquery of phrases
(`'漂移' <-> '移导'`) with a prefix for a lone final CJK character; a GIN index serves it. Positions
stop at 16383 (PostgreSQL's limit), far beyond the longest statement plus details.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import psycopg
from psycopg.rows import DictRow

from .cjk_search import grams, phrases
from .findings_sql import (INSERT_EVIDENCE, INSERT_FINDING, SELECT_FINDING, UNKNOWN_WRITER_JSON, FindingOps, finding_row,
                           finding_values)
from .postgres_base import PostgresStore, PostgresTx, Statements, pyformat
from .lifecycle import Lifecycle

T = TypeVar("T")
C = 'TEXT COLLATE "C"'

_APPEND_ONLY = """
CREATE FUNCTION groundrules_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION USING ERRCODE = 'restrict_violation', MESSAGE = TG_ARGV[0]; END $$;
"""

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "core tables", _APPEND_ONLY + f"""
CREATE TABLE findings (
    seq               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                {C} NOT NULL UNIQUE,
    project           {C} NOT NULL,
    claim_kind        {C} NOT NULL,
    statement         {C} NOT NULL,
    details           {C} NOT NULL DEFAULT '',
    epistemic_state   {C} NOT NULL,
    lifecycle_state   {C} NOT NULL,
    scope_json        {C} NOT NULL,
    retrieval_policy  {C} NOT NULL,
    version           BIGINT NOT NULL,
    created_at        {C} NOT NULL,
    updated_at        {C} NOT NULL,
    last_validated_at {C},
    search            tsvector NOT NULL
);
CREATE INDEX findings_by_project ON findings(project, seq);
CREATE INDEX findings_search ON findings USING gin(search);
CREATE TRIGGER findings_never_deleted BEFORE DELETE ON findings
FOR EACH ROW EXECUTE FUNCTION groundrules_refuse('findings are never deleted');
CREATE TRIGGER findings_meaning_fixed BEFORE UPDATE OF id, project, claim_kind, statement, details, search
ON findings FOR EACH ROW EXECUTE FUNCTION groundrules_refuse('a finding''s meaning is never rewritten; supersede it');

CREATE TABLE finding_tags (
    finding_seq BIGINT NOT NULL REFERENCES findings(seq),
    tag         {C} NOT NULL,
    PRIMARY KEY (finding_seq, tag)
);
CREATE INDEX finding_tags_by_tag ON finding_tags(tag, finding_seq);

CREATE TABLE evidence (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           {C} NOT NULL UNIQUE,
    project      {C} NOT NULL,
    source_kind  {C} NOT NULL,
    source_ref   {C} NOT NULL,
    locator      {C} NOT NULL DEFAULT '',
    revision     {C} NOT NULL DEFAULT '',
    content_hash {C} NOT NULL,
    excerpt      {C} NOT NULL DEFAULT '',
    created_at   {C} NOT NULL
);
CREATE INDEX evidence_by_source ON evidence(project, source_ref, locator);

CREATE TABLE finding_evidence (
    finding_seq  BIGINT NOT NULL REFERENCES findings(seq),
    evidence_seq BIGINT NOT NULL REFERENCES evidence(seq),
    relation     {C} NOT NULL,
    method       {C} NOT NULL,
    rationale    {C} NOT NULL DEFAULT '',
    created_at   {C} NOT NULL,
    PRIMARY KEY (finding_seq, evidence_seq, relation)
);

CREATE TABLE finding_relations (
    from_seq   BIGINT NOT NULL REFERENCES findings(seq),
    relation   {C} NOT NULL,
    to_seq     BIGINT NOT NULL REFERENCES findings(seq),
    note       {C} NOT NULL DEFAULT '',
    created_at {C} NOT NULL,
    PRIMARY KEY (from_seq, relation, to_seq)
);
CREATE INDEX finding_relations_to ON finding_relations(to_seq, relation);

CREATE TABLE finding_events (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           {C} NOT NULL UNIQUE,
    finding_seq  BIGINT NOT NULL REFERENCES findings(seq),
    kind         {C} NOT NULL,
    tool         {C} NOT NULL,
    from_state   {C},
    to_state     {C},
    reason       {C} NOT NULL DEFAULT '',
    payload_json {C} NOT NULL DEFAULT '{{}}',
    version      BIGINT NOT NULL,
    at           {C} NOT NULL
);
CREATE INDEX finding_events_by_finding ON finding_events(finding_seq, seq);
CREATE TRIGGER finding_events_append_only BEFORE UPDATE OR DELETE ON finding_events
FOR EACH ROW EXECUTE FUNCTION groundrules_refuse('finding events are append-only');

CREATE TABLE document_links (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          {C} NOT NULL UNIQUE,
    finding_seq BIGINT NOT NULL REFERENCES findings(seq),
    target_kind {C} NOT NULL,
    target      {C} NOT NULL,
    relation    {C} NOT NULL,
    note        {C} NOT NULL DEFAULT '',
    created_at  {C} NOT NULL,
    UNIQUE (finding_seq, target_kind, target, relation)
);

CREATE TABLE rule_proposals (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            {C} NOT NULL UNIQUE,
    project       {C} NOT NULL,
    finding_seq   BIGINT NOT NULL REFERENCES findings(seq),
    rule_text     {C} NOT NULL,
    target_path   {C} NOT NULL,
    rationale     {C} NOT NULL,
    status        {C} NOT NULL,
    version       BIGINT NOT NULL,
    created_at    {C} NOT NULL,
    decided_at    {C},
    decided_by    {C},
    decision_note {C}
);

CREATE TABLE idempotency_keys (
    project      {C} NOT NULL,
    key          {C} NOT NULL,
    tool         {C} NOT NULL,
    payload_hash {C} NOT NULL,
    response     {C} NOT NULL,
    created_at   {C} NOT NULL,
    PRIMARY KEY (project, key)
);
""" + "".join(f"""
CREATE TRIGGER {table}_never_deleted BEFORE DELETE ON {table}
FOR EACH ROW EXECUTE FUNCTION groundrules_refuse('{table} rows are never deleted');
CREATE TRIGGER {table}_never_truncated BEFORE TRUNCATE ON {table}
FOR EACH STATEMENT EXECUTE FUNCTION groundrules_refuse('{table} is never truncated');
""" for table in ("finding_tags", "evidence", "finding_evidence", "finding_relations", "document_links",
                  "rule_proposals", "idempotency_keys")) + "".join(f"""
CREATE TRIGGER {table}_never_truncated BEFORE TRUNCATE ON {table}
FOR EACH STATEMENT EXECUTE FUNCTION groundrules_refuse('{table} is never truncated');
""" for table in ("findings", "finding_events"))),
    (2, "write gate", "CREATE TABLE write_gate ()  -- never holds a row: its lock orders retried writes"),
    (3, "foreign keys checked at commit", """
DO $$ DECLARE fk record; BEGIN
  FOR fk IN SELECT conrelid::regclass AS tab, conname FROM pg_constraint
            WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY conname LOOP
    EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY DEFERRED', fk.tab, fk.conname);
  END LOOP;
END $$"""),
    (4, "one evidence record per source and content, one first record per source", """
ALTER TABLE evidence ADD COLUMN first_of_source BOOLEAN NOT NULL DEFAULT false;
CREATE UNIQUE INDEX evidence_one_per_content ON evidence(project, source_ref, locator, source_kind, revision,
                                                         content_hash);
DROP INDEX evidence_by_source;
CREATE UNIQUE INDEX evidence_first_of_source ON evidence(project, source_ref, locator) WHERE first_of_source;
"""),
    (5, "a finding's rule proposals by finding", "CREATE INDEX rule_proposals_by_finding ON rule_proposals(finding_seq, seq)"),
    (6, "every link and event names its writer", f"""
ALTER TABLE finding_evidence ADD COLUMN writer_json {C} NOT NULL DEFAULT '{UNKNOWN_WRITER_JSON}';
ALTER TABLE finding_evidence ADD COLUMN finding_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE finding_evidence ADD COLUMN source_check {C} NOT NULL DEFAULT 'unchecked';
ALTER TABLE finding_events ADD COLUMN writer_json {C} NOT NULL DEFAULT '{UNKNOWN_WRITER_JSON}';
CREATE TRIGGER finding_evidence_append_only BEFORE UPDATE ON finding_evidence
FOR EACH ROW EXECUTE FUNCTION groundrules_refuse('finding evidence links are append-only');
"""),
)

LATEST = MIGRATIONS[-1][0]


def _lexeme(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_text(text: str) -> str:
    """tsvector input for `text`: its cjk_search tokens with their positions."""
    return " ".join(f"{_lexeme(tok)}:{min(n, 16383)}" for n, tok in enumerate(grams(text).split(), 1))


def tsquery_text(keyword: str) -> str | None:
    """tsquery input for `keyword` (every phrase required); None if it has nothing searchable."""
    found = [" <-> ".join(_lexeme(t) for t in tokens) + (":*" if prefix else "") for tokens, prefix in phrases(keyword)]
    return " & ".join(f"({p})" for p in found) if found else None


class PostgresFindingStore(PostgresStore):
    """A pool of connections to one database; `write()` / `read()` / `run_write()` are the only
    ways to touch it."""

    MIGRATIONS = MIGRATIONS
    MIGRATIONS_TABLE = "schema_migrations"
    LOCK_KEY = 0x6772_0001          # 'gr', finding ledger
    GATE = "write_gate"

    def run_write(self, body: Callable[["PgFindingTx"], T], *, appends_only: bool = False,
                  lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` in one write transaction, returning after COMMIT; serialization failures are
        retried (bounded) by re-running `body`. `appends_only`: the write adds rows and reads only
        what never changes or what a unique index guards (postgres_base: REPEATABLE READ)."""
        return self._run_write(PgFindingTx, body, "REPEATABLE READ" if appends_only else "SERIALIZABLE",
                               lifecycle=lifecycle)

    @contextmanager
    def write(self, *, lifecycle: Lifecycle | None = None) -> Iterator["PgFindingTx"]:
        """One write transaction without retries (run_write is the retrying form)."""
        with self._write(PgFindingTx, lifecycle) as tx:
            yield tx

    @contextmanager
    def read(self) -> Iterator["PgFindingTx"]:
        """One read transaction: every statement in the block sees the same snapshot."""
        with self._read(PgFindingTx) as tx:
            yield tx


class PgFindingTx(PostgresTx, FindingOps):
    """The persistence operations of one transaction (findings_sql) on one pooled connection. In a
    write, statements whose answer nobody reads wait for the next one that is read (or for
    COMMIT): one message carries them all (postgres_base.Statements)."""

    ALL_ROWS = None
    TEXT_C = ' COLLATE "C"'
    JOIN_IN_ORDER = "JOIN"              # PostgreSQL plans the order itself (and has no CROSS JOIN ... ON)

    def __init__(self, conn: psycopg.Connection[DictRow] | Statements) -> None:
        PostgresTx.__init__(self, conn)
        FindingOps.__init__(self)
        self._tags: dict[int, list[str]] = {}    # tags fetched with search rows (a finding's tags never change)

    # -- findings ---------------------------------------------------------------------------------
    def add_finding(self, record: dict, tags: list[str]) -> int:
        """Insert a finding (version 1), its tags and its search terms; returns its seq."""
        return self._with_tags_added(self._insert(*_finding_insert(record)), tags)

    def _with_tags_added(self, seq: int, tags: list[str]) -> int:
        if tags:        # one statement
            self._send("INSERT INTO finding_tags (finding_seq, tag) SELECT ?, unnest(?::text[])", (seq, list(tags)))
        return self._created_finding(seq)

    def add_finding_with_evidence(self, record: dict, tags: list[str], evidence: list[dict]) -> tuple[int, list[int]]:
        """The finding and its new evidence records in one message (one round trip instead of one
        per record): the finding's INSERT, then one INSERT of every record, each answering seqs."""
        if not evidence:
            return self.add_finding(record, tags), []
        values, rows = [], []
        for r in evidence:          # in order: a record's first_of_source sees the ones before it
            values.append(self._evidence_values(r))
            rows.append(self._added_evidence(r))
        insert, params = _finding_insert(record)
        assert isinstance(self.conn, Statements), "a write runs on a write transaction's Statements"
        finding, written = self.conn.answers([
            (pyformat(insert + " RETURNING seq"), params),
            (pyformat(f"{INSERT_EVIDENCE} VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(values))
                      + " RETURNING id, seq"), tuple(v for row in values for v in row))])
        seq_of = {r["id"]: r["seq"] for r in written}
        for row in rows:
            row["seq"] = seq_of[row["id"]]
            self._new_evidence.add(row["seq"])
        return self._with_tags_added(finding[0]["seq"], tags), [row["seq"] for row in rows]

    def tags(self, seq: int) -> list[str]:
        if seq in self._tags:
            return list(self._tags[seq])
        return super().tags(seq)

    def search(self, project: str, *, keyword: str | None, tags: list[str], lifecycles: list[str] | None,
               epistemic: list[str] | None) -> Iterator[dict] | None:
        """The project's findings passing the filters, newest first (lazily, through a server-side
        cursor); None when `keyword` has no searchable character."""
        where: list[str] = ["f.project = %s"]
        params: list[Any] = [project]
        if lifecycles is not None:
            where.append("f.lifecycle_state = ANY(%s)")
            params.append(list(lifecycles))
        if epistemic is not None:
            where.append("f.epistemic_state = ANY(%s)")
            params.append(list(epistemic))
        if keyword is not None:
            query = tsquery_text(keyword)
            if query is None:
                return None
            where.append("f.search @@ %s::tsquery")
            params.append(query)
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM finding_tags t WHERE t.finding_seq = f.seq AND t.tag = %s)")
            params.append(tag)
        pages = self.pages(f"SELECT {SELECT_FINDING} FROM findings f WHERE {' AND '.join(where)} ORDER BY f.seq DESC",
                           params)
        return (finding_row(row) for page in pages for row in self._with_tags(page))

    def _with_tags(self, page: list[dict]) -> list[dict]:
        """Fetch the tags of a page of findings in one query, kept for `tags()`: one round trip per
        page instead of one per listed finding."""
        seqs = [row["seq"] for row in page]
        for seq in seqs:
            self._tags[seq] = []
        for row in self.conn.execute("SELECT finding_seq, tag FROM finding_tags WHERE finding_seq = ANY(%s) "
                                     "ORDER BY finding_seq, tag", (seqs,)):
            self._tags[row["finding_seq"]].append(row["tag"])
        return page


def _finding_insert(record: dict) -> tuple[str, tuple]:
    """The INSERT of a new finding with its search terms, and its values."""
    return (f"{INSERT_FINDING}, search) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::tsvector)",
            finding_values(record) + (tsvector_text(record["statement"] + "\n" + record["details"]),))

