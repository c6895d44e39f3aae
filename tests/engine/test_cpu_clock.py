"""A pattern's budget is the searching thread's CPU, not the wall clock (cpu_clock): a search that
was only kept waiting (another caller's flood holding the interpreter) gets its answer, one that
really backtracks is still stopped. The waiting is simulated by a search that sleeps (no CPU) past
its wall-clock timeout; the backtracking is a real `regex` search."""
from __future__ import annotations

import time

import pytest
import regex

from groundrules import default_rulebook
from groundrules.core import cpu_clock
from groundrules.core.operators import OPERATORS

BACKTRACKS = regex.compile(r"^(a|a)*$")
VALUE = "a" * 40 + "!"


class KeptWaiting:
    """A compiled pattern whose first `waits` searches sleep past their timeout: what a search
    looks like to the wall clock while other threads hold the interpreter."""

    def __init__(self, pattern: str, waits: int):
        self.pattern, self.waits, self.timeouts = regex.compile(pattern), waits, []

    def search(self, text: str, timeout: float):
        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.waits:
            time.sleep(timeout)
            raise TimeoutError("regex timed out")
        return self.pattern.search(text, timeout=timeout)

    fullmatch = search


def test_a_search_kept_waiting_gets_its_answer_in_windows_that_double():
    waiting = KeptWaiting("批量", waits=3)
    assert cpu_clock.search(waiting, "批量为 32", 0.01) is not None
    assert waiting.timeouts == [0.01, 0.02, 0.04, 0.08]   # the first try, then the CPU-counted windows


def test_a_search_kept_waiting_through_every_window_is_refused():
    waiting = KeptWaiting("批量", waits=1 + cpu_clock.ATTEMPTS)
    with pytest.raises(TimeoutError):
        cpu_clock.search(waiting, "批量", 0.001)


def test_a_search_that_backtracks_is_stopped_after_a_few_budgets_of_its_cpu():
    started = time.thread_time()
    with pytest.raises(TimeoutError):
        cpu_clock.search(BACKTRACKS, VALUE, 0.02)
    assert time.thread_time() - started < 0.02 * 8          # a few budgets, not every window (63)


def test_a_matches_condition_kept_waiting_still_decides():
    """The rule tables' `matches` runs on this clock (a loaded server once failed such calls)."""
    test, budget_s = OPERATORS["matches"][1], default_rulebook().table("limits").table_budget_ms / 1000
    assert test("批量为 32 时显存溢出", KeptWaiting("显存", waits=2), budget_s) is True
    assert test("一切正常", KeptWaiting("显存", waits=2), budget_s) is False
