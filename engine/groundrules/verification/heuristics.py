"""Intent heuristics (`rules/intent_heuristics.yaml`): signs that one vague intent stands for
several actions or objects. How severe each sign is (an error to repair, or a warning) is the
issue catalogue's call, not this module's. (An intent doing what the input withdraws or forbids
is read from the negations of rules/prohibition_phrases.yaml.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from ..core.examples import ExampleResult
from .actions import ActionWords
from .patterns import Pattern, compile_pattern, duplicate_ids

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "intent_heuristics"
# heuristic check -> the finding it reports, and the named group it needs
CHECKS = {"target_joiner": ("target_joined", ("joiner",)), "action_count": ("actions_merged", ())}


@dataclass(frozen=True)
class ActionWordCount:
    """action_count's `action_words`: the action families' words count as actions too (so that the
    count and the negations read one vocabulary), where they are verbs: CJK words of `min_length`
    characters or more, not naming a thing (上传记录, 已取消的订单); Latin words where a command starts."""

    min_length: int
    not_followed_by: tuple
    not_preceded_by: tuple
    latin_after: frozenset
    generic: tuple = ()        # stand for an action named elsewhere (赶紧处理): never counted

    def find(self, text: str, actions: ActionWords, boundaries: tuple) -> list[tuple[int, int, str]]:
        out = []
        for s, e, word, _ in actions.find(text):
            if word.isascii():
                before = text[:s].rstrip()
                last = before.rsplit(None, 1)[-1].lower() if before else ""
                if before and before[-1] not in boundaries and last not in self.latin_after:
                    continue
            elif len(word) < self.min_length or word in self.generic or not self.verb(text, s, e):
                continue
            out.append((s, e, word))
        return out

    def verb(self, text: str, s: int, e: int) -> bool:
        """Whether the CJK action word at s:e is a verb asked for, not a thing named (上传记录),
        done (分析完了, 已取消) or after it (上线后)."""
        return not (any(text.startswith(w, e) for w in self.not_followed_by)
                    or any(text.endswith(w, 0, s) for w in self.not_preceded_by))


@dataclass(frozen=True)
class Background:
    """action_count's `background`: a clause ending with a time subordinator (学员取消报名以后) is
    the setting of the request; its verbs count only where nothing but a word of `subject_free`
    stands before them (修复登录以后，再部署 asks for both). A verb after a word of `questions` (要不要先
    重启) is asked about, not asked for."""

    clause_ends: tuple
    subject_free: tuple
    questions: tuple = ()

    def holds(self, text: str, start: int, boundaries: tuple) -> bool:
        """Whether the action at `start` lies in a background clause, after its subject, or after a
        word that asks whether to act."""
        a = max((text.rfind(b, 0, start) + len(b) for b in boundaries if text.rfind(b, 0, start) >= 0), default=0)
        if any(w in text[a:start] for w in self.questions):
            return True
        ends = [i for i in (text.find(b, start) for b in boundaries) if i >= 0]
        clause = text[a:min(ends, default=len(text))].rstrip()
        if not any(clause.endswith(w) for w in self.clause_ends):
            return False
        lead = text[a:start].strip()
        return bool(lead) and lead not in self.subject_free


@dataclass(frozen=True)
class Heuristic:
    check: str
    pattern: Pattern
    exclude_kinds: tuple
    inside_targets: bool = False   # action_count: a match inside an object a target quotes (报表统计) is not counted
    boundaries: tuple = ()         # action_count: what ends a clause
    action_words: ActionWordCount | None = None
    background: Background | None = None

    def actions(self, text: str, actions: ActionWords) -> list[tuple[int, int, str]]:
        """action_count: the actions the input asks for, by position: the pattern's matches, then
        the action words no match overlaps (neither where they name a thing), leaving out those in
        background clauses."""
        found = [(s, e, m.group(0)) for s, e, m in self.pattern.spans(text)]
        if self.action_words is not None:
            words = self.action_words
            found = [f for f in found if f[2].isascii() or words.verb(text, f[0], f[1])] + \
                [w for w in words.find(text, actions, self.boundaries) if not any(s < w[1] and w[0] < e for s, e, _ in found)]
        if self.background is not None:
            found = [f for f in found if not self.background.holds(text, f[0], self.boundaries)]
        return sorted(found)


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
            words, background = raw.get("action_words"), raw.get("background")
            out.append(Heuristic(raw["check"], pattern, tuple(raw.get("exclude_kinds", ())),
                                 raw.get("skip_inside_targets", False), tuple(raw.get("clause_boundaries", ())),
                                 ActionWordCount(words["min_length"], tuple(words.get("not_followed_by", ())),
                                                 tuple(words.get("not_preceded_by", ())),
                                                 frozenset(w.lower() for w in words.get("latin_after", ())),
                                                 tuple(words.get("generic", ())))
                                 if words else None,
                                 Background(tuple(background["clause_ends"]), tuple(background.get("subject_free", ())),
                                            tuple(background.get("questions", ())))
                                 if background else None))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return IntentHeuristics(KIND, data["id"], ctx.source.file, tuple(out))
