"""Injected time and ids: the service never reads the clock or a random source by itself.

Hosts use SystemClock and RandomIds; tests (and hosts that want reproducible ledgers) pass
StepClock and SequentialIds, which make every id and timestamp a function of the call order.
"""
from __future__ import annotations

import secrets
import threading
from datetime import datetime, timedelta, timezone
from typing import Protocol

from ..core.dates import parse_instant


class Clock(Protocol):
    def __call__(self) -> str: ...


class Ids(Protocol):
    def new(self, prefix: str) -> str: ...


class SystemClock:
    """UTC wall time, ISO 8601 with microseconds and a Z."""

    def __call__(self) -> str:
        return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class StepClock:
    """Starts at `start` and advances `step_s` seconds on every reading (one reading at a time:
    calls on several threads never read the same instant)."""

    def __init__(self, start: str = "2025-01-01T00:00:00Z", step_s: float = 1.0):
        moment = parse_instant(start)
        if moment is None:
            raise ValueError(f"not an RFC 3339 date-time with an offset: {start!r}")
        self._t = moment.astimezone(timezone.utc)
        self._step = timedelta(seconds=step_s)
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            now = self._t
            self._t += self._step
        return now.strftime("%Y-%m-%dT%H:%M:%SZ")


class RandomIds:
    """`F-3f9a…`: 16 random hex digits after the prefix; unique across processes sharing a ledger."""

    def new(self, prefix: str) -> str:
        return f"{prefix}-{secrets.token_hex(8)}"


class SequentialIds:
    """`F-000001`, `E-000001`, …: one counter per prefix, starting after `start` (one id at a time,
    whatever the threads)."""

    def __init__(self, start: int = 0):
        self._start = start
        self._counters: dict[str, int] = {}
        self._lock = threading.Lock()

    def new(self, prefix: str) -> str:
        with self._lock:
            n = self._counters.get(prefix, self._start) + 1
            self._counters[prefix] = n
        return f"{prefix}-{n:06d}"
