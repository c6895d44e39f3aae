"""The append-only evidence ledger: SQLite by default, a dict-backed twin for tests.

A record is appended once and never rewritten. The one exception is the audited redaction path
(`redact`): it appends a redaction event (who, why, when) and replaces the record's personal fields
by tombstones holding their sha256; the record, its locator and every other field stay. In SQLite
this is enforced by triggers, not by this class: DELETE is refused, an INSERT that would replace a
row is refused, and the only UPDATE allowed clears `personal` of an unredacted row while pointing at
a redaction event for that very row. Ids and the clock are injected; nothing here reads the time.
"""
from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, Callable

from .. import rulebook as rulebooks
from ..errors import GroundrulesError
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..rulebook import Rulebook
from . import records as rec
from .contract import record_problem
from .fold import fold, tables


SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS records (
  seq          INTEGER PRIMARY KEY AUTOINCREMENT,
  id           TEXT NOT NULL UNIQUE,
  type         TEXT NOT NULL,
  message_id   TEXT,
  lock_id      TEXT,
  recorded_at  TEXT NOT NULL,
  body         TEXT NOT NULL,
  personal     TEXT,
  digests      TEXT NOT NULL,
  redaction_id TEXT
);
CREATE INDEX IF NOT EXISTS records_message ON records(message_id);
CREATE INDEX IF NOT EXISTS records_lock ON records(lock_id);
CREATE TABLE IF NOT EXISTS redactions (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  record_id  TEXT NOT NULL,
  event      TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: records are never deleted'); END;
CREATE TRIGGER IF NOT EXISTS records_no_replace BEFORE INSERT ON records
WHEN EXISTS (SELECT 1 FROM records WHERE id = NEW.id OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: a record id is never reused'); END;
CREATE TRIGGER IF NOT EXISTS records_only_redaction BEFORE UPDATE ON records
WHEN NOT (NEW.seq IS OLD.seq AND NEW.id IS OLD.id AND NEW.type IS OLD.type
          AND NEW.message_id IS OLD.message_id AND NEW.lock_id IS OLD.lock_id
          AND NEW.recorded_at IS OLD.recorded_at AND NEW.body IS OLD.body AND NEW.digests IS OLD.digests
          AND OLD.redaction_id IS NULL AND OLD.personal IS NOT NULL
          AND NEW.personal IS NULL AND NEW.redaction_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM redactions r WHERE r.id = NEW.redaction_id AND r.record_id = OLD.id))
BEGIN SELECT RAISE(ABORT, 'evidence ledger is append-only: only the audited redaction may clear personal fields'); END;
CREATE TRIGGER IF NOT EXISTS redactions_no_update BEFORE UPDATE ON redactions
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS redactions_no_delete BEFORE DELETE ON redactions
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS redactions_no_replace BEFORE INSERT ON redactions
WHEN EXISTS (SELECT 1 FROM redactions WHERE id = NEW.id OR seq = NEW.seq)
BEGIN SELECT RAISE(ABORT, 'redaction events are append-only'); END;
"""


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Ledger:
    """What both stores share: checking, (de)serialising and redacting records. Subclasses only
    store rows: `_insert`, `_rows`, `_row`, `_owner`, `_clear`, `_redaction_rows`."""

    def __init__(self, *, ids: Callable[[], str], clock: Callable[[], str], rulebook: Rulebook | None = None):
        self._ids, self._clock = ids, clock
        self._book = rulebook or rulebooks.default()
        self._catalogue, _, self._refusals = tables(self._book)

    # -- appending ------------------------------------------------------------------------------
    def append(self, record: dict) -> dict:
        """Check one record and append it; returns it as stored (with id, observed_at, recorded_at)."""
        return self.append_all([record])[0]

    def append_message(self, message: dict, locks: list | None = None) -> list[dict]:
        """Append a message record and its lock records in one step. `locks` defaults to
        `groundrules.lock` over the message, so a stored message never lacks its locks."""
        if locks is None:
            from ..locks import lock
            text = message.get("content")
            locks = lock({"id": message.get("message_id", message.get("id")), "role": message.get("role"),
                          "state": message.get("state"), "content": text}, self._book)
        return self.append_all([message] + [{"id": c["id"], "type": "lock", "lock": c} for c in locks])

    def append_all(self, records: list) -> list[dict]:
        """Append several records atomically: all of them, or none when one is refused."""
        rows, stored, pending = [], [], {}
        now = self._clock()
        for n, raw in enumerate(records):
            record = self._prepare(raw, now, f"records[{n}]")
            self._check(record, pending, f"records[{n}]")
            row = self._to_row(record)
            pending[record["id"]] = row
            for name in (row["message_id"], row["lock_id"]):
                if name:
                    pending[name] = row
            rows.append(row)
            stored.append(record)
        self._insert(rows)
        return stored

    def _prepare(self, raw: Any, now: str, at: str) -> dict:
        if not isinstance(raw, dict):
            raise self._refusals.error("PAYLOAD_INVALID", problem=f"{at}: a record is an object")
        record = dict(raw)
        record.setdefault("id", self._ids())
        record.setdefault("observed_at", now)
        record["recorded_at"] = now
        problem = record_problem(self._book.schemas, record, at)
        if problem:
            raise self._refusals.error("PAYLOAD_INVALID", problem=problem)
        if "redaction" in record or any(rec.is_tombstone(v) for v in rec.holder(record).values()):
            raise self._refusals.error("PAYLOAD_INVALID", problem=f"{at}: a record is appended unredacted; "
                                       "use redact() to remove personal data")
        return record

    def _check(self, record: dict, pending: dict, at: str) -> None:
        names = [(record["id"], "id")]
        mid = rec.message_id(record)
        if record["type"] == "message" and mid != record["id"]:
            names.append((mid, "message_id"))
        if record["type"] == "lock" and record["lock"]["id"] != record["id"]:
            names.append((record["lock"]["id"], "lock.id"))
        for name, key in names:
            if name in pending or self._owner(name) is not None:
                raise self._refusals.error("DUPLICATE_ID", id=name, at=f"{at}.{key}")
        if record["type"] == "lock":
            loc = record["lock"]["locator"]
            message = self._message(loc["message_id"], pending)
            if message is None:
                raise self._refusals.error("UNKNOWN_EVIDENCE", ref=loc["message_id"],
                                           at=f"{at}.lock.locator.message_id")
            if rec.span_problem(message["content"], loc["start"], loc["end"], record["lock"]["quote"]) == "mismatch":
                raise self._refusals.error("QUOTE_MISMATCH", at=f"{at}.lock", message_id=loc["message_id"],
                                           start=loc["start"], end=loc["end"])
        if record["type"] == "derived":
            for n, ref in enumerate(record["derived_from"]):
                if ref not in pending and self._owner(ref) is None:
                    raise self._refusals.error("UNKNOWN_EVIDENCE", ref=ref, at=f"{at}.derived_from[{n}]")

    def _message(self, mid: str, pending: dict) -> dict | None:
        row = pending.get(mid)
        if row is None:
            owner = self._owner(mid)
            row = self._row(owner) if owner is not None else None
        if row is None or row["type"] != "message":
            return None
        return self._from_row(row)

    # -- rows -----------------------------------------------------------------------------------
    def _fields(self, record: dict) -> tuple:
        return self._catalogue.records[record["type"]].personal

    def _to_row(self, record: dict) -> dict:
        personal = rec.personal(record, self._fields(record))
        body = json.loads(_dumps(record))
        box = rec.holder(body)
        for f in personal:
            box[f] = None
        return {"id": record["id"], "type": record["type"],
                "message_id": rec.message_id(record) if record["type"] == "message" else None,
                "lock_id": record["lock"]["id"] if record["type"] == "lock" else None,
                "recorded_at": record["recorded_at"], "body": _dumps(body), "personal": _dumps(personal),
                "digests": _dumps({f: rec.digest(v) for f, v in personal.items()}), "redaction_id": None}

    def _from_row(self, row: dict) -> dict:
        try:
            record = json.loads(row["body"])
            box = rec.holder(record)
            if row["personal"] is not None:
                box.update(json.loads(row["personal"]))
            else:
                for f, sha in json.loads(row["digests"]).items():
                    box[f] = rec.tombstone(sha, row["redaction_id"])
                record["redaction"] = self._redaction_event(row["redaction_id"])
            return record
        except (ValueError, KeyError, TypeError):
            raise self._refusals.error("LEDGER_CORRUPT", record=row.get("id")) from None

    def _redaction_event(self, redaction_id: str) -> dict:
        for row in self._redaction_rows():
            if row["id"] == redaction_id:
                return json.loads(row["event"])
        raise KeyError(redaction_id)

    # -- reading --------------------------------------------------------------------------------
    def records(self) -> list[dict]:
        """Every record in append order; redacted personal fields read as tombstones."""
        return [self._from_row(row) for row in self._rows()]

    def get(self, record_id: str) -> dict:
        owner = self._owner(record_id)
        if owner is None:
            raise self._refusals.error("UNKNOWN_EVIDENCE", ref=record_id, at="get")
        return self._from_row(self._row(owner))

    def redactions(self) -> list[dict]:
        return [json.loads(row["event"]) for row in self._redaction_rows()]

    def fold(self, interpretations: list, now: str) -> dict:
        """The fold of this ledger's records with `interpretations` at `now`."""
        return fold({"now": now, "records": self.records(), "interpretations": interpretations}, self._book)

    # -- the one audited change -----------------------------------------------------------------
    def redact(self, record_id: str, *, by: str, reason: str) -> list[dict]:
        """Replace the personal fields of a record (and of the locks inside a message) by sha256
        tombstones, recording who and why. Returns the redaction events it appended."""
        if not (isinstance(by, str) and by and isinstance(reason, str) and reason):
            raise self._refusals.error("PAYLOAD_INVALID", problem="redact needs a non-empty 'by' and 'reason'")
        owner = self._owner(record_id) if isinstance(record_id, str) else None
        if owner is None:
            raise self._refusals.error("UNKNOWN_EVIDENCE", ref=str(record_id), at="redact")
        row = self._row(owner)
        if row["redaction_id"] is not None:
            raise self._refusals.error("ALREADY_REDACTED", record=row["id"], redaction=row["redaction_id"])
        at = self._clock()
        events = [self._event(row, by, reason, at, None)]
        if row["type"] == "message":
            for lock_row in self._rows():
                if (lock_row["type"] == "lock" and lock_row["redaction_id"] is None
                        and json.loads(lock_row["body"])["lock"]["locator"]["message_id"] == row["message_id"]):
                    events.append(self._event(lock_row, by, reason, at, events[0]["id"]))
        self._clear(events)
        return events

    def _event(self, row: dict, by: str, reason: str, at: str, cascade_of: str | None) -> dict:
        event = {"id": self._ids(), "record": row["id"], "by": by, "reason": reason, "at": at,
                 "fields": list(json.loads(row["digests"]))}
        if cascade_of:
            event["cascade_of"] = cascade_of
        return event


class SqliteLedger(Ledger):
    """The default store: one SQLite file (or ':memory:'), append-only by trigger."""

    def __init__(self, path: str = ":memory:", **kwargs: Any):
        super().__init__(**kwargs)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        self._db.executescript(SCHEMA_SQL)

    def close(self) -> None:
        self._db.close()

    def _insert(self, rows: list) -> None:
        with self._transaction():
            self._db.executemany(
                "INSERT INTO records (id, type, message_id, lock_id, recorded_at, body, personal, digests) "
                "VALUES (:id, :type, :message_id, :lock_id, :recorded_at, :body, :personal, :digests)", rows)

    def _rows(self) -> list:
        return [dict(r) for r in self._db.execute("SELECT * FROM records ORDER BY seq")]

    def _row(self, record_id: str) -> dict | None:
        row = self._db.execute("SELECT * FROM records WHERE id = ?", (record_id,)).fetchone()
        return dict(row) if row else None

    def _owner(self, name: str) -> str | None:
        row = self._db.execute("SELECT id FROM records WHERE id = ? OR message_id = ? OR lock_id = ? "
                               "ORDER BY seq LIMIT 1", (name, name, name)).fetchone()
        return row["id"] if row else None

    def _redaction_rows(self) -> list:
        return [dict(r) for r in self._db.execute("SELECT * FROM redactions ORDER BY seq")]

    def _clear(self, events: list) -> None:
        with self._transaction():
            for event in events:
                self._db.execute("INSERT INTO redactions (id, record_id, event) VALUES (?, ?, ?)",
                                 (event["id"], event["record"], _dumps(event)))
                self._db.execute("UPDATE records SET personal = NULL, redaction_id = ? WHERE id = ?",
                                 (event["id"], event["record"]))

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind, exc, tb):
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
        if isinstance(exc, sqlite3.IntegrityError):
            raise GroundrulesError("DUPLICATE_ID", "a record id is already in the ledger") from None
        return False


class MemoryLedger(Ledger):
    """The same ledger over plain lists, for tests and short-lived hosts."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._records: list[dict] = []
        self._names: dict[str, str] = {}
        self._redactions: list[dict] = []

    def _insert(self, rows: list) -> None:
        for row in rows:
            self._records.append(dict(row))
            for name in (row["id"], row["message_id"], row["lock_id"]):
                if name:
                    self._names.setdefault(name, row["id"])

    def _rows(self) -> list:
        return [dict(r) for r in self._records]

    def _row(self, record_id: str) -> dict | None:
        for row in self._records:
            if row["id"] == record_id:
                return dict(row)
        return None

    def _owner(self, name: str) -> str | None:
        return self._names.get(name)

    def _redaction_rows(self) -> list:
        return [dict(r) for r in self._redactions]

    def _clear(self, events: list) -> None:
        for event in events:
            self._redactions.append({"id": event["id"], "record_id": event["record"], "event": _dumps(event)})
            for row in self._records:
                if row["id"] == event["record"]:
                    row["personal"], row["redaction_id"] = None, event["id"]
