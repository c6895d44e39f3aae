"""Ledger records: their personal fields, tombstones and digests, and the integrity of one record.

Shared by the stores (checked on append) and the fold (checked on every payload), so a record the
store accepts is exactly a record the fold accepts.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any



def digest(value: Any) -> str:
    """sha256 of a personal field: the UTF-8 text of a string, canonical JSON of anything else."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_tombstone(value: Any) -> bool:
    return type(value) is dict and value.get("redacted") is True


def tombstone(sha256: str, redaction_id: str) -> dict:
    return {"redacted": True, "sha256": sha256, "redaction": redaction_id}


def holder(record: dict) -> dict:
    """The dict that holds a record's personal fields: the lock candidate for locks, else the record."""
    return record["lock"] if record["type"] == "lock" else record


def personal(record: dict, fields: tuple) -> dict:
    """{field: value} of the personal fields present on the record, in `fields` order."""
    box = holder(record)
    return {f: box[f] for f in fields if f in box}


def message_id(record: dict) -> str | None:
    """The message id a message record answers to, or that a lock points into."""
    if record["type"] == "message":
        return record.get("message_id", record["id"])
    if record["type"] == "lock":
        return record["lock"]["locator"]["message_id"]
    return None


def span_problem(content: Any, start: int, end: int, quote: Any) -> str | None:
    """None when quote == content[start:end]; else 'redacted' or 'mismatch'."""
    if is_tombstone(content) or is_tombstone(quote):
        return "redacted"
    if not (0 <= start < end <= len(content)) or content[start:end] != quote:
        return "mismatch"
    return None


def value_matches(value: Any, locked: Any) -> bool:
    """Does an event's value equal a lock's normalized_value (also after that value was redacted)?"""
    if is_tombstone(locked):
        return isinstance(value, str) and digest(value) == locked["sha256"]
    return type(value) is type(locked) and value == locked
