"""How a server runs the registry's calls: never on the event loop, in lanes, fairly.

Every call runs in a worker thread, so a slow database delays only the calls waiting on it, never
the loop that answers everyone else. Calls that touch a ledger and the stateless ones have threads
of their own (a stalled database cannot take the threads `lock_message` needs), and one principal
may have only so many calls running at once, however many it sends. Each call runs under an
abandon flag (abandon.py) the server sets when it stops past its grace period. `service` may be
swapped whole (a rule reload): a call keeps the service it started on.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

import anyio

from .. import abandon, attempts
from ..api import TOOLS, Caller, Service
from .settings import ServerSettings

LANES = ("ledger", "stateless")
Observer = Callable[[Any, Any, Caller, dict, float, int], None]   # (tool, arguments, caller, envelope, seconds, attempts)


class Dispatcher:
    def __init__(self, service: Service, settings: ServerSettings, observer: Observer | None = None):
        self.service = service
        self.settings = settings
        self.observer = observer
        self._lanes = {"ledger": anyio.CapacityLimiter(settings.ledger_threads),
                       "stateless": anyio.CapacityLimiter(settings.compute_threads)}
        self._turns: dict[str, anyio.Semaphore] = {}
        self._running: dict[threading.Event, str] = {}
        self._idle = threading.Condition()

    async def call(self, name: Any, arguments: Any, caller: Caller) -> dict:
        """The envelope of one call, computed in a worker thread of its lane, in its caller's turn."""
        tool = TOOLS.get(name) if isinstance(name, str) else None
        lane = "ledger" if tool is not None and tool.ledger else "stateless"
        limit = self.settings.calls_per_principal
        turn = self._turns.setdefault(caller.principal, anyio.Semaphore(limit))
        try:
            async with turn:
                return await anyio.to_thread.run_sync(self._run, self.service, lane, name, arguments, caller,
                                                      limiter=self._lanes[lane], abandon_on_cancel=True)
        finally:
            if turn.value == limit:                   # nobody holds or awaits it: forget the principal
                self._turns.pop(caller.principal, None)

    def _run(self, service: Service, lane: str, name: Any, arguments: Any, caller: Caller) -> dict:
        flag = threading.Event()
        with self._idle:
            self._running[flag] = lane
        started = time.perf_counter()
        try:
            with abandon.watched(flag), attempts.counted() as tries:
                envelope = service.call(name, arguments, caller)
        finally:
            with self._idle:
                del self._running[flag]
                self._idle.notify_all()
        if self.observer is not None:
            self.observer(name, arguments, caller, envelope, time.perf_counter() - started, tries[0])
        return envelope

    @property
    def running(self) -> int:
        """Calls whose thread has not returned."""
        with self._idle:
            return len(self._running)

    def running_by_lane(self) -> dict[str, int]:
        with self._idle:
            lanes = list(self._running.values())
        return {lane: lanes.count(lane) for lane in LANES}

    def abandon_all(self) -> None:
        """Every call still running will roll back instead of committing."""
        with self._idle:
            for flag in self._running:
                flag.set()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no call's thread runs (True), or `timeout` seconds passed (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)
