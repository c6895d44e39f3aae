"""Handing raw text to the scanner under a given rulebook: which lock patterns may read it (those
whose table counts in its role and state), and, for a JSON text, its string values decoded.

Shared by `lock()` (a message) and the evidence part (every raw source: a message's content, a
tool receipt's body, an injected field's value). It takes the rulebook and never looks one up, so
the parts the rulebook compiles may import it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .gates import Plan
from .jsonstrings import escaped_strings
from .scan import lock_id, scan

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook
    from ..results import Lock


def lock_text(source_id: str, role: str, state: str, text: str, rulebook: "Rulebook", *,
              json_strings: bool = False) -> list[Lock]:
    """The locks of any raw text read as written by `role` in `state` (a message's content, a tool
    receipt's body, an injected field's value), with locators into `text` under `source_id`.
    With `json_strings`, the string values of a JSON text are scanned decoded too (an escaped
    `\\u5fae\\u4fe1` is 微信); what they yield points into the raw text, quotes it raw, and keeps
    the value read from the decoded one. Sorted by (start, end, pattern); LOCK_TIMEOUT as lock()."""
    readers = patterns(rulebook)[role, state]
    if not readers:
        return []
    found = scan(readers, source_id, role, state, text)
    if json_strings:
        seen = {(c["locator"]["start"], c["locator"]["end"], c["pattern"]) for c in found}
        for value, starts, ends in escaped_strings(text):
            for c in scan(readers, source_id, role, state, value):
                start, end = starts[c["locator"]["start"]], ends[c["locator"]["end"] - 1]
                if (start, end, c["pattern"]) not in seen:
                    seen.add((start, end, c["pattern"]))
                    found.append({**c, "id": lock_id(source_id, c["pattern"], start, end), "quote": text[start:end],
                                  "locator": {"message_id": source_id, "start": start, "end": end}})
        found.sort(key=lambda c: (c["locator"]["start"], c["locator"]["end"], c["pattern"]))
    return found


def patterns(rulebook: "Rulebook") -> dict:
    """{(role, state): the Plan of the patterns of every lock table that count in it}, filled on
    demand: a message is only ever offered the patterns that may read it, and their gates are
    arranged once per rulebook (gates.py), not per message."""
    try:
        return rulebook.memo["locks.patterns"]
    except KeyError:
        every = tuple(p for table in rulebook.of_kind("lock_patterns") for p in table.patterns)
        return rulebook.memoized("locks.patterns", lambda: _ByRole(every))


class _ByRole(dict):
    def __init__(self, patterns: tuple):
        super().__init__()
        self.patterns = patterns

    def __missing__(self, key: tuple) -> Plan:
        found = self[key] = Plan(self.patterns, *key)
        return found
