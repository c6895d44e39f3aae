"""Dates and durations for the `before` / `after` tests: "evidence older than a year" as
`{field: observed_at, before: {now: -P1Y}}`, against a `now` the caller supplies.

Evaluation never reads the clock: a table that compares with `now` needs the caller to pass one
(an RFC 3339 date-time with its offset), and refuses to evaluate without it. Values are ISO dates
(`2024-05-01`) or RFC 3339 date-times with an offset (`2024-05-01T08:00:00+08:00`, `...Z`; the
seconds may be left out, as the evidence contract allows); anything else (a number, a date-time
without offset, `2024-13-01`) makes the test false, as a type mismatch does elsewhere in the
grammar. This is the one parser of times: the evidence ledger's timestamps and the test clocks'
start read through `parse_instant`, so no reading depends on the Python version's fromisoformat. When either side is a bare date, the two compare as
calendar dates (a date-time by its date in its own offset); two date-times compare as instants.
Durations are ISO 8601 with whole numbers, optionally negative: `P1Y`, `-P30D`, `PT12H`, `P1Y2M`,
`P2W`; years and months move the calendar (31 January + P1M is 28 or 29 February).
"""
from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta
from typing import NamedTuple

from . import codes
from .errors import GroundrulesError, refusal

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})")
_DURATION = re.compile(r"(-)?P(?:(\d{1,6})Y)?(?:(\d{1,6})M)?(?:(\d{1,6})W)?(?:(\d{1,6})D)?"
                          r"(?:T(?:(\d{1,7})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?")


class Duration(NamedTuple):
    sign: int
    months: int               # years x 12 + months: moved on the calendar
    delta: timedelta          # weeks, days, hours, minutes, seconds

    def shift(self, moment: datetime) -> datetime:
        months = moment.month - 1 + self.sign * self.months
        year, month = moment.year + months // 12, months % 12 + 1
        if not 1 <= year <= 9999:
            raise OverflowError("date out of range")
        day = min(moment.day, calendar.monthrange(year, month)[1])
        return moment.replace(year=year, month=month, day=day) + self.sign * self.delta


def parse_duration(text: object) -> Duration | None:
    """An ISO 8601 duration, or None when `text` is not one."""
    if not isinstance(text, str):
        return None
    m = _DURATION.fullmatch(text)
    if m is None or text.rstrip("-") in ("P", "PT") or text.endswith("T"):
        return None
    sign, years, months, weeks, days, hours, minutes, seconds = m.groups()
    n = [int(x) if x else 0 for x in (years, months, weeks, days, hours, minutes, seconds)]
    delta = timedelta(weeks=n[2], days=n[3], hours=n[4], minutes=n[5], seconds=n[6])
    return Duration(-1 if sign else 1, n[0] * 12 + n[1], delta)


def parse_moment(text: object) -> date | datetime | None:
    """An ISO date, an RFC 3339 date-time with offset, or None."""
    if text.__class__ is not str or len(text) > 40:
        return None
    try:
        if (m := _DATETIME.fullmatch(text)) is not None:
            y, mo, d, h, mi, s, frac, zone = m.groups()
            return datetime.fromisoformat(f"{y}-{mo}-{d}T{h}:{mi}:{s or '00'}{(frac or '')[:7]}"
                                          f"{'+00:00' if zone in 'Zz' else zone}")
        if (m := _DATE.fullmatch(text)) is not None:
            return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:          # 2024-13-01, 25:00, an offset past 24 hours
        return None
    return None


def parse_instant(text: object) -> datetime | None:
    """The instant an RFC 3339 date-time with an offset names, or None (a bare date is no instant)."""
    moment = parse_moment(text)
    return moment if isinstance(moment, datetime) else None


class Now(NamedTuple):
    """The caller's `now`, parsed once per evaluation."""

    moment: datetime


def now_of(text: object) -> Now:
    """The caller's now: an RFC 3339 date-time with offset, else the refusal BAD_NOW."""
    moment = parse_moment(text)
    if not isinstance(moment, datetime):
        raise refusal(codes.BAD_NOW, "now.bad")
    return Now(moment)


class Anchor(NamedTuple):
    """What a value is compared with: a fixed moment, or now shifted by a duration."""

    moment: date | datetime | None = None
    offset: Duration | None = None

    def resolve(self, now: Now | None, table: str = "") -> date | datetime:
        if self.offset is None:
            assert self.moment is not None, "anchor_of builds an Anchor with a moment or an offset"
            return self.moment
        if now is None:
            raise refusal(codes.NOW_REQUIRED, "now.required", table=table)
        return self.offset.shift(now.moment)


def anchor_of(arg: object) -> Anchor | None:
    """`{now: DURATION}` or a date / date-time literal, or None when `arg` is neither."""
    if isinstance(arg, dict) and list(arg) == ["now"]:
        duration = parse_duration(arg["now"])
        return Anchor(offset=duration) if duration is not None else None
    moment = parse_moment(arg)
    return Anchor(moment=moment) if moment is not None else None


def order(value: object, other: date | datetime) -> int | None:
    """-1, 0 or 1 as `value` (text) is before, at or after `other`; None when `value` is no date."""
    mine = parse_moment(value)
    if mine is None:
        return None
    a: date
    b: date
    if isinstance(mine, datetime) and isinstance(other, datetime):
        a, b = mine, other
    else:
        a = mine.date() if isinstance(mine, datetime) else mine
        b = other.date() if isinstance(other, datetime) else other
    return (a > b) - (a < b)
