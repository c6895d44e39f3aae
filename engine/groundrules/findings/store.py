"""The SQLite store: connection settings, versioned migrations, and one transaction per call.

WAL journal with synchronous=NORMAL (or stricter, by parameter): a committed transaction survives
a crash of the process; readers never block the writer. Writes take the write lock up front
(BEGIN IMMEDIATE) so a version check and the update it guards see the same database.
Findings and events are never deleted or rewritten: triggers refuse it, whatever the caller does.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

SYNCHRONOUS = ("NORMAL", "FULL", "EXTRA")

# (version, name, SQL). Append only: a released migration is never edited.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "core tables", """
CREATE TABLE findings (
    seq               INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    project           TEXT NOT NULL,
    claim_kind        TEXT NOT NULL,
    statement         TEXT NOT NULL,
    details           TEXT NOT NULL DEFAULT '',
    epistemic_state   TEXT NOT NULL,
    lifecycle_state   TEXT NOT NULL,
    scope_json        TEXT NOT NULL,
    retrieval_policy  TEXT NOT NULL,
    version           INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    last_validated_at TEXT
);
CREATE INDEX findings_by_project ON findings(project, seq);
CREATE TRIGGER findings_never_deleted BEFORE DELETE ON findings
BEGIN SELECT RAISE(ABORT, 'findings are never deleted'); END;
CREATE TRIGGER findings_meaning_fixed BEFORE UPDATE OF id, project, claim_kind, statement, details ON findings
BEGIN SELECT RAISE(ABORT, 'a finding''s meaning is never rewritten; supersede it'); END;

CREATE TABLE finding_tags (
    finding_seq INTEGER NOT NULL REFERENCES findings(seq),
    tag         TEXT NOT NULL,
    PRIMARY KEY (finding_seq, tag)
) WITHOUT ROWID;
CREATE INDEX finding_tags_by_tag ON finding_tags(tag, finding_seq);

CREATE TABLE evidence (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    project      TEXT NOT NULL,
    source_kind  TEXT NOT NULL,
    source_ref   TEXT NOT NULL,
    locator      TEXT NOT NULL DEFAULT '',
    revision     TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    excerpt      TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL
);
CREATE INDEX evidence_by_source ON evidence(project, source_ref, locator);

CREATE TABLE finding_evidence (
    finding_seq  INTEGER NOT NULL REFERENCES findings(seq),
    evidence_seq INTEGER NOT NULL REFERENCES evidence(seq),
    relation     TEXT NOT NULL,
    method       TEXT NOT NULL,
    rationale    TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    PRIMARY KEY (finding_seq, evidence_seq, relation)
) WITHOUT ROWID;

CREATE TABLE finding_relations (
    from_seq   INTEGER NOT NULL REFERENCES findings(seq),
    relation   TEXT NOT NULL,
    to_seq     INTEGER NOT NULL REFERENCES findings(seq),
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (from_seq, relation, to_seq)
) WITHOUT ROWID;
CREATE INDEX finding_relations_to ON finding_relations(to_seq, relation);

CREATE TABLE finding_events (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    finding_seq  INTEGER NOT NULL REFERENCES findings(seq),
    kind         TEXT NOT NULL,
    tool         TEXT NOT NULL,
    from_state   TEXT,
    to_state     TEXT,
    reason       TEXT NOT NULL DEFAULT '',
    payload_json TEXT NOT NULL DEFAULT '{}',
    version      INTEGER NOT NULL,
    at           TEXT NOT NULL
);
CREATE INDEX finding_events_by_finding ON finding_events(finding_seq, seq);
CREATE TRIGGER finding_events_append_only_u BEFORE UPDATE ON finding_events
BEGIN SELECT RAISE(ABORT, 'finding events are append-only'); END;
CREATE TRIGGER finding_events_append_only_d BEFORE DELETE ON finding_events
BEGIN SELECT RAISE(ABORT, 'finding events are append-only'); END;

CREATE TABLE document_links (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    finding_seq INTEGER NOT NULL REFERENCES findings(seq),
    target_kind TEXT NOT NULL,
    target      TEXT NOT NULL,
    relation    TEXT NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    UNIQUE (finding_seq, target_kind, target, relation)
);

CREATE TABLE rule_proposals (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    project       TEXT NOT NULL,
    finding_seq   INTEGER NOT NULL REFERENCES findings(seq),
    rule_text     TEXT NOT NULL,
    target_path   TEXT NOT NULL,
    rationale     TEXT NOT NULL,
    status        TEXT NOT NULL,
    version       INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    decided_at    TEXT,
    decided_by    TEXT,
    decision_note TEXT
);

CREATE TABLE idempotency_keys (
    project      TEXT NOT NULL,
    key          TEXT NOT NULL,
    tool         TEXT NOT NULL,
    payload_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (project, key)
) WITHOUT ROWID;
"""),
    (2, "keyword search index", """
-- Contentless FTS5 over bigram-expanded text (see search.py); rowid = findings.seq.
CREATE VIRTUAL TABLE findings_search USING fts5(grams, content='', tokenize='unicode61 remove_diacritics 2');
"""),
)

LATEST = MIGRATIONS[-1][0]


class Store:
    """One connection to one ledger file; `write()` / `read()` are the only ways to touch it.

    `on_connect(conn)` runs once on the fresh connection: hosts use it for extra pragmas, fault
    tests to install a failing TEMP trigger inside a real transaction.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000,
                 on_connect: Callable[[sqlite3.Connection], None] | None = None):
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        self.path = str(path)
        self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                    timeout=busy_timeout_ms / 1000)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal" and self.path != ":memory:":
            raise sqlite3.OperationalError("the ledger needs WAL journal mode")
        self.conn.execute(f"PRAGMA synchronous = {synchronous}")
        self.conn.execute("PRAGMA foreign_keys = ON")
        migrate(self.conn)
        if on_connect is not None:
            on_connect(self.conn)

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back on any exception,
        including a COMMIT that fails."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException:
            # a failed COMMIT (e.g. a deferred constraint, a full disk) leaves the transaction open
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every statement in the block sees the same snapshot."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    if row.fetchone() is None:
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration, each in its own transaction; safe when processes race."""
    if schema_version(conn) >= LATEST:
        return LATEST
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                     "name TEXT NOT NULL)")
        current = schema_version(conn)
        for version, name, sql in MIGRATIONS:
            if version <= current:
                continue
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name))
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return LATEST


def _statements(sql: str) -> Iterator[str]:
    """Split a script into complete statements (trigger bodies keep their inner semicolons)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.strip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()
