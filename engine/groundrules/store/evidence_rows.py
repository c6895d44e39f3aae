"""The evidence store's row layout, shared by its three backends (SQLite, PostgreSQL, memory).

The ledger files a record as {id, type, message_id, lock_id, source_id, subject, observed_s,
recorded_at, body, personal, digests}: the names and index keys it is found by, the record without
its personal values (`body`), those values apart (`personal`, the one column a redaction clears)
and their keyed digests. Here that becomes a row (canonical JSON, ensure_ascii=False) and a row
becomes what the ledger reads back, its JSON read; a value that does not read raises CorruptRow,
which the ledger reports as its refusal.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

COLUMNS = ("id", "type", "message_id", "lock_id", "recorded_at", "body", "personal", "digests", "redaction_id")
INSERTED = ("id", "type", "message_id", "lock_id", "recorded_at", "body", "personal", "digests", "subject",
            "source_id", "observed_s")
SELECT = ", ".join(COLUMNS)
INTERPRETATIONS = "(interpretations)"      # what CorruptRow names when an interpretation does not read


class CorruptRow(Exception):
    def __init__(self, record: str | None):
        super().__init__(record)
        self.record = record


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def row(filed: Mapping) -> dict:
    """The row of a filed record: its columns but `redaction_id` (a new record is unredacted)."""
    out = {k: filed[k] for k in INSERTED}
    for k in ("body", "personal", "digests"):
        out[k] = dumps(filed[k])
    return out


def record(r: Mapping) -> dict:
    """What the ledger reads of a record row (and its `seq` when selected): the JSON read, into
    objects of its own on every read (the caller may fill them in)."""
    out = {k: r[k] for k in COLUMNS}
    if "seq" in r.keys():
        out["seq"] = r["seq"]
    try:
        out["body"] = json.loads(r["body"])
        out["personal"] = None if r["personal"] is None else json.loads(r["personal"])
        out["digests"] = json.loads(r["digests"])
    except (ValueError, TypeError):
        raise CorruptRow(r["id"]) from None
    return out


def interpretation(r: Mapping) -> dict:
    """An interpretation row with its body read (None: withdrawn by a redaction)."""
    out = dict(r)
    try:
        out["body"] = None if r["body"] is None else json.loads(r["body"])
    except (ValueError, TypeError):
        raise CorruptRow(INTERPRETATIONS) from None
    return out


def redaction(r: Mapping) -> dict:
    """A redaction row with its event read."""
    try:
        return dict(r, event=json.loads(r["event"]))
    except (ValueError, TypeError):
        raise CorruptRow(r["record_id"]) from None
