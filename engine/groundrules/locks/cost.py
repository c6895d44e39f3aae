"""What one search of a lock regex can cost, read from its structure, so that a scan which cannot
outrun its table's budget runs without the regex clock.

`regex` honours a timeout by reading the process CPU clock (a system call) when a search starts and
again at every match: on a chat message that is the largest single cost of lock(). A pattern
whose every repeat is bounded (`?`, `{m,n}`; no `*`, `+`, `{m,}`) tries a fixed number of paths
at each start position, whatever the text, so a search of `n` characters takes at most
`(n + 1) * steps` engine steps. `steps` is bounded here by counting, node by node, the ways each
part can end that its continuation can still extend: a bounded run of one character class
followed by something that cannot start with one of those characters (`{sep}{0,3}[0-9]`, the
tables' idiom) has ONE such way, not four, because giving back a separator leaves a separator
where a digit must be. That disjointness is what keeps a phone pattern's bound in the hundreds
rather than 4^10. Lookarounds are atomic in `regex` (once they hold, nothing backtracks into
them), so each costs its body's bound and ends one way; a lookbehind's body (read right to left)
is counted without the disjointness shortcut.

Anything this reader does not know (an unbounded repeat, inline flags other than a leading
`(?i)`, a construct outside the subset below) gives no bound, and the pattern keeps its timeout:
the analysis may only ever remove a clock where the bound is proven. The subset: literals and escapes, classes, `.`,
groups (capturing, named, non-capturing), alternation, lookarounds, `(?(name)yes|no)`,
`(?P=name)`, anchors, and `?`, `{m}`, `{m,n}`, `{,n}` repeats (lazy or possessive too).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

ALL = None                 # a character set this reader does not enumerate: overlaps every set
CAP = 10 ** 12             # a bound past this is no bound worth having
MAX_RANGE = 4096           # a class range wider than this is read as ALL
# What one counted step is taken to cost at most. The bound counts generously (every node visit,
# every failed first test), so a real search costs far less per counted step: at most about 5 ns
# on adversarial texts on a loaded two-core machine, 20x below this (tests/perf/bench_lock_bounds.py).
STEP_S = 1e-7

_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_CATEGORIES = set("dDwWsS")
_ZERO_ESCAPES = set("bBAZ")
_BOUNDS = re.compile(r"([0-9]*)(?:,([0-9]+))?")     # {m}, {m,n}, {,n}; {m,} is unbounded


class Unknown(Exception):
    """A construct outside the subset: no bound."""


@dataclass(frozen=True)
class Node:
    op: str                # char | zero | seq | alt | rep | look | cond | ref
    chars: frozenset | None = None          # char: the set (ALL for a category, '.', a negated class)
    items: tuple = ()                       # seq, alt: parts; rep, look: (body,); cond: (yes, no)
    low: int = 0                            # rep
    high: int = 0                           # rep
    possessive: bool = False                # rep
    behind: bool = False                    # look
    name: str = ""                          # ref: the group it repeats


CASELESS = "(?i)"          # the one inline flag read: every character then matches a set not enumerated


def parse(pattern: str) -> Node:
    return _parsed(pattern)[0]


def _parsed(pattern: str) -> tuple[Node, dict]:
    """The tree and its named groups."""
    parser = _Parser(pattern)
    if pattern.startswith(CASELESS):
        parser.i, parser.caseless = len(CASELESS), True
    node = parser.alternation()
    if parser.i != len(pattern):
        raise Unknown(f"unexpected {pattern[parser.i]!r}")
    return node, parser.groups


class _Parser:
    def __init__(self, text: str):
        self.text, self.i = text, 0
        self.groups: dict[str, Node] = {}
        self.caseless = False

    def char(self, chars: frozenset | None) -> Node:
        """A character node; under (?i) its set is not enumerated (case folding widens it), so it
        overlaps every other and no alternation of it counts as exclusive."""
        return Node("char", chars=ALL if self.caseless else chars)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.text[j] if j < len(self.text) else ""

    def alternation(self) -> Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.sequence())
        if len(branches) == 1:
            return branches[0]
        if all(b.op == "char" for b in branches) and _exclusive(branches):
            chars: frozenset | None = frozenset()     # a|b|[cd] is one class (not a|a: two ways)
            for b in branches:
                chars = _union(chars, b.chars)
            return Node("char", chars=chars)
        return Node("alt", items=tuple(branches))

    def sequence(self) -> Node:
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(self.atom()))
        return items[0] if len(items) == 1 else Node("seq", items=tuple(items))

    def quantified(self, atom: Node) -> Node:
        ch = self.peek()
        if ch in ("*", "+"):
            raise Unknown("an unbounded repeat")
        if ch == "?":
            self.i += 1
            low, high = 0, 1
        elif ch == "{":
            close = self.text.find("}", self.i)
            bounds = _BOUNDS.fullmatch(self.text, self.i + 1, close) if close > 0 else None
            if bounds is None:
                raise Unknown("an unbounded or unreadable {m,n}")
            low = int(bounds.group(1) or 0)
            high = int(bounds.group(2)) if bounds.group(2) is not None else low
            if high < low:
                raise Unknown("{m,n} with n < m")
            self.i = close + 1
        else:
            return atom
        if atom.op in ("zero", "look"):
            raise Unknown("a repeated assertion")
        possessive = False
        if self.peek() == "?":
            self.i += 1
        elif self.peek() == "+":
            self.i += 1
            possessive = True
        if self.peek() in ("*", "+", "?", "{"):
            raise Unknown("a repeated repeat")
        return Node("rep", items=(atom,), low=low, high=high, possessive=possessive)

    def atom(self) -> Node:
        ch = self.peek()
        if ch == "(":
            return self.group()
        if ch == "[":
            return self.char(self.char_class())
        if ch == "\\":
            return self.escape()
        if ch in ("^", "$"):
            self.i += 1
            return Node("zero")
        if ch == ".":
            self.i += 1
            return self.char(ALL)
        if ch in ("*", "+", "?", "{", "}", "]"):
            raise Unknown(f"a stray {ch!r}")
        self.i += 1
        return self.char(frozenset(ch))

    def escape(self) -> Node:
        nxt = self.peek(1)
        if nxt in _CATEGORIES:
            self.i += 2
            return Node("char", chars=ALL)
        if nxt in _ZERO_ESCAPES:
            self.i += 2
            return Node("zero")
        if nxt in ("p", "P"):
            self.skip_braces(2)
            return Node("char", chars=ALL)
        return self.char(frozenset(self.escaped_char()))

    def escaped_char(self) -> str:
        """One character written with a backslash (self.i at the backslash)."""
        nxt = self.peek(1)
        if nxt in _SIMPLE_ESCAPES:
            self.i += 2
            return _SIMPLE_ESCAPES[nxt]
        for letter, width in (("x", 2), ("u", 4), ("U", 8)):
            if nxt == letter:
                digits = self.text[self.i + 2:self.i + 2 + width]
                if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise Unknown(f"an unreadable \\{letter} escape")
                self.i += 2 + width
                return chr(int(digits, 16))
        if nxt == "" or nxt.isalnum() or nxt == "_":
            raise Unknown(f"the escape \\{nxt}")
        self.i += 2
        return nxt

    def skip_braces(self, offset: int) -> None:
        if self.peek(offset) != "{":
            raise Unknown("a property without braces")
        close = self.text.find("}", self.i)
        if close < 0:
            raise Unknown("an unclosed property")
        self.i = close + 1

    def char_class(self) -> frozenset | None:
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        chars: set = set()
        every = False
        first = True
        while True:
            ch = self.peek()
            if ch == "":
                raise Unknown("an unclosed class")
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[":
                raise Unknown("a nested class or a POSIX class")
            if ch == "\\" and self.peek(1) in _CATEGORIES:
                self.i += 2
                every = True
                continue
            if ch == "\\" and self.peek(1) in ("p", "P"):
                self.skip_braces(2)
                every = True
                continue
            lo = self.class_char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                if self.peek() == "[" or (self.peek() == "\\" and self.peek(1) in _CATEGORIES | {"p", "P"}):
                    raise Unknown("a range to a class")
                hi = self.class_char()
                if ord(hi) < ord(lo):
                    raise Unknown("a reversed range")
                if ord(hi) - ord(lo) > MAX_RANGE:
                    every = True
                else:
                    chars.update(chr(c) for c in range(ord(lo), ord(hi) + 1))
            else:
                chars.add(lo)
        if negated or every:
            return ALL
        return frozenset(chars)

    def class_char(self) -> str:
        ch = self.peek()
        if ch == "\\":
            if self.peek(1) == "b":
                raise Unknown("\\b inside a class")
            return self.escaped_char()
        self.i += 1
        return ch

    def group(self) -> Node:
        text, i = self.text, self.i
        name = ""
        if text.startswith("(?:", i):
            self.i += 3
        elif text.startswith(("(?=", "(?!"), i):
            self.i += 3
            return self.close(Node("look", items=(self.alternation(),)))
        elif text.startswith(("(?<=", "(?<!"), i):
            self.i += 4
            return self.close(Node("look", items=(self.alternation(),), behind=True))
        elif text.startswith("(?P=", i):
            end = text.find(")", i)
            name = text[i + 4:end]
            if end < 0 or name not in self.groups:
                raise Unknown("a back reference to no earlier group")
            self.i = end + 1
            return Node("ref", name=name)
        elif text.startswith("(?(", i):
            end = text.find(")", i + 3)
            if end < 0 or not text[i + 3:end].isidentifier():
                raise Unknown("an unreadable condition")
            self.i = end + 1
            body = self.alternation()
            branches = body.items if body.op == "alt" else (body,)
            if len(branches) > 2:
                raise Unknown("a condition with more than two branches")
            no = branches[1] if len(branches) == 2 else Node("seq")
            return self.close(Node("cond", items=(branches[0], no)))
        elif text.startswith(("(?P<", "(?<"), i):
            start = i + (4 if text.startswith("(?P<", i) else 3)
            end = text.find(">", start)
            name = text[start:end]
            if end < 0 or not name.isidentifier():
                raise Unknown("an unreadable group name")
            self.i = end + 1
        elif text.startswith("(?", i):
            raise Unknown("inline flags or an extension group")
        else:
            self.i += 1
        node = self.close(self.alternation())
        if name:
            self.groups[name] = node
        return node

    def close(self, node: Node) -> Node:
        if self.peek() != ")":
            raise Unknown("an unclosed group")
        self.i += 1
        return node


# ---- the bound ---------------------------------------------------------------------------------

def _overlap(a: frozenset | None, b: frozenset | None) -> bool:
    return a is ALL or b is ALL or not a.isdisjoint(b)


def _union(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    return ALL if a is ALL or b is ALL else a | b


def first(node: Node) -> frozenset | None:
    """The characters a match of `node` can start with (ALL when not enumerated)."""
    op = node.op
    if op == "char":
        return node.chars
    if op in ("zero", "look"):
        return frozenset()
    if op == "ref":
        return ALL
    if op == "seq":
        out: frozenset | None = frozenset()
        for item in node.items:
            out = _union(out, first(item))
            if not nullable(item):
                break
        return out
    if op in ("alt", "cond"):
        out = frozenset()
        for item in node.items:
            out = _union(out, first(item))
        return out
    return first(node.items[0])      # rep


def nullable(node: Node) -> bool:
    op = node.op
    if op == "char":
        return False
    if op in ("zero", "look", "ref"):
        return True
    if op == "seq":
        return all(nullable(i) for i in node.items)
    if op in ("alt", "cond"):
        return any(nullable(i) for i in node.items)
    return node.low == 0 or nullable(node.items[0])


def size(node: Node) -> int:
    return 1 + sum(size(i) for i in node.items)


def max_width(node: Node, groups: dict) -> int:
    op = node.op
    if op == "char":
        return 1
    if op in ("zero", "look"):
        return 0
    if op == "ref":
        return groups.get(node.name, CAP)
    if op == "seq":
        return sum(max_width(i, groups) for i in node.items)
    if op in ("alt", "cond"):
        return max(max_width(i, groups) for i in node.items)
    return node.high * max_width(node.items[0], groups)


def _cost(node: Node, follow, head: int, prune: bool, widths: dict) -> tuple[int, int]:
    """(ways, steps): at most how many ways `node` can end that its continuation (which starts with
    one of `follow`, and costs at most `head` steps to fail at its first character) can still
    extend; and at most how many steps one entry into `node` takes, those failures included."""
    op = node.op
    if op in ("char", "zero"):
        return 1, 1
    if op == "ref":
        return 1, widths.get(node.name, CAP) + 1
    if op == "look":
        body = _reversed(node.items[0]) if node.behind else node.items[0]
        _, steps = _cost(body, ALL, 1, prune, widths)
        return 1, steps + 1
    if op == "cond":
        costs = [_cost(i, follow, head, prune, widths) for i in node.items]
        return max(c[0] for c in costs), max(c[1] for c in costs) + 1
    if op == "alt":
        costs = [_cost(i, follow, head, prune, widths) for i in node.items]
        if prune and _exclusive(node.items):
            # no two branches can start with one character: at most one gets past its first, the
            # others fail there (one test per node of theirs at most)
            return max(c[0] for c in costs), min(CAP, max(c[1] for c in costs) + _probe(node, prune, widths))
        return min(CAP, sum(c[0] for c in costs)), min(CAP, sum(c[1] for c in costs) + 1)
    if op == "seq":
        items = node.items
        follows, heads = [follow] * len(items), [head] * len(items)
        for k in range(len(items) - 2, -1, -1):      # what may come after each item, right to left
            nxt = items[k + 1]
            follows[k] = _union(first(nxt), follows[k + 1]) if nullable(nxt) else first(nxt)
            heads[k] = _probe(nxt, prune, widths) + (heads[k + 1] if nullable(nxt) else 0)
        ways, steps = 1, 0
        for item, f, h in zip(items, follows, heads):
            w, s = _cost(item, f, h, prune, widths)
            steps = min(CAP, steps + ways * s)
            ways = min(CAP, ways * w)
        return ways, steps + 1
    # rep
    body, low, high = node.items[0], node.low, node.high
    ends = high - low + 1                          # how many repeat counts the text may allow
    if body.op == "char":
        forced = node.possessive or (prune and follow is not ALL and not _overlap(body.chars, follow))
        return (1 if forced else ends), high + ends * head + 1
    again = _union(first(body), follow)
    w, s = _cost(body, again, _probe(body, prune, widths) + head, prune, widths)
    forced = node.possessive or (prune and follow is not ALL and not nullable(body)
                                 and not _overlap(first(body), follow))
    ways = 1
    steps = 0
    for k in range(high):                          # entries into the k-th iteration: ways so far
        steps = min(CAP, steps + ways * s)
        ways = min(CAP, ways * w)
    total = ways if forced else min(CAP, ways * ends)
    return total, min(CAP, steps + total * head + 1)


def _probe(node: Node, prune: bool, widths: dict) -> int:
    """At most how many steps `node` takes to fail on a text whose next character it cannot start
    with (what a way to end that its continuation cannot extend costs); a lookaround is evaluated
    whole before anything is read."""
    op = node.op
    if op in ("char", "zero"):
        return 1
    if op in ("look", "ref"):
        return _cost(node, ALL, 1, prune, widths)[1]
    if op == "seq":
        total = 1
        for item in node.items:
            total = min(CAP, total + _probe(item, prune, widths))
            if not nullable(item):
                break
        return total
    if op == "alt":
        return min(CAP, 1 + sum(_probe(i, prune, widths) for i in node.items))
    if op == "cond":
        return 1 + max(_probe(i, prune, widths) for i in node.items)
    return 1 + _probe(node.items[0], prune, widths)      # rep


def _exclusive(branches: Sequence[Node]) -> bool:
    """No branch matches empty, and no two can start with the same character."""
    seen: frozenset | None = frozenset()
    for branch in branches:
        start = first(branch)
        if nullable(branch) or _overlap(start, seen):
            return False
        seen = _union(seen, start)
    return True


def _reversed(node: Node) -> Node:
    """The node as a lookbehind reads it, right to left: every sequence reversed (a lookaround
    inside keeps its own direction)."""
    if node.op == "seq":
        return Node("seq", items=tuple(_reversed(i) for i in reversed(node.items)))
    if node.op in ("alt", "cond", "rep"):
        return Node(node.op, node.chars, tuple(_reversed(i) for i in node.items), node.low, node.high,
                    node.possessive)
    return node


@lru_cache(maxsize=1024)
def attempt_steps(pattern: str) -> int | None:
    """At most how many steps one match attempt of `pattern` at one position takes, or None when
    no bound is proven (an unbounded repeat, or syntax this reader does not know)."""
    try:
        root = parse(pattern)
    except (Unknown, RecursionError):
        return None
    widths: dict = {}
    _collect_widths(root, pattern, widths)
    try:
        _, steps = _cost(root, ALL, 1, True, widths)
    except RecursionError:
        return None
    return steps if steps < CAP else None


def _collect_widths(root: Node, pattern: str, out: dict) -> None:
    """The widest text each named group can capture (a back reference repeats it)."""
    for name, node in _parsed(pattern)[1].items():
        out[name] = max_width(node, out)


def clockless_chars(pattern: str, budget_s: float) -> int:
    """The longest text a search (or finditer) of `pattern` can read within `budget_s` by the
    bound: (n + 1) start positions, each at most attempt_steps, each step at most STEP_S. 0 when
    no bound is proven (the scan always keeps its timeout)."""
    steps = attempt_steps(pattern)
    if steps is None:
        return 0
    return max(0, int(budget_s / (steps * STEP_S)) - 1)


def clockless_match(pattern: str, budget_s: float) -> bool:
    """Whether one anchored attempt (match, fullmatch) of `pattern` fits `budget_s` by the bound,
    whatever the text: a bounded pattern reads a bounded part of it."""
    steps = attempt_steps(pattern)
    return steps is not None and steps * STEP_S <= budget_s


# ---- what every match holds ----------------------------------------------------------------------

def least(pattern: str, chars: str) -> int:
    """At least how many characters of `chars` every match of `pattern` reads (lookarounds not
    counted); 0 when the pattern is outside the subset. A text holding fewer has no match, so a
    gate on `chars` may ask for that many whatever count its table wrote."""
    try:
        return _least(parse(pattern), frozenset(chars))
    except (Unknown, RecursionError):
        return 0


def _least(node: Node, chars: frozenset) -> int:
    op = node.op
    if op == "char":
        return int(node.chars is not ALL and node.chars <= chars)
    if op in ("zero", "look", "ref"):
        return 0
    if op == "seq":
        return sum(_least(i, chars) for i in node.items)
    if op in ("alt", "cond"):
        return min(_least(i, chars) for i in node.items)
    return node.low * _least(node.items[0], chars)      # rep


HEAD_CAP = 8               # how far `head` reads into a match


def head(pattern: str) -> tuple:
    """The character sets every match of `pattern` starts with, in order (lookarounds skipped,
    at most HEAD_CAP; () when the pattern is outside the subset): a text with no place where one
    of the first set is followed by one of the second, and so on, has no match."""
    try:
        sets, _ = _head(parse(pattern))
    except (Unknown, RecursionError):
        return ()
    out = []
    for chars in sets[:HEAD_CAP]:
        if chars is ALL:
            break
        out.append(chars)
    return tuple(out)


def _head(node: Node) -> tuple[list, bool]:
    """(the sets the node's every match starts with, whether it always reads exactly those)."""
    op = node.op
    if op == "char":
        return [node.chars], True
    if op in ("zero", "look"):
        return [], True
    if op == "ref":
        return [], False
    if op == "seq":
        out: list = []
        for item in node.items:
            sets, exact = _head(item)
            out += sets
            if not exact or len(out) >= HEAD_CAP:
                return out, exact and len(out) < HEAD_CAP
        return out, True
    if op in ("alt", "cond"):
        heads = [_head(i) for i in node.items]
        width = min(len(h[0]) for h in heads)
        out = [ALL if any(h[0][k] is ALL for h in heads) else frozenset().union(*(h[0][k] for h in heads))
               for k in range(width)]
        return out, all(h[1] and len(h[0]) == width for h in heads)
    body, exact = _head(node.items[0])      # rep
    if node.low == 0:
        return [], node.high == 0
    if not exact:
        return body, False
    return (body * node.low)[:HEAD_CAP], exact and node.low == node.high and len(body) * node.low < HEAD_CAP
