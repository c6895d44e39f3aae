"""What a batch's answers say, counted: the page `groundrules report --batch` draws, and its
`--json`. One pass over the output, counters only, so its memory does not grow with the rows.

Counted from the answers themselves, whatever the tool: refusals by error code; support reasons
(a `primary` and its `reasons`, each with the table's label the answer carries); locks by kind
(valid and not), by invalid reason and by pattern (`table.pattern`, a lock table's row);
verification issues and warnings by code; folded slots by status.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable


def summarize(answers: Iterable[dict]) -> dict:
    rows = ok = 0
    rulebooks: Counter = Counter()
    refusals: Counter = Counter()
    primary: Counter = Counter()
    reasons: Counter = Counter()
    labels: dict = {}
    kinds: dict = {}
    invalid: Counter = Counter()
    patterns: Counter = Counter()
    issues: Counter = Counter()
    slots: Counter = Counter()
    for answer in answers:
        rows += 1
        rulebooks[str(answer.get("rulebook"))] += 1
        error = answer.get("error") if isinstance(answer.get("error"), dict) else None
        for item in (error or {}).get("issues", []) or []:
            if isinstance(item, dict) and "code" in item:
                issues[str(item["code"])] += 1
        for item in answer.get("warnings") or []:
            if isinstance(item, dict) and "code" in item:
                issues[str(item["code"])] += 1
        if not answer.get("ok"):
            refusals[str((error or {}).get("code", "not ok"))] += 1
            continue
        ok += 1
        data = answer.get("data")
        if not isinstance(data, dict):
            continue
        if "primary" in data:
            primary[str(data["primary"])] += 1
            labels.setdefault(str(data["primary"]), data.get("primary_label"))
            for reason in data.get("reasons") or []:
                if isinstance(reason, dict):
                    reasons[str(reason.get("code"))] += 1
                    labels.setdefault(str(reason.get("code")), reason.get("label"))
        for lock in data.get("locks") or []:
            if not isinstance(lock, dict):
                continue
            counts = kinds.setdefault(str(lock.get("kind")), Counter())
            counts["valid" if lock.get("valid") else "invalid"] += 1
            if not lock.get("valid"):
                invalid[str(lock.get("invalid_reason"))] += 1
            patterns[str(lock.get("pattern"))] += 1
        state = data.get("state")
        if isinstance(state, dict):
            for scope in (state.get("scopes") or {}).values():
                for slot in ((scope or {}).get("slots") or {}).values():
                    if isinstance(slot, dict):
                        slots[str(slot.get("status"))] += 1
    return {
        "rows": rows, "ok": ok, "refused": rows - ok,
        "rulebooks": [{"rulebook": v, "count": n} for v, n in _ordered(rulebooks)],
        "refusals": [{"code": c, "count": n} for c, n in _ordered(refusals)],
        "primary": [{"code": c, "label": labels.get(c), "count": n} for c, n in _ordered(primary)],
        "reasons": [{"code": c, "label": labels.get(c), "count": n} for c, n in _ordered(reasons)],
        "locks": {
            "kinds": [{"kind": k, "valid": kinds[k]["valid"], "invalid": kinds[k]["invalid"]}
                      for k, _ in _ordered(Counter({k: sum(c.values()) for k, c in kinds.items()}))],
            "invalid_reasons": [{"reason": r, "count": n} for r, n in _ordered(invalid)],
            "patterns": [{"pattern": p, "count": n} for p, n in _ordered(patterns)],
        },
        "issues": [{"code": c, "count": n} for c, n in _ordered(issues)],
        "slots": [{"status": s, "count": n} for s, n in _ordered(slots)],
    }


def _ordered(counter: Counter) -> list[tuple[Any, int]]:
    """Most frequent first, then by name: the same bytes for the same answers."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], json.dumps(kv[0], ensure_ascii=False)))
