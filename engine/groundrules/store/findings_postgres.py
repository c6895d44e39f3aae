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

import json
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from .cjk_search import grams, phrases
from .postgres_base import PostgresStore, PostgresTx

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
)

LATEST = MIGRATIONS[-1][0]

FINDING_COLUMNS = ("id", "project", "claim_kind", "statement", "details", "epistemic_state", "lifecycle_state",
                   "retrieval_policy", "version", "created_at", "updated_at", "last_validated_at")
_SELECT = "f.seq, f.scope_json, " + ", ".join(f"f.{c}" for c in FINDING_COLUMNS)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _finding(row: dict | None) -> dict | None:
    if row is None:
        return None
    out = {k: row[k] for k in FINDING_COLUMNS}
    out["seq"] = row["seq"]
    out["scope"] = json.loads(row["scope_json"])
    return out


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

    def run_write(self, body: Callable[["PgFindingTx"], T]) -> T:
        """`body(tx)` in one write transaction, returning after COMMIT; serialization failures are
        retried (bounded) by re-running `body`."""
        return self._run_write(PgFindingTx, body)

    @contextmanager
    def write(self) -> Iterator["PgFindingTx"]:
        """One write transaction without retries (run_write is the retrying form)."""
        with self._transaction("BEGIN ISOLATION LEVEL SERIALIZABLE", commit=True) as conn:
            tx = PgFindingTx(conn)
            try:
                yield tx
            finally:
                tx.close_cursors()

    @contextmanager
    def read(self) -> Iterator["PgFindingTx"]:
        """One read transaction: every statement in the block sees the same snapshot."""
        with self._read(PgFindingTx) as tx:
            yield tx


