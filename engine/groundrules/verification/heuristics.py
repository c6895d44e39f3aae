"""Intent heuristics (`rules/intent_heuristics.yaml`): signs that one vague intent stands for
several actions or objects. How severe each sign is (an error to repair, or a warning) is the
issue catalogue's call, not this module's. (An intent doing what the input withdraws or forbids
is read from the negations of rules/prohibition_phrases.yaml.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from ..core.examples import ExampleResult
from .patterns import Pattern, compile_pattern, duplicate_ids

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "intent_heuristics"
# heuristic check -> the finding it reports, and the named group it needs
CHECKS = {"target_joiner": ("target_joined", ("joiner",)), "action_count": ("actions_merged", ())}


@dataclass(frozen=True)
class Heuristic:
    check: str
    pattern: Pattern
    exclude_kinds: tuple
    inside_targets: bool = False   # action_count: a match inside an object a target quotes (报表统计) is not counted


@dataclass(frozen=True)
class IntentHeuristics:
    kind: str
    id: str
    file: str
    heuristics: tuple

    def of_check(self, check: str) -> tuple:
        return tuple(h for h in self.heuristics if h.check == check)

    def check_examples(self) -> Iterator[ExampleResult]:
        for h in self.heuristics:
            yield from h.pattern.check_examples(self.id)


def compile_heuristics(data: dict, ctx: CompileContext) -> IntentHeuristics | None:
    duplicate_ids(data["heuristics"], "heuristics", ctx)
    out = []
    for i, raw in enumerate(data["heuristics"]):
        pattern = compile_pattern(raw, ("heuristics", i), ctx, groups=CHECKS[raw["check"]][1])
        if pattern is not None:
            out.append(Heuristic(raw["check"], pattern, tuple(raw.get("exclude_kinds", ())),
                                 raw.get("skip_inside_targets", False)))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return IntentHeuristics(KIND, data["id"], ctx.source.file, tuple(out))
