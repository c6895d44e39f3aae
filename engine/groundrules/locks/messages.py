"""Locking messages: the public entry of the lock part (`groundrules.lock`, `lock_messages`).

A message is checked against the evidence contract's message vocabulary, then scanned by every
lock table of the rulebook (`scan`). This module, not `scan`, finds the default rulebook, so that
the table compiler (which scans its own examples) never imports the rulebook that imports it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..canonical import encodable
from ..errors import GroundrulesError
from .scan import scan

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
    message_id, role, state, content = _checked(message, _vocabulary(book))
    return _lock(message_id, role, state, content, _patterns(book))


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

