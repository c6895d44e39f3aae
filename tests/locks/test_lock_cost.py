"""The bound on what one search of a lock regex can cost (locks/cost.py): a scan runs without the
regex clock only where the bound proves it fits the table's budget, and everywhere else keeps it."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
import regex

from groundrules import GroundrulesError, load_rulebook, lock
from groundrules.locks import cost

ROOT = Path(__file__).resolve().parents[2]
SEP = "[ -]"


@pytest.mark.parametrize("pattern", [
    "a*b", "a+", "[0-9]{4,}", "(?:ab)*c", "(x+x+)+y",          # unbounded repeats
    "(?i)abc", "(?>a{2})", "(a)\\1", "[[:alpha:]]{2}", "a{x}",   # syntax this reader does not know
])
def test_no_bound_without_a_proof(pattern):
    assert cost.attempt_steps(pattern) is None
    assert cost.clockless_chars(pattern, 0.25) == 0 and not cost.clockless_match(pattern, 0.25)


@pytest.mark.parametrize("pattern", [
    "(?:a|a){0,20}b",          # two ways to read each a: 2^20 paths
    "(?:a{0,3}){10}b",         # where each group ends is free: 4^10
    "(?:[0-9]{0,3}[0-9]){10}",  # the digit the repeat gives back is one the next digit can take
    "(1|11){0,30}$",
])
def test_ambiguous_bounded_repeats_get_bounds_too_large_to_drop_the_clock(pattern):
    steps = cost.attempt_steps(pattern)
    assert steps is not None and steps > 10 ** 6
    assert cost.clockless_chars(pattern, 0.25) == 0


def test_a_run_of_separators_before_a_digit_ends_one_way():
    """`{sep}{0,3}[0-9]` repeated ten times: a separator given back is no digit, so each group ends
    one way and the bound grows with the length, not exponentially."""
    ten = f"(?:{SEP}{{0,3}}[0-9]){{10}}"
    twenty = f"(?:{SEP}{{0,3}}[0-9]){{20}}"
    assert cost.attempt_steps(ten) < 200
    assert cost.attempt_steps(twenty) < 2 * cost.attempt_steps(ten) + 10


def test_a_lookbehind_is_read_right_to_left():
    """The repeat inside a lookbehind ends one way when what lies BEFORE it cannot be one of its
    characters, as the engine reads it backwards."""
    disjoint = f"(?<=(?:[0-9]{SEP}{{0,3}}){{10}})x"
    overlapping = "(?<=(?:[0-9][ 0-9]{0,3}){10})x"
    assert cost.attempt_steps(disjoint) < 300 < 10 ** 6 < cost.attempt_steps(overlapping)


def test_the_default_tables_digit_patterns_scan_chat_messages_without_the_clock(lock_book):
    """The patterns with no unbounded repeat read a chat message (a few hundred characters) without
    the clock; the others (email, QQ, WeChat: `+`, `*`, `{4,}`) always with it."""
    for table in lock_book.of_kind("lock_patterns"):
        for p in table.patterns:
            outside_classes = regex.sub(r"\[(?:\\.|[^\]\\])*\]", "", p.regex.pattern)
            bounded = not regex.search(r"(?<!\\)[*+]|\{[0-9]+,\}", outside_classes)
            assert (p.clockless >= 200) is bounded, p.id


TABLE = """\
kind: lock_patterns
id: slow
timeout_ms: 5
invalid_reasons:
  odd: the value does not read
patterns:
  - id: code
    kind: code
    regex: 'NO-x{1,30}'
    counts_in: {roles: [user], states: [sent]}
    normalize:
      - {step: delete_chars, chars: "-"}
    validate:
      - {check: matches, regex: 'NOx{1,30}', reason: odd}
    examples:
      - text: "NO-x"
        locks:
          - {quote: "NO-x", start: 0, end: 4, normalized_value: "NOx", valid: true}
      - text: "none"
        locks: []
