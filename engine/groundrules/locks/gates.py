"""Which patterns read a message: the gates, prefilter words and openings of one role and
state's patterns, asked once per message, in C loops, before any regex runs.

Most messages give no lock, yet ordinary chat holds a few digits, and 一 is in most Chinese
sentences: what every message pays is this module. So a role and state's patterns are compiled
into a Plan: grouped by their gate's character set, each set counted once per message (its ASCII
characters by one `bytes.translate` of the message's ASCII, the others by `in` and `str.count`,
up to the largest count a member asks: no regex walks the message), the smallest count any member
needs compared first, so one comparison skips the group; then, for the members whose count
passes, their words, openings and run tests (a failed run test answers the longer runs of the
group). A group whose every member has words or an opening asks those first, and counts only
for a message that has them (the Chinese-numeral reading: its opening, 一 or 幺 and two more
numerals, is one literal `re` search; twelve counts are not). A word of several characters is
looked for only when its first character is there (`in` finds one character several times
faster; one `re` findall of every such character costs more than all the `in`s). The patterns
that pass are scanned in table order, as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .compile import LockPattern

NEVER = 1 << 62     # "no run of" before any run test said so
FEW_HEADS = 3       # as many first characters as `in` finds faster than an encode and a translate


def _words(words: tuple) -> tuple:
    """(first character, the whole word when it is longer, else None) for each word."""
    return tuple((w[0], w if len(w) > 1 else None) for w in words)


def _opens(content: str, words: tuple, opening: tuple) -> bool:
    """The message holds one of the words (if any) and one of the openings (if any)."""
    if words:
        for head, word in words:
            if head in content and (word is None or word in content):
                break
        else:
            return False
    if opening:
        for first, search in opening:
            if first in content and search(content) is not None:
                return True
        return False
    return True


class Plan:
    """The patterns that count in one role and state, with what a message must hold for each."""

    __slots__ = ("patterns", "groups", "free", "free_heads")

    def __init__(self, patterns: tuple, role: str, state: str):
        counts = f"{role} {state}"
        self.patterns: tuple = tuple(p for p in patterns if counts in p.counts)
        by_set: dict = {}
        free = []
        for index, p in enumerate(self.patterns):
            if p.gate:
                cls, run, count, run_test, chars = p.gate
                words = _words(p.prefilter)
                if p.opening and {c for c, _ in p.opening} <= {head for head, rest in words if rest is None}:
                    words = ()          # every opening starts with one of the words: it asks them itself
                by_set.setdefault(cls, (chars, []))[1].append(
                    (index, max(count, run), run, run_test, words, p.opening))
            else:
                free.append((index, _words(p.prefilter)))
        groups = []
        for chars, members in by_set.values():
            # a group whose every member has words or an opening asks them before its census
            pretest = all(m[4] or m[5] for m in members)
            ascii_chars = "".join(c for c in chars if c.isascii()).encode("ascii")
            wide = tuple(c for c in chars if not c.isascii())
            groups.append((pretest, ascii_chars, wide, min(m[1] for m in members), max(m[1] for m in members),
                           tuple(members)))
        self.groups: tuple = tuple(groups)
        self.free: tuple = tuple(free)
        # the first characters of the ungated patterns' words, when there are several: ASCII ones
        # looked for in one bytes.translate of the message's ASCII, the others with `in` (None when
        # a pattern has no words, or a few `in` cost less)
        heads = {head for _, own in free for head, _ in own}
        self.free_heads = None if any(not own for _, own in free) or len(heads) <= FEW_HEADS else (
            "".join(sorted(c for c in heads if c.isascii())).encode("ascii"),
            tuple(sorted(c for c in heads if not c.isascii())))

    def __len__(self) -> int:
        return len(self.patterns)

    def runnable(self, content: str) -> "list[LockPattern]":
        """The patterns whose gate and words the message passes, in order. (Word tests are written
        out, not called: a call costs more than the `in` it makes.)"""
        picked: list[int] = []
        ascii_text = None
        wide_text = None
        for pretest, ascii_chars, wide, floor, top, members in self.groups:
            if pretest:
                members = [m for m in members if _opens(content, m[4], m[5])]
                if not members:
                    continue
            n = 0
            if ascii_chars:
                if ascii_text is None:
                    ascii_text = content.encode("ascii", "ignore")
                n = len(ascii_text) - len(ascii_text.translate(None, ascii_chars))
            if wide:
                if wide_text is None:
                    wide_text = not content.isascii()
                if wide_text and n < top:         # counted no further than a member asks (a long text)
                    for c in wide:
                        if c in content:
                            n += content.count(c)
                            if n >= top:
                                break
            if n < floor:
                continue
            have, lack = 0, NEVER
            for index, count, run, run_test, own, opening in members:
                if n < count:
                    continue
                if not pretest:
                    if own:
                        for head, word in own:
                            if head in content and (word is None or word in content):
                                break
                        else:
                            continue
                    if opening and not _opens(content, (), opening):
                        continue
                if run > have:
                    if run >= lack:
                        continue
                    if run_test(content) is None:
                        lack = run
                        continue
                    have = run
                picked.append(index)
        free = self.free
        if self.free_heads is not None:       # most messages hold none of their first characters
            ascii_heads, wide_heads = self.free_heads
            if ascii_text is None:
                ascii_text = content.encode("ascii", "ignore")
            if len(ascii_text.translate(None, ascii_heads)) == len(ascii_text):
                for c in wide_heads:
                    if c in content:
                        break
                else:
                    free = ()
        for index, own in free:
            if own:
                for head, word in own:
                    if head in content and (word is None or word in content):
                        break
                else:
                    continue
            picked.append(index)
        if not picked:
            return []
        if len(picked) > 1:
            picked.sort()
        patterns = self.patterns
        return [patterns[i] for i in picked]
