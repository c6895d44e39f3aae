"""Regex budgets counted in the searching thread's own CPU time, not on the wall clock.

`regex` measures a timeout on the wall clock, so on a loaded server (another caller's flood, a busy
machine) a search that needs a millisecond of CPU can pass a 50 ms timeout waiting for the
interpreter lock, and a call that breaks no rule fails. A search that times out is run again, with
twice the time, while the CPU the thread spent on it stays under the budget: a pattern that really
backtracks still ends (after at most about three budgets of its own CPU), one that was only kept
waiting gets its answer. Whatever the load, a search that needs less CPU than its budget succeeds
unless the thread gets under 1/(2^ATTEMPTS) of a core. The clock is read only after a timeout.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    import regex

T = TypeVar("T")
ATTEMPTS = 6                  # after the first, wall-clock windows of 2, 4, ... 64 budgets at the most


def bounded(attempt: Callable[[float], T], budget_s: float) -> T:
    """`attempt(timeout_s)`, which raises TimeoutError past `timeout_s` of wall clock, run within
    about `budget_s` of this thread's CPU; TimeoutError once that is spent."""
    try:                                   # the common case: no clock read
        return attempt(budget_s)
    except TimeoutError:
        return _again(attempt, budget_s)


def _again(attempt: Callable[[float], T], budget_s: float) -> T:
    """The attempts after a first that timed out, in windows of 2, 4, ... budgets, until the CPU
    they spent reaches the budget (the first's is not counted: its clock was not read)."""
    clock = time.thread_time
    spent, timeout = 0.0, budget_s
    for _ in range(ATTEMPTS):
        timeout *= 2
        started = clock()
        try:
            return attempt(timeout)
        except TimeoutError:
            spent += clock() - started
            if spent >= budget_s:
                raise
    raise TimeoutError("the search was kept from the CPU past its budget's windows")


def search(pattern: "regex.Pattern", text: str, budget_s: float) -> "regex.Match | None":
    """`pattern.search(text)` within `budget_s` of CPU."""
    try:                                   # no closure on the common path
        return pattern.search(text, timeout=budget_s)
    except TimeoutError:
        return _again(lambda timeout: pattern.search(text, timeout=timeout), budget_s)


def fullmatch(pattern: "regex.Pattern", text: str, budget_s: float) -> "regex.Match | None":
    """`pattern.fullmatch(text)` within `budget_s` of CPU."""
    try:
        return pattern.fullmatch(text, timeout=budget_s)
    except TimeoutError:
        return _again(lambda timeout: pattern.fullmatch(text, timeout=timeout), budget_s)
