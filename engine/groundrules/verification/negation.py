"""Negations over action words (`negation` in rules/prohibition_phrases.yaml): a cue (不要, 别,
取消, 先不, 就算了, don't …) and the action word its scope reaches, so that 算了，别修了, 先不改了 and
登录的问题先不用修 all withdraw a `change`, while 不要急，先修复登录 forbids nothing.

From a cue the scope runs over free text (no boundary, blocker or action word starts in it; at
most `reach` characters; or only fillers; or a modifier ending in 的) to the first event: an action
word (then any joined to it by coordinators) is negated; a blocker or another cue negates nothing
(不要急, 不要取消修改). A cue whose scope holds no action but starts with a light verb (退款先别做,
通知先不发了) negates the action standing before it in its clause, the topic the light verb stands
for. A cue of direction `before` alone in its clause (nothing after it but particles: …，撤回吧)
negates the last action of the clause before. A reported negation (之前说别动…) is read as a
withdrawal: the later statement wins. A match that negates nothing, or is voided (a condition, a question), still
consumes its text, so a cue inside it is not read on its own. Of overlapping matches the earlier,
then the longer, then the one with the longer cue is kept.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterator

from ..core.examples import ExampleResult
from .actions import ActionWords
from .patterns import check_examples, duplicate_ids
from .words import Lexicon, first_fit, is_latin, lexicon

if TYPE_CHECKING:
    from ..core.tables import CompileContext


BARE = "bare"                  # the cue id of a bare withdrawal turn's negation (Negations.bare_withdrawal)


@dataclass(frozen=True)
class Negation:
    cue: str                   # the cue row's id
    kind: str                  # prohibition | withdrawal | reserved (我自己来: the user keeps it)
    start: int                 # the cue through its action words (before: the action through the cue)
    end: int
    text: str
    phrase: str                # what a message quotes: the match and the rest of its clause
    phrase_start: int
    phrase_end: int
    actions: tuple             # ((word as typed, family), ...)
    narrowed: bool = False     # its clause names "the others" (别的不用改): it stops no intent the request asks for

    @property
    def families(self) -> tuple:
        return tuple(dict.fromkeys(f for _, f in self.actions))


@dataclass(frozen=True)
class Unknown:
    """A cue's reading where its scope holds no listed action (改派的事不用管了, 千万别再扣一次,
    卡先不挂失了): the text it governs in its clause is negated as an action of no family, so that
    a verb the families lack still withdraws or forbids what it names."""

    reach: int                 # at most this many characters of governed text
    ends: tuple = ()           # forward: when given, the governed text ends its clause with one of these (不封了)
    skip: tuple = ()           # forward: words right after the cue that are not the governed text (再, 去)
    not_starting: tuple = ()   # governed text starting with one of these names a state, not an action (不对了)
    trim: tuple = ()           # governed text before the cue: these at its end make it a matter (的事, 就)
    back: str = ""             # a cue of direction after governs its clause before it when only particles follow
                               # it: "any" (转人工就不必了), "light" after a light verb only (投诉就不提了), "" never


@dataclass(frozen=True)
class Cue:
    id: str
    kind: str
    words: Lexicon
    backward: bool
    reach: int
    fillers: Lexicon | None
    modifier_ends: tuple
    not_preceded_by: tuple
    not_followed_by: tuple
    void_after: Lexicon | None
    examples: tuple
    where: tuple
    unknown: Unknown | None = None
    things_after: tuple = ()   # forward: one of these between the cue and its action makes the action a thing (撤销那笔转账)


@dataclass(frozen=True)
class _Text:
    """What one scan needs of one text, found once."""

    text: str
    acts: dict                 # start -> (end, word)
    blocks: dict               # start -> end
    events: list               # sorted starts of acts, blocks and boundaries
    bounds: list               # (start, end) of boundaries
    bound_starts: list
    bound_ends: list
    voids: list                # (start, end) of voiders
    reports: list              # (start, end) of reported-speech markers
    others: list               # (start, end) of narrowers
    coords: dict               # start -> end of coordinators
    dual: frozenset = frozenset()       # starts of action words that may be cues too (取消)
    negating: frozenset | None = None   # of those, the ones whose cue negates an action (None: not known yet)


@dataclass(frozen=True)
class Negations:
    actions: ActionWords
    cues: tuple                # Cue, in table order
    words: Lexicon             # tags: act, block (blockers and every cue word), bound, coord, void, narrow, cue<i>
    cue_words: Lexicon         # tag cue: every cue word, where to look at all; tag act: the action words a count
                               # reads (two characters or more, and Latin), found in the same pass
    clause_reach: int          # a cue's clause is read at most this far on either side
    no_longer: tuple
    a_not_a: bool
    phrase_reach: int
    kinds: dict                # kind -> {required_unless, intent_allowed_if}
    light_verbs: tuple = ()    # 做, 弄, 发 …: stand for the action before the cue (退款先别做)
    light_reach: int = 0
    particles: tuple = ()      # 吧, 了 …: all a cue of direction before may have after it in a clause of its own
    boundary_words: tuple = () # what ends a clause (`boundaries`)
    object_kept: tuple = ()    # 动, touch …: a negation of touching at all is kept by a prohibition naming its object
    fronted_reach: int = 0     # 短信不发了: the verb after the cue and the object before it make one action word
    fronted_skip: tuple = ()   # 也, 先 …: what may stand between the fronted object and the cue
    unlisted_ignores: frozenset = frozenset()   # characters a prohibition shares with anything (不, 了, 的)
    quotes: tuple = ()         # (open, close): a cue inside quotes is a label's or a message's words
    leads: tuple = ()          # 现在, 那就 …: all that may stand before a cue alone in its clause (…，现在取消)
    replacements: tuple = ()   # 改成, instead …: opening the clause after a withdrawal's, what is wanted instead
    bare: Lexicon | None = None   # 算了, hold on …: a turn of these and no action withdraws the user's turn before it
    attributive: tuple = ()    # 的: an action word followed by one describes a thing and asks for nothing (涨价的 SKU)

    def bare_withdrawal(self, turn: str, before: str) -> Negation | None:
        """A withdrawal over the actions of the user's turn `before`, where `turn` says one of `bare`
        and asks for no action of its own (给所有 VIP 发生日券 … No, hold on); a turn before that
        holds no action word is withdrawn whole, as a verb no family lists."""
        found = self.bare.find(turn) if self.bare is not None else []
        if not found or self.actions.find(turn):
            return None
        actions = tuple((w, f) for _, _, w, f in self.actions.find(before)) or ((before.strip(), ""),)
        start, end, _ = found[0]
        return Negation(BARE, "withdrawal", start, end, turn[start:end], turn.strip(), 0, len(turn.strip()), actions)

    def replacement(self, neg: Negation, text: str) -> tuple[int, int, int] | None:
        """(start, end of the word, end) of the clause after a withdrawal's that opens with a word of
        `replacements` (…计划取消，改成只给老客户单独发); else None."""
        if neg.kind != "withdrawal" or not self.replacements:
            return None
        _, end = self.clause_span(neg, text)
        bound = next((b for b in self.boundary_words if text.startswith(b, end)), "")
        start = skip_blanks(text, end + len(bound))
        word = next((w for w in self.replacements if text.startswith(w, start)), None)
        if not bound or word is None:
            return None
        after = start + len(word)
        stop = min((i for i in (text.find(b, after) for b in self.boundary_words) if i >= 0), default=len(text))
        return start, after, stop

    def scan(self, text: str) -> list[Negation]:
        """Every negation in `text`, by position."""
        return self.read(text)[0]

    def read(self, text: str) -> tuple[list[Negation], list[tuple[int, int, str]]]:
        """Every negation in `text`, by position, and the action words of two characters or more
        (and Latin ones) it holds, none overlapping: (start, end, word as typed), for the action
        count (one pass over the text finds both). Only the text around a cue is read for
        negations (most inputs hold none), window by window: nothing a negation depends on lies
        further than `clause_reach` from its cue, and no negation spans two windows."""
        found = self.cue_words.scan(text)
        acts = [(s, e, text[s:e]) for s, e, _ in first_fit(found.get("act", []))]
        spans = sorted((max(0, s - self.clause_reach), min(len(text), e + self.clause_reach))
                       for s, e, _ in first_fit(found.get("cue", [])))
        windows: list = []
        for a, b in spans:
            if windows and a <= windows[-1][1]:
                windows[-1][1] = max(windows[-1][1], b)
            else:
                windows.append([a, b])
        out = []
        for a, b in windows:
            out += [n if a == 0 else _shifted(n, a) for n in self._scan(text[a:b])]
        return out, acts

    def _scan(self, text: str) -> list[Negation]:
        t, hits = self._read(text)
        obligations = [(s, e) for s, e, _ in hits.get("oblig", ())]
        if t.dual:        # 取消: a cue where it negates an action (取消修改), else an action (不要取消订单)
            first = self._matches(t, hits, obligations)
            t = replace(t, negating=frozenset(f[5] for f in first if f[4] is not None and f[5] in t.dual))
        found = self._matches(t, hits, obligations)
        found.sort(key=lambda f: (f[0], -f[1], -f[2], f[3]))
        kept, end = [], -1
        for f in found:
            if f[0] >= end:
                kept.append(f[4])
                end = f[1]
        return [n for n in kept if n is not None]

    def _matches(self, t: _Text, hits: dict, obligations: list) -> list[tuple]:
        """(start, end, cue length, cue row, Negation or None, cue start) of every cue's scope; a cue
        inside an obligation (不得不修) is not read."""
        text = t.text
        found: list[tuple] = []
        unknown: list[tuple] = []
        for row, cue in enumerate(self.cues):
            for cs, ce, _ in hits.get(f"cue{row}", ()):
                if any(text.endswith(w, 0, cs) for w in cue.not_preceded_by) or \
                        any(text.startswith(w, ce) for w in cue.not_followed_by) or \
                        any(s < ce and cs < e for s, e in obligations) or self._quoted(text, cs):
                    continue
                hit = self._backward(t, cue, cs, ce) if cue.backward else self._forward(t, cue, cs, ce)
                if hit is None and not cue.backward:
                    hit = self._light(t, cs, ce)
                later = hit is None and cue.unknown is not None
                if later:
                    hit = self._unknown(t, cue, cue.unknown, cs, ce)
                if hit is not None:
                    start, end, acts = hit
                    neg = self._negation(t, cue, cs, ce, start, end, acts) if acts else None
                    (unknown if later else found).append((start, end, ce - cs, row, neg, cs))
        # a reading of an unlisted verb yields to any reading of a listed one it overlaps
        return found + [u for u in unknown if not any(f[0] < u[1] and u[0] < f[1] for f in found)]

    def _read(self, text: str) -> tuple[_Text, dict]:
        hits = self.words.scan(text)

        def fit(tag):
            return first_fit(hits.get(tag, []))
        acts = {s: (e, w) for s, e, w in fit("act")}
        blocks = {s: e for s, e, _ in fit("block")}
        bounds = [(s, e) for s, e, _ in fit("bound")]
        events = sorted(set(acts) | set(blocks) | {s for s, _ in bounds})
        dual = self.actions.dual
        return _Text(text, acts, blocks, events, bounds, [s for s, _ in bounds], [e for _, e in bounds],
                     [(s, e) for s, e, _ in fit("void")], [(s, e) for s, e, _ in fit("report")],
                     [(s, e) for s, e, _ in fit("narrow")],
                     {s: e for s, e, _ in fit("coord")},
                     frozenset(s for s, (_, w) in acts.items() if dual and (w in dual or w.lower() in dual))), hits

    def _forward(self, t: _Text, cue: Cue, cs: int, ce: int) -> tuple | None:
        """(start, end, acts) of the scope after the cue: acts empty when it ends in a blocker."""
        i = bisect_left(t.events, ce)
        if i == len(t.events):
            return None
        p = t.events[i]
        gap = t.text[ce:p]
        if cue.fillers is not None:
            if len(gap) > cue.reach or (gap and sum(e - s for s, e, _ in cue.fillers.find(gap)) != len(gap)):
                return None
        elif cue.modifier_ends:
            if gap and not any(gap.endswith(m) and len(gap) - len(m) <= cue.reach for m in cue.modifier_ends):
                return None
            if gap and any(w in gap for w in cue.things_after):
                return None                                        # 撤销昨天那笔转账: the transfer is the object
        elif len(gap) > cue.reach:
            return None
        if p in t.dual and (t.negating is None or p in t.negating):
            return cs, t.blocks.get(p, t.acts[p][0]), []          # 不要取消修改: a cue met first
        if p in t.acts:
            acts, end = [t.acts[p][1]], t.acts[p][0]
            while True:
                at = skip_blanks(t.text, end)
                join = t.coords.get(at)
                nxt = skip_blanks(t.text, join) if join is not None else None
                if nxt is None or nxt not in t.acts:
                    break
                acts.append(t.acts[nxt][1])
                end = t.acts[nxt][0]
            return cs, end, acts
        if p in t.blocks:
            return cs, t.blocks[p], []
        return None                                                # a boundary: nothing in scope

    def _light(self, t: _Text, cs: int, ce: int) -> tuple | None:
        """(start, end, acts) of a cue followed by a light verb (先别做, 先不发了): the action
        before the cue in its clause, at most `light_reach` characters before it."""
        verb = next((w for w in self.light_verbs if t.text.startswith(w, ce)), None)
        act = _act_before(t, cs, self.light_reach) if verb is not None else None
        if verb is None or act is None:
            return self._fronted(t, cs, ce)
        return act[0], ce + len(verb), [act[2]]

    def _fronted(self, t: _Text, cs: int, ce: int) -> tuple | None:
        """(start, end, acts) of an object put before the cue and a one-character verb after it
        that together are an action word (短信不发了: 发短信; 款先别退: 退款; 货先不发: 发货)."""
        if not self.fronted_reach or ce >= len(t.text) or t.text[ce].isascii():
            return None
        end = cs
        while True:
            skip = next((w for w in self.fronted_skip if t.text.endswith(w, 0, end)), None)
            if skip is None:
                break
            end -= len(skip)
        verb = t.text[ce]
        for k in range(min(self.fronted_reach, end), 0, -1):
            obj = t.text[end - k:end]
            if any(not c.isalpha() or c.isascii() for c in obj):
                continue
            word = verb + obj
            if self.actions.family(word) and len(self.actions.find(word)) == 1:
                return end - k, ce + 1, [word]
        return None

    def _unknown(self, t: _Text, cue: Cue, rule: Unknown, cs: int, ce: int) -> tuple | None:
        """(start, end, [governed text]) of a cue whose scope holds no listed action. Where only a
        light verb and particles follow the cue in its clause (改派的事不用管了, 转人工就不必了), or the
        cue looks back, it governs its clause before it, less the words that make it a matter (的事);
        else the rest of its clause (千万别再扣一次: 扣一次). None where that text is empty, too long,
        or names a state (不对了)."""
        text = t.text
        b = bisect_right(t.bound_ends, cs) - 1
        clause_start = t.bound_ends[b] if b >= 0 else 0
        nxt = bisect_left(t.bound_starts, ce)
        clause_end = t.bound_starts[nxt] if nxt < len(t.bounds) else len(text)
        verb = next((w for w in self.light_verbs if text.startswith(w, ce)), "")
        after = ce + len(verb)
        back = rule.back == "any" or rule.back == "light" and verb
        if cue.backward or back and self._particles_only(text[after:clause_end]):
            if not self._particles_only(text[after:clause_end]):
                return None                                        # 会议推迟到周五: a business action
            start, end = clause_start, cs
            matter = not cue.modifier_ends
            while True:
                cut = next((w for w in rule.trim + cue.modifier_ends if end - len(w) > start and text.endswith(w, 0, end)), "")
                if not cut:
                    break
                matter = matter or cut in cue.modifier_ends
                end -= len(cut)
            if not matter:
                return None                                        # 查询订单后取消: the object's, not a matter's
            span = (start, after)
        else:
            raw = text[ce:clause_end].rstrip()
            if rule.ends and not any(raw.endswith(w) for w in rule.ends):
                return None
            start, end = ce, ce + len(raw)
            start += len(next((w for w in rule.skip if text.startswith(w, start)), ""))
            while True:
                p = next((w for w in self.particles if end - len(w) > start and text.endswith(w, 0, end)), "")
                if not p:
                    break
                end -= len(p)
            span = (cs, end)
        governed = text[start:end].strip()
        if any(start <= a and b <= end for a, b in t.others):
            return None                                            # 别的先不管: it names no action
        if not governed or len(governed) > rule.reach or any(governed.startswith(w) for w in rule.not_starting) \
                or not any(c.isalpha() for c in governed):
            return None
        return span[0], span[1], [governed]

    def _quoted(self, text: str, at: int) -> bool:
        for o, c in self.quotes:
            i = text.rfind(o, 0, at)
            if i >= 0 and text.find(c, i + len(o), at) < 0 and (o != c or text.count(o, 0, at) % 2):
                return True
        return False

    def _particles_only(self, rest: str) -> bool:
        rest = rest.strip()
        while rest:
            particle = next((w for w in self.particles if rest.startswith(w)), None)
            if particle is None:
                return False
            rest = rest[len(particle):].strip()
        return True

    def _alone(self, t: _Text, i: int, cs: int, ce: int) -> tuple | None:
        """(start, end, acts) of a cue of direction before alone in its clause (…，撤回吧), the
        boundary before it at events[i]: the last action of the clause before, when no blocker
        stands after that action."""
        b = bisect_left(t.bound_starts, t.events[i])
        if b == len(t.bounds) or t.bound_starts[b] != t.events[i] or t.text[t.bound_ends[b]:cs].strip() not in self.leads:
            return None
        nxt = bisect_left(t.bound_starts, ce)
        if not self._particles_only(t.text[ce:t.bound_starts[nxt] if nxt < len(t.bounds) else len(t.text)]):
            return None
        p = t.events[i - 1] if i > 0 else None
        return (p, ce, [t.acts[p][1]]) if p in t.acts else None       # a blocker or boundary: nothing

    def _backward(self, t: _Text, cue: Cue, cs: int, ce: int) -> tuple | None:
        """(start, end, acts) of an action standing right before a cue of direction `before`, or
        ending the clause before a cue that stands alone."""
        i = bisect_left(t.events, cs) - 1
        if i >= 0 and self.particles and t.events[i] not in t.acts and t.events[i] not in t.blocks:
            return None if cue.kind == "reserved" else self._alone(t, i, cs, ce)   # …，我来处理 keeps nothing named
        act = _act_before(t, cs, cue.reach)
        if act is None:
            return None
        p, end, word = act
        gap = t.text[end:cs]
        if cue.modifier_ends and gap and not any(gap.endswith(m) for m in cue.modifier_ends):
            return None                                            # 查询订单后取消: the object's, not the action's
        return p, ce, [word]

    def _negation(self, t: _Text, cue: Cue, cs: int, ce: int, start: int, end: int,
                  acts: list) -> Negation | None:
        text = t.text
        i = bisect_right(t.bound_ends, start) - 1
        clause_start = t.bounds[i][1] if i >= 0 else 0
        i = bisect_left(t.bound_starts, end)
        clause_end = t.bounds[i][0] if i < len(t.bounds) else len(text)
        if self.a_not_a and 0 < cs < len(text) - 1 and not text[cs].isascii() and text[cs - 1] == text[cs + 1]:
            return None                                            # 要不要, 能不能: a question
        if any(clause_start <= s and e <= start for s, e in t.voids):
            return None                                            # 如果不修复…, why not fix
        if cue.void_after is not None and cue.void_after.find(text[end:clause_end]):
            return None                                            # 不修好就没法上线
        kind = cue.kind
        if kind == "prohibition" and any(text.startswith(w, end) for w in self.no_longer):
            kind = "withdrawal"                                    # 别修了: no longer
        if kind == "prohibition" and any(clause_start <= s and e <= start for s, e in t.reports):
            kind = "withdrawal"                                    # 之前说别动…: the later statement wins
        stop = end if cue.backward else max(end, min(clause_end, ce + self.phrase_reach))
        while stop > end and stop < len(text) and text[stop - 1].isascii() and text[stop - 1].isalpha() \
                and text[stop].isascii() and text[stop].isalpha():
            stop -= 1                                              # never cut a Latin word in two
        phrase = text[start:stop].rstrip()
        return Negation(cue.id, kind, start, end, text[start:end], phrase, start, start + len(phrase),
                        tuple((w, self.actions.family(w)) for w in acts),
                        any(clause_start <= s and e <= clause_end for s, e in t.others))

    def mentions(self, text: str, negations: list[Negation]) -> dict[str, int]:
        """family -> where `text` last asks for it, by action words outside its negations that do
        not describe a thing (涨价的那几个 SKU: `attributive`)."""
        spans = sorted((n.start, n.end) for n in negations)
        starts = [s for s, _ in spans]
        latest: dict[str, int] = {}
        for s, e, _, fam in self.actions.find(text):
            i = bisect_right(starts, s) - 1
            if (i < 0 or spans[i][1] < e) and not text.startswith(self.attributive, e):
                latest[fam] = max(s, latest.get(fam, s))
        return latest

    def named(self, governed: str, statements: list[str]) -> bool:
        """Whether some statement names what a negation of an unlisted verb governs: shares one of
        its CJK characters that is not a function word's (不再次扣款 keeps 千万别再扣一次). Lenient by
        design: the candidate's own wording of the prohibition may differ; what it must not do is
        drop it."""
        chars = {c for c in governed if c.isalpha() and not c.isascii() and c not in self.unlisted_ignores}
        return any(c in s for s in statements for c in chars)

    def clause_of(self, neg: Negation, text: str) -> str:
        """The clause a negation stands in (那个降级脚本不跑了啊: what 不跑了 governs is named before it)."""
        start, end = self.clause_span(neg, text)
        return text[start:end]

    def clause_span(self, neg: Negation, text: str) -> tuple[int, int]:
        bounds = [text.rfind(b, 0, neg.start) + len(b) for b in self.boundary_words if text.rfind(b, 0, neg.start) >= 0]
        ends = [i for i in (text.find(b, neg.end) for b in self.boundary_words) if i >= 0]
        return max(bounds, default=0), min(ends, default=len(text))

    def object_of(self, neg: Negation, text: str) -> str:
        """What a negation of touching at all (先别动网关, 权限先别动了) protects: its clause without
        the cue and the verb; empty for any other negation."""
        if not self.object_kept or not all(w.lower() in self.object_kept or w in self.object_kept for w, _ in neg.actions):
            return ""
        start, end = self.clause_span(neg, text)
        return text[start:neg.start] + " " + text[neg.end:end]

    def lifted(self, neg: Negation, family: str, mentions: dict[str, int], rule: str) -> bool:
        """Whether `rule` (never | always | asked_anywhere | asked_later) lets the input's own
        request for `family` outweigh the negation."""
        if rule == "always":
            return True
        if rule == "asked_anywhere":
            return family in mentions
        if rule == "asked_later":
            return mentions.get(family, -1) >= neg.end
        return False

    def check_examples(self, table_id: str) -> Iterator[ExampleResult]:
        for cue in self.cues:
            yield from check_examples(f"{table_id}:{cue.id}", cue.examples, cue.where,
                                      lambda text: [n.text for n in self.scan(text)])


def _unknown(raw: dict | None) -> Unknown | None:
    if not raw:
        return None
    longest = lambda key: tuple(sorted(raw.get(key, ()), key=len, reverse=True))   # noqa: E731
    return Unknown(raw["reach"], longest("ends"), longest("skip"), longest("not_starting"), longest("trim"),
                   raw.get("back", ""))


def _act_before(t: _Text, cs: int, reach: int) -> tuple | None:
    """(start, end, word) of the action word that is the last event before `cs`, ending at most
    `reach` characters before it, else None."""
    i = bisect_left(t.events, cs) - 1
    if i < 0 or t.events[i] not in t.acts:
        return None
    p = t.events[i]
    end, word = t.acts[p]
    return None if end > cs or cs - end > reach else (p, end, word)


def _shifted(n: Negation, by: int) -> Negation:
    return replace(n, start=n.start + by, end=n.end + by, phrase_start=n.phrase_start + by,
                   phrase_end=n.phrase_end + by)


def skip_blanks(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


def compile_negations(data: dict, actions: ActionWords, ctx: CompileContext) -> Negations:
    duplicate_ids(data["cues"], ("negation", "cues"), ctx)
    cue_words = [w for raw in data["cues"] for w in raw["words"]]
    for key in ("blockers", "coordinators", "boundaries", "voiders", "narrowers", "reported"):
        for j, word in enumerate(data.get(key, ())):
            if actions.family(word):
                ctx.fault("ambiguous-word", f"'{word}' is an action word of family '{actions.family(word)}'",
                          ("negation", key, j), "a word is an action or a word of the scope, not both")
    cues = []
    for i, raw in enumerate(data["cues"]):
        where = ("negation", "cues", i)
        for j, word in enumerate(raw["words"]):
            if actions.family(word) and word not in actions.dual:
                ctx.fault("ambiguous-word", f"cue '{word}' is an action word of family '{actions.family(word)}'",
                          where + ("words", j), "a cue negates an action; it is not one")
        backward = raw.get("direction") == "before"
        if "fillers" in raw and "modifier_ends" in raw or backward and "fillers" in raw:
            ctx.fault("conflicting-keys", "a cue has at most one of fillers and modifier_ends, and a cue of "
                      "direction before has no fillers", where,
                      "keep the one that says what may stand between the cue and its action")
        cues.append(Cue(raw["id"], raw["kind"], lexicon(raw["words"]), backward, raw.get("reach", data["reach"]),
                        lexicon(raw["fillers"]) if "fillers" in raw else None, tuple(raw.get("modifier_ends", ())),
                        tuple(raw.get("not_preceded_by", ())), tuple(raw.get("not_followed_by", ())),
                        lexicon(raw["void_after"]) if raw.get("void_after") else None,
                        tuple(raw["examples"]), where, _unknown(raw.get("unknown")), tuple(raw.get("things_after", ()))))
    lists = {"act": actions.every, "block": list(data["blockers"]) + cue_words, "bound": data["boundaries"],
             "coord": data["coordinators"], "void": data["voiders"], "narrow": data["narrowers"],
             "oblig": data.get("obligations", []), "report": data.get("reported", [])}
    lists.update({f"cue{i}": raw["words"] for i, raw in enumerate(data["cues"])})
    light = data.get("light_verbs", {})
    fronted = data.get("fronted_objects", {})
    counted = [w for w in actions.every if is_latin(w) or len(w) > 1]
    return Negations(actions, tuple(cues), lexicon(lists, actions.excepts, parts=True),
                     lexicon({"cue": cue_words, "act": counted}, actions.excepts, parts=True, guarded=("act",)),
                     data["clause_reach"], tuple(data.get("no_longer", ())), data.get("a_not_a", False), data["phrase_reach"],
                     {k: dict(v) for k, v in data["kinds"].items()}, tuple(light.get("words", ())),
                     light.get("reach", 0), tuple(sorted(data.get("standalone_particles", ()), key=len, reverse=True)),
                     tuple(data["boundaries"]),
                     tuple(data.get("object_kept", ())),
                     fronted.get("reach", 0), tuple(sorted(fronted.get("skip", ()), key=len, reverse=True)),
                     frozenset("".join(data.get("unlisted_ignores", ()))),
                     tuple(tuple(q) for q in data.get("quotes", ())),
                     ("",) + tuple(data.get("standalone_leads", ())),
                     tuple(sorted(data.get("replacements", ()), key=len, reverse=True)),
                     lexicon(data["bare_withdrawals"]) if data.get("bare_withdrawals") else None,
                     tuple(data.get("attributive", ())))
