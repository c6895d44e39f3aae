"""Regex budgets counted in the searching thread's own CPU time, not on the wall clock.

`regex` measures a timeout on the wall clock, so on a loaded server (another caller's flood, a busy
machine) a search that needs a millisecond of CPU can pass a 50 ms timeout waiting for the
interpreter lock, and a call that breaks no rule fails. A search that times out is run again, with
twice the time, while the CPU the thread spent on it stays under the budget: a pattern that really
backtracks still ends (after at most about three budgets of its own CPU), one that was only kept
waiting gets its answer. Whatever the load, a search that needs less CPU than its budget succeeds
unless the thread gets under 1/(2^ATTEMPTS) of a core.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    import regex

T = TypeVar("T")
ATTEMPTS = 6                  # wall-clock windows of 1, 2, 4, ... 32 budgets at the most


def bounded(attempt: Callable[[float], T], budget_s: float) -> T:
    """`attempt(timeout_s)`, which raises TimeoutError past `timeout_s` of wall clock, run within
    `budget_s` of this thread's CPU; TimeoutError once that is spent."""
    clock = time.thread_time
    spent, timeout = 0.0, budget_s
    for _ in range(ATTEMPTS):
        started = clock()
        try:
            return attempt(timeout)
        except TimeoutError:
            spent += clock() - started
            if spent >= budget_s:
                raise
            timeout *= 2
    raise TimeoutError("the search was kept from the CPU past its budget's windows")


def search(pattern: "regex.Pattern", text: str, budget_s: float) -> "regex.Match | None":
    """`pattern.search(text)` within `budget_s` of CPU."""
    try:                                   # the common case: no closure, no clock
        return pattern.search(text, timeout=budget_s)
    except TimeoutError:
        return bounded(lambda timeout: pattern.search(text, timeout=timeout), budget_s)


def fullmatch(pattern: "regex.Pattern", text: str, budget_s: float) -> "regex.Match | None":
    """`pattern.fullmatch(text)` within `budget_s` of CPU."""
    try:
        return pattern.fullmatch(text, timeout=budget_s)
    except TimeoutError:
        return bounded(lambda timeout: pattern.fullmatch(text, timeout=timeout), budget_s)
