"""Chunks of work spread over forked worker processes, their results taken in the order the chunks
came: what keeps a batch's output (and a replay's report) the same bytes for any worker count.

The workers are forked, so they inherit what the parent compiled (rulebooks, services) without
pickling or loading anything again; only chunks and results cross between processes. At most
`workers × in_flight` chunks are under way, so memory is bounded by the chunks, not the input.
Forking needs a platform that has it (Linux, macOS); with one worker the work runs in-process.
"""
from __future__ import annotations

import multiprocessing
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Iterable, Iterator

_STATE: dict = {}      # the forked worker's work and what it runs on, set once by its initializer


def _start(work: Callable[[Any, list], Any], state: Any) -> None:
    _STATE["work"], _STATE["state"] = work, state


def _run(chunk: list) -> Any:
    return _STATE["work"](_STATE["state"], chunk)


def ordered(work: Callable[[Any, list], Any], state: Any, chunks: Iterable[list], *, workers: int = 1,
            in_flight: int = 3) -> Iterator[Any]:
    """work(state, chunk) of every chunk, in the chunks' order."""
    if workers <= 1:
        for chunk in chunks:
            yield work(state, chunk)
        return
    context = multiprocessing.get_context("fork")
    pending: deque[Future] = deque()
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(work, state)) as pool:
        try:
            for chunk in chunks:
                pending.append(pool.submit(_run, chunk))
                while len(pending) >= workers * in_flight:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
