"""One fold payload of the corpus, before and after an edit: slot states, event outcomes,
evidence sources, clarification questions, or the refusal."""
from __future__ import annotations

from typing import Any

from ...core.errors import GroundrulesError
from ...evidence import fold
from ...core.rulebook import Rulebook

OTHER_PATHS = 10          # differences outside the summary: how many paths to name


def run(book: Rulebook, payload: Any) -> dict:
    """{"error": code | None, "message": the refusal's sentence | None, "data": fold output | None}."""
    try:
        return {"error": None, "message": None, "data": fold(payload, book)}
    except GroundrulesError as exc:
        return {"error": exc.code, "message": exc.message, "data": None}


def compare(case: str, before: dict, after: dict) -> dict | None:
    if before == after:
        return None
    a, b = before["data"] or {}, after["data"] or {}
    slots = _changed(_slots(a), _slots(b), ("scope", "slot"))
    both = before["data"] is not None and after["data"] is not None   # else the refusal says it all
    events = _changed(_events(a), _events(b), ("event",)) if both else []
    evidence = _changed(_sources(a), _sources(b), ("evidence",)) if both else []
    questions = {"before": _questions(a), "after": _questions(b)}
    out = {"case": case,
           "error": ({"before": before["error"], "after": after["error"]}
                     if before["error"] != after["error"] else None),
           "slots": slots, "events": events, "evidence": evidence,
           "questions": questions if questions["before"] != questions["after"] else None,
           "message": ({"before": before["message"], "after": after["message"]}
                       if before["message"] != after["message"] else None),
           "other": []}
    if not (out["error"] or out["message"] or slots or events or evidence or out["questions"]):
        out["other"] = _paths(a, b)[:OTHER_PATHS]
    return out


def _slots(data: dict) -> dict:
    """(scope, slot) -> what a person reads off the slot: status, value, source, candidates."""
    out = {}
    for scope_id, scope in data.get("state", {}).get("scopes", {}).items():
        for slot_id, slot in scope["slots"].items():
            out[(scope_id, slot_id)] = {
                "status": slot["status"], "value": slot["value"], "source": slot["source"],
                "candidates": [{"value": c["value"], "source": c["source"]} for c in slot.get("candidates", [])]}
    return out


def _events(data: dict) -> dict:
    return {(e["id"],): {"outcome": e.get("outcome"), "rule": e.get("rule"), "scope": e.get("scope")}
            for e in data.get("events", [])}


def _sources(data: dict) -> dict:
    return {(e["id"],): {"source": e["source"], "validity": e["validity"]} for e in data.get("evidence", [])}


def _questions(data: dict) -> list:
    return [c["question"] for c in data.get("state", {}).get("clarifications", []) if c["status"] == "open"]


def _changed(old: dict, new: dict, names: tuple) -> list:
    out = []
    for key in list(old) + [k for k in new if k not in old]:
        if old.get(key) != new.get(key):
            out.append({**dict(zip(names, key)), "before": old.get(key), "after": new.get(key)})
    return out


def _paths(a: Any, b: Any, at: str = "") -> list[str]:
    """Dotted paths where two JSON values differ, in document order."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            if a.get(k) != b.get(k):
                out += _paths(a.get(k), b.get(k), f"{at}.{k}" if at else str(k))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) if x != y for p in _paths(x, y, f"{at}[{i}]")]
    return [at or "."]
