"""The finding ledger's SQLite store: connection settings, versioned migrations, transactions, and
the persistence operations the domain (groundrules.findings) asks for. Nothing here knows a state,
a guard or a rule: it stores and finds rows.

WAL journal with synchronous=NORMAL (or stricter, by parameter): a committed transaction survives
a crash of the process; readers never block the writer. Writes take the write lock up front
(BEGIN IMMEDIATE) so a version check and the update it guards see the same database.
Findings and events are never deleted or rewritten: triggers refuse it, whatever the caller does.
Every driver error leaves as a StorageFailure naming only the kind of failure.
"""
from __future__ import annotations

import json
import os
import stat
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from ..errors import StorageFailure
from . import sqlite_base
from .cjk_search import grams, match_expression
from .sqlite_base import failures

T = TypeVar("T")
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
MIGRATIONS_TABLE = "schema_migrations"

FINDING_COLUMNS = ("id", "project", "claim_kind", "statement", "details", "epistemic_state", "lifecycle_state",
                   "retrieval_policy", "version", "created_at", "updated_at", "last_validated_at")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _finding(row: sqlite3.Row | None) -> dict | None:
    if row is None:
        return None
    out = {k: row[k] for k in FINDING_COLUMNS}
    out["seq"] = row["seq"]
    out["scope"] = json.loads(row["scope_json"])
    return out


class SqliteFindingStore:
    """One connection to one ledger file; `write()` / `read()` are the only ways to touch it.

    `on_connect(conn)` runs once on the fresh connection: hosts use it for extra pragmas, fault
    tests to install a failing TEMP trigger inside a real transaction.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000,
                 on_connect: Callable[[sqlite3.Connection], None] | None = None, read_only: bool = False):
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        self.path = str(path)
        self.read_only = read_only
        with failures():
            _check_file(self.path, read_only)
            if read_only:       # no WAL switch, no migration, no file created: works in a read-only folder
                self.conn = sqlite3.connect(_read_only_uri(self.path), uri=True, isolation_level=None,
                                            check_same_thread=False, timeout=busy_timeout_ms / 1000)
                self.conn.row_factory = sqlite3.Row
                self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                if schema_version(self.conn) < LATEST:
                    raise StorageFailure("ledger_outdated")
                return
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                        timeout=busy_timeout_ms / 1000)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal" and self.path != ":memory:":
                raise StorageFailure("wal_unavailable")
            self.conn.execute(f"PRAGMA synchronous = {synchronous}")
            self.conn.execute("PRAGMA foreign_keys = ON")
            migrate(self.conn)
            if on_connect is not None:
                on_connect(self.conn)

    def run_write(self, body: Callable[["FindingTx"], T]) -> T:
        """`body(tx)` in one write transaction, returning after COMMIT (the write lock is taken up
        front, so nothing here is ever retried)."""
        with self.write() as tx:
            return body(tx)

    @contextmanager
    def write(self) -> Iterator["FindingTx"]:
        """One write transaction: committed when the block ends, rolled back on any exception,
        including a COMMIT that fails."""
        with failures():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield FindingTx(self.conn)
                self.conn.execute("COMMIT")
            except BaseException:
                # a failed COMMIT (e.g. a deferred constraint, a full disk) leaves the transaction open
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator["FindingTx"]:
        """One read transaction: every statement in the block sees the same snapshot."""
        with failures():
            self.conn.execute("BEGIN")
            try:
                yield FindingTx(self.conn)
            finally:
                self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.conn.close()


SQLITE_HEADER = b"SQLite format 3\x00"


def _check_file(path: str, read_only: bool) -> None:
    """Refuse, before SQLite sees it, what cannot be a ledger: a folder, a device or pipe, a file
    without SQLite's header; a missing file when only reading. Each is one StorageFailure kind."""
    if path == ":memory:":
        return
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if read_only:
            raise StorageFailure("ledger_missing") from None
        return
    except OSError:
        raise StorageFailure("ledger_unreadable") from None
    if stat.S_ISDIR(info.st_mode):
        raise StorageFailure("ledger_is_a_folder")
    if not stat.S_ISREG(info.st_mode):
        raise StorageFailure("ledger_not_a_file")
    if info.st_size == 0:
        if read_only:
            raise StorageFailure("ledger_empty")
        return
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError:
        raise StorageFailure("ledger_unreadable") from None
    if header != SQLITE_HEADER:
        raise StorageFailure("ledger_not_sqlite")


