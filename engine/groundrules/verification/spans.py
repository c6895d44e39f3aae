"""Which matches fall outside a set of spans, in log time: a long input holds thousands of
negations and phrase matches, and testing each match against every span was quadratic (a
240 k-character request took minutes of CPU)."""
from __future__ import annotations

from bisect import bisect_right
from typing import Iterable


class Spans:
    """Half-open spans `[start, end)`, merged where they overlap; `overlaps(a, b)` answers what
    `any(a < e and s < b for s, e in spans)` does."""

    def __init__(self, spans: Iterable[tuple[int, int]]):
        starts: list[int] = []
        ends: list[int] = []
        for s, e in sorted(spans):
            if starts and s < ends[-1]:
                ends[-1] = max(ends[-1], e)
            else:
                starts.append(s)
                ends.append(e)
        self._starts, self._ends = starts, ends

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self._ends, start)        # the first span ending after `start`
        return i < len(self._starts) and self._starts[i] < end
