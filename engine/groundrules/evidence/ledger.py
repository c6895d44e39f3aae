"""The append-only evidence ledger (docs/spec/evidence.md, evidence is a record): checking, (de)serialising and redacting records.

A record is appended once and never rewritten. The one exception is the audited redaction path
(`redact`): it appends a redaction event (who, why, when) and replaces the record's personal fields
by tombstones; the record, its locator and every other field stay. A tombstone holds the field's
HMAC-SHA256 under `redaction_key` (a secret the host keeps outside the database), or no digest
when there is no key: an unkeyed digest of a short value (a mobile number) is undone by brute
force. Personal values reach the store only sealed, each record's and each interpretation's
under a data key of its own in the key store (store/keystore.py, docs/erasure.md): a redaction
destroys those keys, so no copy of the database opens them again. The store (groundrules.store:
SQLite, PostgreSQL or memory) enforces append-only itself; this class holds the rules.
Every method works in one store transaction of one project. Ids and the clock are injected;
nothing here reads the time. A call reads what it is about, not the project: a subject's records
by the store's subject index, an interpretation's neighbours by the keys of what it touches
(touches.py), so its cost follows the call.
"""
from __future__ import annotations

import copy
import math
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..core import codes, rulebook as rulebooks
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from ..provenance.trust import TrustStore
    from ..store.protocols import EvidenceStore, EvidenceTx
from . import integrity, locking, touches, writers
from . import records as rec
from .contract import record_problem
from .core import CLEARING_OPS
from ..core.errors import GroundrulesError
from .fold import fold, tables
from ..core.dates import parse_instant as parse
from ..store.evidence_rows import CorruptRow
from ..store import sealing
from ..store.keystore import MemoryKeyStore


