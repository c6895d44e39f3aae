"""The ledger as the fold reads it: every record by id, lock id and message id, checked once.

One pass over the records in ledger order: ids are unique across all three namespaces, a lock
points into an earlier message and quotes it exactly, a derived record names earlier records, every
timestamp is a real instant, and no record was observed after the fold's now. Each record's source class (merge.yaml `sources`) and validity window
are computed here, once, so the fold never re-reads a record.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from . import records as rec
from .timeutil import parse, validity

if TYPE_CHECKING:
    from .policy import MergePolicy
    from .refusals import RefusalCatalogue

SCOPE_TIMES = ("observed_at", "recorded_at", "valid_from", "valid_until")


@dataclass
class Entry:
    record: dict
    position: int
    source: str = ""
    rank: int = 0
    window: tuple = (None, None)
    message: dict | None = None          # a lock's message record
    cited_by: list = field(default_factory=list)


class LedgerIndex:
    def __init__(self, records: list, policy: MergePolicy, refusals: RefusalCatalogue, now: datetime):
        self.policy, self.refusals, self.now = policy, refusals, now
        self.entries: dict[str, Entry] = {}
        self.refs: dict[str, tuple[str, str]] = {}          # name -> (kind, record id)
        self.messages: dict[str, str] = {}                  # message id -> record id
        self.locks_in: dict[str, list[str]] = {}            # message id -> lock record ids
        for position, record in enumerate(records):
            self._add(record, position)

    # -- building -------------------------------------------------------------------------------
    def _name(self, name: str, kind: str, record_id: str, at: str) -> None:
        seen = self.refs.get(name)
        if seen is not None and seen[1] != record_id:
            raise self.refusals.error("DUPLICATE_ID", id=name, at=at)
        if seen is None or kind == "record":
            self.refs[name] = (kind, record_id)

    def _add(self, record: dict, position: int) -> None:
        at = f"records[{position}]"
        rid = record["id"]
        if rid in self.entries:
            raise self.refusals.error("DUPLICATE_ID", id=rid, at=at)
        self._name(rid, "record", rid, at)
        entry = Entry(record, position)
        times = {}
        for key in SCOPE_TIMES:
            if key in record:
                times[key] = parse(record[key])
                if times[key] is None:
                    raise self.refusals.error("PAYLOAD_INVALID", problem=f"{at}.{key}: not a real date and time")
        observed = times.get("observed_at")
        if observed is not None and observed > self.now:
            raise self.refusals.error("OBSERVED_AFTER_NOW", at=f"{at}.observed_at", observed_at=record["observed_at"],
                                      now=self.now.isoformat())
        entry.window = (times.get("valid_from"), times.get("valid_until"))
        kind = record["type"]
        if kind == "message":
            mid = rec.message_id(record)
            self._name(mid, "message", rid, at)
            self.messages[mid] = rid
            self.locks_in.setdefault(mid, [])
        elif kind == "lock":
            self._add_lock(record, entry, at)
        elif kind == "derived":
            for n, ref in enumerate(record["derived_from"]):
                if ref not in self.refs:
                    raise self.refusals.error("UNKNOWN_EVIDENCE", ref=ref, at=f"{at}.derived_from[{n}]")
        entry.source, entry.rank = self.policy.source_of({"record": record, "message": entry.message}
                                                         if entry.message else {"record": record})
        self.entries[rid] = entry

    def _add_lock(self, record: dict, entry: Entry, at: str) -> None:
        lock = record["lock"]
        loc = lock["locator"]
        mid = loc["message_id"]
        if mid not in self.messages:
            raise self.refusals.error("UNKNOWN_EVIDENCE", ref=mid, at=f"{at}.lock.locator.message_id")
        message = self.entries[self.messages[mid]].record
        if rec.span_problem(message["content"], loc["start"], loc["end"], lock["quote"]) == "mismatch":
            raise self.refusals.error("QUOTE_MISMATCH", at=f"{at}.lock", message_id=mid,
                                      start=loc["start"], end=loc["end"])
        self._name(lock["id"], "lock", record["id"], at)
        self.locks_in[mid].append(record["id"])
        entry.message = message
        if entry.window == (None, None):
            entry.window = self.entries[self.messages[mid]].window

    # -- reading --------------------------------------------------------------------------------
    def validity(self, record_id: str) -> str:
        return validity(self.entries[record_id].window, self.now)

    def lock_records(self) -> list[str]:
        return [rid for rid, e in self.entries.items() if e.record["type"] == "lock"]
