"""Phrase patterns shared by the verifier's lock tables: compile once, scan with a timeout,
and run each pattern's own positive and negative examples under `groundrules test`."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

import regex

from ..core import cpu_clock
from ..core.bounded_patterns import PatternTimeout
from ..core.examples import ExampleResult
from .pattern_starts import starts_of

if TYPE_CHECKING:
    from ..core.tables import CompileContext


@dataclass(frozen=True)
class Pattern:
    id: str
    regex: regex.Pattern
    examples: tuple            # ({text, matches}, ...)
    where: tuple               # key path of the item in its table
    budget_s: float            # time per scan (the limits table's patterns.table_budget_ms)
    starts: re.Pattern | None = None    # where a match may start (pattern_starts): tried only there

    def spans(self, text: str) -> list[tuple[int, int, regex.Match]]:
        """Every match as (start, end, match). A scan that times out fails closed: PATTERN_TIMEOUT,
        never an empty list that would silently drop what the pattern guards (PROHIBITION_UNREFLECTED)."""
        try:
            return cpu_clock.bounded(lambda timeout: self._spans(text, timeout), self.budget_s)
        except TimeoutError:
            raise PatternTimeout(self.id, round(self.budget_s * 1000)) from None

    def _spans(self, text: str, timeout: float) -> list[tuple[int, int, regex.Match]]:
        """The matches `finditer` finds, found by trying the pattern only where one may start, each
        from where the one before ended: within `timeout` of the wall clock in all, as `regex` counts."""
        if self.starts is None:
            return [(m.start(), m.end(), m) for m in self.regex.finditer(text, timeout=timeout)]
        out: list = []
        end, deadline, match = 0, time.perf_counter() + timeout, self.regex.match
        for i in map(re.Match.start, self.starts.finditer(text)):
            if i < end:
                continue
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("regex timed out")
            m = match(text, i, timeout=left)
            if m is not None:
                out.append((i, m.end(), m))
                end = m.end()
        return out

    def check_examples(self, table_id: str) -> Iterator[ExampleResult]:
        yield from check_examples(f"{table_id}:{self.id}", self.examples, self.where,
                                  lambda text: [m.group(0) for _, _, m in self.spans(text)])


def check_examples(base: str, examples: tuple, where: tuple,
                   found: Callable[[str], list[str]]) -> Iterator[ExampleResult]:
    """Each example's matches must be exactly the listed texts (`found` lists what the item finds
    in a text); an item needs at least one positive and one negative example."""
    if not any(ex["matches"] for ex in examples):
        yield ExampleResult(base, False, "pattern has no positive example (matches: [...])", where + ("id",))
    if not any(not ex["matches"] for ex in examples):
        yield ExampleResult(base, False, "pattern has no negative example (matches: [])", where + ("id",))
    for n, ex in enumerate(examples, 1):
        try:
            got = found(ex["text"])
        except PatternTimeout:
            got = ["(timed out)"]
        ok = got == list(ex["matches"])
        yield ExampleResult(f"{base}:{n}", ok, "" if ok else f"expected {ex['matches']}, got {got}",
                            where + ("examples", n - 1))


def compile_pattern(raw: dict, where: tuple, ctx: CompileContext, groups: tuple = ()) -> Pattern | None:
    """The item's `pattern`, compiled with `regex`; a bad pattern or a missing group is a fault."""
    try:
        compiled = regex.compile(raw["pattern"])
    except regex.error as exc:
        ctx.fault("bad-regex", f"pattern does not compile: {exc}", where + ("pattern",))
        return None
    for group in groups:
        if group not in compiled.groupindex:
            ctx.fault("missing-group", f"pattern has no named group '{group}'", where + ("pattern",),
                      f"capture the part a statement must reflect with (?P<{group}>...)")
            return None
    return Pattern(raw["id"], compiled, tuple(raw.get("examples", ())), where, ctx.table_budget_s,
                   starts_of(raw["pattern"]))


def duplicate_ids(items: list, where: str | tuple, ctx: CompileContext) -> None:
    prefix = where if isinstance(where, tuple) else (where,)
    seen: dict = {}
    for i, item in enumerate(items):
        if item["id"] in seen:
            ctx.fault("duplicate-id", f"id '{item['id']}' is used twice", prefix + (i, "id"),
                      also=prefix + (seen[item["id"]], "id"))
        seen.setdefault(item["id"], i)
