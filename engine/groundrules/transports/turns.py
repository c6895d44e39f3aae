"""Whose request is served next: turns on the interpreter, shared fairly between principals.

Everything a request costs, the SDK's parse of its body, its call, its answer, is Python under one
interpreter lock, so requests served side by side only take slices of one core from each other: a
principal that keeps five requests in flight gets five slices for every one of a principal that
sends one at a time (a flood made a victim's calls 13x slower at p50, 5.8x at p99). So only `turns`
requests are served at once (their bodies are read before, which costs nothing while they dribble
in), and a freed turn goes to the waiting principal with fewest requests being served, among equals
to the one served longest ago. Between the parts of a request (its body parsed, its call computed)
it gives its turn to whoever waits and waits its turn again (`checkpoint`), so nobody waits longer
than one part of another's request; while it waits for a worker thread it holds none (`aside`). A request keeps its turn at most `turn_limit_s` seconds at a
time: past it, the next one starts beside it, so a part that waits on a stalled database delays the
others by that much, never more.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import Counter, deque
from typing import AsyncIterator

import anyio

CURRENT: contextvars.ContextVar["Turn | None"] = contextvars.ContextVar("groundrules_turn", default=None)


class Turn:
    """One request's place in the turns, from its first turn until `Turns.done`."""

    __slots__ = ("principal", "_turns", "_held", "_done", "_timer")

    def __init__(self, turns: "Turns", principal: str):
        self.principal, self._turns, self._held, self._done = principal, turns, False, False
        self._timer: asyncio.TimerHandle | None = None

    async def checkpoint(self) -> None:
        """Between two parts of the request: if another request waits, it goes first; so does this
        one, after a part that outlasted its turn."""
        if self._done or (self._held and not self._turns._waiting):
            return
        self._give_back()
        await self._turns._wait(self)

    @contextlib.asynccontextmanager
    async def aside(self) -> AsyncIterator[None]:
        """While the request waits for something that is not the interpreter (a worker thread, its
        share of them), its turn is whoever waits' and it waits its turn again after: one request
        queued for a thread would otherwise hold every other request up."""
        if self._done:
            yield
            return
        self._give_back()
        yield
        await self._turns._wait(self)

    def _hold(self) -> None:
        self._held = True
        self._timer = asyncio.get_running_loop().call_later(self._turns.turn_limit_s, self._give_back)

    def _give_back(self) -> None:
        if self._held:
            self._held = False
            if self._timer is not None:
                self._timer.cancel()
            self._turns._freed()


class Turns:
    def __init__(self, turns: int, turn_limit_s: float):
        self.turns, self.turn_limit_s = turns, turn_limit_s
        self._held = 0
        self._serving: Counter = Counter()          # requests being served per principal, in a turn or not
        self._waiting: dict[str, deque] = {}        # principal -> its waiting requests, oldest first

    @property
    def waiting(self) -> int:
        """Requests waiting for a turn."""
        return sum(len(queue) for queue in self._waiting.values())

    async def take(self, principal: str) -> Turn:
        """A request's first turn; `done(turn)` when the request ends, whatever happens."""
        turn = Turn(self, principal)
        self._serving[principal] += 1
        try:
            await self._wait(turn)
        except BaseException:
            self._unserved(principal)
            raise
        return turn

    def done(self, turn: Turn) -> None:
        if turn._done:
            return
        turn._done = True
        self._unserved(turn.principal)
        turn._give_back()

    async def _wait(self, turn: Turn) -> None:
        if self._held < self.turns and not self._waiting:
            self._held += 1
            turn._hold()
            return
        granted = anyio.Event()
        self._waiting.setdefault(turn.principal, deque()).append(granted)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():                     # granted as it was cancelled: pass it on
                self._freed()
            else:
                self._forget(turn.principal, granted)
            raise
        turn._hold()

    def _freed(self) -> None:
        self._held -= 1
        while self._held < self.turns and self._waiting:
            principal = min(self._waiting, key=lambda p: self._serving[p])   # ties: longest unserved
            queue = self._waiting.pop(principal)
            granted = queue.popleft()
            if queue:                                # to the back among equals once served
                self._waiting[principal] = queue
            self._held += 1
            granted.set()

    def _unserved(self, principal: str) -> None:
        self._serving[principal] -= 1
        if not self._serving[principal]:
            del self._serving[principal]

    def _forget(self, principal: str, granted: anyio.Event) -> None:
        queue = self._waiting.get(principal)
        if queue is not None and granted in queue:
            queue.remove(granted)
            if not queue:
                del self._waiting[principal]