class EvidenceLedger:
    """The evidence ledger over one store (`store`: a store object, a SQLite path, or None for
    memory); `project` is the project a caller means when it names none; `keys`, the key store its
    personal values are sealed under (store/keystore.py: a store, its file, or a Sealer over one;
    None: the file beside a SQLite ledger, in memory for a ledger in memory, required on PostgreSQL)."""

    def __init__(self, store: EvidenceStore | str | Path | None = None, *, ids: Callable[[], str] | None = None,
                 clock: Callable[[], str] | None = None, rulebook: Rulebook | None = None, project: str = "default",
                 redaction_key: bytes | None = None,
                 keys: MemoryKeyStore | sealing.Sealer | str | Path | None = None, writer: dict | None = None):
        self._book = rulebook or rulebooks.default()
        self._catalogue, self._policy, self._refusals = tables(self._book)   # before opening: a bad rulebook opens nothing
        if keys is None or isinstance(keys, (str, Path)):
            from ..store.keystore import open_key_store
            keys = open_key_store(keys if keys is not None else _key_store_beside(store))
        self.sealer = keys if isinstance(keys, sealing.Sealer) else sealing.Sealer(keys)
        if store is None or isinstance(store, (str, Path)):
            from ..store import open_evidence_store
            self.store: EvidenceStore = open_evidence_store(store)
        else:
            self.store = store
        self.project = project
        if ids is None or clock is None:                 # constructed as FindingLedger is: random ids, UTC wall time
            from ..findings.clock import RandomIds, SystemClock
            random_ids = RandomIds()
            ids = ids or (lambda: random_ids.new("R"))
            clock = clock or SystemClock()
        self._ids, self._clock = ids, clock
        self._key = redaction_key or None
        # who a library call without a writer writes as: the host process itself (the registry
        # always names the authenticated caller)
        self.writer = writer or writers.LOCAL_HOST
        self._copies: list[Callable[[str, list], Any]] = []
        self._key_stored()

    def _key_stored(self) -> None:
        """Give the interpretations stored before keys were kept (an older ledger) their keys, once."""
        pending = self.store.unkeyed()
        for row in pending:
            if row["body"] is not None:
                with self.store.write(row["project"]) as raw:
                    tx = _SealedTx(raw, self.sealer, row["project"])
                    row = tx.opened([row])[0]
                    tx.add_keys(row["seq"], sorted(self._keys(tx, row["body"])))
        if pending:
            self.store.keyed_all()

    def ping(self) -> None:
        """Open and end one read transaction (a readiness check); raises when the store cannot."""
        with self.store.read(self.project):
            pass

    def with_rulebook(self, rulebook: Rulebook) -> "EvidenceLedger":
        """This ledger over the same store, deciding by `rulebook` (a rule reload)."""
        return EvidenceLedger(self.store, ids=self._ids, clock=self._clock, rulebook=rulebook, project=self.project,
                              redaction_key=self._key, keys=self.sealer, writer=self.writer)

    def close(self) -> None:
        self.store.close()
        self.sealer.keys.close()

    def on_redaction(self, copies: Callable[[str, list], Any]) -> None:
        """Whoever keeps copies of personal values elsewhere (the decision log) takes part in every
        redaction: `copies(project, removed)`, `removed` being the personal values a redaction is
        about to clear (one {field: value} per record), answers an erasure plan (an object with
        `keys`, the data keys to destroy with the redaction's own, and `finish()`, run once they
        are destroyed). A plan that cannot be made (an unreadable copy) refuses the redaction before
        anything changed."""
        self._copies.append(copies)

    # -- appending ------------------------------------------------------------------------------
    def shaped(self, record: Any, position: int = 0) -> Any:
        """`record` in the internal shape: one written in the seed shapes (source, timestamp, scope,
        quote, locator) is mapped by the rulebook's shape_map tables (rules/seed_shapes.yaml),
        the same mapping fold() applies; any other record is returned as it came."""
        for shapes in self._book.of_kind("shape_map"):
            record = shapes.record(record, position)
        return record

    def append(self, record: dict, *, project: str | None = None, writer: dict | None = None,
               trust: TrustStore | None = None) -> dict:
        """Check one record and append it (a raw source with the locks the engine finds in it);
        returns it as stored (with id, observed_at, recorded_at, writer)."""
        return self.append_all([record], project=project, writer=writer, trust=trust)[0]

    def append_message(self, message: dict, locks: list | None = None, *, project: str | None = None,
                       writer: dict | None = None, trust: TrustStore | None = None) -> list[dict]:
        """Append a message and its lock records in one step. The locks are the engine's
        (`groundrules.lock` under this rulebook); `locks` given (lock candidates) are checked
        against them and name them, and every lock they leave out is appended all the same."""
        message = self.shaped(message)
        if isinstance(message, dict) and "id" not in message:
            message = dict(message, id=self._ids())           # the locks point at the id it will have
        named = [rec.lock_record(c, c["id"] if isinstance(c, dict) and "id" in c else None) for c in locks or []]
        return self.append_all([message] + named, project=project, writer=writer, trust=trust)

    def append_all(self, records: list, *, project: str | None = None, writer: dict | None = None,
                   trust: TrustStore | None = None) -> list[dict]:
        """Append several records atomically: all of them, or none when one is refused. Every raw
        source (message, tool receipt, injected field) is locked as it is appended: a lock record
        in `records` must be one of the engine's locks of its source (and is completed from it);
        the engine's locks no record names are appended right after their source. Returns every
        record as stored, in order. Each is stamped with `writer` (the authenticated caller; None:
        this ledger's writer) and judged by rules/provenance.yaml: a role that may not append its
        class is refused; a signature is verified against `trust` (the operator's trust store)."""
        stamp = writer or self.writer
        def attempt(tx: EvidenceTx) -> list[dict]:
            now = self._clock()
            prepared = [self._prepare(raw, now, f"records[{n}]", stamp, trust) for n, raw in enumerate(records)]
            sources: dict = {}                # source id -> (record, engine locks, {engine lock id: record id})
            ordered: list = []                # (record, at, its acceptance as a lock, or None)
            for n, record in enumerate(prepared):
                at = f"records[{n}]"
                sid = locking.source_id(record, self._catalogue)
                if sid is not None:
                    sources[sid] = (record, locking.engine_locks(record, self._catalogue, self._book), {})
                elif rec.is_lock(record) and "observed_at" not in record:
                    record["observed_at"] = self._observed_at(tx, rec.source_of(record), sources, now)
                ordered.append((record, at, self._claim(tx, record, sources, at) if sid is None and rec.is_lock(record)
                                else None))
            filed, stored, pending = [], [], {}
            for record, at, accept in self._with_engine_locks(ordered, sources, now):
                record = integrity.admit(record, _Earlier(self, tx, pending), self._refusals, at,
                                         lambda key: f"{at}.{key}", accept)
                for name, _ in rec.names(record):
                    pending[name] = record
                filed.append(self._filed(record, project or self.project))
                stored.append(record)
            tx.insert(filed)
            return stored
        try:
            return self._write(project, attempt)
        except GroundrulesError as exc:
            if exc.code == codes.LOCK_TIMEOUT and exc.code in self._refusals.codes:
                raise self._refusals.error(codes.LOCK_TIMEOUT, **exc.details) from None
            raise

    def _claim(self, tx: EvidenceTx, record: dict, sources: dict, at: str) -> Callable[[dict], dict]:
        """A lock record's acceptance, for integrity.admit: it names one of the engine's locks of
        its source (earlier in this batch, or stored) and is completed from it, refused as the fold
        refuses it. The claim is made now, in batch order, so that an engine lock a record names is
        not appended again; its refusal waits for the record's other checks (the catalogue's
        precedence says which answers)."""
        sid = rec.source_of(record)
        if sid not in sources:
            source = self._message(tx, sid, {})
            if source is None:
                return _refused(self._refusals.error(codes.UNKNOWN_EVIDENCE, ref=sid, at=f"{at}.lock.locator.message_id"))
            found = locking.engine_locks(source, self._catalogue, self._book)
            sources[sid] = (source, found, self._stored_claims(tx, sid, found))
        source, found, claimed = sources[sid]
        try:
            accepted = locking.accept(record, locking.text_of(source, self._catalogue), found, claimed, self._key,
                                      self._refusals, at)
        except GroundrulesError as refusal:
            return _refused(refusal)
        return lambda _: accepted

    def _stored_claims(self, tx: EvidenceTx, sid: str, found: list | None) -> dict:
        """{engine lock id: record id} of the locks already stored for a stored source (a lock
        appended after its source), read by the store's index of the locks inside a source."""
        spans = {(c["locator"]["start"], c["locator"]["end"], c["pattern"]): c["id"] for c in found or []}
        claimed = {}
        for row in tx.locks_inside([sid]):
            lock = row["body"]["lock"]
            loc = lock["locator"]
            claimed[spans.get((loc["start"], loc["end"], lock["pattern"]), lock["id"])] = row["id"]
        return claimed

    def _with_engine_locks(self, ordered: list, sources: dict, now: str) -> list:
        """`ordered` with each new source followed by the engine's locks that no record names."""
        out = []
        for record, at, accept in ordered:
            out.append((record, at, accept))
            sid = locking.source_id(record, self._catalogue)
            if sid is None or sources.get(sid, (None,))[0] is not record:
                continue
            _, found, claimed = sources[sid]
            for c in found or []:
                if c["id"] not in claimed:           # observed when its source was, written by its writer
                    lock = dict(rec.lock_record(c, c["id"]), observed_at=record["observed_at"])
                    out.append((dict(self._prepare(lock, now, f"{at} (its lock)", None, None), writer=record["writer"]),
                                f"{at} (its lock {c['id']})", None))
        return out

    def _observed_at(self, tx: EvidenceTx, sid: str, sources: dict, now: str) -> str:
        """When a lock record's source was observed (a lock is a reading of it), or `now` when the
        source is not there (the lock is refused later, UNKNOWN_EVIDENCE)."""
        source = sources[sid][0] if sid in sources else self._message(tx, sid, {})
        return source["observed_at"] if source is not None and "observed_at" in source else now

    def _prepare(self, raw: Any, now: str, at: str, writer: dict | None, trust: TrustStore | None) -> dict:
        """The record as it will be stored: checked, its id and times set, stamped with its writer
        (None: an engine lock, stamped as its source) once the provenance table admits it."""
        if not isinstance(raw, dict):
            raise self._refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}: a record is an object")
        if "writer" in raw:
            raise self._refusals.error(codes.WRITER_GIVEN, at=at)
        record = dict(self.shaped(raw))
        record.setdefault("id", self._ids())
        if record.get("type") != "lock":                 # a lock is observed when its source was
            record.setdefault("observed_at", now)
        record["recorded_at"] = now
        problem = record_problem(self._book.schemas, self._catalogue.records, record, at)
        if problem:
            raise self._refusals.error(codes.PAYLOAD_INVALID, problem=problem)
        if "redaction" in record or any(rec.is_tombstone(v) for v in rec.holder(record).values()):
            raise self._refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}: a record is appended unredacted; "
                                       "use redact() to remove personal data")
        if writer is not None:
            record["writer"] = writers.admit(raw, record, writer, trust, self._book, self._refusals, at)
        return record

    def _message(self, tx: EvidenceTx, sid: str, pending: dict) -> dict | None:
        """The raw source (message, tool receipt, injected field) that answers to `sid`, or None."""
        record = pending.get(sid)
        if record is None:
            owner = tx.owner(sid)
            record = self._from_row(tx, _row_of(tx, owner)) if owner is not None else None
        return record if record is not None and locking.source_id(record, self._catalogue) == sid else None

    # -- what the store files and gives back (store/evidence_rows.py) --------------------------------
    def _filed(self, record: dict, project: str) -> dict:
        """A record as the store files it: its personal values apart from the rest (a redaction
        clears only them), sealed under a data key of their own (store/sealing.py: a redaction
        destroys it), their keyed digests, the names and keys the store finds it by."""
        personal = rec.personal(record, self._catalogue.records[record["type"]].personal)
        body = copy.deepcopy(record)
        box = rec.holder(body)
        for f in personal:
            box[f] = None
        subject = record.get("subject")
        return {"id": record["id"], "type": record["type"],
                "message_id": rec.message_name(record), "lock_id": rec.lock_id(record),
                "subject": subject if isinstance(subject, str) else None,          # the store's indexes
                "source_id": rec.inside(record),
                "observed_s": math.floor(parse(record["observed_at"]).timestamp()),
                "recorded_at": record["recorded_at"], "body": body,
                "personal": self.sealer.seal(personal, sealing.record_data(project, record["id"])),
                "digests": {f: rec.keyed_digest(v, self._key) if self._key else None for f, v in personal.items()}}

    def _records(self, tx: EvidenceTx, rows: list[dict]) -> list[dict]:
        """_from_row of each row, their data keys read in one go."""
        materials = self.sealer.materials(r["personal"] for r in rows)
        return [self._from_row(tx, row, materials) for row in rows]

    def _from_row(self, tx: EvidenceTx, row: dict, materials: dict | None = None) -> dict:
        """The record the store gave back, its personal values in place, or their tombstones (also
        while a redaction that destroyed its key is not yet recorded: the values are gone)."""
        try:
            record = row["body"]                      # read afresh by the store: ours to fill
            record.setdefault("writer", dict(writers.UNKNOWN))      # stored before records named their writer
            box = rec.holder(record)
            personal = self._personal(tx, row, materials)
            if personal is not None:
                box.update(personal)
            elif row["redaction_id"] is None:
                for f, keyed in row["digests"].items():
                    box[f] = rec.tombstone(keyed, None)
            else:
                for f, keyed in row["digests"].items():
                    box[f] = rec.tombstone(keyed, row["redaction_id"])
                event = tx.redaction(row["redaction_id"])
                if event is None:
                    raise KeyError(row["redaction_id"])
                record["redaction"] = event["event"]
            return record
        except (KeyError, TypeError):
            raise self._refusals.error(codes.LEDGER_CORRUPT, record=row.get("id")) from None

    def _personal(self, tx: EvidenceTx, row: dict, materials: dict | None = None) -> dict | None:
        """A row's personal values, opened; None when cleared or their key is destroyed."""
        if row["personal"] is None:
            return None
        if not sealing.is_sealed(row["personal"]):
            return row["personal"]            # stored in the clear before sealing (docs/erasure.md)
        try:
            return self.sealer.open(row["personal"], sealing.record_data(tx.project, row["id"]), materials)
        except (ValueError, KeyError, TypeError):
            raise self._refusals.error(codes.LEDGER_CORRUPT, record=row.get("id")) from None

    @contextmanager
    def _read(self, project: str | None) -> Iterator[Any]:
        """One read transaction of `project` (None: this ledger's); a row that does not read is LEDGER_CORRUPT."""
        try:
            with self.store.read(project or self.project) as tx:
                yield _SealedTx(tx, self.sealer, project or self.project)
        except CorruptRow as exc:
            raise self._refusals.error(codes.LEDGER_CORRUPT, record=exc.record) from None

    def _write(self, project: str | None, attempt: Callable[[Any], Any]) -> Any:
        try:
            project = project or self.project
            return self.store.run_write(project, lambda tx: attempt(_SealedTx(tx, self.sealer, project)))
        except CorruptRow as exc:
            raise self._refusals.error(codes.LEDGER_CORRUPT, record=exc.record) from None

    # -- reading --------------------------------------------------------------------------------
    def records(self, *, project: str | None = None) -> list[dict]:
        """Every record in append order; redacted personal fields read as tombstones."""
        with self._read(project) as tx:
            return self._records(tx, tx.rows())

    def get(self, record_id: str, *, project: str | None = None) -> dict:
        with self._read(project) as tx:
            owner = tx.owner(record_id)
            if owner is None:
                raise self._refusals.error(codes.UNKNOWN_EVIDENCE, ref=record_id, at="get")
            return self._from_row(tx, _row_of(tx, owner))

    def redactions(self, *, project: str | None = None) -> list[dict]:
        with self._read(project) as tx:
            return [row["event"] for row in tx.redaction_rows()]

    # -- interpretations (the event layer: docs/spec/evidence.md, events) -----------------------------------------
    def append_interpretation(self, interpretation: Any, *, project: str | None = None,
                              writer: dict | None = None) -> dict:
        """Check an interpretation as the fold does, against the stored records and the
        interpretations stored before it, and append it; returns its id and when it was recorded.
        Only a refusal the refusal table marks `later_interpretation_may_cure` (a lock not yet
        disposed of) is let through; whatever else the fold refuses would make every later fold of
        the stored ones fail."""
        def attempt(tx: EvidenceTx) -> dict:
            now, later = self._now(tx, self._clock())
            keys = self._keys(tx, interpretation)
            touched = self._touched(tx, touches.lookups(keys)) if touches.WHOLE not in keys else None
            if touched is None:           # it depends on every earlier event (touches.WHOLE)
                records, given = self._records(tx, tx.rows()), self._stored(tx)
            else:
                read, given = touched
                records = self._records_touched(tx, read | later)
            try:
                fold({"now": now, "records": records, "interpretations": given + [interpretation]}, self._book,
                     redaction_key=self._key)
            except GroundrulesError as exc:
                if exc.code not in self._refusals.curable:
                    raise
            tx.add_interpretation(interpretation, now, sorted(keys))
            return {"id": interpretation["id"], "recorded_at": now}
        if not isinstance(interpretation, dict) or not isinstance(interpretation.get("id"), str):
            raise self._refusals.error(codes.PAYLOAD_INVALID, problem="an interpretation is an object with an 'id'")
        interpretation = self._stamped([interpretation], writer, refuse=True)[0]
        return self._write(project, attempt)

    def _stamped(self, interpretations: list, writer: dict | None, *, refuse: bool) -> list:
        """Interpretations as `writer` (None: this ledger's) wrote them; with `refuse`, one naming
        a writer is refused (an append), else its writer is replaced (a fold of given ones)."""
        if not isinstance(interpretations, list):
            return interpretations                    # fold() refuses it, as it refuses any malformed payload
        stamp = writers.stamp(writer or self.writer)
        out = []
        for n, interpretation in enumerate(interpretations):
            if isinstance(interpretation, dict):
                if "writer" in interpretation and refuse:
                    raise self._refusals.error(codes.WRITER_GIVEN, at=f"interpretations[{n}]")
                interpretation = dict(interpretation, writer=stamp)
            out.append(interpretation)
        return out

    def draft_interpretation(self, message_id: str | None = None, *, project: str | None = None) -> dict:
        """An interpretation to edit and append: the locks of `message_id` (a record id or a message
        id), or every lock no stored interpretation disposes of, each with the default disposition
        (drafts.py); beside it, each lock's kind, quote and the slots that take its kind."""
        from .drafts import interpretation_draft
        with self._read(project) as tx:
            records = [self._from_row(tx, row) for row in tx.rows()]
            stored = self._stored(tx)
        return interpretation_draft(records, stored, self._catalogue, self._policy, self._ids(), message_id)

    def interpretations(self, *, project: str | None = None) -> list[dict]:
        """The stored interpretations in append order, but those a redaction withdrew."""
        with self._read(project) as tx:
            return self._stored(tx)

    def _stored(self, tx: EvidenceTx, rows: list[dict] | None = None) -> list[dict]:
        return [dict({"writer": dict(writers.UNKNOWN)}, **row["body"]) if "writer" not in row["body"] else row["body"]
                for row in (tx.interpretation_rows() if rows is None else rows) if row["body"] is not None]

    # -- what a call touches (touches.py) ------------------------------------------------------------
    def _keys(self, tx: EvidenceTx, interpretation: Any) -> set[str]:
        """The keys of an interpretation, its citations resolved against the stored records."""
        found: dict = {}

        def resolve(name: str) -> tuple[str, str | None] | None:
            if name not in found:
                owner = tx.owner(name)
                found[name] = None if owner is None else self._key_of(_row_of(tx, owner))
            return found[name]
        return touches.of(interpretation, book=self._book, policy=self._policy, clearing=CLEARING_OPS, resolve=resolve)

    def _key_of(self, row: dict) -> tuple[str, str | None]:
        """(the key a cited record is touched by, the subject of the record) of a stored row."""
        body = row["body"]
        return self._record_key(body), body.get("subject") if isinstance(body.get("subject"), str) else None

    def _record_key(self, record: dict) -> str:
        """`src:<source>` for a raw source and the locks inside it, `rec:<id>` for any other record."""
        sid = rec.inside(record)
        if sid is None:
            sid = locking.source_id(record, self._catalogue)
        return "src:" + sid if sid is not None else "rec:" + record["id"]

    def _touched(self, tx: EvidenceTx, wanted: set[str]) -> tuple[set[str], list[dict]] | None:
        """(the keys read, the stored interpretations in append order) that a check with these
        lookup keys must read: every stored interpretation found by them, and in turn by theirs.
        None when one of them must be checked against the whole project (touches.WHOLE): then so
        must this one."""
        asked: set[str] = set()
        rows: dict[int, dict] = {}
        while wanted - asked:
            batch = sorted(wanted - asked)
            asked.update(batch)
            for row in tx.interpretations_at([s for s in tx.keyed(batch) if s not in rows]):
                if row["body"] is None:
                    continue                                  # withdrawn by a redaction
                if touches.WHOLE in row["keys"]:
                    return None
                rows[row["seq"]] = row
                wanted |= touches.lookups(row["keys"])
        return asked, self._stored(tx, [rows[s] for s in sorted(rows)])

    def _now(self, tx: EvidenceTx, now: str) -> tuple[str, set[str]]:
        """(the time an interpretation is checked and recorded at, the key of the first record of
        the project observed after it), from one read of the records observed since `now`'s second.

        The time is `now`, or the time the ledger recorded a record it reads, when that is later:
        one clock policy for every server writing to the ledger, under which no write is timed
        before a write it reads. Another server (or thread) may commit a record stamped by its clock
        after this one's was read, or its clock may run a little ahead; the record's ledger-given
        time (observed when it was recorded, or earlier) then moves the time on, instead of making
        the fold refuse the project as holding a record observed after now (OBSERVED_AFTER_NOW). A
        record whose given observed_at is later than when it was recorded is still refused, so its
        key is returned: the fold must read it, whatever the call touches."""
        at = parse(now)
        if at is None:
            return now, set()
        rows = [(row, parse(row["body"]["observed_at"])) for row in tx.observed_from(math.floor(at.timestamp()))]
        for row, observed in rows:
            recorded = parse(row["recorded_at"])
            if observed is not None and recorded is not None and at < observed <= recorded:
                at, now = recorded, row["recorded_at"]
        later = next((row for row, observed in rows if observed is not None and observed > at), None)
        return now, set() if later is None else {self._key_of(later)[0]}

    def _records_touched(self, tx: EvidenceTx, keys: set[str]) -> list[dict]:
        """The records behind `src:` and `rec:` keys, in ledger order: each source with the locks
        inside it, each other record with the records it derives from (and theirs)."""
        sources = {k[4:] for k in keys if k.startswith("src:")}
        others = {k[4:] for k in keys if k.startswith("rec:")}
        found: dict[int, dict] = {}
        while sources or others:
            owners = [o for o in (tx.owner(s) for s in sorted(sources)) if o is not None]
            rows = tx.rows_named(sorted(set(owners) | others)) + tx.locks_inside(sorted(sources))
            sources, others = set(), set()
            for row in rows:
                if row["seq"] in found:
                    continue
                found[row["seq"]] = row
                for ref in rec.derived_from(row["body"]):
                    owner = tx.owner(ref) if isinstance(ref, str) else None
                    if owner is not None:
                        key = self._key_of(_row_of(tx, owner))[0]
                        (sources if key.startswith("src:") else others).add(key[4:])
        return self._records(tx, [found[s] for s in sorted(found)])

    def fold(self, interpretations: list | None, now: str, *, project: str | None = None,
             subject: str | None = None, scope_context: dict | None = None, writer: dict | None = None) -> dict:
        """The fold of this ledger's records with `interpretations` (None: the stored ones; given
        ones are `writer`'s, as if appended) at `now`; with `subject`, of the records about it and
        the locks inside them; with `scope_context`, for that context (fold() sets aside the
        evidence that does not fit it). Records whose writer may not decide are set aside."""
        if interpretations is not None:          # given ones are the caller's, whatever writer they name
            interpretations = self._stamped(interpretations, writer, refuse=False)
        with self._read(project) as tx:
            if subject is None:
                records = self._records(tx, tx.rows())
                if interpretations is None:
                    interpretations = self._stored(tx)
            else:
                records, touched = self._about(tx, subject, interpretations is None)
                if interpretations is None:
                    interpretations = touched
        payload = {"now": now, "records": records, "interpretations": interpretations}
        if scope_context is not None:
            payload["scope_context"] = scope_context
        return fold(payload, self._book, redaction_key=self._key, weigh_writers=True, pending_locks=True)

    def _about(self, tx: EvidenceTx, subject: str, stored: bool) -> tuple[list[dict], list[dict] | None]:
        """The records about `subject` and the locks inside them, in ledger order; with `stored`,
        also the stored interpretations that touch them or the subject's scope (and theirs), or all
        of them when one of those depends on the whole project (touches.WHOLE)."""
        rows = {row["seq"]: row for row in tx.rows_about(subject)}
        inside = set()
        keys = {"+open:" + subject}
        for row in rows.values():
            key = self._key_of(row)[0]
            keys.add(key)
            if key.startswith("src:") and rec.inside(row["body"]) is None:    # a source about it: its locks too
                inside.add(key[4:])
        rows.update((row["seq"], row) for row in tx.locks_inside(sorted(inside)))
        records = self._records(tx, [rows[s] for s in sorted(rows)])
        if not stored:
            return records, None
        touched = self._touched(tx, keys)
        return records, self._stored(tx) if touched is None else touched[1]

    # -- the one audited change -----------------------------------------------------------------
    def redact(self, record_id: str, *, by: str, reason: str, project: str | None = None) -> list[dict]:
        """`erase`, answering the redaction events it appended."""
        return self.erase(record_id, by=by, reason=reason, project=project)["redactions"]

    def erase(self, record_id: str, *, by: str, reason: str, project: str | None = None) -> dict:
        """Replace the personal fields of a record (and of the locks inside a source) by tombstones,
        recording who and why, withdraw the interpretations that cite them, and erase every copy:
        the data keys they were sealed under are destroyed (store/keystore.py), with those of the
        copies elsewhere (the decision log's, `on_redaction`), in the ledger's transaction before it
        commits. So a redaction is whole or nothing: a copy that cannot be found or a key store
        that fails refuses it before anything changed, and a commit that fails after the keys went
        leaves values that no longer open, which a retry records. Answers the events and what was
        erased where."""
        if not (isinstance(by, str) and by and isinstance(reason, str) and reason):
            raise self._refusals.error(codes.PAYLOAD_INVALID, problem="redact needs a non-empty 'by' and 'reason'")
        project = project or self.project
        with self._read(project) as tx:
            targets = self._targets(tx, record_id)
            materials = self.sealer.materials(r["personal"] for r in targets)
            removed = [self._personal(tx, r, materials) or {} for r in targets]
        plans = [copies(project, removed) for copies in self._copies]

        def attempt(tx: EvidenceTx) -> tuple[list[dict], list[dict], list[str]]:
            rows = self._targets(tx, record_id)
            at = self._clock()
            events = [self._event(rows[0], by, reason, at, None)]
            events += [self._event(r, by, reason, at, events[0]["id"]) for r in rows[1:]]
            withdrawn = self._citing(tx, events)
            if withdrawn:                     # their values and quotes copy what is being removed
                events[0]["withdrawn_interpretations"] = [w["id"] for w in withdrawn]
            tx.clear(events)
            tx.withdraw([w["id"] for w in withdrawn], events[0]["id"])
            keys = [r["personal"]["key"] for r in rows if sealing.is_sealed(r["personal"])]
            keys += [w["sealed_key"] for w in withdrawn if w.get("sealed_key")]
            keys += [k for plan in plans for k in plan.keys]
            self.sealer.destroy(keys)         # the erasure itself: every copy sealed under them is unreadable
            return events, withdrawn, keys
        events, withdrawn, keys = self._write(project, attempt)
        elsewhere = {}
        for plan in plans:
            elsewhere.update(plan.finish(events[0]["id"]))
        self.store.forget()
        return {"redactions": events,
                "erased": {"records": [e["record"] for e in events], "interpretations": [w["id"] for w in withdrawn],
                           **elsewhere, "keys_destroyed": len(keys)}}

    def _targets(self, tx: EvidenceTx, record_id: Any) -> list[dict]:
        """The rows a redaction of `record_id` clears: its own, and a source's locks not yet redacted."""
        owner = tx.owner(record_id) if isinstance(record_id, str) else None
        if owner is None:
            raise self._refusals.error(codes.UNKNOWN_EVIDENCE, ref=str(record_id), at="redact")
        row = _row_of(tx, owner)
        if row["redaction_id"] is not None:
            raise self._refusals.error(codes.ALREADY_REDACTED, record=row["id"], redaction=row["redaction_id"])
        rows = [row]
        sid = (row["message_id"] or row["id"]) if self._catalogue.records[row["type"]].locked else None
        if sid is not None:                       # a source's locks copy its text: they go with it
            rows += [r for r in tx.locks_inside([sid]) if r["redaction_id"] is None]
        return rows

    def _citing(self, tx: EvidenceTx, events: list[dict]) -> list[dict]:
        """The stored interpretations that cite a record being redacted (by record, message or lock
        id, or a span of its text), in any event or disposition: their rows ({id, sealed_key})."""
        names: set = set()
        keys: set = set()
        for event in events:
            row = _row_of(tx, event["record"])
            names.update(n for n in (row["id"], row["message_id"], row["lock_id"]) if n)
            keys.add(self._key_of(row)[0])
        cited = []
        for row in tx.interpretations_at(tx.keyed(sorted(keys))):    # those that touch it, by their keys
            if row["body"] is None:
                continue
            body = row["body"]
            refs = {d.get("lock") for d in body.get("dispositions", []) if isinstance(d, dict)}
            for event in body.get("events", []):
                for cite in event.get("evidence", []) if isinstance(event, dict) else []:
                    refs.add(cite.get("message_id") if isinstance(cite, dict) else cite)
                refs.update(event.get("evidence_ids", []) if isinstance(event, dict) else [])
            if refs & names:
                cited.append({"id": row["id"], "sealed_key": row.get("sealed_key")})
        return cited

    def _event(self, row: dict, by: str, reason: str, at: str, cascade_of: str | None) -> dict:
        event = {"id": self._ids(), "record": row["id"], "by": by, "reason": reason, "at": at,
                 "fields": list(row["digests"])}
        if cascade_of:
            event["cascade_of"] = cascade_of
        return event


