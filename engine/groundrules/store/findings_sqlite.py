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

import os
import stat
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from ..core.errors import StorageFailure
from . import sqlite_base
from .cjk_search import grams, match_expression
from .findings_sql import INSERT_FINDING, UNKNOWN_WRITER_JSON, FindingOps, finding_row, finding_values
from .sqlite_base import failures
from .lifecycle import Lifecycle

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
    (3, "one evidence record per source and content, one first record per source", """
-- SQLite has one writer at a time, so these never refuse the domain's own writes; they hold the
-- same invariants as on PostgreSQL, where concurrent appends rely on them.
ALTER TABLE evidence ADD COLUMN first_of_source INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX evidence_one_per_content ON evidence(project, source_ref, locator, source_kind, revision,
                                                         content_hash);
DROP INDEX evidence_by_source;
CREATE UNIQUE INDEX evidence_first_of_source ON evidence(project, source_ref, locator) WHERE first_of_source;
"""),
    (4, "a finding's rule proposals by finding", """
CREATE INDEX rule_proposals_by_finding ON rule_proposals(finding_seq, seq);
"""),
    (5, "every link and event names its writer", f"""
-- Rows written before writers were stamped say so: the writer unknown, which no table trusts.
ALTER TABLE finding_evidence ADD COLUMN writer_json TEXT NOT NULL DEFAULT '{UNKNOWN_WRITER_JSON}';
ALTER TABLE finding_evidence ADD COLUMN finding_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE finding_evidence ADD COLUMN source_check TEXT NOT NULL DEFAULT 'unchecked';
ALTER TABLE finding_events ADD COLUMN writer_json TEXT NOT NULL DEFAULT '{UNKNOWN_WRITER_JSON}';
CREATE TRIGGER finding_evidence_append_only_u BEFORE UPDATE ON finding_evidence
BEGIN SELECT RAISE(ABORT, 'finding evidence links are append-only'); END;
CREATE TRIGGER finding_evidence_append_only_d BEFORE DELETE ON finding_evidence
BEGIN SELECT RAISE(ABORT, 'finding evidence links are append-only'); END;
"""),
)

LATEST = MIGRATIONS[-1][0]
MIGRATIONS_TABLE = "schema_migrations"

class SqliteFindingStore:
    """One connection to one ledger file; `write()` / `read()` are the only ways to touch it, one
    transaction at a time (a lock: the connection is shared by the caller's threads).

    `on_connect(conn)` runs once on the fresh connection: hosts use it for extra pragmas, fault
    tests to install a failing TEMP trigger inside a real transaction.
    """

    kind = "sqlite"  # the backend (backends.py), as a server reports it

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", busy_timeout_ms: int = 5000,
                 on_connect: Callable[[sqlite3.Connection], None] | None = None, read_only: bool = False):
        if synchronous not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}")
        self.path = str(path)
        self.read_only = read_only
        self._lock = threading.RLock()
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

    def run_write(self, body: Callable[["FindingTx"], T], *, appends_only: bool = False,
                  lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` in one write transaction, returning after COMMIT (the write lock is taken up
        front, so nothing here is ever retried, and every write is serializable: `appends_only`
        changes nothing)."""
        with self.write(lifecycle=lifecycle) as tx:
            return body(tx)

    @contextmanager
    def write(self, *, lifecycle: Lifecycle | None = None) -> Iterator["FindingTx"]:
        """One write transaction: committed when the block ends, rolled back on any exception,
        including a COMMIT that fails."""
        with sqlite_base.transaction(self.conn, self._lock, write=True, lifecycle=lifecycle):
            yield FindingTx(self.conn)

    @contextmanager
    def read(self) -> Iterator["FindingTx"]:
        """One read transaction: every statement in the block sees the same snapshot."""
        with sqlite_base.transaction(self.conn, self._lock, write=False):
            yield FindingTx(self.conn)

    def close(self) -> None:
        with self._lock:
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




class FindingTx(sqlite_base.SqliteStatements, FindingOps):
    """The persistence operations of one transaction (findings_sql) on one SQLite connection."""

    def __init__(self, conn: sqlite3.Connection):
        sqlite_base.SqliteStatements.__init__(self, conn)
        FindingOps.__init__(self)

    def add_finding(self, record: dict, tags: list[str]) -> int:
        """Insert a finding (version 1), its tags and its search terms; returns its seq."""
        seq = self._insert(f"{INSERT_FINDING}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", finding_values(record))
        self.conn.executemany("INSERT INTO finding_tags (finding_seq, tag) VALUES (?, ?)",
                              [(seq, tag) for tag in tags])
        self.conn.execute("INSERT INTO findings_search (rowid, grams) VALUES (?, ?)",
                          (seq, grams(record["statement"] + "\n" + record["details"])))
        return self._created_finding(seq)

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
        return (finding_row(row) for row in rows)


def schema_version(conn: sqlite3.Connection) -> int:
    return sqlite_base.version(conn, MIGRATIONS_TABLE)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every pending migration in one transaction; safe when processes race."""
    return sqlite_base.migrate(conn, MIGRATIONS, MIGRATIONS_TABLE)
