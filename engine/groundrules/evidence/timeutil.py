"""Validity windows of the evidence contract, compared as instants.

Timestamps are read by the one time parser (dates.parse_instant): the schema's pattern admits only
offset-carrying forms, so no comparison ever depends on the host's timezone; a well-formed but
impossible date (month 13) reads as None, never raised as-is.
"""
from __future__ import annotations

from datetime import datetime


def validity(window: tuple, now: datetime) -> str:
    """valid | expired | not_yet_valid of a (valid_from, valid_until) window at `now` (until exclusive)."""
    start, until = window
    if until is not None and now >= until:
        return "expired"
    if start is not None and now < start:
        return "not_yet_valid"
    return "valid"
