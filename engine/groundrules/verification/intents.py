"""The intent part: unique ids, one object per intent, and constraints that must survive.

What is certain is checked as model output (an intent input that is not the request's, a
repeated id); what needs judgement (several objects in one target, more actions than intents, a
prohibition or withdrawal the candidate dropped, an intent doing what the input negates, a
restriction nobody reflects) comes from the tables, and the issue catalogue says whether each is
an error to repair or a warning.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace
from typing import Any

from .observations import Observation
from .heuristics import Heuristic, IntentHeuristics
from .negation import BARE, Negation, Negations, skip_blanks
from .phrases import PhraseMatch, ProhibitionPhrases
from .pointers import encode
from .spans import Spans

_MAX_DEPTH = 16
INPUT = "input"


def intent_observations(text: str, intent: dict, phrases: ProhibitionPhrases,
                        heuristics: IntentHeuristics, turns: tuple = ()) -> list[Observation]:
    """The intent part's observations over the input and the user's earlier turns (`turns`:
    (sourceId, text), in order), where a withdrawal or prohibition holds until a later statement
    asks for its action again (seed 002, 上下文与字段选择: context is where corrections live)."""
    out: list[Observation] = []
    if intent["input"] != text:
        out.append(Observation("intent_input_mismatch", "/intent/input"))
    intents = intent["intents"]
    seen: set = set()
    for i, item in enumerate(intents):
        if item["id"] in seen:
            out.append(Observation("intent_id_duplicate", encode("intent", "intents", i, "id"), {"id": item["id"]}))
        seen.add(item["id"])
    out += _joined_targets(intents, heuristics)
    out += _corrected_kept(text, intents, phrases)
    negations, words = phrases.read(text)
    mentions = phrases.negations.mentions(text, negations) if negations else {}
    earlier = _earlier(turns, text, phrases)
    out += _dropped(negations, mentions, intent, phrases, INPUT, text)
    for source, negs, said in earlier:                 # a bare turn (算了, hold on) need not be restated
        out += _dropped([n for n in negs if n.cue != BARE], said, intent, phrases, source, dict(turns)[source])
    matches = phrases.scan(text, negations)
    statements = _statements(intent)
    for m in matches:
        if not phrases.reflected(m, statements):
            out.append(Observation("prohibition_unreflected", "/intent/prohibitions",
                               {"phrase": m.phrase, "kind": m.kind, "start": m.start, "end": m.end}))
    counts = [(h, _asked(h, text, intents, matches, negations, words, phrases.negations))
              for h in heuristics.of_check("action_count")]
    out += _merged_actions(text, intents, counts, negations, phrases.negations.clause_reach)
    counted = [w for _, asked in counts for w in asked]
    continued = _negated_continued(intents, negations, mentions, phrases, INPUT, text, counted)
    for source, negs, said in earlier:
        done = {o.path for o in continued}
        continued += [o for o in _negated_continued(intents, negs, said, phrases, source, dict(turns)[source], [])
                      if o.path not in done]
    if not continued:
        continued = _beyond_asked(text, intents, counts, negations, mentions, earlier, phrases)
    return out + continued


def _earlier(turns: tuple, text: str, phrases: ProhibitionPhrases) -> list[tuple]:
    """(sourceId, negations, mentions) of each earlier user turn, each negation keeping only the
    actions no later statement (a later turn, the input) asks for again: the later one wins."""
    if not turns:
        return []
    read = []
    before = ""
    for source, turn in turns:
        negs = phrases.negated(turn)
        if not negs and before:
            bare = phrases.negations.bare_withdrawal(turn, before)
            negs = [bare] if bare is not None else []
        read.append((source, negs, phrases.negations.mentions(turn, negs)))
        before = turn
    final = phrases.negated(text)
    later = set(phrases.negations.mentions(text, final))
    asked_later = text                 # an unlisted verb is asked again where a later statement says it (不加了 … 还是加吧)
    out = []
    for (source, negs, said), (_, turn) in zip(reversed(read), reversed(turns)):
        kept = []
        for n in negs:
            actions = tuple((w, f) for w, f in n.actions if (f not in later if f else w not in asked_later))
            if actions:
                kept.append(replace(n, actions=actions))
        if kept:
            out.append((source, kept, said))
        later |= set(said)
        asked_later += "\n" + _outside(turn, negs)
    return out[::-1]


def _outside(text: str, negations: list[Negation]) -> str:
    """`text` with its negations blanked out: what it asks for."""
    for n in negations:
        text = text[:n.start] + " " * (n.end - n.start) + text[n.end:]
    return text


# the intent observation of each negation kind
_CONTINUED = {"withdrawal": "withdrawn_continued", "prohibition": "prohibited_action", "reserved": "reserved_action"}


def _dropped(negations: list[Negation], mentions: dict[str, int], intent: dict,
             phrases: ProhibitionPhrases, source: str, text: str) -> list[Observation]:
    """A prohibition or withdrawal of the input that the candidate does not keep: some prohibition
    must name an action of each negated family (修改代码, no code changes), or some requirement or
    prohibition negate it (不修改代码, do not modify the code); a negation of touching at all
    (先别动网关) is kept by a prohibition naming what it protects (不重启网关)."""
    out: list[Observation] = []
    if not negations:
        return out
    prohibitions = _strings_of(intent["prohibitions"])
    kept_named = {fam for s in prohibitions for *_, fam in phrases.actions.find(s)}
    kept_negated = {fam for s in _statements(intent) for n in phrases.negated(s) for fam in n.families}
    for n in negations:
        protected = phrases.negations.object_of(n, text)
        if protected and phrases.shares(protected, prohibitions):
            continue
        rule = phrases.negations.kinds[n.kind]["required_unless"]
        missing = [(w, fam) for w, fam in n.actions
                   if (fam not in kept_named | kept_negated if fam
                       else not phrases.negations.named(phrases.negations.clause_of(n, text), prohibitions))
                   and not phrases.negations.lifted(n, fam, mentions, rule)]
        if missing:
            out.append(Observation("prohibition_dropped", "/intent/prohibitions",
                                   {"phrase": n.phrase, "kind": n.kind, "action": "/".join(w for w, _ in missing),
                                    "start": n.phrase_start, "end": n.phrase_end, "source": source}))
    return out


def _negated_continued(intents: list, negations: list[Negation], mentions: dict[str, int],
                       phrases: ProhibitionPhrases, source: str, text: str, asked_words: list) -> list[Observation]:
    """An intent whose action (the first action word of its name: fix, fix_login, 修登录, hotfix)
    is of a family the input withdraws or forbids, unless the input asks for it all the same; and
    where it does by another word of the family, an intent named by the negated word (never mind
    rebooting …, run a speed test: reboot is withdrawn, run asked), or one whose target names what
    only the negation names (导出会员手机号，不能导出身份证号: export 身份证号 is the export forbidden)."""
    out: list[Observation] = []
    if not negations:
        return out
    actions = phrases.actions
    asked = {actions.base(w) for _, _, w, _ in actions.find(_outside(text, negations))}
    for i, item in enumerate(intents):
        family = actions.head(item["action"]) if isinstance(item.get("action"), str) else None
        if not family:
            continue
        word = actions.head_word(item["action"])
        for n in negations:
            if n.narrowed:
                continue
            rule = phrases.negations.kinds[n.kind]["intent_allowed_if"]
            if family not in n.families or _replaces(phrases, n, text, item.get("target")) \
                    or source == INPUT and _asked_unlisted(phrases, n, text, item.get("target"), asked_words):
                continue
            if (not phrases.negations.lifted(n, family, mentions, rule)
                    or word not in asked and any(actions.base(w) == word for w, _ in n.actions)
                    or _names_negated(phrases, n, text, item.get("target"))):
                out.append(Observation(_CONTINUED[n.kind], encode("intent", "intents", i, "action"),
                                       {"action": item["action"], "phrase": n.phrase, "source": source}))
                break
    return out


def _replaces(phrases: ProhibitionPhrases, n: Negation, text: str, target: Any) -> bool:
    """Whether `target` names what the clause replacing a withdrawal names (…计划取消，改成只给老客户
    单独发: send 老客户单独邮件)."""
    span = phrases.negations.replacement(n, text)
    return span is not None and isinstance(target, str) and phrases.names(text[span[1]:span[2]], [target])


def _asked_unlisted(phrases: ProhibitionPhrases, n: Negation, text: str, target: Any, asked: list) -> bool:
    """Whether `target` names, by CJK characters, a clause outside a negation's (not a reservation's)
    where no action asked (`asked`: the action count's) is a word of a family, nor a one-character
    verb of one (给学生发成绩单，但不要抄送家长: send 成绩单给学生 is the 发 asked, a verb no family
    lists; 调一下这个 API 的限流阈值: 调), and names nothing only the negation names: the intent is that
    clause's action, not the negated one of its family. A clause asking with a listed word
    (先分析支付失败的原因, 帮我看看登录的问题) is that word's."""
    if n.kind == "reserved" or not isinstance(target, str) or _names_negated(phrases, n, text, target):
        return False
    grams = _cjk_runs(target, phrases.min_shared)          # a Latin object is shared too often
    start, end = phrases.negations.clause_span(n, text)
    bounds = phrases.negations.boundary_words
    family = phrases.actions.family
    for a, b in _clause_spans(text, 0, start, bounds) + _clause_spans(text, end, len(text), bounds):
        if any(g in text[a:b] for g in grams) and not any(a <= s < b and (family(w) or family(w[:1])) for s, _, w in asked):
            return True
    return False


def _clause_spans(text: str, lo: int, hi: int, bounds: tuple) -> list[tuple[int, int]]:
    """The clauses of text[lo:hi], as (start, end); a boundary may be a word (但是, then)."""
    cuts = sorted((i, i + len(b)) for b in bounds for i in _find_all(text, b) if lo <= i < hi)
    out, a = [], lo
    for c, after in cuts + [(hi, hi)]:
        if c >= a and text[a:c].strip():
            out.append((a, c))
        a = max(a, after)
    return out


def _cjk_runs(target: str, k: int) -> set[str]:
    """The runs of `k` characters of `target` that hold no blank and are not all ASCII."""
    return {g for g in (target[i:i + k] for i in range(len(target) - k + 1)) if g.strip() == g and not g.isascii()}


def _names_negated(phrases: ProhibitionPhrases, n: Negation, text: str, target: Any) -> bool:
    """Whether `target` names what the negation's object names (the rest of its clause after the
    verb; before the cue where nothing follows) and the rest of the text does not: `min_shared`
    consecutive CJK characters."""
    if not isinstance(target, str):
        return False
    start, end = phrases.negations.clause_span(n, text)
    named = text[n.end:end]
    if not named.strip():
        named = text[start:n.start]
    rest = text[:start] + "\n" + text[end:]
    return any(g in named and g not in rest for g in _cjk_runs(target, phrases.min_shared))


def _corrected_kept(text: str, intents: list, phrases: ProhibitionPhrases) -> list[Observation]:
    """An intent whose target names what a correction took back (不是要改收货地址，是要改收货人电话:
    a target 收货地址) and nothing of what it put instead: the user's first word, not their last."""
    out = []
    for old, new in phrases.corrected(text) if phrases.corrections else ():
        for i, item in enumerate(intents):
            target = item.get("target")
            if isinstance(target, str) and phrases.names(old, [target]) and not phrases.names(new, [target]):
                out.append(Observation("corrected_kept", encode("intent", "intents", i, "target"),
                                       {"target": target, "old": old, "new": new}))
    return out


def _joined_targets(intents: list, heuristics: IntentHeuristics) -> list[Observation]:
    out = []
    checks = heuristics.of_check("target_joiner")
    for i, item in enumerate(intents):
        for h in checks:
            spans = h.pattern.spans(item["target"])
            if spans:
                out.append(Observation("target_joined", encode("intent", "intents", i, "target"),
                                   {"target": item["target"], "joiner": spans[0][2].group("joiner")}))
                break
    return out


def _merged_actions(text: str, intents: list, counts: list, negations: list[Negation], reach: int) -> list[Observation]:
    """More actions asked for than intents (`counts`: each action_count heuristic with what it counts;
    a clause starting with a word of its `sequence` and no counted action is one more, looked for only
    where the counted ones do not outnumber the intents already)."""
    out = []
    for h, asked in counts:
        actions = [w for _, _, w in asked]
        need = len(intents) - len(actions) + 1
        if need > 0 and len(_requests_unlisted(h, text, asked, negations, reach, h.sequence, need)) >= need:
            actions += _requests_unlisted(h, text, asked, negations, reach, h.sequence)   # all of them, for the message
        if len(actions) > len(intents):
            out.append(Observation("actions_merged", "/intent/intents",
                               {"actions": actions, "count": len(actions), "intents": len(intents)}))
    return out


def _asked(h: Heuristic, text: str, intents: list, matches: list[PhraseMatch], negations: list[Negation], words: list,
           reading: Negations) -> list[tuple[int, int, str]]:
    """The actions the input asks for by one action_count heuristic: `words` are the action words
    the input holds (two characters or more, and Latin), found with its negations. A word of a
    negated family later in the negation's clause restates what is negated (不要把退款直接退回原账户:
    退回 is the refund); a word opening the clause that replaces a withdrawal (…取消，改成…) is none,
    nor one in the object of a negated verb of touching or doing (暂缓执行批量销户任务)."""
    actions, reach = reading.actions, reading.clause_reach
    replaced = [r for n in negations for r in (reading.replacement(n, text),) if r is not None]
    excluded = Spans([(m.start, m.end) for m in matches if m.kind in h.exclude_kinds]
                     + [(_clause_start(text, n.start, h.boundaries, reach) if n.kind == "withdrawal" else n.start, n.end)
                        for n in negations if n.kind in h.exclude_kinds]
                     + [(a, b) for a, b, _ in replaced]
                     + [(n.end, _clause_end(text, n.end, h.boundaries)) for n in negations   # 暂缓执行批量销户任务:
                        if n.kind in h.exclude_kinds and reading.object_of(n, text)])       # the object is what is negated
    restated = [(n.end, _clause_end(text, n.end, h.boundaries), n.families)
                for n in negations if n.kind in h.exclude_kinds]
    targets = _targets(intents) if h.inside_targets else []
    family = actions.family
    starts = {s for s, _, _ in words}

    def skip(start: int, end: int) -> bool:
        return excluded.overlaps(start, end) or (start > 0 and _in_object(text[start - 1:end], targets)) \
            or any(a <= start < b and family(text[start:end]) in fams for a, b, fams in restated) \
            or text[start:end] in actions.dual and skip_blanks(text, end) in starts   # 撤回改动: a cue
    return h.actions(text, words, skip)


def _beyond_asked(text: str, intents: list, counts: list, negations: list[Negation], mentions: dict,
                  earlier: list, phrases: ProhibitionPhrases) -> list[Observation]:
    """More intents than the input asks for, where the input or an earlier turn withdraws or forbids
    an action nobody asks for again (改派的事不用管了, 千万别再扣一次): the intent beyond is that action's,
    whatever its name. An intent's name cannot always be matched to the negated verb (reroute,
    report_loss: no family lists every wording), but the actions asked for can be counted."""
    asked_words = _outside(text, negations)

    def standing(n: Negation, said: dict) -> bool:
        rule = phrases.negations.kinds[n.kind]["intent_allowed_if"]
        return not n.narrowed and any(not phrases.negations.lifted(n, f, said, rule)
                                      or w not in asked_words and said.get(f, -1) < n.end for w, f in n.actions)
    held = [(INPUT, n) for n in negations if standing(n, mentions)]
    held += [(source, n) for source, negs, said in earlier for n in negs if standing(n, said)]
    if not held:
        return []
    source, n = held[0]
    for h, asked in counts:
        count = max(len(asked) + len(_requests_unlisted(h, text, asked, negations, phrases.negations.clause_reach)), 1)
        if len(intents) > count:
            return [Observation("withdrawn_beyond_asked", "/intent/intents",
                                {"phrase": n.phrase, "source": source, "count": count, "intents": len(intents)})]
    return []


def _requests_unlisted(h: Heuristic, text: str, asked: list, negations: list[Negation], reach: int,
                       starting: tuple | None = None, enough: int = 0) -> list[str]:
    """The clauses of the input that ask for something with a verb no family lists: outside every
    negation, no counted action in them, and a word of `requests` (帮, 请, 吧) that marks a request
    (入库吧, 帮他申请运费险理赔; a clause of reasons, 候选人说还要考虑, has none), or with `starting`,
    one of those words first (再拉进部门群). Only the clauses around such a word are read, at most
    `reach` characters on either side of it: a 20 KB chat has a thousand clauses, and walking them
    all cost a verification a fifth of its time. With `enough`, it stops at that many."""
    words = h.requests if starting is None else starting
    if not words:
        return []
    negated = Spans((n.start, n.end) for n in negations)
    starts = sorted(s for s, _, _ in asked)
    bounds = tuple(h.boundaries)
    seen: dict = {}
    for word in words:
        for i in _find_all(text, word):
            if starting is not None:
                k = i
                while k > 0 and text[k - 1] in " \t":
                    k -= 1
                if k > 0 and not text.endswith(bounds, 0, k):
                    continue
            if h.background is not None and h.background.holds(text, i, bounds):
                continue                                           # 客服：…麻烦…: a turn of a transcript
            if starting is not None:
                a = i
            else:
                lo = max(0, i - reach)
                a = max((j + len(b) for b in bounds for j in (text.rfind(b, lo, i),) if j >= 0), default=lo)
            end, hi = i + len(word), i + len(word) + reach
            b = min((j for x in bounds for j in (text.find(x, end, hi),) if j >= 0), default=min(len(text), hi))
            if a in seen or negated.overlaps(a, b) or bisect_left(starts, a) < bisect_left(starts, b):
                continue
            seen[a] = text[a:b].strip()
            if len(seen) == enough:
                return list(seen.values())
    return [seen[a] for a in sorted(seen)]


def _find_all(text: str, word: str) -> list[int]:
    out, i = [], text.find(word)
    while i >= 0:
        out.append(i)
        i = text.find(word, i + len(word))
    return out


def _clause_start(text: str, at: int, boundaries: tuple, reach: int) -> int:
    """Where the clause holding `at` starts: what a withdrawal's clause names before its cue is its
    topic (缴费提醒短信不推了: 缴费 and 提醒 are what is no longer wanted, not actions asked for). At
    most `reach` characters back."""
    lo = max(0, at - reach)
    return max((i + len(b) for b in boundaries for i in (text.rfind(b, lo, at),) if i >= 0), default=lo)


def _clause_end(text: str, at: int, boundaries: tuple) -> int:
    return min((i for i in (text.find(b, at) for b in boundaries) if i >= 0), default=len(text))


def _targets(intents: list) -> list[str]:
    return [item["target"] for item in intents if isinstance(item.get("target"), str)]


def _in_object(word: str, targets: list[str]) -> bool:
    """Whether an action word, with the character before it, lies inside some intent's target: the
    candidate names it as part of an object (报表统计的原因: 表统计), not as an action."""
    return not word[0].isspace() and any(word in t for t in targets)


def _statements(intent: dict) -> list[str]:
    """The text of every requirement and prohibition, top-level and per intent."""
    items = list(intent["requirements"]) + list(intent["prohibitions"])
    for item in intent["intents"]:
        reqs = item.get("requirements")
        if isinstance(reqs, list):
            items += reqs
    return _strings_of(items)


def _strings_of(items: list) -> list[str]:
    out: list[str] = []
    for item in items:
        _strings(item, out, 0)
    return out


def _strings(value: Any, out: list, depth: int) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < _MAX_DEPTH and isinstance(value, dict):
        for v in value.values():
            _strings(v, out, depth + 1)
    elif depth < _MAX_DEPTH and isinstance(value, list):
        for v in value:
            _strings(v, out, depth + 1)
