"""Why a message got the locks it got, pattern by pattern: the trace behind `groundrules eval
<lock table> FILE` and `groundrules lock --trace`.

For every pattern of the table: whether it counts in the message's role and state, which prefilter
word it found, what its gate counted; then each candidate its regex found, the value after each
normalisation step, each check and the first that failed, each drop and attempt rule with the test
that decided, and the verdict. A run of the gate's characters (or a prefilter word) that became no
candidate is a near miss: the trace says how far the regex read from there and where it stopped.
It reads the compiled lock tables and calls the scan's own functions; `trace()` checks its verdicts
against `lock()` on the same message, so a trace never tells a story the engine did not follow.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import regex

from ...core import codes, cpu_clock
from ...core.conditions import explain_failure
from ...core.errors import refusal
from ...locks import lock
from ...locks.rules import Neighbours, facts
from ...locks.scan import _spans, raw_scan

if TYPE_CHECKING:
    from ...locks.compile import LockPattern, LockTable
    from ...core.rulebook import Rulebook

NEAR_MISS_MIN = 3         # a run of the gate's characters shorter than this is not worth naming
NEAR_MISSES = 8           # per pattern
REACH = 64                # how far the regex's reading of a near miss is followed


def lock_trace(book: "Rulebook", table_id: str | None, message: Any) -> dict:
    """The trace of one message through one lock table (every lock table: `table_id` None)."""
    locks = lock(message, book)                         # refuses a malformed message, as lock() does
    mid, role = message["id"], message["role"]
    state, content = message.get("state", "sent"), message["content"]
    tables = [t for t in book.of_kind("lock_patterns") if table_id is None or t.id == table_id]
    offered = tuple(p for t in book.of_kind("lock_patterns") for p in t.patterns
                    if role in p.roles and state in p.states)
    raws = raw_scan(offered, mid, role, state, content)
    neighbours = Neighbours(raws)
    out = []
    for table in tables:
        patterns = [_pattern(p, table, content, role, state, raws, neighbours) for p in table.patterns]
        mine = [c for c in locks if c["pattern"] in table.pattern_ids]
        _agree(patterns, mine, table.id)
        out.append({"table": table.id, "file": table.file, "patterns": patterns, "locks": mine})
    return {"message": {"id": mid, "role": role, "state": state}, "tables": out}


def _pattern(p: "LockPattern", table: "LockTable", content: str, role: str, state: str, raws: list,
             neighbours: Neighbours) -> dict:
    out: dict = {"pattern": p.id, "kind": p.kind, "where": p.where,
                 "counts_in": {"ok": role in p.roles and state in p.states, "role": role, "state": state,
                               "roles": sorted(p.roles), "states": sorted(p.states)},
                 "prefilter": None, "gate": None, "candidates": [], "near_misses": []}
    runs = out["ran"] = out["counts_in"]["ok"]
    if runs and p.prefilter:
        word = next((w for w in p.prefilter if w in content), None)
        out["prefilter"] = {"ok": word is not None, "words": list(p.prefilter), "found": word}
        runs = word is not None
    if runs and p.gate:
        out["gate"] = gate = _gate(p, content)
        runs = gate["ok"]
    out["ran"] = runs
    others = [(r.start, r.end) for r in raws if r.pattern != p.id]
    if runs:
        text = p.fold[1](content) if p.fold else content
        by_span = {(r.start, r.end): r for r in raws if r.pattern == p.id}
        rows = [r for r in table.rows if p.id in r.patterns]
        spans = cpu_clock.bounded(lambda timeout: _spans(p, text, content, True, timeout), p.timeout)
        for start, end, value_span, _ in spans:
            out["candidates"].append(_candidate(p, content, start, end, value_span, by_span[start, end], rows,
                                                neighbours))
        out["near_misses"] = _near_misses(p, text, content, out["candidates"], others)
    elif out["gate"] is not None:             # the gate stopped it: what it would have read
        out["near_misses"] = _near_misses(p, None, content, [], others)
    return out


def _gate(p: "LockPattern", content: str) -> dict:
    """What the gate counts in the raw message: its characters in all, and the longest run."""
    cls, run, count = p.gate[0], p.gate[1], p.gate[2]
    found = [m.end() - m.start() for m in regex.finditer(cls + "+", content)]
    counted, longest = sum(found), max(found, default=0)
    return {"ok": counted >= count and longest >= run, "chars": cls, "count": count, "run": run,
            "counted": counted, "longest_run": longest}


def _candidate(p: "LockPattern", content: str, start: int, end: int, value_span, raw, rows: list,
               neighbours: Neighbours) -> dict:
    quote = content[start:end]
    value = quote if value_span is None else content[value_span[0]:value_span[1]]
    steps = []
    for i, step in enumerate(p.normalize):
        value = step(value)
        steps.append({"where": p.where + ("normalize", i), "value": value})
    checks, reason = [], None
    for i, check in enumerate(p.checks):
        ok = check.test(value)
        checks.append({"check": check.name, "where": p.where + ("validate", i), "ok": ok,
                       "reason": None if ok else check.reason})
        if not ok:
            reason = check.reason
            break
    out: dict[str, Any] = {"quote": quote, "start": start, "end": end, "read": quote if value_span is None else
           content[value_span[0]:value_span[1]], "steps": steps, "value": value, "checks": checks,
           "valid": reason is None, "invalid_reason": reason, "rules": [], "verdict": "locked", "by": None}
    if not rows:
        return out
    fact = facts(raw, content, neighbours)
    verdict = None
    for row in rows:
        if row.section == "attempt" and fact["valid"]:
            out["rules"].append({"rule": row.id, "section": row.section, "where": row.where, "held": None,
                                 "failed": None, "note": "attempt rows read invalid candidates only"})
            continue
        held = row.when.test(fact)
        out["rules"].append({"rule": row.id, "section": row.section, "where": row.where, "held": held,
                             "failed": None if held else explain_failure(row.when, fact)})
        if verdict is None and row.section == "drop" and held:
            verdict = ("dropped", row.id)
    if verdict is None and not fact["valid"] and any(r.section == "attempt" for r in rows):
        first = next((r["rule"] for r in out["rules"] if r["section"] == "attempt" and r["held"]), None)
        verdict = ("locked", first) if first else ("not_recorded", None)
    out["verdict"], out["by"] = verdict or ("locked", None)
    return out


def _near_misses(p: "LockPattern", text: str | None, content: str, candidates: list, others: list) -> list:
    """Runs of the gate's characters, or prefilter words, that no candidate of the pattern covers
    and no other pattern read either, with how far the regex reads from there (`text` None: the
    gate stopped the scan)."""
    covered = [(c["start"], c["end"]) for c in candidates] + others
    anchors = []
    if p.gate:
        anchors = [(m.start(), m.end()) for m in regex.finditer(p.gate[0] + "+", content)
                   if m.end() - m.start() >= NEAR_MISS_MIN]
    elif p.prefilter:
        for word in p.prefilter:
            at = content.find(word)
            while at >= 0:
                anchors.append((at, at + len(word)))
                at = content.find(word, at + 1)
    out = []
    for start, end in sorted(set(anchors)):
        if any(s < end and start < e for s, e in covered):
            continue
        miss = {"start": start, "end": end, "text": content[start:end]}
        if text is not None:
            miss["reach"] = _reach(p, text, start)
        out.append(miss)
        if len(out) == NEAR_MISSES:
            break
    return out


def _reach(p: "LockPattern", text: str, start: int) -> int | None:
    """The furthest offset up to which the text from `start` could still begin a match (None: it
    could not be told in time). A prefix that could is also one for every shorter prefix, so the
    end is found by bisection."""
    lo, hi = start, min(len(text), start + REACH)

    def could(end: int) -> bool:
        return cpu_clock.bounded(lambda timeout: p.regex.fullmatch(text, pos=start, endpos=end, partial=True,
                                                                   timeout=timeout), p.timeout) is not None
    try:
        if not could(lo):
            return start
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if could(mid):
                lo = mid
            else:
                hi = mid - 1
    except TimeoutError:
        return None
    return lo


def _agree(patterns: list, locks: list, table_id: str) -> None:
    """The trace's verdicts are the engine's: the candidates it calls locked are exactly lock()'s."""
    traced = sorted((p["pattern"], c["start"], c["end"], c["value"], c["valid"]) for p in patterns
                    for c in p["candidates"] if c["verdict"] == "locked")
    real = sorted((c["pattern"], c["locator"]["start"], c["locator"]["end"], c["normalized_value"], c["valid"])
                  for c in locks)
    if traced != real:
        raise refusal(codes.TRACE_DISAGREES, "trace.locks", table=table_id)