def _row_of(tx: EvidenceTx, record_id: str) -> dict:
    """The row of a record the store has just named in this transaction (tx.owner, a redaction's
    record): it is there, or the ledger is not what its store says (LEDGER_CORRUPT)."""
    row = tx.row(record_id)
    if row is None:
        raise CorruptRow(record_id)
    return row


def _refused(refusal: GroundrulesError) -> Callable[[dict], dict]:
    """A lock record's acceptance that refuses it, once the record is admitted."""
    def accept(_: dict) -> dict:
        raise refusal
    return accept


class _Earlier:
    """What integrity.check reads of the records before one being appended: the stored ones and
    those before it in its batch (`pending`: name -> row)."""

    def __init__(self, ledger: EvidenceLedger, tx: EvidenceTx, pending: dict):
        self.ledger, self.tx, self.pending = ledger, tx, pending

    def answers(self, name: str) -> bool:
        return name in self.pending or self.tx.owner(name) is not None

    def source_text(self, sid: str) -> Any:
        source = self.ledger._message(self.tx, sid, self.pending)
        return None if source is None else locking.text_of(source, self.ledger._catalogue)


class _SealedTx:
    """A store transaction whose interpretations are sealed as they are stored and opened as they
    are read (store/sealing.py), each under a data key of its own; everything else is the store's.
    A withdrawn interpretation (or one whose key a redaction destroyed) reads with no body."""

    def __init__(self, tx: Any, sealer: sealing.Sealer, project: str):
        self._tx, self.sealer, self.project = tx, sealer, project
        self._data = sealing.interpretation_data(project)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: Any = ()) -> None:
        sealed = self.sealer.seal(interpretation, self._data)
        self._tx.add_interpretation(dict(sealed, id=interpretation["id"]), recorded_at, keys)

    def interpretation_rows(self) -> list[dict]:
        return self.opened(self._tx.interpretation_rows())

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        return self.opened(self._tx.interpretations_at(seqs))

    def opened(self, rows: list[dict]) -> list[dict]:
        """The rows with their bodies opened (None: withdrawn, or erased), each sealed one's data
        key named in `sealed_key`."""
        materials = self.sealer.materials(_without_id(r["body"]) for r in rows)
        out = []
        for row in rows:
            body = row["body"]
            if sealing.is_sealed(_without_id(body)):
                try:
                    row = dict(row, body=self.sealer.open(_without_id(body), self._data, materials),
                               sealed_key=body["key"])
                except ValueError:
                    raise CorruptRow(row.get("id")) from None
            out.append(row)
        return out


def _without_id(body: Any) -> Any:
    """A stored interpretation body without the id it is filed under."""
    return {k: v for k, v in body.items() if k != "id"} if isinstance(body, dict) else body


def _key_store_beside(store: Any) -> str | None:
    """Where a ledger's key store is when none is named: beside a SQLite file (`<file>.keys`), in
    memory for a ledger in memory; a PostgreSQL ledger must be given one."""
    from ..store import is_postgres
    from ..store.evidence_memory import MemoryEvidenceStore
    path = getattr(store, "path", store)
    if path is None or str(path) == ":memory:" or isinstance(store, MemoryEvidenceStore):
        return None
    if is_postgres(path) or not isinstance(path, (str, Path)):
        raise GroundrulesError(codes.NOT_CONFIGURED, "a PostgreSQL evidence ledger needs a key store apart from the "
                               "database (--key-store FILE): personal values are sealed under keys kept there")
    return f"{path}.keys"
