"""Where a table's pattern may match: the first two characters any match can start with, read off
the pattern when it is compiled, as a stdlib pattern (words.starts_pattern) whose C scanner skips
the rest of a text. `regex` tries a pattern at every position, and an alternation of forty verbs
costs it 0.3-0.4 ms over a 20 KB chat that holds none of them; the positions a chat offers are few.

Only a superset is ever computed, so that scanning from those positions alone finds every match the
whole scan finds: what cannot be read exactly (a class by category, a negated class, a back
reference, a cased non-ASCII character under IGNORECASE) stands for any character, and a pattern
the stdlib parser cannot read as `regex` reads it (\\p{Han}, POSIX classes, fuzzy counts, a
nested set), or one that may match the empty string or start with any character, has none.
"""
from __future__ import annotations

import importlib
import re
import warnings
from types import ModuleType

from .words import starts_pattern

_parser: ModuleType | None
try:                    # the stdlib's own pattern parser (private, but the one `re` has used since 3.11)
    _parser, c = importlib.import_module("re._parser"), importlib.import_module("re._constants")
except ImportError:     # a Python without it: no pattern has starts, every scan is whole
    _parser = None

ANY = None                                     # a position that may hold any character
_MAX_CLASS = 512                               # a class wider than this stands for any character
_MAX_KEYS = 20000
# the characters outside ASCII that `regex` matches to an ASCII letter under IGNORECASE (all of them:
# tests/verify/test_pattern_starts.py checks every code point)
_ASCII_FOLDS = {"k": "\u212a", "s": "\u017f", "i": "\u0130"}
# what the stdlib parser reads differently from `regex`: POSIX classes and fuzzy counts ({e<=1})
_UNREADABLE = re.compile(r"\[:|\{(?!\d*,?\d*\})")


class _Unread(Exception):
    """A construct this reading does not know."""


def starts_of(source: str) -> re.Pattern | None:
    """A stdlib pattern that matches (one character long) at every position where a match of
    `source`, compiled by `regex` without flags, may start; None where that cannot be told."""
    if _parser is None or _UNREADABLE.search(source):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")     # "possible nested set": `regex` may read it otherwise
            parsed = _parser.parse(_unnamed(source))
        if parsed.getwidth()[0] == 0:
            return None                        # an empty match may stand anywhere
        firsts = _followed(list(parsed), bool(parsed.state.flags & c.SRE_FLAG_IGNORECASE), {()})
    except (re.error, FutureWarning, _Unread, RecursionError):
        return None
    keys: set = set()
    for seq in firsts:
        if not seq or seq[0] is ANY:
            return None                        # any character first
        if len(seq) == 1 or seq[1] is ANY:
            keys |= seq[0]
        else:
            keys |= {a + b for a in seq[0] for b in seq[1]}
        if len(keys) > _MAX_KEYS:
            return None
    return starts_pattern(keys)


def _unnamed(source: str) -> str:
    """`source` with each named group a plain one: `regex` lets two groups share a name (not 'but X'
    or 'I meant X'), the stdlib parser does not, and a name changes no match (a named back
    reference then reads as unknown, and the pattern has no starts). Escapes and classes stay."""
    out, i, n = [], 0, len(source)
    while i < n:
        ch = source[i]
        if ch == "\\":
            out.append(source[i:i + 2])
            i += 2
        elif ch == "[":                        # a class, to its closing bracket (one first, or after ^, is a member)
            j = i + 1 + (source.startswith("^", i + 1))
            j += source.startswith("]", j)
            while j < n and source[j] != "]":
                j += 2 if source[j] == "\\" else 1
            out.append(source[i:j + 1])
            i = j + 1
        elif source.startswith("(?P<", i) or source.startswith("(?<", i) and source[i + 3:i + 4] not in ("=", "!"):
            close = source.find(">", i)
            if close < 0:
                return source
            out.append("(")
            i = close + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# A reading is a set of sequences, each what the text must hold at the first K positions from where
# it is read (a frozenset of characters, or ANY), shorter where nothing more is asked of it: for
# every way the pattern matches there, the text satisfies one of them.
K = 2


