"""`lock(message)`: the mechanical evidence locks of one message, before any model reads it.

Every pattern of every `lock_patterns` table scans the RAW content (never a normalised copy, so
offsets are code points into what the user typed); each match is kept verbatim as `quote`, its
`normalized_value` is derived by the table's steps, and the table's checks decide `valid`. The
tables' context rules (rules.py) then drop the readings a careful person would not make, and keep
an invalid candidate when it looks like an attempt, with its reason. A scan that runs out of time
is LOCK_TIMEOUT: the caller cannot tell "nothing there" from "not looked at", so it gets no
partial list.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from ..core import codes, cpu_clock
from ..core.errors import GroundrulesError, refusal
from .gates import Plan
from .rules import NO_RULES, Raw, ScanTimeout, resolve

if TYPE_CHECKING:
    from ..results import Lock
    from .compile import LockPattern


def lock_id(message_id: str, pattern_id: str, start: int, end: int) -> str:
    """Deterministic: the same message id, pattern and span always give the same id."""
    key = f"{message_id}\x1f{pattern_id}\x1f{start}\x1f{end}".encode("utf-8")
    return "L-" + hashlib.blake2b(key, digest_size=8).hexdigest()


def raw_candidates(p: "LockPattern", message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """One pattern over one message, in match order, before the table's context rules; raises
    TimeoutError past the table's budget."""
    return raw_scan((p,), message_id, role, state, content)


PLANS_KEPT = 256    # plans for pattern tuples handed in directly (examples, traces, benchmarks)
_plans: dict = {}


def plan_for(patterns: "tuple | Plan", role: str, state: str) -> Plan:
    """The Plan of `patterns` in a role and state: a rulebook's own plans are made once (sources.py);
    one for any other tuple is kept by identity, a few hundred at most."""
    if isinstance(patterns, Plan):
        return patterns
    key = (id(patterns), role, state)
    kept = _plans.get(key)
    if kept is not None and kept[0] is patterns:
        return kept[1]
    if len(_plans) >= PLANS_KEPT:
        _plans.clear()
    plan = Plan(patterns, role, state)
    _plans[key] = (patterns, plan)
    return plan


def raw_scan(patterns: "tuple | Plan", message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """Every raw candidate of the patterns that pass their gate and words on the message (gates.py)."""
    return raws_of(plan_for(patterns, role, state).runnable(content), message_id, content)


def raws_of(runnable: list, message_id: str, content: str) -> list[Raw]:
    """The raw candidates of the patterns a message passed the gates of, in order. The regex reads
    the content through its fold, computed once per message and fold; quotes, values and groups
    are always read from the raw content. Raises ScanTimeout past a table's budget."""
    raws: list[Raw] = []
    texts: dict | None = None         # made on first use: most messages never need them
    for p in runnable:
        fold = p.fold
        if fold:
            if texts is None:
                texts = {}
            text = texts.get(fold[0])
            if text is None:
                text = texts[fold[0]] = fold[1](content)
        else:
            text = content
        keep = p.rules is not NO_RULES
        try:                          # the scan, and a `matches` check, each within the table's budget of CPU
            if len(text) <= p.clockless:
                spans = _spans(p, text, content, keep, None)
            else:
                spans = cpu_clock.bounded(lambda timeout: _spans(p, text, content, keep, timeout), p.timeout)
            for start, end, value_span, groups in spans:
                raws.append(_raw(p, message_id, content, start, end, value_span, groups))
        except TimeoutError:
            raise ScanTimeout(p.id, p.timeout) from None
    return raws


def _raw(p: "LockPattern", message_id: str, content: str, start: int, end: int, value_span, groups: dict) -> Raw:
    quote = content[start:end]
    value = quote if value_span is None else content[value_span[0]:value_span[1]]
    for step in p.normalize:
        value = step(value)
    reason = None
    for check in p.checks:
        if not check.test(value):
            reason = check.reason
            break
    found: Lock = {"id": lock_id(message_id, p.id, start, end), "pattern": p.id, "kind": p.kind,
             "quote": quote, "locator": {"message_id": message_id, "start": start, "end": end},
             "normalized_value": value, "valid": reason is None, "invalid_reason": reason}
    return Raw(p.kind, p.id, start, end, reason is None, groups, p.rules, found)


def _spans(p: "LockPattern", text: str, content: str, keep_groups: bool, timeout: float | None) -> list[tuple]:
    """Every (start, end, value span or None, named groups) of the pattern, collected before any
    candidate is built: the regex clock runs from the first match to the last, and our
    per-candidate work must not spend the scan's budget. A text no longer than the pattern's
    proven bound allows (cost.py) is scanned without the clock (`timeout` None), which `regex` would
    read at every match. Groups are read by number from `Match.regs` (LockPattern.groups)."""
    lead, value, named = p.groups
    if not keep_groups:
        named = ()
    spans = []
    # finditer(text) without a keyword: `regex` parses keyword arguments at a cost near a short scan's
    found = p.regex.finditer(text) if timeout is None else p.regex.finditer(text, timeout=timeout)
    for m in found:
        regs = m.regs
        start, end = regs[0]
        if lead and regs[lead][0] >= 0:
            start = regs[lead][0]
        if start == end:            # an empty match (a lookaround alone) locks nothing
            continue
        value_span = regs[value] if value and regs[value][0] >= 0 else None
        groups = {name: content[regs[i][0]:regs[i][1]] for name, i in named if regs[i][0] >= 0}
        spans.append((start, end, value_span, groups))
    return spans


def scan(patterns: "tuple | Plan", message_id: str, role: str, state: str, content: str,
         given: tuple = ()) -> list[Lock]:
    """The locks of `patterns` on one message after their tables' context rules, sorted by
    (start, end, pattern). `given` adds raw candidates that only the rules see (an example's
    assumption about another table). Raises GroundrulesError LOCK_TIMEOUT."""
    runnable = plan_for(patterns, role, state).runnable(content)
    if not runnable and not given:            # most messages: no pattern to run
        return []
    return locks_of(runnable, message_id, content, given)


def locks_of(runnable: list, message_id: str, content: str, given: tuple = ()) -> list[Lock]:
    """scan() once the gates have chosen the patterns to run (lock() asks them itself)."""
    try:
        raws = raws_of(runnable, message_id, content)
        if not raws and not given:            # nothing for the rules to read
            return []
        out = resolve(list(given) + raws, content)
    except ScanTimeout as exc:
        raise refusal(codes.LOCK_TIMEOUT, "lock.timeout", details={
            "message_id": message_id, "pattern": exc.pattern, "timeout_ms": round(exc.seconds * 1000)}) from None
    out.sort(key=_sort_key)
    return out


def _sort_key(c: Lock) -> tuple:
    return c["locator"]["start"], c["locator"]["end"], c["pattern"]