"""


def _book(tmp_path: Path, text: str):
    path = tmp_path / "slow.yaml"
    path.write_text(text, encoding="utf-8")
    return load_rulebook(ROOT, files=[path])


def test_a_bounded_pattern_past_its_budget_is_still_a_timeout(tmp_path):
    """A bounded pattern whose bound does not fit the budget keeps the clock: a search that runs
    past it is LOCK_TIMEOUT, never 'no match'."""
    book = _book(tmp_path, TABLE.replace("regex: 'NO-x{1,30}'", "regex: 'NO-(?:x|x){0,26}y'"))
    [pattern] = book.of_kind("lock_patterns")[0].patterns
    assert pattern.clockless == 0
    with pytest.raises(GroundrulesError) as exc:
        lock({"id": "m", "role": "user", "content": "NO-" + "x" * 30}, book)
    assert exc.value.code == "LOCK_TIMEOUT" and exc.value.details["pattern"] == "slow.code"


def test_a_bounded_check_past_its_budget_is_still_a_timeout(tmp_path):
    book = _book(tmp_path, TABLE.replace("regex: 'NOx{1,30}'", "regex: 'NO(?:x|x){0,26}y'"))
    [pattern] = book.of_kind("lock_patterns")[0].patterns
    assert pattern.clockless > 31            # the scan regex reads this text without the clock; the check cannot
    with pytest.raises(GroundrulesError) as exc:
        lock({"id": "m", "role": "user", "content": "NO-" + "x" * 28}, book)
    assert exc.value.code == "LOCK_TIMEOUT" and exc.value.details["pattern"] == "slow.code"


def test_a_cheap_bounded_pattern_and_check_lock_as_before(tmp_path):
    book = _book(tmp_path, TABLE)
    assert [(c["quote"], c["valid"]) for c in lock({"id": "m", "role": "user", "content": "NO-xxx NO-"}, book)] \
        == [("NO-xxx", True)]


@pytest.mark.parametrize("pattern", [
    "1[3-9][0-9]{9}",
    "(?<![0-9])1(?:[ -]{0,3}[0-9]){10}(?![0-9])",
    "(?P<cc>86)?(?(cc)[ ]?)1[0-9]{10}",
    "(?P<s>[./])[0-9]{4}(?P=s)[0-9]{4}",
    "(?:a|b){2,5}?c",
    "x{3}+y",
])
def test_a_pattern_whose_repeats_are_bounded_gets_a_bound(pattern):
    """A bound exists, and it is no smaller than the widest match (every character read is a step),
    so a bound can never claim a search cheaper than reading its own match."""
    steps = cost.attempt_steps(pattern)
    root = cost.parse(pattern)
    widths: dict = {}
    cost._collect_widths(root, pattern, widths)
    assert steps is not None and steps >= cost.max_width(root, widths)
    assert cost.clockless_chars(pattern, 0.25) > 0 and cost.clockless_match(pattern, 0.25)


def test_a_longer_budget_reads_a_longer_text_without_the_clock():
    pattern = "1[3-9][0-9]{9}"
    assert 0 < cost.clockless_chars(pattern, 0.01) < cost.clockless_chars(pattern, 0.25)
    assert cost.clockless_chars(pattern, 0.0) == 0


class _Spy:
    """A compiled regex that records the timeout of each finditer, so a test sees which scans ran
    with the clock."""

    def __init__(self, compiled):
        self.compiled, self.timeouts = compiled, []

    def __getattr__(self, name):
        return getattr(self.compiled, name)

    def finditer(self, text, timeout=None):
        self.timeouts.append(timeout)
        return self.compiled.finditer(text, timeout=timeout)


def test_a_text_past_the_bound_is_scanned_with_the_clock(lock_book):
    """The switch itself: a message no longer than the pattern's clockless length is read without the
    clock, one character longer with the table's budget."""
    from dataclasses import replace

    from groundrules.locks.scan import scan
    [mobile] = [p for t in lock_book.of_kind("lock_patterns") for p in t.patterns if p.id == "cn_mobile.mobile"]
    assert mobile.clockless > 0
    spy = _Spy(mobile.regex)
    spied = replace(mobile, regex=spy)
    number = "手机 13800001234 "
    short = (number * (mobile.clockless // len(number) + 1))[:mobile.clockless]
    for text in (short, short + "。"):
        found = scan((spied,), "m", "user", "sent", text)
        assert found == scan((mobile,), "m", "user", "sent", text) and found
    assert spy.timeouts == [None, mobile.timeout]


def _every_text():
    """(id, role, content) of every message the lock snapshots and corpora hold, and every table
    example's text, in each role the contract knows."""
    import json

    import chat_corpus
    texts = []
    for path in sorted((ROOT / "tests" / "cases" / "locks").rglob("*.json")):
        for m in json.loads(path.read_text(encoding="utf-8"))["messages"]:
            texts.append((f"{path.stem}:{m['id']}", m.get("state", "sent"), m["content"]))
    for folder in (chat_corpus.CORPUS, ROOT / "tests" / "cases" / "lock_chat_heldout"):
        texts += [(m.id, "sent", m.text) for m in chat_corpus.load(folder)]
    return texts


def test_locks_are_byte_identical_without_the_fast_path(lock_book, monkeypatch):
    """The fast path only drops the clock: with every bound disowned (each scan and each matches
    check keeps its timeout), every message of the lock snapshots' cases, of both chat corpora and
    every table example locks to the same bytes, in every role."""
    from groundrules.core import canonical, compilers
    from groundrules.locks import compile as lock_compile, steps
    from groundrules.locks.messages import _vocabulary

    asked = []
    monkeypatch.setattr(lock_compile, "clockless_chars", lambda source, budget: asked.append(source) or 0)
    monkeypatch.setattr(steps, "clockless_match", lambda source, budget: asked.append(source) or False)
    real = compilers.COMPILERS["lock_patterns"]
    monkeypatch.setitem(compilers.COMPILERS, "lock_patterns", lambda data, ctx: real(data, ctx))  # not cached
    slow = load_rulebook(ROOT, files=[ROOT / "locks"])
    fast_patterns = [p for t in lock_book.of_kind("lock_patterns") for p in t.patterns]
    slow_patterns = [p for t in slow.of_kind("lock_patterns") for p in t.patterns]
    assert asked and [p.id for p in fast_patterns] == [p.id for p in slow_patterns]
    assert all(p.clockless == 0 for p in slow_patterns)
    assert sum(p.clockless > 0 for p in fast_patterns) >= len(fast_patterns) // 2

    texts = _every_text()
    texts += [(f"{p.id}:{n}", ex.get("state", "sent"), ex["text"])
              for p in fast_patterns for n, ex in enumerate(p.examples, 1)]
    roles, states = _vocabulary(lock_book)
    compared = locked = 0
    for message_id, state, content in texts:
        for role in roles:
            message = {"id": message_id, "role": role, "state": state, "content": content}
            fast, slow_locks = lock(message, lock_book), lock(message, slow)
            assert canonical.dumps(fast) == canonical.dumps(slow_locks), (message_id, role)
            compared += 1
            locked += bool(fast)
    assert compared > 1000 and locked > 300


class _KeptWaiting(_Spy):
    """A compiled regex whose first clocked scan sleeps past its timeout and raises, as a scan kept
    from the interpreter on a loaded server does (no CPU spent)."""

    def finditer(self, text, timeout=None):
        self.timeouts.append(timeout)
        if timeout is not None and len(self.timeouts) == 1:
            time.sleep(timeout)
            raise TimeoutError("regex timed out")
        return self.compiled.finditer(text, timeout=timeout)


def test_a_clocked_scan_kept_waiting_still_locks(lock_book):
    """The table's budget is the scan's CPU (cpu_clock): a scan that only waited is run again in a
    longer window, and the locks are the ones it finds unhindered (not LOCK_TIMEOUT). Any bounded
    pattern of the tables will do, over one of its own examples repeated past its clockless length."""
    from dataclasses import replace

    from groundrules.locks.scan import scan
    pattern, example = next((p, ex) for t in lock_book.of_kind("lock_patterns") for p in t.patterns
                            if p.clockless > 0 for ex in p.examples if ex.get("locks") and "role" not in ex)
    text = (example["text"] + "\n") * (pattern.clockless // (len(example["text"]) + 1) + 1)
    assert len(text) > pattern.clockless
    waiting = _KeptWaiting(pattern.regex)
    role = sorted(pattern.roles)[0]
    found = scan((pattern,), "m", role, "sent", text)
    assert found and scan((replace(pattern, regex=waiting),), "m", role, "sent", text) == found
    assert waiting.timeouts == [pattern.timeout, 2 * pattern.timeout]
