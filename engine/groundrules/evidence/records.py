"""Ledger records: what each record type holds (the names it answers to, the source a lock is
inside, what an excerpt quotes, what a derived record derives from, where personal fields sit),
and their tombstones and digests.

The one place that reads a record by its type (message, lock, derived), shared by the ledger (on
append and redaction), its store's filing and the fold, so all of them read a record alike; the
check of one record against the records before it is integrity.py's.
"""
from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Mapping


def _bytes(value: Any) -> bytes:
    """A personal field as hashed: the UTF-8 text of a string, canonical JSON of anything else."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def digest(value: Any) -> str:
    """Unkeyed sha256 of a personal field: what tombstones in host-built payloads may carry. The
    ledger never stores it: a short value (a mobile number) is recovered from it by brute force."""
    return hashlib.sha256(_bytes(value)).hexdigest()


def keyed_digest(value: Any, key: bytes) -> str:
    """HMAC-SHA256 of a personal field under the redaction key, which never enters the database."""
    return hmac.new(key, _bytes(value), hashlib.sha256).hexdigest()


def is_tombstone(value: Any) -> bool:
    return type(value) is dict and value.get("redacted") is True


def tombstone(hmac_sha256: str | None, redaction_id: str | None) -> dict:
    """What a redacted field reads as: the keyed digest when the ledger has a key, else none;
    `redaction_id` None while the redaction that destroyed its key is not yet recorded."""
    stone: dict = {"redacted": True, "redaction": redaction_id}
    if hmac_sha256:
        stone["hmac_sha256"] = hmac_sha256
    return stone


def is_lock(record: dict) -> bool:
    return record["type"] == "lock"


def lock_record(lock: Mapping[str, Any], record_id: str | None = None) -> dict:
    """A lock record holding the lock candidate `lock` (with an id of its own, or one assigned on append)."""
    return {"type": "lock", "lock": lock} if record_id is None else {"id": record_id, "type": "lock", "lock": lock}


def holder(record: dict) -> dict:
    """The dict that holds a record's personal fields: the lock candidate for locks, else the record."""
    return record["lock"] if is_lock(record) else record


def personal(record: dict, fields: tuple) -> dict:
    """{field: value} of the personal fields present on the record, in `fields` order."""
    box = holder(record)
    return {f: box[f] for f in fields if f in box}


def source_name(record: dict) -> str:
    """The id a lock's locator names for a raw source: a message's message_id, else the record id."""
    name = message_name(record)
    return record["id"] if name is None else name


def message_name(record: dict) -> str | None:
    """The name a message answers to as a source (its message_id, else its id); None for any other type."""
    return record.get("message_id", record["id"]) if record["type"] == "message" else None


def lock_id(record: dict) -> str | None:
    """A lock record's lock id (None for any other type, or a lock candidate not named yet)."""
    return record["lock"].get("id") if is_lock(record) else None


def inside(record: dict) -> str | None:
    """The source a lock record is inside (its locator's message id); None for any other type."""
    return source_of(record) if is_lock(record) else None


def source_of(lock_record: dict) -> str:
    """The source a lock record is inside: its locator's message id."""
    return lock_record["lock"]["locator"]["message_id"]


def excerpt(record: dict) -> dict | None:
    """The locator of an excerpt (the seed's E07: a message quoting [start, end) of another), or None."""
    return record["locator"] if record["type"] == "message" and "locator" in record else None


def derived_from(record: dict) -> list:
    """The records a derived record names ([] for any other type)."""
    return record.get("derived_from", []) if record["type"] == "derived" else []


def names(record: dict) -> list[tuple[str, str]]:
    """(name, the key that gives it) of every name a record answers to: its id, a message's
    message_id, a lock's lock id (each once)."""
    out = [(record["id"], "id")]
    for other, key in ((message_name(record), "message_id"), (lock_id(record), "lock.id")):
        if other is not None and other != record["id"]:
            out.append((other, key))
    return out


def span_problem(content: Any, start: int, end: int, quote: Any) -> str | None:
    """None when quote == content[start:end]; else 'redacted' or 'mismatch'."""
    if is_tombstone(content) or is_tombstone(quote):
        return "redacted"
    if not (0 <= start < end <= len(content)) or content[start:end] != quote:
        return "mismatch"
    return None


def value_matches(value: Any, locked: Any, key: bytes | None = None) -> bool:
    """Does an event's value equal a lock's normalized_value (also after that value was redacted:
    by its keyed digest with the key, or by a host payload's plain sha256; a tombstone without a
    digest, or a keyed one without the key, matches nothing)?"""
    if is_tombstone(locked):
        if not isinstance(value, str):
            return False
        if "hmac_sha256" in locked:
            return key is not None and hmac.compare_digest(keyed_digest(value, key), locked["hmac_sha256"])
        return "sha256" in locked and digest(value) == locked["sha256"]
    return type(value) is type(locked) and value == locked
