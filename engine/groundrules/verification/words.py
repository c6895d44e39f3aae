"""Words listed in a table, found in a text: CJK words where they stand, Latin words as whole
words in any case (don't = don’t; words of a phrase apart by any blanks), so analysts write words,
never patterns. Linear in the text: a first-character index for CJK words, a token lookup for
Latin ones (a generated regex of hundreds of guarded alternatives was a hundred times slower)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable


# stdlib re: plain classes, and several times faster than `regex` over a 20 KB chat
_LATIN_RUN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
_CAMEL_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def is_latin(word: str) -> bool:
    return all(c.isascii() or c == "’" for c in word) and any(c.isalpha() for c in word)


def _fold(token: str) -> str:
    return token.lower().replace("’", "'")


@dataclass(frozen=True)
class Lexicon:
    """Several word lists (by tag) found in one pass over a text. `excepts` guard the words of
    every list."""

    cjk: dict                  # first two characters (one for a one-character word) -> ((word, tags), ...), longest first
    latin: dict                # first token -> ((tokens, word, tags), ...), longest first
    parts: bool                # Latin words also as parts of identifiers (fix_login, fixLogin)
    starts: re.Pattern         # where a CJK word may start (`starts_pattern`): only there does the scan look
                               # (stdlib re: a character class cannot backtrack, and `regex` walks a
                               # class of 264 characters several times slower)
    at_two: dict               # `cjk` as the scan reads it: the first two characters at a position -> every
    at_one: dict               # word that may start there (after the pair's, the first character's own), else
                               # the first character -> its one-character word; each (word, length, tags,
                               # guards or None: the longer words it is not a word in, 改 is not the 改 of
                               # 改天: (those it starts, ((offset, length, those), ...) of the others))

    def scan(self, text: str) -> dict[str, list[tuple[int, int, str]]]:
        """tag -> (start, end, word as listed) for every position where a word of the tag starts
        (the longest there), by position; overlapping hits are kept (see `first_fit`)."""
        hits: dict = {}
        if self.cjk:
            at_two, at_one, startswith = self.at_two, self.at_one, text.startswith
            for i in map(re.Match.start, self.starts.finditer(text)):
                entries = at_two.get(text[i:i + 2]) or at_one.get(text[i])
                if entries is None:
                    continue
                claimed: tuple = ()
                for word, n, tags, guards in entries:
                    # a word of two characters or one is its key: only a longer one needs comparing
                    if n > 2 and not startswith(word, i) or guards is not None and (
                            startswith(guards[0], i) or guards[1] and _inside(text, i, guards[1])):
                        continue
                    for tag in tags:
                        if tag not in claimed:
                            found = hits.get(tag)
                            if found is None:
                                hits[tag] = [(i, i + n, word)]
                            else:
                                found.append((i, i + n, word))
                    claimed = claimed + tags if claimed else tags
        if self.latin and self._latin_in(text):
            tokens = self._tokens(text)
            for k, (s, _, tok) in enumerate(tokens):
                taken: set = set()
                for words, word, tags in self.latin.get(tok, ()):
                    end = self._phrase_end(text, tokens, k, words, self.parts)
                    if end is not None:
                        for tag in tags:
                            if tag not in taken:
                                hits.setdefault(tag, []).append((s, end, word))
                                taken.add(tag)
        return {tag: sorted(found) for tag, found in hits.items()}

    def find(self, text: str, tag: str = "") -> list[tuple[int, int, str]]:
        """The hits of `tag` that do not overlap: from the left, the longest at each place."""
        return first_fit(self.scan(text).get(tag, []))

    def _latin_in(self, text: str) -> bool:
        """Whether some Latin run of `text`, or part of one, is the first token of a word: most texts
        hold none, and then no token list is made."""
        latin = self.latin
        for run in set(_LATIN_RUN.findall(text)):       # a chat repeats its runs (A-123, OK)
            if _fold(run) in latin:
                return True
            if self.parts and not run.islower() and not run.isupper() and \
                    any(_fold(p) in latin for p in _CAMEL_PART.findall(run)):
                return True
        return False

    def _tokens(self, text: str) -> list[tuple[int, int, str]]:
        out = []
        for m in _LATIN_RUN.finditer(text):
            out.append((m.start(), m.end(), _fold(m.group(0))))
            run = m.group(0)
            if self.parts and not run.islower() and not run.isupper():
                out += [(m.start() + p.start(), m.start() + p.end(), _fold(p.group(0)))
                        for p in _CAMEL_PART.finditer(run) if p.end() - p.start() < len(run)]
        return sorted(out, key=lambda t: (t[0], -t[1]))

    @staticmethod
    def _phrase_end(text: str, tokens: list, k: int, words: tuple, parts: bool = False) -> int | None:
        """Where the phrase `words` ends when it starts at token k, else None; with `parts` its
        words may also be the parts of an identifier (place order in place_order, placeOrder)."""
        end = tokens[k][1]
        at = k
        for want in words[1:]:
            nxt = next((j for j in range(at + 1, len(tokens)) if tokens[j][0] >= end), None)
            gap = text[end:tokens[nxt][0]] if nxt is not None else ""
            if nxt is None or tokens[nxt][2] != want or not (gap.isspace() or parts and gap in ("", "_", "-")):
                return None
            at, end = nxt, tokens[nxt][1]
        return end


def _inside(text: str, i: int, guards: tuple) -> bool:
    """Whether the word at `i` lies inside one of the longer words that guard it from before it
    (`guards`: ((offset, length, longer words), ...))."""
    for off, n, longer in guards:
        if i >= off and text[i - off:i - off + n] in longer:
            return True
    return False


def first_fit(hits: list[tuple]) -> list[tuple]:
    out, end = [], -1
    for hit in sorted(hits, key=lambda h: (h[0], -h[1])):
        if hit[0] >= end:
            out.append(hit)
            end = hit[1]
    return out


def lexicon(lists: dict[str, Iterable[str]] | Iterable[str], excepts: Iterable[str] = (),
            parts: bool = False, guarded: Iterable[str] | None = None) -> Lexicon:
    """The lexicon of `lists` (tag -> words; a plain list of words is the tag ""). `excepts` guard
    the words of every list, or with `guarded` only those of these tags."""
    if not isinstance(lists, dict):
        lists = {"": lists}
    tags_of: dict = {}
    for tag, words in lists.items():
        for word in words:
            tags_of.setdefault(word, []).append(tag)
    cjk: dict = {}
    latin: dict = {}
    for word in sorted(tags_of, key=lambda w: (-len(w), w)):
        tags = tuple(dict.fromkeys(tags_of[word]))
        if is_latin(word):
            tokens = tuple(_fold(t) for t in _LATIN_RUN.findall(word))
            if tokens:
                latin.setdefault(tokens[0], []).append((tokens, word, tags))
        else:
            cjk.setdefault(word[:2], []).append((word, tags))
    latin = {k: tuple(sorted(v, key=lambda p: (-len(p[0]), p[1]))) for k, v in latin.items()}
    excepts = tuple(excepts)
    guards: dict = {}
    guarded = None if guarded is None else set(guarded)
    words = {word for entries in cjk.values() for word, tags in entries if guarded is None or guarded & set(tags)}
    for longer in excepts:              # every word inside every longer word, by substring: linear in the excepts
        for at in range(len(longer)):
            for end in range(at + 1, len(longer) + 1):
                word = longer[at:end]
                if word in words and word != longer:
                    guards.setdefault(word, []).append((at, longer))
    cjk = {k: tuple(v) for k, v in cjk.items()}
    grouped = {k: _guards(v) for k, v in guards.items()}
    entries = {k: tuple((w, len(w), tags, grouped.get(w)) for w, tags in v) for k, v in cjk.items()}
    at_two = {k: entries[k] + entries.get(k[0], ()) for k in entries if len(k) == 2}
    at_one = {k: v for k, v in entries.items() if len(k) == 1}
    return Lexicon(cjk, latin, parts, starts_pattern(cjk), at_two, at_one)


def _guards(guards: list) -> tuple:
    """(the longer words a word starts, one `startswith` for them all; ((offset, length, frozenset
    of longer words), ...) of the others: one slice looked up per offset and length, not one
    comparison per longer word (退款 has eleven))."""
    ahead = tuple(sorted(longer for off, longer in guards if off == 0))
    out: dict = {}
    for off, longer in guards:
        if off:
            out.setdefault((off, len(longer)), set()).add(longer)
    return ahead, tuple((off, n, frozenset(words)) for (off, n), words in sorted(out.items()))


def starts_pattern(keys: Iterable[str], groups: int = 3) -> re.Pattern:
    """Where a CJK word may start: a first character of a longer word followed by some second
    character of one (a superset of the real pairs, so no start is missed), or a one-character
    word. Checking the second character in the pattern leaves far fewer places to look up (in a
    20 KB chat, 120 instead of 653 for the action words). The first characters go in `groups` by
    how many second characters they take, each with only its own seconds: with the broad action
    lexicon one class of every second character made 备注, 订单 and 用户 places to look (733 in the
    benchmark's chat, 358 in three groups; more groups cost the pattern more than they save).
    The pattern takes one class of every first character, and only then tells the groups apart,
    looking behind at the character it took: an alternation of classes is tried at every position
    of the text, a leading class lets the scan skip to its characters (the cue words' starts in
    the benchmark's chat: 0.32 ms instead of 0.44)."""
    keys = list(keys)
    seconds: dict = {}
    for k in keys:
        if len(k) == 2:
            seconds.setdefault(k[0], set()).add(k[1])
    firsts = sorted(seconds, key=lambda f: (len(seconds[f]), f))
    ones = "".join(sorted(k for k in keys if len(k) == 1))
    alts = []
    for g in range(groups):
        chunk = firsts[g * len(firsts) // groups:(g + 1) * len(firsts) // groups]
        if chunk:
            follow = "".join(sorted(set().union(*(seconds[f] for f in chunk))))
            alts.append(f"(?<=[{re.escape(''.join(chunk))}])(?=[{re.escape(follow)}])")
    if ones:
        alts.append(f"(?<=[{re.escape(ones)}])")
    if not alts:
        return re.compile("(?!)")
    every = "".join(sorted(set(firsts) | set(ones)))
    return re.compile(f"[{re.escape(every)}](?:{'|'.join(alts)})")
