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
from typing import Any, TYPE_CHECKING

from ..canonical import encodable
from ..errors import GroundrulesError
from .rules import NO_RULES, PatternTimeout, Raw, resolve

if TYPE_CHECKING:
    from ..rulebook import Rulebook
    from .compile import LockPattern

CONTRACT = "evidence.v1.schema.json"   # its $defs message_role / message_state: the message vocabulary
DEFAULT_STATE = "sent"


def lock_id(message_id: str, pattern_id: str, start: int, end: int) -> str:
    """Deterministic: the same message id, pattern and span always give the same id."""
    key = f"{message_id}\x1f{pattern_id}\x1f{start}\x1f{end}".encode("utf-8")
    return "L-" + hashlib.blake2b(key, digest_size=8).hexdigest()


def raw_candidates(p: "LockPattern", message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """One pattern over one message, in match order, before the table's context rules; raises
    TimeoutError past the table's budget."""
    return raw_scan((p,), message_id, role, state, content)


def raw_scan(patterns: tuple, message_id: str, role: str, state: str, content: str) -> list[Raw]:
    """Every pattern's raw candidates. A pattern runs if the raw content holds one of its prefilter
    words, and its text (the content through its fold, computed once per message and fold)
    passes its gate (each test once per message); quotes, values and groups are always read from
    the raw content."""
    raws: list[Raw] = []
    texts = {"": content}
    gates: dict = {}
    for p in patterns:
        if role not in p.roles or state not in p.states:
            continue
        if p.prefilter and not any(map(content.__contains__, p.prefilter)):
            continue
        fold = p.fold
        if fold:
            text = texts.get(fold[0])
            if text is None:
                text = texts[fold[0]] = fold[1](content)
            fold = fold[0]
        else:
            text, fold = content, ""
        if p.gate and not _passes(p.gate, fold, text, gates):
            continue
        try:                          # the scan, and a `matches` check, each within the table's budget
            for start, end, value_span, groups in _spans(p, text, content, p.rules is not NO_RULES):
                raws.append(_raw(p, message_id, content, start, end, value_span, groups))
        except TimeoutError:
            raise PatternTimeout(p.id, p.timeout) from None
    return raws


def _passes(gate: tuple, fold: str, text: str, seen: dict) -> bool:
    """Every test of the gate holds on the text; each answer is kept for the other patterns."""
    for key, test in gate:
        passed = seen.get((fold, key))
        if passed is None:
            passed = seen[(fold, key)] = test(text) is not None
        if not passed:
            return False
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


def _spans(p: "LockPattern", text: str, content: str, keep_groups: bool) -> list[tuple]:
    """Every (start, end, value span or None, named groups) of the pattern, collected before any
    candidate is built: the regex clock runs from the first match to the last, and our
    per-candidate work must not spend the scan's budget. Groups are read by number from
    `Match.regs`: a lookup by name costs ten times more."""
    index = p.regex.groupindex
    lead = index[p.start_group] if p.start_group is not None else 0
    value = index[p.value_group] if p.value_group is not None else 0
    named = tuple(index.items()) if keep_groups else ()
    spans = []
    for m in p.regex.finditer(text, timeout=p.timeout):
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
        out = resolve(list(given) + raw_scan(patterns, message_id, role, state, content), content)
    except PatternTimeout as exc:
        raise GroundrulesError("LOCK_TIMEOUT", "a lock pattern ran out of time on this message; its locks are "
                               "unknown, not absent", message_id=message_id, pattern=exc.pattern,
                               timeout_ms=round(exc.seconds * 1000)) from None
    out.sort(key=_sort_key)
    return out


def _sort_key(c: dict) -> tuple:
    return c["locator"]["start"], c["locator"]["end"], c["pattern"]


def lock(message: dict, rulebook: "Rulebook | None" = None) -> list[dict]:
    """Every lock candidate of `message` ({id, role, content, state?}), sorted by (start, end, pattern).

    Refuses a malformed message with INVALID_MESSAGE, a scan past its time budget with LOCK_TIMEOUT,
    and a rulebook whose evidence contract lacks the message vocabulary with RULEBOOK_INCOMPLETE;
    never raises anything else."""
    book = _book(rulebook)
    message_id, role, state, content = _checked(message, _vocabulary(book))
    return _lock(message_id, role, state, content, _patterns(book))


def lock_document(doc: Any, rulebook: "Rulebook | None" = None) -> list[dict]:
    """What the CLI and the MCP tool take: one message, or `{"messages": [...]}`."""
    if isinstance(doc, dict) and "messages" in doc:
        if set(doc) != {"messages"}:
            raise GroundrulesError("INVALID_MESSAGE", "a message list is {\"messages\": [...]} and nothing else",
                                   field="messages")
        return lock_messages(doc["messages"], rulebook)
    return lock(doc, rulebook)


def lock_messages(messages: list, rulebook: "Rulebook | None" = None) -> list[dict]:
    """The locks of every message, message by message in the given order."""
    if not isinstance(messages, list):
        raise GroundrulesError("INVALID_MESSAGE", "messages must be a list of messages", field="messages")
    book = _book(rulebook)
    patterns, vocabulary = _patterns(book), _vocabulary(book)
    seen: dict = {}
    out: list[dict] = []
    for index, message in enumerate(messages):
        message_id, role, state, content = _checked(message, vocabulary, index)
        if message_id in seen:
            raise GroundrulesError("DUPLICATE_MESSAGE_ID", "two messages share one id; lock ids would collide",
                                   message_id=message_id, index=index, first_index=seen[message_id])
        seen[message_id] = index
        out += _lock(message_id, role, state, content, patterns)
    return out


def _lock(message_id: str, role: str, state: str, content: str, patterns: tuple) -> list[dict]:
    return scan(patterns, message_id, role, state, content)


def _book(rulebook: "Rulebook | None") -> "Rulebook":
    if rulebook is None:
        from ..rulebook import default
        return default()
    return rulebook


def _patterns(rulebook: "Rulebook") -> tuple:
    # flattening costs a third of a typical lock() call, so it is done once per rulebook
    return rulebook.memoized("locks.patterns", lambda: tuple(
        p for table in rulebook.of_kind("lock_patterns") for p in table.patterns))


def _vocabulary(rulebook: "Rulebook") -> tuple[tuple, tuple]:
    """(roles, states) a message may have. They are the evidence contract's, not constants here, so
    lock(), the lock tables' counts_in and the ledger's message records can never disagree."""
    def build() -> tuple[tuple, tuple]:
        defs = (rulebook.schemas.get(CONTRACT) or {}).get("$defs", {})
        try:
            return tuple(defs["message_role"]["enum"]), tuple(defs["message_state"]["enum"])
        except (KeyError, TypeError):
            raise GroundrulesError("RULEBOOK_INCOMPLETE", f"schemas/{CONTRACT} must define $defs message_role "
                                   "and message_state (enums)", kind="schema") from None
    return rulebook.memoized("locks.vocabulary", build)


def _checked(message: Any, vocabulary: tuple[tuple, tuple], index: int | None = None) -> tuple[str, str, str, str]:
    roles, states = vocabulary
    where = {} if index is None else {"index": index}

    def refuse(field: str, text: str) -> GroundrulesError:
        return GroundrulesError("INVALID_MESSAGE", text, field=field, **where)

    if not isinstance(message, dict):
        raise refuse("message", "a message must be an object {id, role, content, state?}")
    message_id, role, content = message.get("id"), message.get("role"), message.get("content")
    state = message.get("state", DEFAULT_STATE)
    if not isinstance(message_id, str) or not message_id:
        raise refuse("id", "message id must be a non-empty string")
    if role not in roles:
        raise refuse("role", "message role must be one of: " + ", ".join(roles))
    if state not in states:
        raise refuse("state", "message state must be one of: " + ", ".join(states))
    if not isinstance(content, str):
        raise refuse("content", "message content must be a string")
    for field, text in (("id", message_id), ("content", content)):
        if not text.isascii() and not encodable(text):
            raise refuse(field, f"message {field} must be valid Unicode (it holds a lone surrogate)")
    return message_id, role, state, content

