"""The append-only evidence ledger (seed 003 §二): checking, (de)serialising and redacting records.

A record is appended once and never rewritten. The one exception is the audited redaction path
(`redact`): it appends a redaction event (who, why, when) and replaces the record's personal fields
by tombstones; the record, its locator and every other field stay. A tombstone holds the field's
HMAC-SHA256 under `redaction_key` (a secret the host keeps outside the database), or no digest
when there is no key: an unkeyed digest of a short value (a mobile number) is undone by brute
force. The store (groundrules.store: SQLite, or memory) enforces append-only itself; this class
holds the rules.
Every method works in one store transaction of one project. Ids and the clock are injected;
nothing here reads the time.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import rulebook as rulebooks
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..rulebook import Rulebook
from . import locking
from . import records as rec
from .contract import record_problem
from ..errors import GroundrulesError
from .fold import fold, tables


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class EvidenceLedger:
    """The evidence ledger over one store (`store`: a store object, a SQLite path, or None for
    memory); `project` is the project a caller means when it names none."""

    def __init__(self, store: Any = None, *, ids: Callable[[], str], clock: Callable[[], str],
                 rulebook: Rulebook | None = None, project: str = "default", redaction_key: bytes | None = None):
        self._book = rulebook or rulebooks.default()
        self._catalogue, _, self._refusals = tables(self._book)       # before opening: a bad rulebook opens nothing
        if store is None or isinstance(store, (str, Path)):
            from ..store import open_evidence_store
            store = open_evidence_store(store)
        self.store = store
        self.project = project
        self._ids, self._clock = ids, clock
        self._key = redaction_key or None
        self._on_redaction: list[Callable[[str, list, list], Any]] = []

    def ping(self) -> None:
        """Open and end one read transaction (a readiness check); raises when the store cannot."""
        with self.store.read(self.project):
            pass

    def with_rulebook(self, rulebook: Rulebook) -> "EvidenceLedger":
        """This ledger over the same store, deciding by `rulebook` (a rule reload)."""
        return EvidenceLedger(self.store, ids=self._ids, clock=self._clock, rulebook=rulebook, project=self.project,
                              redaction_key=self._key)

    def close(self) -> None:
        self.store.close()

    def on_redaction(self, listener: Callable[[str, list, list], Any]) -> None:
        """Call `listener(project, events, removed)` after each redaction commits, `removed` being
        the personal values it cleared (one {field: value} per record): whoever keeps copies of
        them elsewhere (the decision log) erases those too."""
        self._on_redaction.append(listener)

    # -- appending ------------------------------------------------------------------------------
    def shaped(self, record: Any, position: int = 0) -> Any:
        """`record` in the internal shape: one written as seed 003 writes it (source, timestamp,
        scope, quote, locator) is mapped by the rulebook's shape_map tables (rules/seed_shapes.yaml),
        the same mapping fold() applies; any other record is returned as it came."""
        for shapes in self._book.of_kind("shape_map"):
            record = shapes.record(record, position)
        return record

    def append(self, record: dict, *, project: str | None = None) -> dict:
        """Check one record and append it (a raw source with the locks the engine finds in it);
        returns it as stored (with id, observed_at, recorded_at)."""
        return self.append_all([record], project=project)[0]

    def append_message(self, message: dict, locks: list | None = None, *, project: str | None = None) -> list[dict]:
        """Append a message and its lock records in one step. The locks are the engine's
        (`groundrules.lock` under this rulebook); `locks` given (lock candidates) are checked
        against them and name them, and every lock they leave out is appended all the same."""
        message = self.shaped(message)
        if isinstance(message, dict) and "id" not in message:
            message = dict(message, id=self._ids())           # the locks point at the id it will have
        named = [{"id": c["id"], "type": "lock", "lock": c} if isinstance(c, dict) and "id" in c
                 else {"type": "lock", "lock": c} for c in locks or []]
        return self.append_all([message] + named, project=project)

    def append_all(self, records: list, *, project: str | None = None) -> list[dict]:
        """Append several records atomically: all of them, or none when one is refused. Every raw
        source (message, tool receipt, injected field) is locked as it is appended: a lock record
        in `records` must be one of the engine's locks of its source (and is completed from it);
        the engine's locks no record names are appended right after their source. Returns every
        record as stored, in order."""
        def attempt(tx: Any) -> list[dict]:
            now = self._clock()
            prepared = [self._prepare(raw, now, f"records[{n}]") for n, raw in enumerate(records)]
            sources: dict = {}                # source id -> (record, engine locks, {engine lock id: record id})
            ordered: list = []                # (record, at)
            for n, record in enumerate(prepared):
                at = f"records[{n}]"
                sid = locking.source_id(record, self._catalogue)
                if sid is not None:
                    sources[sid] = (record, locking.engine_locks(record, self._catalogue, self._book), {})
                elif record["type"] == "lock":
                    record = self._claim(tx, record, sources, at)
                ordered.append((record, at))
            rows, stored, pending = [], [], {}
            for record, at in self._with_engine_locks(ordered, sources, now):
                self._check(tx, record, pending, at)
                row = self._to_row(record)
                pending[record["id"]] = row
                for name in (row["message_id"], row["lock_id"]):
                    if name:
                        pending[name] = row
                rows.append(row)
                stored.append(record)
            tx.insert(rows)
            return stored
        try:
            return self.store.run_write(project or self.project, attempt)
        except GroundrulesError as exc:
            if exc.code == "LOCK_TIMEOUT" and exc.code in self._refusals.codes:
                raise self._refusals.error("LOCK_TIMEOUT", **exc.details) from None
            raise

    def _claim(self, tx: Any, record: dict, sources: dict, at: str) -> dict:
        """A lock record as it will be stored: one of the engine's locks of its source (earlier in
        this batch, or stored), completed from it; refused as the fold refuses it."""
        lock = record["lock"]
        sid = lock["locator"]["message_id"]
        if sid not in sources:
            source = self._message(tx, sid, {})
            if source is None:
                raise self._refusals.error("UNKNOWN_EVIDENCE", ref=sid, at=f"{at}.lock.locator.message_id")
            found = locking.engine_locks(source, self._catalogue, self._book)
            sources[sid] = (source, found, self._stored_claims(tx, sid, found))
        source, found, claimed = sources[sid]
        return locking.accept(record, locking.text_of(source, self._catalogue), found, claimed, self._key,
                              self._refusals, at)

    def _stored_claims(self, tx: Any, sid: str, found: list | None) -> dict:
        """{engine lock id: record id} of the locks already stored for a stored source (a lock
        appended after its source: rare, so the rows are read only then)."""
        spans = {(c["locator"]["start"], c["locator"]["end"], c["pattern"]): c["id"] for c in found or []}
        claimed = {}
        for row in tx.rows():
            if row["type"] == "lock":
                lock = json.loads(row["body"])["lock"]
                loc = lock["locator"]
                if loc["message_id"] == sid:
                    claimed[spans.get((loc["start"], loc["end"], lock["pattern"]), lock["id"])] = row["id"]
        return claimed

    def _with_engine_locks(self, ordered: list, sources: dict, now: str) -> list:
        """`ordered` with each new source followed by the engine's locks that no record names."""
        out = []
        for record, at in ordered:
            out.append((record, at))
            sid = locking.source_id(record, self._catalogue)
            if sid is None or sources.get(sid, (None,))[0] is not record:
                continue
            _, found, claimed = sources[sid]
            for c in found or []:
                if c["id"] not in claimed:
                    out.append((self._prepare({"id": c["id"], "type": "lock", "lock": c}, now, f"{at} (its lock)"),
                                f"{at} (its lock {c['id']})"))
        return out

    def _prepare(self, raw: Any, now: str, at: str) -> dict:
        if not isinstance(raw, dict):
            raise self._refusals.error("PAYLOAD_INVALID", problem=f"{at}: a record is an object")
        record = dict(self.shaped(raw))
        record.setdefault("id", self._ids())
        record.setdefault("observed_at", now)
        record["recorded_at"] = now
        problem = record_problem(self._book.schemas, self._catalogue.records, record, at)
        if problem:
            raise self._refusals.error("PAYLOAD_INVALID", problem=problem)
        if "redaction" in record or any(rec.is_tombstone(v) for v in rec.holder(record).values()):
            raise self._refusals.error("PAYLOAD_INVALID", problem=f"{at}: a record is appended unredacted; "
                                       "use redact() to remove personal data")
        return record

    def _check(self, tx: Any, record: dict, pending: dict, at: str) -> None:
        names = [(record["id"], "id")]
        mid = rec.message_id(record)
        if record["type"] == "message" and mid != record["id"]:
            names.append((mid, "message_id"))
        if record["type"] == "lock" and record["lock"]["id"] != record["id"]:
            names.append((record["lock"]["id"], "lock.id"))
        for name, key in names:
            if name in pending or tx.owner(name) is not None:
                raise self._refusals.error("DUPLICATE_ID", id=name, at=f"{at}.{key}")
        if record["type"] == "message" and "locator" in record:       # the seed's E07: an excerpt of a message
            loc = record["locator"]
            source = self._message(tx, loc["message_id"], pending)
            if source is not None and rec.span_problem(locking.text_of(source, self._catalogue), loc["start"],
                                                       loc["end"], record["content"]) == "mismatch":
                raise self._refusals.error("QUOTE_MISMATCH", at=f"{at}.locator", message_id=loc["message_id"],
                                           start=loc["start"], end=loc["end"])
        if record["type"] == "derived":
            for n, ref in enumerate(record["derived_from"]):
                if ref not in pending and tx.owner(ref) is None:
                    raise self._refusals.error("UNKNOWN_EVIDENCE", ref=ref, at=f"{at}.derived_from[{n}]")

    def _message(self, tx: Any, sid: str, pending: dict) -> dict | None:
        """The raw source (message, tool receipt, injected field) that answers to `sid`, or None."""
        row = pending.get(sid)
        if row is None:
            owner = tx.owner(sid)
            row = tx.row(owner) if owner is not None else None
        if row is None:
            return None
        record = self._from_row(tx, row)
        return record if locking.source_id(record, self._catalogue) == sid else None

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
                "digests": _dumps({f: rec.keyed_digest(v, self._key) if self._key else None
                                  for f, v in personal.items()}), "redaction_id": None}

    def _from_row(self, tx: Any, row: dict) -> dict:
        try:
            record = json.loads(row["body"])
            box = rec.holder(record)
            if row["personal"] is not None:
                box.update(json.loads(row["personal"]))
            else:
                for f, keyed in json.loads(row["digests"]).items():
                    box[f] = rec.tombstone(keyed, row["redaction_id"])
                record["redaction"] = self._redaction_event(tx, row["redaction_id"])
            return record
        except (ValueError, KeyError, TypeError):
            raise self._refusals.error("LEDGER_CORRUPT", record=row.get("id")) from None

    @staticmethod
    def _redaction_event(tx: Any, redaction_id: str) -> dict:
        for row in tx.redaction_rows():
            if row["id"] == redaction_id:
                return json.loads(row["event"])
        raise KeyError(redaction_id)

    # -- reading --------------------------------------------------------------------------------
    def records(self, *, project: str | None = None) -> list[dict]:
        """Every record in append order; redacted personal fields read as tombstones."""
        with self.store.read(project or self.project) as tx:
            return [self._from_row(tx, row) for row in tx.rows()]

    def get(self, record_id: str, *, project: str | None = None) -> dict:
        with self.store.read(project or self.project) as tx:
            owner = tx.owner(record_id)
            if owner is None:
                raise self._refusals.error("UNKNOWN_EVIDENCE", ref=record_id, at="get")
            return self._from_row(tx, tx.row(owner))

    def redactions(self, *, project: str | None = None) -> list[dict]:
        with self.store.read(project or self.project) as tx:
            return [json.loads(row["event"]) for row in tx.redaction_rows()]

    # -- interpretations (the event layer: seed 003 §五) -----------------------------------------
    def append_interpretation(self, interpretation: Any, *, project: str | None = None) -> dict:
        """Check an interpretation as the fold does, against the stored records and the
        interpretations stored before it, and append it; returns its id and when it was recorded.
        Only a refusal the refusal table marks `later_interpretation_may_cure` (a lock not yet
        disposed of) is let through; whatever else the fold refuses would make every later fold of
        the stored ones fail."""
        def attempt(tx: Any) -> dict:
            now = self._clock()
            records = [self._from_row(tx, row) for row in tx.rows()]
            given = self._stored(tx) + [interpretation]
            try:
                fold({"now": now, "records": records, "interpretations": given}, self._book,
                     redaction_key=self._key)
            except GroundrulesError as exc:
                if exc.code not in self._refusals.curable:
                    raise
            tx.add_interpretation({"id": interpretation["id"], "recorded_at": now, "body": _dumps(interpretation)})
            return {"id": interpretation["id"], "recorded_at": now}
        if not isinstance(interpretation, dict) or not isinstance(interpretation.get("id"), str):
            raise self._refusals.error("PAYLOAD_INVALID", problem="an interpretation is an object with an 'id'")
        return self.store.run_write(project or self.project, attempt)

    def interpretations(self, *, project: str | None = None) -> list[dict]:
        """The stored interpretations in append order, but those a redaction withdrew."""
        with self.store.read(project or self.project) as tx:
            return self._stored(tx)

    def _stored(self, tx: Any) -> list[dict]:
        try:
            return [json.loads(row["body"]) for row in tx.interpretation_rows() if row["body"] is not None]
        except ValueError:
            raise self._refusals.error("LEDGER_CORRUPT", record="(interpretations)") from None

    def fold(self, interpretations: list | None, now: str, *, project: str | None = None,
             subject: str | None = None, scope_context: dict | None = None) -> dict:
        """The fold of this ledger's records with `interpretations` (None: the stored ones) at `now`;
        with `subject`, of the records about it and the locks inside them; with `scope_context`, for
        that context (fold() sets aside the evidence that does not fit it)."""
        with self.store.read(project or self.project) as tx:
            records = [self._from_row(tx, row) for row in tx.rows()]
            if interpretations is None:
                interpretations = self._stored(tx)
        if subject is not None:
            about = {r["id"] for r in records if r.get("subject") == subject}
            inside = {locking.source_id(r, self._catalogue) for r in records if r["id"] in about}
            records = [r for r in records if r["id"] in about or (r["type"] == "lock" and rec.message_id(r) in inside)]
        payload = {"now": now, "records": records, "interpretations": interpretations}
        if scope_context is not None:
            payload["scope_context"] = scope_context
        return fold(payload, self._book, redaction_key=self._key)

    # -- the one audited change -----------------------------------------------------------------
    def redact(self, record_id: str, *, by: str, reason: str, project: str | None = None) -> list[dict]:
        """Replace the personal fields of a record (and of the locks inside a source) by tombstones,
        recording who and why, and leave no readable copy in the store's files. Returns the
        redaction events it appended."""
        if not (isinstance(by, str) and by and isinstance(reason, str) and reason):
            raise self._refusals.error("PAYLOAD_INVALID", problem="redact needs a non-empty 'by' and 'reason'")
        def attempt(tx: Any) -> list[dict]:
            owner = tx.owner(record_id) if isinstance(record_id, str) else None
            if owner is None:
                raise self._refusals.error("UNKNOWN_EVIDENCE", ref=str(record_id), at="redact")
            row = tx.row(owner)
            if row["redaction_id"] is not None:
                raise self._refusals.error("ALREADY_REDACTED", record=row["id"], redaction=row["redaction_id"])
            at = self._clock()
            events = [self._event(row, by, reason, at, None)]
            sid = (row["message_id"] or row["id"]) if self._catalogue.records[row["type"]].locked else None
            if sid is not None:                       # a source's locks copy its text: they go with it
                for lock_row in tx.rows():
                    if (lock_row["type"] == "lock" and lock_row["redaction_id"] is None
                            and json.loads(lock_row["body"])["lock"]["locator"]["message_id"] == sid):
                        events.append(self._event(lock_row, by, reason, at, events[0]["id"]))
            withdrawn = self._citing(tx, events)
            if withdrawn:                     # their values and quotes copy what is being removed
                events[0]["withdrawn_interpretations"] = withdrawn
            removed[:] = [json.loads(tx.row(e["record"])["personal"] or "{}") for e in events] \
                if self._on_redaction else []
            tx.clear([dict(e, json=_dumps(e)) for e in events])
            tx.withdraw(withdrawn, events[0]["id"])
            return events
        removed: list = []
        events = self.store.run_write(project or self.project, attempt)
        for listener in self._on_redaction:
            listener(project or self.project, events, removed)
        self.store.forget()
        return events

    def _citing(self, tx: Any, events: list[dict]) -> list[str]:
        """The stored interpretations that cite a record being redacted (by record, message or lock
        id, or a span of its text), in any event or disposition."""
        names: set = set()
        for event in events:
            row = tx.row(event["record"])
            names.update(n for n in (row["id"], row["message_id"], row["lock_id"]) if n)
        cited = []
        for row in tx.interpretation_rows():
            if row["body"] is None:
                continue
            body = json.loads(row["body"])
            refs = {d.get("lock") for d in body.get("dispositions", []) if isinstance(d, dict)}
            for event in body.get("events", []):
                for cite in event.get("evidence", []) if isinstance(event, dict) else []:
                    refs.add(cite.get("message_id") if isinstance(cite, dict) else cite)
                refs.update(event.get("evidence_ids", []) if isinstance(event, dict) else [])
            if refs & names:
                cited.append(row["id"])
        return cited

    def _event(self, row: dict, by: str, reason: str, at: str, cascade_of: str | None) -> dict:
        event = {"id": self._ids(), "record": row["id"], "by": by, "reason": reason, "at": at,
                 "fields": list(json.loads(row["digests"]))}
        if cascade_of:
            event["cascade_of"] = cascade_of
        return event


