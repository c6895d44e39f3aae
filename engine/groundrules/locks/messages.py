"""Locking messages: the public entry of the lock part (`groundrules.lock`, `lock_messages`).

A message is checked against the evidence contract's message vocabulary, then scanned by every
lock table of the rulebook (`scan`). This module, not `scan`, finds the default rulebook, so that
the table compiler (which scans its own examples) never imports the rulebook that imports it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..canonical import encodable
from ..errors import GroundrulesError
from .jsonstrings import escaped_strings
from .scan import lock_id, scan

if TYPE_CHECKING:
    from ..rulebook import Rulebook

CONTRACT = "evidence.v1.schema.json"   # its $defs message_role / message_state: the message vocabulary
DEFAULT_STATE = "sent"


def lock(message: dict, rulebook: "Rulebook | None" = None) -> list[dict]:
    """Every lock candidate of `message` ({id, role, content, state?}), sorted by (start, end, pattern).

    Refuses a malformed message with INVALID_MESSAGE, a scan past its time budget with LOCK_TIMEOUT,
    and a rulebook whose evidence contract lacks the message vocabulary with RULEBOOK_INCOMPLETE;
    never raises anything else."""
    book = _book(rulebook)
    vocabulary = _vocabulary(book)
    message_id, role, state, content = _well_formed(message, vocabulary) or _checked(message, vocabulary)
    patterns = _patterns(book)[role, state]
    return scan(patterns, message_id, role, state, content) if patterns else []


def lock_text(source_id: str, role: str, state: str, text: str, rulebook: "Rulebook | None" = None, *,
              json_strings: bool = False) -> list[dict]:
    """The locks of any raw text read as written by `role` in `state` (a message's content, a tool
    receipt's body, an injected field's value), with locators into `text` under `source_id`.
    With `json_strings`, the string values of a JSON text are scanned decoded too (an escaped
    `\\u5fae\\u4fe1` is 微信); what they yield points into the raw text, quotes it raw, and keeps
    the value read from the decoded one. Sorted by (start, end, pattern); LOCK_TIMEOUT as lock()."""
    patterns = _patterns(_book(rulebook))[role, state]
    if not patterns:
        return []
    found = scan(patterns, source_id, role, state, text)
    if json_strings:
        seen = {(c["locator"]["start"], c["locator"]["end"], c["pattern"]) for c in found}
        for value, starts, ends in escaped_strings(text):
            for c in scan(patterns, source_id, role, state, value):
                start, end = starts[c["locator"]["start"]], ends[c["locator"]["end"] - 1]
                if (start, end, c["pattern"]) not in seen:
                    seen.add((start, end, c["pattern"]))
                    found.append(dict(c, id=lock_id(source_id, c["pattern"], start, end), quote=text[start:end],
                                      locator={"message_id": source_id, "start": start, "end": end}))
        found.sort(key=lambda c: (c["locator"]["start"], c["locator"]["end"], c["pattern"]))
    return found


def lock_messages(messages: list, rulebook: "Rulebook | None" = None) -> list[dict]:
    """The locks of every message, message by message in the given order."""
    if not isinstance(messages, list):
        raise GroundrulesError("INVALID_MESSAGE", "messages must be a list of messages", field="messages")
    book = _book(rulebook)
    patterns, vocabulary = _patterns(book), _vocabulary(book)
    seen: dict = {}
    out: list[dict] = []
    for index, message in enumerate(messages):
        message_id, role, state, content = _well_formed(message, vocabulary) or _checked(message, vocabulary, index)
        if message_id in seen:
            raise GroundrulesError("DUPLICATE_MESSAGE_ID", "two messages share one id; lock ids would collide",
                                   message_id=message_id, index=index, first_index=seen[message_id])
        seen[message_id] = index
        mine = patterns[role, state]
        if mine:
            out += scan(mine, message_id, role, state, content)
    return out


def _book(rulebook: "Rulebook | None") -> "Rulebook":
    if rulebook is None:
        from ..rulebook import default
        return default()
    return rulebook


def _patterns(rulebook: "Rulebook") -> dict:
    """{(role, state): the patterns of every lock table that count in it}, filled on demand: a
    message is only ever offered the patterns that may read it (flattening the tables costs a third
    of a typical lock() call, so it is done once per rulebook)."""
    try:
        return rulebook.memo["locks.patterns"]
    except KeyError:
        every = tuple(p for table in rulebook.of_kind("lock_patterns") for p in table.patterns)
        return rulebook.memoized("locks.patterns", lambda: _ByRole(every))


class _ByRole(dict):
    def __init__(self, patterns: tuple):
        super().__init__()
        self.patterns = patterns

    def __missing__(self, key: tuple) -> tuple:
        role, state = key
        found = self[key] = tuple(p for p in self.patterns if role in p.roles and state in p.states)
        return found


def _vocabulary(rulebook: "Rulebook") -> tuple[tuple, tuple]:
    """(roles, states) a message may have. They are the evidence contract's, not constants here, so
    lock(), the lock tables' counts_in and the ledger's message records can never disagree."""
    try:
        return rulebook.memo["locks.vocabulary"]
    except KeyError:
        return rulebook.memoized("locks.vocabulary", lambda: _read_vocabulary(rulebook))


def _read_vocabulary(rulebook: "Rulebook") -> tuple[tuple, tuple]:
    defs = (rulebook.schemas.get(CONTRACT) or {}).get("$defs", {})
    try:
        return tuple(defs["message_role"]["enum"]), tuple(defs["message_state"]["enum"])
    except (KeyError, TypeError):
        raise GroundrulesError("RULEBOOK_INCOMPLETE", f"schemas/{CONTRACT} must define $defs message_role "
                               "and message_state (enums)", kind="schema") from None


def _well_formed(message: Any, vocabulary: tuple[tuple, tuple]) -> tuple[str, str, str, str] | None:
    """The fields of a message that passes every check of `_checked`, else None (which then says
    why): one test per field, with no error built, for the messages that are fine."""
    if type(message) is not dict:
        return None
    message_id, role, content = message.get("id"), message.get("role"), message.get("content")
    state = message.get("state", DEFAULT_STATE)
    roles, states = vocabulary
    if (type(message_id) is str and message_id and type(content) is str and role in roles and state in states
            and (message_id.isascii() or encodable(message_id)) and (content.isascii() or encodable(content))):
        return message_id, role, state, content
    return None


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

