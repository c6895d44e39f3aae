"""Times in the decision log: one fixed text form (so that rows sort and compare as text), and the
`since` a reader or replay names (an instant, or a duration back from now)."""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from ..core.dates import parse_instant

FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_DURATION = re.compile(r"^(\d{1,6})([dhms])$")
_UNITS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def text(at: str | int) -> str:
    """`at` (epoch nanoseconds, or ISO 8601 with an offset) as UTC with microseconds."""
    moment: datetime | None
    if isinstance(at, int):
        moment = datetime.fromtimestamp(at / 1e9, timezone.utc)
    else:
        moment = parse(at)
        if moment is None:
            raise ValueError(f"not an RFC 3339 time with an offset: {at[:40]!r}")
    return moment.strftime(FORMAT)


def parse(value: str) -> datetime | None:
    """The instant `value` names (the one time parser, dates.parse_instant), in UTC; or None."""
    moment = parse_instant(value)
    return moment.astimezone(timezone.utc) if moment is not None else None


def _clock(now: str) -> datetime:
    """`now`, a clock's reading (always an instant with an offset), in UTC."""
    moment = parse(now)
    if moment is None:
        raise ValueError(f"the clock read {now!r}, which is no instant")
    return moment


def since(value: str, now: str) -> str | None:
    """`value` (ISO 8601 with an offset, or 7d / 12h / 30m / 45s before `now`) in the stored form;
    None when it is neither."""
    match = _DURATION.match(value)
    if match:
        back = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
        return (_clock(now) - back).strftime(FORMAT)
    moment = parse(value)
    return moment.strftime(FORMAT) if moment is not None else None


def days_before(now: str, days: int) -> str:
    return (_clock(now) - timedelta(days=days)).strftime(FORMAT)