def _read_only_uri(path: str) -> str:
    """A read-only URI for `path`. In a folder nobody may write, SQLite cannot make the WAL index
    it needs even to read; no writer can exist there either, so the file is opened as immutable."""
    uri = Path(path).absolute().as_uri() + "?mode=ro"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.access(folder, os.W_OK) and not os.path.exists(path + "-wal"):
        uri += "&immutable=1"
    return uri




class FindingTx:
    """The persistence operations of one transaction; rows come back as plain dicts."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    # -- findings ---------------------------------------------------------------------------------
    def finding(self, project: str, finding_id: str) -> dict | None:
        return _finding(self.conn.execute("SELECT * FROM findings WHERE id = ? AND project = ?",
                                          (finding_id, project)).fetchone())

    def add_finding(self, record: dict, tags: list[str]) -> int:
        """Insert a finding (version 1), its tags and its search terms; returns its seq."""
        cur = self.conn.execute(
            "INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, lifecycle_state, "
            "scope_json, retrieval_policy, version, created_at, updated_at, last_validated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (record["id"], record["project"], record["claim_kind"], record["statement"], record["details"],
             record["epistemic_state"], record["lifecycle_state"], _json(record["scope"]),
             record["retrieval_policy"], record["created_at"], record["created_at"], record["last_validated_at"]))
        seq = cur.lastrowid
        self.conn.executemany("INSERT INTO finding_tags (finding_seq, tag) VALUES (?, ?)",
                              [(seq, tag) for tag in tags])
        self.conn.execute("INSERT INTO findings_search (rowid, grams) VALUES (?, ?)",
                          (seq, grams(record["statement"] + "\n" + record["details"])))
        return seq

    def update_finding(self, seq: int, version: int, at: str, columns: dict) -> bool:
        """Set `columns` and version+1 if the finding is still at `version` (no lost update)."""
        values = dict(columns)
        if "scope" in values:
            values["scope_json"] = _json(values.pop("scope"))
        sets = "".join(f", {name} = ?" for name in values)
        done = self.conn.execute(f"UPDATE findings SET version = ?, updated_at = ?{sets} WHERE seq = ? AND version = ?",
                                 (version + 1, at, *values.values(), seq, version))
        return done.rowcount == 1

    def tags(self, seq: int) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT tag FROM finding_tags WHERE finding_seq = ? ORDER BY tag",
                                                (seq,))]

    def search(self, project: str, *, keyword: str | None, tags: list[str], lifecycles: list[str] | None,
               epistemic: list[str] | None) -> Iterator[dict] | None:
        """The project's findings passing the filters, newest first (lazily); None when `keyword` has
        no searchable character."""
        where, params = ["f.project = ?"], [project]
        if lifecycles is not None:
            where.append(f"f.lifecycle_state IN ({','.join('?' * len(lifecycles))})")
            params += lifecycles
        if epistemic is not None:
            where.append(f"f.epistemic_state IN ({','.join('?' * len(epistemic))})")
            params += epistemic
        tags = list(tags)
        if keyword is not None:
            expression = match_expression(keyword)
            if expression is None:
                return None
            head, order, first = ("findings_search s CROSS JOIN findings f ON f.seq = s.rowid",
                                  "s.rowid DESC", ["findings_search MATCH ?"])
            params = [expression] + params
        elif tags:
            head, order, first = ("finding_tags t0 CROSS JOIN findings f ON f.seq = t0.finding_seq",
                                  "t0.tag DESC, t0.finding_seq DESC", ["t0.tag = ?"])
            params = [tags[0]] + params
            tags = tags[1:]
        else:
            head, order, first = "findings f", "f.seq DESC", []
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM finding_tags t WHERE t.finding_seq = f.seq AND t.tag = ?)")
            params.append(tag)
        rows = self.conn.execute(f"SELECT f.* FROM {head} WHERE {' AND '.join(first + where)} ORDER BY {order}",
                                 params)
        return (_finding(row) for row in rows)

    # -- evidence ---------------------------------------------------------------------------------
    def evidence(self, project: str, evidence_id: str) -> dict | None:
        row = self.conn.execute("SELECT seq, id FROM evidence WHERE id = ? AND project = ?",
                                (evidence_id, project)).fetchone()
        return dict(row) if row else None

    def evidence_by_source(self, project: str, source_ref: str, locator: str) -> list[dict]:
        """Evidence with this source_ref and locator, oldest first."""
        rows = self.conn.execute(
            "SELECT seq, id, source_kind, revision, content_hash, excerpt FROM evidence "
            "WHERE project = ? AND source_ref = ? AND locator = ? ORDER BY seq", (project, source_ref, locator))
        return [dict(r) for r in rows]

    def add_evidence(self, record: dict) -> int:
        cur = self.conn.execute(
            "INSERT INTO evidence (id, project, source_kind, source_ref, locator, revision, content_hash, "
            "excerpt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], record["project"], record["source_kind"], record["source_ref"], record["locator"],
             record["revision"], record["content_hash"], record["excerpt"], record["created_at"]))
        return cur.lastrowid

    def link_evidence(self, finding_seq: int, evidence_seq: int, relation: str, method: str, rationale: str,
                      at: str) -> bool:
        """Link evidence to a finding; False when that exact link exists already."""
        done = self.conn.execute(
            "INSERT OR IGNORE INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)", (finding_seq, evidence_seq, relation, method, rationale, at))
        return done.rowcount == 1

    def links(self, finding_seq: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT e.id, fe.relation, fe.method FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq "
            "WHERE fe.finding_seq = ? ORDER BY fe.created_at, e.seq, fe.relation", (finding_seq,))
        return [{"evidence_id": r[0], "relation": r[1], "method": r[2]} for r in rows]

    def linked_evidence(self, finding_seq: int, relation: str | None = None, *, limit: int = -1,
                        offset: int = 0) -> list[dict]:
        """The evidence records linked to the finding with their link (relation, method, rationale,
        linked_at), in link order; only one relation's when given; a page of `limit` from `offset`
        (-1: all)."""
        sql = ("SELECT e.id, e.source_kind, e.source_ref, e.locator, e.revision, e.content_hash, e.excerpt, "
               "fe.relation, fe.method, fe.rationale, fe.created_at AS linked_at "
               "FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq WHERE fe.finding_seq = ? "
               + ("AND fe.relation = ? " if relation else "") + "ORDER BY fe.created_at, e.seq, fe.relation "
               "LIMIT ? OFFSET ?")
        params = ((finding_seq, relation) if relation else (finding_seq,)) + (limit, offset)
        return [dict(r) for r in self.conn.execute(sql, params)]

    def evidence_links(self, finding_seq: int) -> int:
        """How many evidence links the finding has."""
        return self.conn.execute("SELECT COUNT(*) FROM finding_evidence WHERE finding_seq = ?",
                                 (finding_seq,)).fetchone()[0]

    # -- relations between findings ---------------------------------------------------------------
    def reaches(self, start_seq: int, relation: str, goal_seq: int) -> bool:
        """Does a chain of `relation` links lead from start to goal?"""
        return self.conn.execute(
            "WITH RECURSIVE reach(seq) AS (SELECT ? UNION SELECT r.to_seq FROM finding_relations r "
            "JOIN reach ON r.from_seq = reach.seq WHERE r.relation = ?) SELECT 1 FROM reach WHERE seq = ? LIMIT 1",
            (start_seq, relation, goal_seq)).fetchone() is not None

    def add_relation(self, from_seq: int, relation: str, to_seq: int, note: str, at: str) -> bool:
        done = self.conn.execute("INSERT OR IGNORE INTO finding_relations (from_seq, relation, to_seq, note, "
                                 "created_at) VALUES (?, ?, ?, ?, ?)", (from_seq, relation, to_seq, note, at))
        return done.rowcount == 1

    def relations(self, seq: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT 'outgoing' AS direction, r.relation, f.id, f.statement, f.epistemic_state, f.lifecycle_state, "
            "r.note, r.created_at FROM finding_relations r JOIN findings f ON f.seq = r.to_seq WHERE r.from_seq = ? "
            "UNION ALL SELECT 'incoming', r.relation, f.id, f.statement, f.epistemic_state, f.lifecycle_state, "
            "r.note, r.created_at FROM finding_relations r JOIN findings f ON f.seq = r.from_seq WHERE r.to_seq = ? "
            "ORDER BY 8, 1, 2, 3", (seq, seq))
        return [dict(r) for r in rows]

    # -- events -----------------------------------------------------------------------------------
    def add_event(self, record: dict) -> None:
        self.conn.execute(
            "INSERT INTO finding_events (id, finding_seq, kind, tool, from_state, to_state, reason, payload_json, "
            "version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], record["finding_seq"], record["kind"], record["tool"], record["from_state"],
             record["to_state"], record["reason"], _json(record["payload"]), record["version"], record["at"]))

    def events(self, seq: int, limit: int) -> tuple[list[dict], int]:
        """The last `limit` events of a finding, oldest first, and how many it has in all."""
        rows = self.conn.execute("SELECT * FROM (SELECT * FROM finding_events WHERE finding_seq = ? ORDER BY seq DESC "
                                 "LIMIT ?) ORDER BY seq", (seq, limit))
        events = []
        for r in rows:
            event = dict(r)
            event["payload"] = json.loads(event.pop("payload_json"))
            events.append(event)
        total = self.conn.execute("SELECT COUNT(*) FROM finding_events WHERE finding_seq = ?", (seq,)).fetchone()[0]
        return events, total

    # -- documents and rule proposals -------------------------------------------------------------
    def add_document_link(self, record: dict) -> bool:
        done = self.conn.execute(
            "INSERT OR IGNORE INTO document_links (id, finding_seq, target_kind, target, relation, note, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", (record["id"], record["finding_seq"], record["target_kind"],
                                             record["target"], record["relation"], record["note"], record["created_at"]))
        return done.rowcount == 1

    def documents(self, seq: int) -> list[dict]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM document_links WHERE finding_seq = ? ORDER BY seq",
                                                   (seq,))]

    def add_proposal(self, record: dict) -> None:
        self.conn.execute(
            "INSERT INTO rule_proposals (id, project, finding_seq, rule_text, target_path, rationale, status, version, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (record["id"], record["project"], record["finding_seq"], record["rule_text"], record["target_path"],
             record["rationale"], record["status"], record["created_at"]))

    def proposal(self, project: str, proposal_id: str) -> dict | None:
        row = self.conn.execute("SELECT p.*, f.id AS finding_id, f.version AS finding_version FROM rule_proposals p "
                                "JOIN findings f ON f.seq = p.finding_seq WHERE p.id = ? AND p.project = ?",
                                (proposal_id, project)).fetchone()
        return dict(row) if row else None

    def proposals(self, seq: int) -> list[dict]:
        return [dict(r) for r in self.conn.execute("SELECT * FROM rule_proposals WHERE finding_seq = ? ORDER BY seq",
                                                   (seq,))]

    def decide_proposal(self, seq: int, version: int, status: str, at: str, by: str, note: str) -> bool:
        done = self.conn.execute("UPDATE rule_proposals SET status = ?, version = version + 1, decided_at = ?, "
                                 "decided_by = ?, decision_note = ? WHERE seq = ? AND version = ?",
                                 (status, at, by, note, seq, version))
        return done.rowcount == 1

    # -- idempotency ------------------------------------------------------------------------------
    def remembered(self, project: str, key: str) -> dict | None:
        row = self.conn.execute("SELECT tool, payload_hash, response FROM idempotency_keys WHERE project = ? AND key = ?",
                                (project, key)).fetchone()
        return None if row is None else {"tool": row["tool"], "payload_hash": row["payload_hash"],
                                         "response": json.loads(row["response"])}

    def remember(self, project: str, key: str, tool: str, payload_hash: str, response: dict, at: str) -> None:
        self.conn.execute("INSERT INTO idempotency_keys (project, key, tool, payload_hash, response, created_at) "
                          "VALUES (?, ?, ?, ?, ?, ?)", (project, key, tool, payload_hash, _json(response), at))


def schema_version(conn: sqlite3.Connection) -> int:
    return sqlite_base.version(conn, MIGRATIONS_TABLE)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in one transaction; safe when processes race."""
    return sqlite_base.migrate(conn, MIGRATIONS, MIGRATIONS_TABLE)
