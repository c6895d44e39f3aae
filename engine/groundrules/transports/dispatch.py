"""How a server runs the registry's calls: never on the event loop, in lanes, fairly.

Every call runs in a worker thread, so a slow database delays only the calls waiting on it, never
the loop that answers everyone else. Calls that touch a ledger and the stateless ones have threads
of their own (a stalled database cannot take the threads `lock_message` needs), and one principal
may have only so many calls running at once, however many it sends. Each call runs under an
abandon flag (abandon.py) the server sets when it stops past its grace period.
"""
from __future__ import annotations

import threading
from typing import Any

import anyio

from .. import abandon
from ..api import TOOLS, Caller, Service
from .settings import ServerSettings


class Dispatcher:
    def __init__(self, service: Service, settings: ServerSettings):
        self.service = service
        self.settings = settings
        self._lanes = {True: anyio.CapacityLimiter(settings.ledger_threads),
                       False: anyio.CapacityLimiter(settings.compute_threads)}
        self._turns: dict[str, anyio.Semaphore] = {}
        self._running: set[threading.Event] = set()
        self._idle = threading.Condition()

    async def call(self, name: str, arguments: Any, caller: Caller) -> dict:
        """The envelope of one call, computed in a worker thread of its lane, in its caller's turn."""
        tool = TOOLS.get(name) if isinstance(name, str) else None
        lane = self._lanes[bool(tool is not None and tool.ledger)]
        limit = self.settings.calls_per_principal
        turn = self._turns.setdefault(caller.principal, anyio.Semaphore(limit))
        try:
            async with turn:
                return await anyio.to_thread.run_sync(self._run, threading.Event(), name, arguments, caller,
                                                      limiter=lane, abandon_on_cancel=True)
        finally:
            if turn.value == limit:                   # nobody holds or awaits it: forget the principal
                self._turns.pop(caller.principal, None)

    def _run(self, flag: threading.Event, name: str, arguments: Any, caller: Caller) -> dict:
        with self._idle:
            self._running.add(flag)
        try:
            with abandon.watched(flag):
                return self.service.call(name, arguments, caller)
        finally:
            with self._idle:
                self._running.discard(flag)
                self._idle.notify_all()

    @property
    def running(self) -> int:
        """Calls whose thread has not returned."""
        with self._idle:
            return len(self._running)

    def abandon_all(self) -> None:
        """Every call still running will roll back instead of committing."""
        with self._idle:
            for flag in self._running:
                flag.set()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no call's thread runs (True), or `timeout` seconds passed (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)
