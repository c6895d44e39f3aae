"""One conversation of the lock corpus, before and after an edit: locks added, removed, changed."""
from __future__ import annotations

from typing import Any

from ...core.errors import GroundrulesError
from ...locks import lock_messages
from ...core.rulebook import Rulebook

SHOWN = ("pattern", "kind", "quote", "start", "end", "normalized_value", "valid", "invalid_reason")


def scan(book: Rulebook, messages: Any) -> dict:
    """{"error": code | None, "messages": {message id: [lock, ...]}} in message order."""
    try:
        found = lock_messages(messages, book)
    except GroundrulesError as exc:
        return {"error": exc.code, "messages": {}}
    out: dict = {m["id"]: [] for m in messages}
    for c in found:
        loc = c["locator"]
        out[loc["message_id"]].append({"pattern": c["pattern"], "kind": c["kind"], "quote": c["quote"],
                                       "start": loc["start"], "end": loc["end"],
                                       "normalized_value": c["normalized_value"], "valid": c["valid"],
                                       "invalid_reason": c["invalid_reason"]})
    return {"error": None, "messages": out}


def compare(case: str, before: dict, after: dict) -> dict | None:
    if before == after:
        return None
    messages = []
    ids = list(before["messages"]) + [m for m in after["messages"] if m not in before["messages"]]
    for mid in ids:
        change = _message(before["messages"].get(mid, []), after["messages"].get(mid, []))
        if change is not None:
            messages.append({"message": mid, **change})
    return {"case": case,
            "error": ({"before": before["error"], "after": after["error"]}
                      if before["error"] != after["error"] else None),
            "messages": messages}


def _message(old: list, new: list) -> dict | None:
    """Locks of one message: same pattern and span are the same lock (changed if anything else
    differs); a removed and an added lock of one pattern over overlapping spans are one changed lock."""
    def span(c: dict) -> tuple:
        return c["pattern"], c["start"], c["end"]
    new_by_span = {span(c): c for c in new}
    old_spans = {span(c) for c in old}
    changed = [{"before": c, "after": new_by_span[span(c)]} for c in old
               if span(c) in new_by_span and new_by_span[span(c)] != c]
    removed = [c for c in old if span(c) not in new_by_span]
    added = [c for c in new if span(c) not in old_spans]
    for c in list(removed):
        partner = next((a for a in added if a["pattern"] == c["pattern"]
                        and a["start"] < c["end"] and c["start"] < a["end"]), None)
        if partner is not None:
            removed.remove(c)
            added.remove(partner)
            changed.append({"before": c, "after": partner})
    if not (added or removed or changed):
        return None
    changed.sort(key=lambda ch: (ch["before"]["start"], ch["before"]["end"], ch["before"]["pattern"]))
    return {"added": added, "removed": removed, "changed": changed}
