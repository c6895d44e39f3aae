"""Locking messages: the public entry of the lock part (`groundrules.lock`, `lock_messages`).

A message is checked against the evidence contract's message vocabulary, then scanned by every
lock table of the rulebook that counts in its role and state (`sources`, `scan`). This module, not
`scan` or `sources`, finds the default rulebook, so that the table compiler (which scans its own
examples) and the evidence part (which the rulebook compiles) never import the rulebook that
imports them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import codes
from ..core.canonical import encodable
from ..core.errors import GroundrulesError
from ..core.messages import refused, say
from . import sources
from .scan import locks_of, scan
from .sources import patterns as _patterns

if TYPE_CHECKING:
    from ..results import Lock
    from ..core.rulebook import Rulebook

CONTRACT = "evidence.v1.schema.json"   # its $defs message_role / message_state: the message vocabulary
DEFAULT_STATE = "sent"
Vocabulary = tuple[tuple[str, ...], tuple[str, ...]]     # (roles, states) a message may have


def lock(message: dict, rulebook: "Rulebook | None" = None) -> "list[Lock]":
    """Every lock candidate of `message` ({id, role, content, state?}), sorted by (start, end, pattern).

    Refuses a malformed message with INVALID_MESSAGE, a scan past its time budget with LOCK_TIMEOUT,
    and a rulebook whose evidence contract lacks the message vocabulary with RULEBOOK_INCOMPLETE;
    never raises anything else."""
    book = _book(rulebook) if rulebook is None else rulebook
    try:                              # one memo read per call: the two below, once per rulebook
        vocabulary, plans = book.memo["locks.lock"]
    except KeyError:
        vocabulary, plans = book.memoized("locks.lock", lambda: _plans(book))
    if type(message) is dict:         # a well-formed message: one test per field, no error built
        message_id, role, content = message.get("id"), message.get("role"), message.get("content")
        state = message.get("state", DEFAULT_STATE)
        plan = plans.get((role, state)) if type(role) is str and type(state) is str else None
        if (plan is not None and type(message_id) is str and message_id and type(content) is str
                and (message_id.isascii() or encodable(message_id)) and (content.isascii() or encodable(content))):
            runnable = plan.runnable(content)     # the gates, asked before any other call
            return locks_of(runnable, message_id, content) if runnable else []
    message_id, role, state, content = _checked(message, vocabulary, book)   # refuses it, saying why
    runnable = plans[role, state].runnable(content)
    return locks_of(runnable, message_id, content) if runnable else []


def _plans(book: "Rulebook") -> tuple:
    """The vocabulary and {(role, state): Plan} for every role and state it has: a message whose
    pair is no key is refused, so one lookup checks both fields."""
    vocabulary, by_role = _vocabulary(book), _patterns(book)
    return vocabulary, {(r, st): by_role[r, st] for r in vocabulary[0] for st in vocabulary[1]}


def lock_text(source_id: str, role: str, state: str, text: str, rulebook: "Rulebook | None" = None, *,
              json_strings: bool = False) -> "list[Lock]":
    """The locks of any raw text read as written by `role` in `state` (a message's content, a tool
    receipt's body, an injected field's value), with locators into `text` under `source_id`; with
    `json_strings`, a JSON text's string values are read decoded too (sources.py)."""
    return sources.lock_text(source_id, role, state, text, _book(rulebook), json_strings=json_strings)


def lock_messages(messages: list, rulebook: "Rulebook | None" = None) -> "list[Lock]":
    """The locks of every message, message by message in the given order."""
    if not isinstance(messages, list):
        raise GroundrulesError(codes.INVALID_MESSAGE, say(_book(rulebook), "lock.not_a_list"), field="messages")
    book = _book(rulebook)
    patterns, vocabulary = _patterns(book), _vocabulary(book)
    seen: dict = {}
    out: list[Lock] = []
    for index, message in enumerate(messages):
        message_id, role, state, content = _well_formed(message, vocabulary) or _checked(message, vocabulary, book, index)
        if message_id in seen:
            raise GroundrulesError(codes.DUPLICATE_MESSAGE_ID, say(book, "lock.duplicate_id"),
                                   message_id=message_id, index=index, first_index=seen[message_id])
        seen[message_id] = index
        mine = patterns[role, state]
        if mine:
            out += scan(mine, message_id, role, state, content)
    return out


def _book(rulebook: "Rulebook | None") -> "Rulebook":
    if rulebook is None:
        from ..core.rulebook import default
        return default()
    return rulebook


def _vocabulary(rulebook: "Rulebook") -> Vocabulary:
    """(roles, states) a message may have. They are the evidence contract's, not constants here, so
    lock(), the lock tables' counts_in and the ledger's message records can never disagree."""
    try:
        return rulebook.memo["locks.vocabulary"]
    except KeyError:
        return rulebook.memoized("locks.vocabulary", lambda: _read_vocabulary(rulebook))


def _read_vocabulary(rulebook: "Rulebook") -> Vocabulary:
    defs = (rulebook.schemas.get(CONTRACT) or {}).get("$defs", {})
    try:
        return tuple(defs["message_role"]["enum"]), tuple(defs["message_state"]["enum"])
    except (KeyError, TypeError):
        raise refused(rulebook, codes.RULEBOOK_INCOMPLETE, "rulebook.message_vocabulary", contract=CONTRACT,
                      details={"kind": "schema"}) from None


def _well_formed(message: Any, vocabulary: Vocabulary) -> tuple[str, str, str, str] | None:
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


def _checked(message: Any, vocabulary: Vocabulary, book: "Rulebook", index: int | None = None
             ) -> tuple[str, str, str, str]:
    roles, states = vocabulary
    where: dict[str, Any] = {} if index is None else {"index": index}

    def refuse(at: str, name: str, **params: Any) -> GroundrulesError:
        return GroundrulesError(codes.INVALID_MESSAGE, say(book, f"lock.{name}", **params), field=at, **where)

    if not isinstance(message, dict):
        raise refuse("message", "not_object")
    message_id, role, content = message.get("id"), message.get("role"), message.get("content")
    state = message.get("state", DEFAULT_STATE)
    if not isinstance(message_id, str) or not message_id:
        raise refuse("id", "id")
    if role not in roles:
        raise refuse("role", "role", roles=list(roles))
    if state not in states:
        raise refuse("state", "state", states=list(states))
    if not isinstance(content, str):
        raise refuse("content", "content")
    for field, text in (("id", message_id), ("content", content)):
        if not text.isascii() and not encodable(text):
            raise refuse(field, "surrogate", field=field)
    return message_id, role, state, content

