"""How many times the store ran the current call's transaction (a PostgreSQL serialization
failure re-runs it): a server logs it per call, so an operator sees contention where it happens."""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from typing import Iterator

_BOX: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("groundrules_attempts", default=None)


@contextmanager
def counted() -> Iterator[list[int]]:
    """Count the attempts of the calls in this block: box[0] once the block ends."""
    box = [0]
    token = _BOX.set(box)
    try:
        yield box
    finally:
        _BOX.reset(token)


def attempt() -> None:
    """A store begins a write transaction for the running call."""
    box = _BOX.get()
    if box is not None:
        box[0] += 1
