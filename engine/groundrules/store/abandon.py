"""A call its server gave up on must not commit.

A server that stops past its grace period cannot answer the calls still running, so none of them
may commit: a write the client is told failed, or never hears of, must not have happened. The
server runs each call under a flag (`watched`); every store checks it just before COMMIT
(`before_commit`) and rolls back when it is set. A call that committed before the flag was set is
answered: the server waits for it.
"""
from __future__ import annotations

import contextvars
import threading
from contextlib import contextmanager
from typing import Iterator

from ..core import codes
from ..core.errors import GroundrulesError

_FLAG: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("groundrules_abandoned", default=None)


class Abandoned(GroundrulesError):
    def __init__(self) -> None:
        super().__init__(codes.SHUTTING_DOWN, "the server stopped before this call finished; nothing was written")


@contextmanager
def watched(flag: threading.Event) -> Iterator[None]:
    """Run the block as a call that `flag` abandons once set."""
    token = _FLAG.set(flag)
    try:
        yield
    finally:
        _FLAG.reset(token)


def before_commit() -> None:
    """Raise Abandoned when the running call was given up on (the store then rolls back)."""
    flag = _FLAG.get()
    if flag is not None and flag.is_set():
        raise Abandoned()
