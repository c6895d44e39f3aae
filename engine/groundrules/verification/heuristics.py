"""Intent heuristics (`rules/intent_heuristics.yaml`): signs that one vague intent stands for
several actions or objects. How severe each sign is (an error to repair, or a warning) is the
issue catalogue's call, not this module's. (An intent doing what the input withdraws or forbids
is read from the negations of rules/prohibition_phrases.yaml.)"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Iterator

from ..core.examples import ExampleResult
from .patterns import Pattern, compile_pattern, duplicate_ids

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "intent_heuristics"
# heuristic check -> the finding it reports, and the named group it needs
CHECKS = {"target_joiner": ("target_joined", ("joiner",)), "action_count": ("actions_merged", ())}


@dataclass(frozen=True)
class ActionWordCount:
    """action_count's `action_words`: the action families' words of two characters or more count
    as actions too (so that the count and the negations read one vocabulary), where they are verbs:
    CJK words not naming a thing (上传记录, 已取消的订单); Latin words where a command starts."""

    not_followed_by: dict      # length -> frozenset of words: a lookup per length, not a scan per word
    not_preceded_by: dict
    latin_after: frozenset
    generic: frozenset = frozenset()   # stand for an action named elsewhere (赶紧处理): never counted
    telling: tuple = ()        # 提醒 / 让 / tell …: a verb after one in its clause is what someone else is to do
    particles: tuple = ()      # 个, 下 …: a one-character verb, one of these, then an action word: one action (发个通知)
    own: tuple = ()            # 我再, 我看 …: a verb after one (or starting inside one: 我看看) is the user's own doing …
    helping: tuple = ()        # … unless one of these stands right before it (帮我再查一下)
    modifiers: tuple = ()      # 的: a word after one names a thing (订单 B 的退款为什么失败) …
    directed: tuple = ()       # … unless one of these follows it (通过的发布到官网)

    def find(self, text: str, words: list, boundaries: tuple, seen: set, skip) -> list[tuple[int, int, str]]:
        """Of `words` (start, end, word as typed: the action words of two characters or more, and
        Latin ones), those asked for, each word once (`seen`: the words counted already), none
        that `skip(start, end)` leaves out."""
        out = []
        for s, e, word in words:
            if word.lower() in seen or skip(s, e):
                continue
            if word.isascii():
                before = text[:s].rstrip()
                last = before.rsplit(None, 1)[-1].lower() if before else ""
                if before and before[-1] not in boundaries and last not in self.latin_after:
                    continue
            elif word in self.generic or not self.verb(text, s, e):
                continue
            out.append((s, e, word))
            seen.add(word.lower())
        return out

    def joined(self, text: str, found: list) -> list:
        """Of `found` (by position), leave out a one-character verb whose particle an action word
        follows at once (发个通知, 查下退款, 发张优惠券): the two say one action."""
        out = []
        for i, f in enumerate(found):
            nxt = found[i + 1] if i + 1 < len(found) else None
            if f[1] - f[0] == 1 and nxt is not None and text[f[1]:nxt[0]] in self.particles and f[2] not in self.telling:
                continue                                           # 催一下发货: the urging is the action, told() drops 发货
            out.append(f)
        return out

    def told(self, text: str, found: list, boundaries: tuple) -> list:
        """Of `found`, leave out an action that a telling word (提醒财务核对, 让运维重启) stands
        before in its clause: what the person told is to do, not an action the request asks for."""
        if not self.telling and not self.own:
            return found
        out = []
        for f in found:
            a = max((text.rfind(b, 0, f[0]) + len(b) for b in boundaries if text.rfind(b, 0, f[0]) >= 0), default=0)
            lead = text[a:f[0]]
            if not any(w in lead for w in self.telling) and not any(self._own(text, a, f[0], w) for w in self.own):
                out.append(f)
        return out

    def _own(self, text: str, a: int, at: int, word: str) -> bool:
        """Whether `word` starts in text[a:at] (it may end inside the verb at `at`: 我看看) with no
        word of `helping` right before it."""
        j = text.rfind(word, a, at + len(word) - 1)
        return j >= 0 and not text.endswith(self.helping, a, j)

    def verb(self, text: str, s: int, e: int) -> bool:
        """Whether the CJK action word at s:e is a verb asked for, not a thing named (上传记录),
        done (分析完了, 已取消) or after it (上线后)."""
        return not (any(text[e:e + n] in words for n, words in self.not_followed_by.items())
                    or any(s >= n and text[s - n:s] in words for n, words in self.not_preceded_by.items())
                    or text.endswith(self.modifiers, 0, s) and not text.startswith(self.directed, e))


def _reduplication(raw: dict | None) -> re.Pattern | None:
    """The forms AA, A一A, A了A, AAA … of the table's one-character verbs, as one pattern."""
    if not raw:
        return None
    verbs = "".join(re.escape(v) for v in raw["verbs"])
    joiners = "|".join(re.escape(j) for j in raw.get("joiners", ()) if j)
    between = f"(?:{joiners})?" if joiners else ""
    return re.compile(f"([{verbs}]){between}\\1+")


