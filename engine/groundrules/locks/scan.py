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

from ..core import cpu_clock
from ..core.errors import GroundrulesError
from .rules import NO_RULES, PatternTimeout, Raw, resolve

if TYPE_CHECKING:
    from .compile import LockPattern


def lock_id(message_id: str, pattern_id: str, start: int, end: int) -> str:
    """Deterministic: the same message id, pattern and span always give the same id."""
    key = f"{message_id}\x1f{pattern_id}\x1f{start}\x1f{end}".encode("utf-8")
    return "L-" + hashlib.blake2b(key, digest_size=8).hexdigest()


def raw_candidates(p: "LockPattern", message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """One pattern over one message, in match order, before the table's context rules; raises
    TimeoutError past the table's budget."""
    return raw_scan((p,), message_id, role, state, content)


def raw_scan(patterns: tuple, message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """Every pattern's raw candidates. A pattern runs if the raw content passes its gate and holds
    one of its prefilter words. The gate's census of a character set is taken once per message and
    shared by the patterns (so it is asked first once taken: most messages fail every digit gate at
    once, without a word looked for); a gate on a set not yet counted is asked after the words. The
    regex then reads the content through its fold, computed once per message and fold, only for a
    message that got this far. Quotes, values and groups are always read from the raw content."""
    raws: list[Raw] = []
    texts = None                      # made on first use: most messages never need them
    census: dict = {}
    counts = role + " " + state       # one lookup per pattern (its hash is computed once)
    for p in patterns:                # the loop every message pays for
        if counts not in p.counts:
            continue
        gate = p.gate
        if gate:
            known = census.get(gate[0])
            if known is not None and (-1 < known[0] < gate[2] or not _passes(known, gate, content)):
                continue
        words = p.prefilter
        if words:
            for word in words:
                if word in content:
                    break
            else:
                continue
        if gate and known is None:
            known = census[gate[0]] = [gate[4](content) if gate[2] else -1, 0, NEVER]
            if not _passes(known, gate, content):
                continue
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
            raise PatternTimeout(p.id, p.timeout) from None
    return raws


NEVER = 1 << 62     # "no run of" before any test said so


def _passes(known: list, gate: tuple, content: str) -> bool:
    """Whether the message passes a gate (key, run, count, run test, counter): `count` of its
    characters in all and `run` in a row. `known` is the census of the gate's set in this message,
    [how many (the counter's one walk, exact up to its cap, which no gate's count exceeds; -1 until
    a gate with a count asks), a run of, no run of] so many: every count test is answered by that
    walk, a run-only gate costs its run test alone, and one failed run test answers the longer runs
    of other patterns without a scan. (A list and a function, not an object
    with a method: it is made for most messages.)"""
    _, run, count, run_test, counter = gate
    have = known[0]
    if count:
        if have < 0:                     # a run-only gate took the census: count now
            have = known[0] = counter(content)
        if have < count:
            return False
    if -1 < have < run:
        return False
    if run > known[1]:
        if run >= known[2]:
            return False
        if run_test(content) is None:
            known[2] = run
            return False
        known[1] = run
    return True


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
    found = {"id": lock_id(message_id, p.id, start, end), "pattern": p.id, "kind": p.kind,
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


def scan(patterns: tuple, message_id: str, role: str, state: str, content: str, given: tuple = ()) -> list[dict]:
    """The locks of `patterns` on one message after their tables' context rules, sorted by
    (start, end, pattern). `given` adds raw candidates that only the rules see (an example's
    assumption about another table). Raises GroundrulesError LOCK_TIMEOUT."""
    try:
        raws = raw_scan(patterns, message_id, role, state, content)
        if not raws and not given:            # most messages: nothing for the rules to read
            return raws
        out = resolve(list(given) + raws, content)
    except PatternTimeout as exc:
        raise GroundrulesError("LOCK_TIMEOUT", "a lock pattern ran out of time on this message; its locks are "
                               "unknown, not absent", message_id=message_id, pattern=exc.pattern,
                               timeout_ms=round(exc.seconds * 1000)) from None
    out.sort(key=_sort_key)
    return out


def _sort_key(c: dict) -> tuple:
    return c["locator"]["start"], c["locator"]["end"], c["pattern"]