def _followed(items: list, icase: bool, then: set) -> set:
    """The reading of `items` (a parsed sequence) followed by what `then` reads."""
    for op, av in reversed(items):
        then = _item(op, av, icase, then)
    return then


def _item(op, av, icase: bool, then: set) -> set:
    if op is c.LITERAL:
        return _step(_chars((chr(av),), icase), then)
    if op in (c.NOT_LITERAL, c.ANY):
        return _step(ANY, then)
    if op is c.IN:
        return _step(_class(av, icase), then)
    if op is c.ASSERT and av[0] == 1:          # a look ahead: the text there holds it too
        ahead = _followed(list(av[1]), icase, {()})
        return {m for a in ahead for b in then for m in (_meet(a, b),) if m is not None}
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return then                            # zero width, and (behind or negated) no help here
    if op is c.SUBPATTERN:
        _, add, remove, sub = av
        icase = (icase or bool(add & c.SRE_FLAG_IGNORECASE)) and not remove & c.SRE_FLAG_IGNORECASE
        return _followed(list(sub), icase, then)
    if op is c.ATOMIC_GROUP:
        return _followed(list(av), icase, then)
    if op is c.BRANCH:
        return set().union(*(_followed(list(alt), icase, then) for alt in av[1]))
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        return _repeat(av, icase, then)
    if op is c.GROUPREF:
        return then | _step(ANY, then)
    if op is c.GROUPREF_EXISTS:
        _, yes, no = av
        return _followed(list(yes), icase, then) | (_followed(list(no), icase, then) if no is not None else then)
    raise _Unread(str(op))


def _repeat(av: tuple, icase: bool, then: set, rounds: int = 64) -> set:
    """The reading of lo to hi repetitions of a part followed by `then`: n + 1 repetitions read
    as the part followed by n of them; from some n on the reading no longer changes (a part that
    cannot be empty fills the K positions itself; one that can be only adds), so the counts
    beyond read as that one."""
    lo, hi, sub = av
    out: set = set()
    reading, n = then, 0
    for _ in range(rounds):
        if n >= lo:
            out |= reading
        if n >= hi:
            return out
        more = _followed(list(sub), icase, reading)
        if more == reading:
            return out | reading
        reading, n = more, n + 1
    raise _Unread("repeat")


def _step(chars: frozenset | None, then: set) -> set:
    """One character of `chars` followed by what `then` reads."""
    return {(chars,) + seq[:K - 1] for seq in then}


def _meet(a: tuple, b: tuple) -> tuple | None:
    """What the text must hold to satisfy both; None where nothing can."""
    out = []
    for j in range(max(len(a), len(b))):
        x, y = a[j] if j < len(a) else ANY, b[j] if j < len(b) else ANY
        both = y if x is ANY else x if y is ANY else x & y
        if both is not ANY and not both:
            return None
        out.append(both)
    return tuple(out)


def _class(items: list, icase: bool) -> frozenset | None:
    chars: list = []
    for op, av in items:
        if op is c.LITERAL:
            chars.append(chr(av))
        elif op is c.RANGE and av[1] - av[0] < _MAX_CLASS:
            chars += [chr(x) for x in range(av[0], av[1] + 1)]
        else:
            return ANY                         # NEGATE, CATEGORY, a wide range
    return _chars(chars, icase) if len(chars) <= _MAX_CLASS else ANY


def _chars(chars, icase: bool) -> frozenset | None:
    """The characters `chars` match: under IGNORECASE each ASCII letter in both cases and with the
    characters outside ASCII that fold to it; a cased character outside ASCII stands for any."""
    if not icase:
        return frozenset(chars)
    out = set()
    for ch in chars:
        if ch.isascii():
            low = ch.lower()
            out |= {ch, low, ch.upper()} | set(_ASCII_FOLDS.get(low, ""))
        elif ch.lower() == ch.upper() == ch.casefold() == ch:
            out.add(ch)
        else:
            return ANY
    return frozenset(out)