def _by_length(words) -> dict:
    out: dict = {}
    for w in words:
        out.setdefault(len(w), set()).add(w)
    return {n: frozenset(ws) for n, ws in sorted(out.items())}


@dataclass(frozen=True)
class Background:
    """action_count's `background`: a clause ending with a time subordinator (学员取消报名以后) is
    the setting of the request; its verbs count only where nothing but a word of `subject_free`
    stands before them (修复登录以后，再部署 asks for both). A verb after a word of `questions` (要不要先
    重启) is asked about, not asked for; one inside quotes or after a label's colon (备注：周五前发货) is
    what a text says, not what the user asks."""

    clause_ends: tuple
    subject_free: tuple
    questions: tuple = ()
    labels: tuple = ()         # 备注, note …: after one and a colon, up to `label_ends`, the text is content
    label_ends: tuple = ()
    quotes: tuple = ()         # (open, close) pairs
    speakers: tuple = ()       # 用户, 客服, agent …: a line starting with one and a colon is a turn of a transcript

    @cached_property
    def turn_heads(self) -> tuple:
        """Each speaker with each colon: one `startswith` per line instead of one per speaker."""
        return tuple(w + colon for w in self.speakers for colon in ("：", ":"))

    def quoted(self, text: str, start: int) -> bool:
        """Whether `start` lies inside quotes, in the content after a label's colon, or in a
        transcript's turn (用户：…, 客服：…): what someone said, not what the request asks."""
        if self.speakers:
            line = text[text.rfind("\n", 0, start) + 1:start].lstrip()
            if line.startswith(self.turn_heads):
                return True
        for o, c in self.quotes:
            i = text.rfind(o, 0, start)
            if i >= 0 and text.find(c, i + len(o), start) < 0 and (o != c or text.count(o, 0, start) % 2):
                return True
        if self.labels:
            after = max((text.rfind(e, 0, start) + len(e) for e in self.label_ends if text.rfind(e, 0, start) >= 0),
                        default=0)
            return any(text.find(w + colon, after, start) >= 0 for w in self.labels for colon in "：:")
        return False

    def holds(self, text: str, start: int, boundaries: tuple) -> bool:
        """Whether the action at `start` lies in a background clause, after its subject, after a
        word that asks whether to act, or in quoted content."""
        if self.quotes or self.labels or self.speakers:
            if self.quoted(text, start):
                return True
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
    reduplication: re.Pattern | None = None     # 查查, 查一查, 看了看, 查查查: one action each
    requests: tuple = ()           # action_count: words that make a clause a request whatever its verb (帮, 请, 吧)
    sequence: tuple = ()           # action_count: words that start a further request whatever its verb (再, 顺便)

    def actions(self, text: str, words: list, skip) -> list[tuple[int, int, str]]:
        """action_count: the actions the input asks for, by position: the reduplicated verbs (查查,
        查一查: one action each) and the pattern's matches outside them, then the action words no
        match overlaps (neither where they name a thing), none `skip(start, end)` leaves out (a
        negation, an object a target names), each word once (退款 said forty times in a chat is
        one topic, not forty requests), leaving out those in background clauses."""
        found = [(s, e, m.group(0)) for s, e, m in self.pattern.spans(text) if not skip(s, e)]
        if self.reduplication is not None:
            twice = [(m.start(), m.end(), m.group(0)) for m in self.reduplication.finditer(text)
                     if not skip(m.start(), m.end())]
            found = sorted([f for f in found if not any(s < f[1] and f[0] < e for s, e, _ in twice)] + twice)
        if self.action_words is not None:
            counted = self.action_words
            found = [f for f in found if f[2].isascii() or counted.verb(text, f[0], f[1])]
            seen = {f[2].lower() for f in found}
            found += [w for w in counted.find(text, words, self.boundaries, seen, skip)
                      if not any(s < w[1] and w[0] < e for s, e, _ in found)]
            found = counted.told(text, counted.joined(text, sorted(found)), self.boundaries)
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
                                 ActionWordCount(_by_length(words.get("not_followed_by", ())),
                                                 _by_length(words.get("not_preceded_by", ())),
                                                 frozenset(w.lower() for w in words.get("latin_after", ())),
                                                 frozenset(words.get("generic", ())),
                                                 tuple(words.get("telling", ())),
                                                 tuple(words.get("particles", ())),
                                                 tuple(words.get("not_asked", ())), tuple(words.get("helping", ())),
                                                 tuple(words.get("modifiers", {}).get("words", ())),
                                                 tuple(words.get("modifiers", {}).get("unless_followed_by", ())))
                                 if words else None,
                                 Background(tuple(background["clause_ends"]), tuple(background.get("subject_free", ())),
                                            tuple(background.get("questions", ())),
                                            tuple(background.get("labels", ())), tuple(background.get("label_ends", ())),
                                            tuple(tuple(q) for q in background.get("quotes", ())),
                                            tuple(background.get("speakers", ())))
                                 if background else None,
                                 _reduplication(raw.get("reduplication")),
                                 tuple(raw.get("requests", ())), tuple(raw.get("sequence", ()))))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return IntentHeuristics(KIND, data["id"], ctx.source.file, tuple(out))
