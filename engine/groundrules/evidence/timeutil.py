"""Timestamps of the evidence contract: ISO 8601 with a UTC offset, compared as instants.

The schema's pattern admits only offset-carrying forms, so no comparison ever depends on the
host's timezone; a well-formed but impossible date (month 13) is reported, never raised as-is.
"""
from __future__ import annotations

from datetime import datetime


def parse(text: str) -> datetime | None:
    """The instant `text` names, or None when it is not a real date."""
    try:
        value = datetime.fromisoformat(text)
    except (ValueError, TypeError):
        return None
    return value if value.tzinfo is not None else None


def validity(window: tuple, now: datetime) -> str:
    """valid | expired | not_yet_valid of a (valid_from, valid_until) window at `now` (until exclusive)."""
    start, until = window
    if until is not None and now >= until:
        return "expired"
    if start is not None and now < start:
        return "not_yet_valid"
    return "valid"
