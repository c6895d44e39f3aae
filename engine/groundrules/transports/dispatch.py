"""How a server runs the registry's calls: never on the event loop, in lanes, fairly.

Every call runs in a worker thread, so a slow database delays only the calls waiting on it, never
the loop that answers everyone else. Calls that touch a ledger and the stateless ones have threads
of their own (a stalled database cannot take the threads `lock_message` needs), and one principal
may have only so many calls running at once, however many it sends. Over HTTP a call is a part of
its request's turn (turns.py): it holds no turn while it waits for a thread, and lets whoever waits
go first after it. Each call runs under a
lifecycle of its own (store/lifecycle.py), handed to Service.call: the server abandons it when it
stops past its grace period, and the store counts its attempts. `service` may be
swapped whole (a rule reload): a call keeps the service it started on.
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, deque
from typing import Any, Callable

import anyio

from ..store.lifecycle import Lifecycle
from ..api import TOOLS, Caller, Service
from .settings import ServerSettings
from .turns import CURRENT

LANES = ("ledger", "stateless")
Observer = Callable[[Any, Any, Caller, dict, float, int], None]   # (tool, arguments, caller, envelope, seconds, attempts)


class FairLane:
    """A lane's worker slots, granted to the waiting principal that runs fewest calls in it, and
    among equals to the one served longest ago: a principal alone may take every slot, and one that
    floods still gets only its share of the slots that free up while another waits (anyio's limiter
    serves whoever queued first)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.threads = anyio.CapacityLimiter(capacity)
        self._running: Counter = Counter()
        self._busy = 0
        self._waiting: dict[str, deque] = {}

    async def acquire(self, principal: str) -> None:
        if self._busy < self.capacity and not self._waiting:
            self._take(principal)
            return
        granted = anyio.Event()
        self._waiting.setdefault(principal, deque()).append(granted)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():
                self.release(principal)
            else:
                queue = self._waiting.get(principal)
                if queue is not None and granted in queue:
                    queue.remove(granted)
                    if not queue:
                        del self._waiting[principal]
            raise

    def release(self, principal: str) -> None:
        self._running[principal] -= 1
        if not self._running[principal]:
            del self._running[principal]
        self._busy -= 1
        while self._busy < self.capacity and self._waiting:
            principal = min(self._waiting, key=lambda p: self._running[p])   # ties: longest unserved
            queue = self._waiting.pop(principal)
            granted = queue.popleft()
            if queue:                          # to the back: a principal that always waits is no
                self._waiting[principal] = queue   # longer first among equals once it is served
            self._take(principal)
            granted.set()

    def _take(self, principal: str) -> None:
        self._running[principal] += 1
        self._busy += 1


class Dispatcher:
    def __init__(self, service: Service, settings: ServerSettings, observer: Observer | None = None):
        self.service = service
        self.settings = settings
        self.observer = observer
        self._lanes = {"ledger": FairLane(settings.ledger_threads), "stateless": FairLane(settings.compute_threads)}
        self._shares: dict[str, anyio.Semaphore] = {}   # principal -> its calls_per_principal
        self._running: dict[Lifecycle, str] = {}
        self._idle = threading.Condition()

    async def call(self, name: Any, arguments: Any, caller: Caller, *, lang: Any = None,
                   toolsets: frozenset[str] | None = None) -> dict:
        """The envelope of one call, computed in a worker thread of its lane, within its caller's share;
        `lang` and `toolsets` (the session's enabled toolsets) as Service.call takes them."""
        tool = TOOLS.get(name) if isinstance(name, str) else None
        lane = "ledger" if tool is not None and tool.ledger else "stateless"
        mine = CURRENT.get()                          # the HTTP request's turn (turns.py), if any
        limit = self.settings.calls_per_principal
        share = self._shares.setdefault(caller.principal, anyio.Semaphore(limit))
        slots = self._lanes[lane]
        taken: list[Callable[[], None]] = []
        try:
            async with mine.aside() if mine is not None else contextlib.nullcontext():
                await share.acquire()
                taken.append(share.release)
                await slots.acquire(caller.principal)
                taken.append(lambda: slots.release(caller.principal))
            envelope = await anyio.to_thread.run_sync(self._run, self.service, lane, name, arguments, caller, lang,
                                                      toolsets, limiter=slots.threads, abandon_on_cancel=True)
            if mine is not None:
                await mine.checkpoint()
            return envelope
        finally:
            for release in reversed(taken):
                release()
            if share.value == limit:                  # nobody holds or awaits it: forget the principal
                self._shares.pop(caller.principal, None)

    def _run(self, service: Service, lane: str, name: Any, arguments: Any, caller: Caller, lang: Any = None,
             toolsets: frozenset[str] | None = None) -> dict:
        lifecycle = Lifecycle()
        with self._idle:
            self._running[lifecycle] = lane
        started = time.perf_counter()
        try:
            envelope = service.call(name, arguments, caller, decoded=True, lifecycle=lifecycle, lang=lang,
                                    toolsets=toolsets)
        finally:
            with self._idle:
                del self._running[lifecycle]
                self._idle.notify_all()
        if self.observer is not None:
            self.observer(name, arguments, caller, envelope, time.perf_counter() - started, lifecycle.attempts)
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
            for lifecycle in self._running:
                lifecycle.abandon()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no call's thread runs (True), or `timeout` seconds passed (False)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)

