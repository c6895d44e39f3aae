"""A call's lifecycle as its store sees it: how many times its transaction ran, and whether its
server gave up on it. Passed down explicitly: the server makes one per call and hands it to
`Service.call`, which gives it to the ledger the call runs on, which gives it to its store's write.

A server that stops past its grace period cannot answer the calls still running, so none of them
may commit: a write the client is told failed, or never hears of, must not have happened. So the
server abandons them (`abandon`), and a store checks (`before_commit`) just before COMMIT and rolls
back. A call that committed before is answered: the server waits for it. A PostgreSQL
serialization failure re-runs a transaction; each run is counted (`attempt`), and a server logs
the count per call, so an operator sees contention where it happens. A write without a lifecycle
(a library call, a background writer) counts nothing and is never abandoned.
"""
from __future__ import annotations

import threading

from ..core import codes
from ..core.errors import GroundrulesError


class Abandoned(GroundrulesError):
    def __init__(self) -> None:
        super().__init__(codes.SHUTTING_DOWN, "the server stopped before this call finished; nothing was written")


class Lifecycle:
    """One call's: the attempts its store began, and whether its server abandoned it (any thread may)."""

    def __init__(self) -> None:
        self.attempts = 0
        self._abandoned = threading.Event()

    def abandon(self) -> None:
        """The call must not commit from now on."""
        self._abandoned.set()

    def attempt(self) -> None:
        """A store begins a write transaction for the call."""
        self.attempts += 1

    def before_commit(self) -> None:
        """Raise Abandoned when the call was given up on (the store then rolls back)."""
        if self._abandoned.is_set():
            raise Abandoned()
