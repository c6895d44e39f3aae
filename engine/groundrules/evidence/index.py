"""The ledger as the fold reads it: every record by id, lock id and source id, checked once.

One pass over the records in ledger order: ids are unique across all three namespaces, a lock
points into an earlier raw source (a message, a tool receipt, an injected field), quotes it exactly
and is one of the locks the engine finds there (locking.py), an excerpt quotes an earlier message
exactly, a derived record names earlier records (integrity.admit: of several, the refusal
catalogue's precedence says which answers), every timestamp is a real instant, and no record
was observed after the fold's now. Then every lock the engine finds that no record named is added
right after its source, so a payload without its lock records folds as the ledger would have
stored it. Each record's source class (merge.yaml `sources`) and validity window are computed
here, once, so the fold never re-reads a record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import integrity, locking
from . import records as rec
from ..core import codes
from ..core.dates import parse_instant as parse
from .timeutil import validity

if TYPE_CHECKING:
    from .catalogue import EventCatalogue
    from .policy import MergePolicy
    from .refusals import Refuses

SCOPE_TIMES = ("observed_at", "recorded_at", "valid_from", "valid_until")
INHERITED = ("applicability", "version")        # a lock without them takes its source's, as its window
NAME_KINDS = {"id": "record", "message_id": "message", "lock.id": "lock"}     # records.names' keys


@dataclass(frozen=True)
class Locker:
    """What the index needs to lock raw sources: the event catalogue (which records are sources,
    and their text), the rulebook whose lock tables scan them, and the redaction key (a redacted
    field of a supplied lock is compared by its keyed digest)."""

    catalogue: EventCatalogue
    book: Any
    key: bytes | None = None


@dataclass
class Entry:
    record: dict
    position: int
    source: str = ""
    rank: int = 0
    window: tuple = (None, None)
    message: dict | None = None          # a lock's source record (a message, receipt or injected field)
    cited_by: list = field(default_factory=list)


@dataclass
class Source:
    record_id: str
    text: Any                            # the raw text (a tombstone once redacted)
    found: locking.EngineLocks | None      # the engine's locks (None: redacted, nothing to rescan)
    claimed: dict = field(default_factory=dict)    # engine lock id -> the record that names it


class LedgerIndex:
    def __init__(self, records: list, policy: MergePolicy, refusals: Refuses, now: datetime,
                 locker: Locker | None = None):
        self.policy, self.refusals, self.now, self.locker = policy, refusals, now, locker
        self.entries: dict[str, Entry] = {}
        self.refs: dict[str, tuple[str, str]] = {}          # name -> (kind, record id)
        self.sources: dict[str, Source] = {}                # source id (a message id, a record id) -> source
        self.source_ids: dict[str, str] = {}                # a source's record id -> its source id
        self.locks_in: dict[str, list[str]] = {}            # source id -> lock record ids
        for position, record in enumerate(records):
            self._add(record, position)
        if locker is not None:
            self._add_engine_locks()

    # -- building -------------------------------------------------------------------------------
    def _name(self, name: str, kind: str, record_id: str, at: str) -> None:
        seen = self.refs.get(name)
        if seen is not None and seen[1] != record_id:
            raise self.refusals.error(codes.DUPLICATE_ID, id=name, at=at)
        if seen is None or kind == "record":
            self.refs[name] = (kind, record_id)

    def _source_id(self, record: dict) -> str | None:
        if self.locker is None:           # merge.yaml's examples: messages only, nothing scanned
            return rec.message_name(record)
        return locking.source_id(record, self.locker.catalogue)

    def _add(self, record: dict, position: int) -> None:
        at = f"records[{position}]"
        entry = Entry(record, position)
        times = {}
        for key in SCOPE_TIMES:
            if key in record:
                times[key] = parse(record[key])
                if times[key] is None:
                    raise self.refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}.{key}: not a real date and time")
        observed = times.get("observed_at")
        if observed is not None and observed > self.now:
            raise self.refusals.error(codes.OBSERVED_AFTER_NOW, at=f"{at}.observed_at", observed_at=record["observed_at"],
                                      now=self.now.isoformat())
        entry.window = (times.get("valid_from"), times.get("valid_until"))
        record = integrity.admit(record, self, self.refusals, at, lambda key: at,
                                 (lambda r: self._accept_lock(r, at)) if rec.is_lock(record) else None)
        for name, key in rec.names(record):
            self.refs[name] = (NAME_KINDS[key], record["id"])
        sid = self._source_id(record)
        if sid is not None:
            self._add_source(record, sid)
        if rec.is_lock(record):
            inside = rec.source_of(record)
            self.locks_in[inside].append(record["id"])
            self._inherit(entry, record, inside)
        self._classify(entry)
        self.entries[record["id"]] = entry

    # -- what integrity.check reads -------------------------------------------------------------
    def answers(self, name: str) -> bool:
        return name in self.refs

    def source_text(self, sid: str) -> Any:
        source = self.sources.get(sid)
        return None if source is None else source.text

    def _classify(self, entry: Entry) -> None:
        record = entry.record
        entry.source, entry.rank = self.policy.source_of({"record": record, "message": entry.message}
                                                         if entry.message else {"record": record})

    def _add_source(self, record: dict, sid: str) -> None:
        found: locking.EngineLocks | None
        if self.locker is None:
            text, found = record.get("content"), []
        else:
            text = locking.text_of(record, self.locker.catalogue)
            found = locking.engine_locks(record, self.locker.catalogue, self.locker.book)
        self.sources[sid] = Source(record["id"], text, found)
        self.source_ids[record["id"]] = sid
        self.locks_in.setdefault(sid, [])

    def _accept_lock(self, record: dict, at: str) -> dict:
        """The lock record as accepted: one of the engine's locks of an earlier source, completed
        from it (locking.accept). Without a locker (merge.yaml's examples) it is taken as written."""
        sid = rec.source_of(record)
        source = self.sources.get(sid)
        if source is None:
            raise self.refusals.error(codes.UNKNOWN_EVIDENCE, ref=sid, at=f"{at}.lock.locator.message_id")
        if self.locker is None:
            return record
        return locking.accept(record, source.text, source.found, source.claimed, self.locker.key, self.refusals, at)

    def _inherit(self, entry: Entry, record: dict, sid: str) -> None:
        """A lock is read with its source: the source record, its window, its applicability."""
        origin = self.entries.get(self.sources[sid].record_id)
        message = origin.record if origin is not None else None
        entry.message = message
        if origin is not None and entry.window == (None, None):
            entry.window = origin.window
        entry.record = record

    def _add_engine_locks(self) -> None:
        """Every engine lock no record named, as a record of its own right after its source."""
        ordered: dict[str, Entry] = {}
        for rid, entry in self.entries.items():
            ordered[rid] = entry
            sid = self.source_ids.get(rid)
            if sid is None:
                continue
            source = self.sources[sid]
            for lock in source.found or []:
                if lock["id"] in source.claimed:
                    continue
                record = rec.lock_record(lock, lock["id"])
                self._name(lock["id"], "record", lock["id"], f"records[{entry.position}] (its lock {lock['id']})")
                added = Entry(record, entry.position)
                self._inherit(added, record, sid)
                self._classify(added)
                ordered[lock["id"]] = added
        self.entries = ordered
        self.locks_in = {sid: [] for sid in self.locks_in}
        for rid, e in ordered.items():                    # in ledger order, the added ones included
            if rec.is_lock(e.record):
                self.locks_in[rec.source_of(e.record)].append(rid)

    # -- reading --------------------------------------------------------------------------------
    def validity(self, record_id: str) -> str:
        return validity(self.entries[record_id].window, self.now)

    def lock_records(self) -> list[str]:
        return [rid for rid, e in self.entries.items() if rec.is_lock(e.record)]

    def scope_of(self, record_id: str) -> dict:
        """The record's applicability and version (§六: 适用于什么, 哪个版本); a lock's are its source's
        unless it has its own."""
        entry = self.entries[record_id]
        own = {k: entry.record[k] for k in INHERITED if k in entry.record}
        if entry.message is not None:
            return {**{k: entry.message[k] for k in INHERITED if k in entry.message}, **own}
        return own