class PgFindingTx(PostgresTx):
    """The persistence operations of one transaction; rows come back as plain dicts."""

    def __init__(self, conn):
        super().__init__(conn)
        self._tags: dict[int, list[str]] = {}    # tags fetched with search rows (a finding's tags never change)

    def _one(self, sql: str, params: tuple) -> dict | None:
        return self.conn.execute(sql, params).fetchone()

    def _all(self, sql: str, params: tuple) -> list[dict]:
        return self.conn.execute(sql, params).fetchall()

    # -- findings ---------------------------------------------------------------------------------
    def finding(self, project: str, finding_id: str) -> dict | None:
        return _finding(self._one(f"SELECT {_SELECT} FROM findings f WHERE f.id = %s AND f.project = %s",
                                  (finding_id, project)))

    def add_finding(self, record: dict, tags: list[str]) -> int:
        """Insert a finding (version 1), its tags and its search terms; returns its seq."""
        seq = self._one(
            "INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, lifecycle_state, "
            "scope_json, retrieval_policy, version, created_at, updated_at, last_validated_at, search) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s::tsvector) RETURNING seq",
            (record["id"], record["project"], record["claim_kind"], record["statement"], record["details"],
             record["epistemic_state"], record["lifecycle_state"], _json(record["scope"]),
             record["retrieval_policy"], record["created_at"], record["created_at"], record["last_validated_at"],
             tsvector_text(record["statement"] + "\n" + record["details"])))["seq"]
        if tags:        # one statement, one round trip
            self.conn.execute("INSERT INTO finding_tags (finding_seq, tag) SELECT %s, unnest(%s::text[])",
                              (seq, list(tags)))
        return seq

    def update_finding(self, seq: int, version: int, at: str, columns: dict) -> bool:
        """Set `columns` and version+1 if the finding is still at `version` (no lost update)."""
        values = dict(columns)
        if "scope" in values:
            values["scope_json"] = _json(values.pop("scope"))
        sets = "".join(f", {name} = %s" for name in values)
        done = self.conn.execute(f"UPDATE findings SET version = %s, updated_at = %s{sets} "
                                 "WHERE seq = %s AND version = %s", (version + 1, at, *values.values(), seq, version))
        return done.rowcount == 1

    def tags(self, seq: int) -> list[str]:
        if seq in self._tags:
            return list(self._tags[seq])
        return [r["tag"] for r in self._all("SELECT tag FROM finding_tags WHERE finding_seq = %s ORDER BY tag",
                                            (seq,))]

    def search(self, project: str, *, keyword: str | None, tags: list[str], lifecycles: list[str] | None,
               epistemic: list[str] | None) -> Iterator[dict] | None:
        """The project's findings passing the filters, newest first (lazily, through a server-side
        cursor); None when `keyword` has no searchable character."""
        where, params = ["f.project = %s"], [project]
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
        pages = self.pages(f"SELECT {_SELECT} FROM findings f WHERE {' AND '.join(where)} ORDER BY f.seq DESC",
                           params)
        return (_finding(row) for page in pages for row in self._with_tags(page))

    def _with_tags(self, page: list[dict]) -> list[dict]:
        """Fetch the tags of a page of findings in one query, kept for `tags()`: one round trip per
        page instead of one per listed finding."""
        seqs = [row["seq"] for row in page]
        for seq in seqs:
            self._tags[seq] = []
        for row in self._all("SELECT finding_seq, tag FROM finding_tags WHERE finding_seq = ANY(%s) "
                             "ORDER BY finding_seq, tag", (seqs,)):
            self._tags[row["finding_seq"]].append(row["tag"])
        return page

    # -- evidence ---------------------------------------------------------------------------------
    def evidence(self, project: str, evidence_id: str) -> dict | None:
        return self._one("SELECT seq, id FROM evidence WHERE id = %s AND project = %s", (evidence_id, project))

    def evidence_by_source(self, project: str, source_ref: str, locator: str) -> list[dict]:
        """Evidence with this source_ref and locator, oldest first."""
        return self._all("SELECT seq, id, source_kind, revision, content_hash, excerpt FROM evidence "
                         "WHERE project = %s AND source_ref = %s AND locator = %s ORDER BY seq",
                         (project, source_ref, locator))

    def add_evidence(self, record: dict) -> int:
        return self._one(
            "INSERT INTO evidence (id, project, source_kind, source_ref, locator, revision, content_hash, "
            "excerpt, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING seq",
            (record["id"], record["project"], record["source_kind"], record["source_ref"], record["locator"],
             record["revision"], record["content_hash"], record["excerpt"], record["created_at"]))["seq"]

    def link_evidence(self, finding_seq: int, evidence_seq: int, relation: str, method: str, rationale: str,
                      at: str) -> bool:
        """Link evidence to a finding; False when that exact link exists already."""
        done = self.conn.execute(
            "INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (finding_seq, evidence_seq, relation, method, rationale, at))
        return done.rowcount == 1

    def links(self, finding_seq: int) -> list[dict]:
        rows = self._all(
            "SELECT e.id, fe.relation, fe.method FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq "
            "WHERE fe.finding_seq = %s ORDER BY fe.created_at, e.seq, fe.relation", (finding_seq,))
        return [{"evidence_id": r["id"], "relation": r["relation"], "method": r["method"]} for r in rows]

    def linked_evidence(self, finding_seq: int, relation: str | None = None, *, limit: int = -1,
                        offset: int = 0) -> list[dict]:
        """The evidence records linked to the finding with their link (relation, method, rationale,
        linked_at), in link order; only one relation's when given; a page of `limit` from `offset`
        (-1: all)."""
        sql = ("SELECT e.id, e.source_kind, e.source_ref, e.locator, e.revision, e.content_hash, e.excerpt, "
               "fe.relation, fe.method, fe.rationale, fe.created_at AS linked_at "
               "FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq WHERE fe.finding_seq = %s "
               + ("AND fe.relation = %s " if relation else "") + "ORDER BY fe.created_at, e.seq, fe.relation "
               "LIMIT %s OFFSET %s")
        params = ((finding_seq, relation) if relation else (finding_seq,)) + (None if limit < 0 else limit, offset)
        return self._all(sql, params)

    def evidence_links(self, finding_seq: int) -> int:
        """How many evidence links the finding has."""
        return self._one("SELECT COUNT(*) AS n FROM finding_evidence WHERE finding_seq = %s", (finding_seq,))["n"]

    # -- relations between findings ---------------------------------------------------------------
    def reaches(self, start_seq: int, relation: str, goal_seq: int) -> bool:
        """Does a chain of `relation` links lead from start to goal?"""
        return self._one(
            "WITH RECURSIVE reach(seq) AS (SELECT %s::bigint UNION SELECT r.to_seq FROM finding_relations r "
            "JOIN reach ON r.from_seq = reach.seq WHERE r.relation = %s) SELECT 1 AS hit FROM reach "
            "WHERE seq = %s LIMIT 1", (start_seq, relation, goal_seq)) is not None

    def add_relation(self, from_seq: int, relation: str, to_seq: int, note: str, at: str) -> bool:
        done = self.conn.execute("INSERT INTO finding_relations (from_seq, relation, to_seq, note, created_at) "
                                 "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                 (from_seq, relation, to_seq, note, at))
        return done.rowcount == 1

    def relations(self, seq: int) -> list[dict]:
        return self._all(
            "SELECT 'outgoing'::text COLLATE \"C\" AS direction, r.relation, f.id, f.statement, f.epistemic_state, "
            "f.lifecycle_state, r.note, r.created_at FROM finding_relations r JOIN findings f ON f.seq = r.to_seq "
            "WHERE r.from_seq = %s UNION ALL SELECT 'incoming', r.relation, f.id, f.statement, f.epistemic_state, "
            "f.lifecycle_state, r.note, r.created_at FROM finding_relations r JOIN findings f ON f.seq = r.from_seq "
            "WHERE r.to_seq = %s ORDER BY 8, 1, 2, 3", (seq, seq))

    # -- events -----------------------------------------------------------------------------------
    def add_event(self, record: dict) -> None:
        self.conn.execute(
            "INSERT INTO finding_events (id, finding_seq, kind, tool, from_state, to_state, reason, payload_json, "
            "version, at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (record["id"], record["finding_seq"], record["kind"], record["tool"], record["from_state"],
             record["to_state"], record["reason"], _json(record["payload"]), record["version"], record["at"]))

    def events(self, seq: int, limit: int) -> tuple[list[dict], int]:
        """The last `limit` events of a finding, oldest first, and how many it has in all."""
        rows = self._all("SELECT * FROM (SELECT * FROM finding_events WHERE finding_seq = %s ORDER BY seq DESC "
                         "LIMIT %s) last ORDER BY seq", (seq, limit))
        events = []
        for event in rows:
            event["payload"] = json.loads(event.pop("payload_json"))
            events.append(event)
        total = self._one("SELECT COUNT(*) AS n FROM finding_events WHERE finding_seq = %s", (seq,))["n"]
        return events, total

    # -- documents and rule proposals -------------------------------------------------------------
    def add_document_link(self, record: dict) -> bool:
        done = self.conn.execute(
            "INSERT INTO document_links (id, finding_seq, target_kind, target, relation, note, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (finding_seq, target_kind, target, relation) DO NOTHING",
            (record["id"], record["finding_seq"], record["target_kind"], record["target"], record["relation"],
             record["note"], record["created_at"]))
        return done.rowcount == 1

    def documents(self, seq: int) -> list[dict]:
        return self._all("SELECT * FROM document_links WHERE finding_seq = %s ORDER BY seq", (seq,))

    def add_proposal(self, record: dict) -> None:
        self.conn.execute(
            "INSERT INTO rule_proposals (id, project, finding_seq, rule_text, target_path, rationale, status, version, "
            "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, 1, %s)",
            (record["id"], record["project"], record["finding_seq"], record["rule_text"], record["target_path"],
             record["rationale"], record["status"], record["created_at"]))

    def proposal(self, project: str, proposal_id: str) -> dict | None:
        return self._one("SELECT p.*, f.id AS finding_id, f.version AS finding_version FROM rule_proposals p "
                         "JOIN findings f ON f.seq = p.finding_seq WHERE p.id = %s AND p.project = %s",
                         (proposal_id, project))

    def proposals(self, seq: int) -> list[dict]:
        return self._all("SELECT * FROM rule_proposals WHERE finding_seq = %s ORDER BY seq", (seq,))

    def decide_proposal(self, seq: int, version: int, status: str, at: str, by: str, note: str) -> bool:
        done = self.conn.execute("UPDATE rule_proposals SET status = %s, version = version + 1, decided_at = %s, "
                                 "decided_by = %s, decision_note = %s WHERE seq = %s AND version = %s",
                                 (status, at, by, note, seq, version))
        return done.rowcount == 1

    # -- idempotency ------------------------------------------------------------------------------
    def remembered(self, project: str, key: str) -> dict | None:
        row = self._one("SELECT tool, payload_hash, response FROM idempotency_keys WHERE project = %s AND key = %s",
                        (project, key))
        return None if row is None else {"tool": row["tool"], "payload_hash": row["payload_hash"],
                                         "response": json.loads(row["response"])}

    def remember(self, project: str, key: str, tool: str, payload_hash: str, response: dict, at: str) -> None:
        self.conn.execute("INSERT INTO idempotency_keys (project, key, tool, payload_hash, response, created_at) "
                          "VALUES (%s, %s, %s, %s, %s, %s)", (project, key, tool, payload_hash, _json(response), at))
