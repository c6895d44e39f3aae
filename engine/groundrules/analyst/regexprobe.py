"""Probing a regular expression for catastrophic backtracking before a hostile message does.

A pattern such as `(1|11)+$` matches ordinary text in microseconds and takes seconds on thirty 1s
followed by a character it cannot end on; at run time that is a LOCK_TIMEOUT for the whole call,
naming no table line. Lint runs each pattern on generated adversarial texts: a prefix taken from
the pattern's own literal text, a "pump" (a character or pair the pattern can repeat) many times,
and a suffix that makes the match fail late. A search that outlives its budget, twice, is the
finding. Heuristic by nature: it finds the usual shapes (nested or overlapping quantifiers), not
every slow pattern.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import regex

BUDGET_S = 0.05           # one search of one probe text
CONFIRM_FACTOR = 4        # a probe that ran out is run again with this many times the budget
SHORT, LONG = 32, 5000    # pumped lengths: exponential blow-ups show at the first, polynomial at the second
SUFFIXES = ("!", "\n", "")
MAX_ATOMS, MAX_PAIRS, MAX_PREFIXES = 12, 6, 3

# a character each escape class matches, for pumping
_CLASS_SAMPLE = {"d": "1", "w": "a", "s": " ", "D": "a", "W": "!", "S": "a", "b": "", "B": "",
                 "A": "", "Z": "", "z": "", "n": "\n", "t": "\t", "p": "a", "P": "1"}
_META = set("()|*+?{}^$.")
_PROPERTY_SAMPLE = {"Han": "中", "L": "a", "Letter": "a", "N": "1", "Nd": "1", "Lu": "A", "Ll": "a"}


@dataclass(frozen=True)
class Slow:
    """A probe the pattern could not finish within the budget."""

    prefix: str
    pump: str
    repeat: int
    suffix: str

    def describe(self) -> str:
        head = f"{self.prefix!r} then " if self.prefix else ""
        tail = f", then {self.suffix!r}" if self.suffix else ""
        return f"{head}{self.pump!r} repeated {self.repeat} times{tail}"


@lru_cache(maxsize=4096)
def probe(pattern: str, budget_s: float = BUDGET_S) -> Slow | None:
    """The first adversarial text on which `pattern` outlives `budget_s` (confirmed once with a
    larger budget), or None. A pattern that does not compile is not this check's business.
    Remembered per pattern: probing costs tens of milliseconds, and a host or a test that lints
    many edits of one rulebook probes the same patterns again."""
    try:
        compiled = regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError):
        return None
    for slow in _probes(pattern):
        text = slow.prefix + slow.pump * slow.repeat + slow.suffix
        if _outlives(compiled, text, budget_s) and _outlives(compiled, text, budget_s * CONFIRM_FACTOR):
            return slow
    return None


def _outlives(compiled: regex.Pattern, text: str, budget_s: float) -> bool:
    try:
        compiled.search(text, timeout=budget_s)
    except TimeoutError:
        return True
    return False


def _probes(pattern: str) -> Iterator[Slow]:
    atoms, literals = _atoms(pattern)
    pumps = atoms + [a + b for a, b in zip(atoms, atoms[1:]) if a != b][:MAX_PAIRS]
    prefixes = [""]
    for text in _leads(pattern) + literals[:MAX_PREFIXES]:
        if text not in prefixes:
            prefixes.append(text)
    for length in (SHORT, LONG):
        for prefix in prefixes:
            for pump in pumps:
                for suffix in SUFFIXES:
                    yield Slow(prefix, pump, max(1, length // len(pump)), suffix)


def _atoms(pattern: str) -> tuple[list[str], list[str]]:
    """Characters the pattern can match (literals, and one sample per class or escape), those under
    a quantifier first, and its runs of two or more literal characters, in order of appearance."""
    found: list[tuple[str, bool]] = []           # (character, repeated?)
    literals: list[str] = []
    run: list[str] = []
    groups: list[int] = []                       # index into `found` where each open group began

    def quantified(at: int) -> bool:
        return at < len(pattern) and pattern[at] in "*+{"

    def add(ch: str, end: int) -> None:
        if ch:
            found.append((ch, quantified(end)))

    def end_run() -> None:
        if len(run) >= 2 and "".join(run) not in literals:
            literals.append("".join(run))
        run.clear()

    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            add(_CLASS_SAMPLE.get(nxt, nxt if not nxt.isalnum() else ""), i + 2)
            if nxt in _CLASS_SAMPLE or nxt.isalnum():
                end_run()
            else:
                run.append(nxt)
            i += 2
        elif ch == "[":
            end_run()
            close = _class_end(pattern, i)
            add(_class_sample(pattern[i + 1:close]), close + 1)
            i = close + 1
        elif ch == "(":
            end_run()
            groups.append(len(found))
            i = _group_body(pattern, i)
        elif ch == ")":
            end_run()
            start = groups.pop() if groups else 0
            if quantified(i + 1):                # everything inside a repeated group repeats
                found[start:] = [(c, True) for c, _ in found[start:]]
            i += 1
        elif ch == "{":
            end_run()
            close = pattern.find("}", i)
            i = close + 1 if close > 0 else i + 1
        elif ch in _META:
            end_run()
            if ch == ".":
                add("a", i + 1)
            i += 1
        else:
            add(ch, i + 1)
            run.append(ch)
            i += 1
    end_run()
    atoms: list[str] = []
    for ch, _ in sorted(found, key=lambda item: not item[1]):    # stable: repeated ones first
        if ch not in atoms and len(atoms) < MAX_ATOMS:
            atoms.append(ch)
    return atoms, literals


def _leads(pattern: str) -> list[str]:
    """What the pattern must read before its first repeated part, as sample text: `转(\\d|\\d\\d)+$`
    reads `转` first, `[A-Z]{2}(a+)+` `AA`. Without it a probe never gets past the first character:
    the pumped text holds no `转`, so the search fails fast and the blow-up behind it goes unseen.
    Lookarounds and anchors read nothing; an optional part gives a lead with and one without it."""
    leads = [""]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch in "^$" or (ch == "\\" and pattern[i + 1:i + 2] in ("b", "B", "A", "Z", "z", "G")):
            i += 1 if ch in "^$" else 2
            continue
        end = _atom_end(pattern, i)
        if ch == "(" and pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            i = end
            continue
        if ch in "|)" or ch == "(":
            break                      # alternatives and groups: the lead stops at them
        sample = _sample(pattern[i:end])
        quantifier = pattern[end:end + 1]
        if quantifier in ("*", "+", "{") or sample is None:
            break
        if quantifier == "?":
            leads = leads + [lead + sample for lead in leads]
            i = end + 1
            continue
        leads = [lead + sample for lead in leads]
        i = end
    return [lead for lead in dict.fromkeys(leads) if lead][:MAX_PREFIXES]


def _atom_end(pattern: str, i: int) -> int:
    """Where the atom (a character, an escape, a class or a whole group) starting at `i` ends."""
    ch = pattern[i]
    if ch == "\\":
        if pattern[i + 1:i + 2] in ("p", "P") and pattern[i + 2:i + 3] == "{":
            close = pattern.find("}", i)
            return close + 1 if close > 0 else i + 2
        return i + 2
    if ch == "[":
        return _class_end(pattern, i) + 1
    if ch == "(":
        depth, j = 0, i
        while j < len(pattern):
            c = pattern[j]
            if c == "\\":
                j += 2
                continue
            if c == "[":
                j = _class_end(pattern, j) + 1
                continue
            depth += (c == "(") - (c == ")")
            j += 1
            if depth == 0:
                return j
        return len(pattern)
    return i + 1


def _sample(atom: str) -> str | None:
    """One character an atom matches (None for one this walk does not read: a group)."""
    if atom.startswith("\\"):
        nxt = atom[1:2]
        if nxt in ("p", "P") and atom[2:3] == "{":
            return _PROPERTY_SAMPLE.get(atom[3:-1]) if nxt == "p" else None
        if nxt in _CLASS_SAMPLE:
            return _CLASS_SAMPLE[nxt] or None
        return None if nxt.isalnum() else nxt
    if atom.startswith("["):
        return _class_sample(atom[1:-1]) or None
    if atom == ".":
        return "a"
    if atom.startswith("(") or atom in _META:
        return None
    return atom


def _group_body(pattern: str, start: int) -> int:
    """Where the body of the group opening at `start` begins: past `(`, `(?:`, `(?=`, `(?!`,
    `(?<=`, `(?<!`, `(?P<name>`, `(?<name>`, `(?>`, or inline flags `(?i:`."""
    i = start + 1
    if not pattern.startswith("?", i):
        return i
    i += 1
    if pattern.startswith(("<=", "<!"), i):
        return i + 2
    if pattern.startswith(("P<", "<"), i):
        close = pattern.find(">", i)
        return close + 1 if close > 0 else i
    if pattern.startswith("P=", i):               # a back reference to a named group
        close = pattern.find(")", i)
        return close if close > 0 else i
    while i < len(pattern) and pattern[i].isalpha():
        i += 1
    return i + 1 if i < len(pattern) and pattern[i] in ":=!>" else i


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return min(i, len(pattern) - 1)


def _class_sample(body: str) -> str:
    """One character a `[...]` class matches: its first member (for `[^...]`, a letter outside it)."""
    if body.startswith("^"):
        for candidate in "a1 !":
            if candidate not in body:
                return candidate
        return ""
    if body.startswith("\\") and len(body) > 1:
        return _CLASS_SAMPLE.get(body[1], body[1])
    return body[:1]
