"""Locks are the engine's: computed from each raw record under the rulebook, never taken on trust.

Seed 003 §三: the mechanical layer locks what appeared so that nothing later can drop or rewrite
it. So the fold and the ledger scan every raw source themselves (events.yaml `records.*.locks`
says which field is its raw text and as what role and state the lock tables read it), and a lock
record a caller supplies is only a name for one of those locks: it is accepted when every field
it gives equals the engine's lock at its locator, and completed from it (the seed's E14 gives only
id, quote, locator and normalized_value); otherwise it is refused, naming the fields that differ.
Shared by the fold (index.py) and the ledger's append path, so both accept exactly the same locks.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..core import codes
from ..locks.sources import lock_text
from . import records as rec

if TYPE_CHECKING:
    from .catalogue import EventCatalogue

EngineLocks = Sequence[Mapping[str, Any]]    # the locks the engine finds in one source (results.Lock each)

LOCK_FIELDS = ("id", "pattern", "kind", "quote", "locator", "normalized_value", "valid", "invalid_reason")
COMPARED = LOCK_FIELDS[1:]            # the id is a name: a caller may give a lock its own


def source_id(record: dict, catalogue: "EventCatalogue") -> str | None:
    """The id a lock's locator names for a raw source (a message's message_id, else the record
    id), or None for a record type the lock tables do not read."""
    return None if catalogue.records[record["type"]].locked is None else rec.source_name(record)


def text_of(record: dict, catalogue: "EventCatalogue") -> Any:
    """The raw text of a source (a string, or a redaction's tombstone)."""
    return catalogue.records[record["type"]].locked.reading(record)[2]


def engine_locks(record: dict, catalogue: "EventCatalogue", book: Any) -> EngineLocks | None:
    """Every lock the rulebook's lock tables find in a raw source, sorted by (start, end, pattern);
    [] for a record type they do not read, None when its text was redacted (nothing to rescan)."""
    locked = catalogue.records[record["type"]].locked
    if locked is None:
        return []
    role, state, text = locked.reading(record)
    if rec.is_tombstone(text):
        return None
    return lock_text(rec.source_name(record), role, state, text, book, json_strings=locked.json_strings)


def accept(record: dict, text: Any, found: EngineLocks | None, claimed: dict, key: bytes | None, refusals: Any,
           at: str) -> dict:
    """A lock record as the fold reads it and the ledger stores it, or the refusal: its quote must
    be its source's text at its locator (QUOTE_MISMATCH), it must name one of the engine's locks
    there (LOCK_MISMATCH, naming the fields that differ), and one no other record of the source
    names (`claimed`: engine lock id -> record id, updated; LOCK_DUPLICATE)."""
    lock = record["lock"]
    loc = lock["locator"]
    where = {"message_id": loc["message_id"], "start": loc["start"], "end": loc["end"]}
    if "quote" in lock and rec.span_problem(text, loc["start"], loc["end"], lock["quote"]) == "mismatch":
        raise refusals.error(codes.QUOTE_MISMATCH, at=f"{at}.lock", **where)
    accepted, engine_id, differs = claim(lock, found, key)
    name = lock.get("id", record["id"])
    if differs:
        raise refusals.error(codes.LOCK_MISMATCH, at=f"{at}.lock", lock=name, **where, differs=differs)
    if engine_id is not None:
        if engine_id in claimed:
            raise refusals.error(codes.LOCK_DUPLICATE, at=f"{at}.lock", lock=name, record=claimed[engine_id])
        claimed[engine_id] = record["id"]
    return record if accepted == lock else dict(record, lock=accepted)


def claim(given: dict, found: EngineLocks | None, key: bytes | None) -> tuple[dict | None, str | None, list[str]]:
    """(the lock as accepted, the id of the engine's lock it names, the fields that differ).

    `given` names the engine's lock at its locator (of its pattern, else its kind, when several
    share the span) and is accepted when every field it gives equals that lock's; the fields it
    leaves out are the engine's. No engine lock at the locator: differs ['locator']. `found` None:
    the source's text was redacted, nothing can be rescanned, and a lock stands as given only with
    its own personal fields redacted too (as the ledger's redaction leaves them). A field the caller
    redacted is compared by the digest it carries, where one can be checked."""
    if found is None:
        unredacted = [f for f in ("quote", "normalized_value") if not rec.is_tombstone(given.get(f, {"redacted": True}))]
        missing = [f for f in COMPARED if f not in given]
        return (None, None, unredacted + missing) if unredacted or missing else (dict(given), None, [])
    loc = given["locator"]
    here = [c for c in found if (c["locator"]["start"], c["locator"]["end"]) == (loc["start"], loc["end"])]
    if not here:
        return None, None, ["locator"]
    best = min(here, key=lambda c: (c["pattern"] != given.get("pattern"), c["kind"] != given.get("kind")))
    differs = [f for f in COMPARED if f in given and not _fits(given[f], best[f], key)]
    if differs:
        return None, best["id"], differs
    return {f: given.get(f, best[f]) for f in LOCK_FIELDS}, best["id"], []


def _fits(given: Any, engine: Any, key: bytes | None) -> bool:
    """A supplied field equals the engine's; a redacted one, by the digest it carries (a keyed
    digest without the key cannot be checked, and matches no value later either)."""
    if rec.is_tombstone(given):
        if "hmac_sha256" in given:
            return key is None or rec.value_matches(engine, given, key)
        if "sha256" in given:
            return isinstance(engine, str) and rec.digest(engine) == given["sha256"]
        return True
    return type(given) is type(engine) and given == engine
