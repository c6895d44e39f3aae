"""Which patterns a message is scanned by (locks/gates.py) and what the engine derives for that
from a table's own regex (cost.least, cost.head): speed-ups that never change a lock."""
from __future__ import annotations

from pathlib import Path

import pytest
from groundrules import load_rulebook, lock
from groundrules.core import canonical
from groundrules.locks import cost
from groundrules.locks.gates import Plan
from groundrules.locks.messages import _vocabulary
from groundrules.locks.rules import Neighbours, facts
from groundrules.locks.scan import locks_of, raw_scan

from test_lock_cost import _every_text

ROOT = Path(__file__).resolve().parents[2]

# Codes of seven digits written 123-4567; the table asks only for a run of three digits.
CODES = """\
kind: lock_patterns
id: codes
timeout_ms: 100
invalid_reasons:
  zero: the code is all zeros
patterns:
  - id: code
    kind: code
    regex: '(?<![0-9])[0-9]{3}-[0-9]{4}(?![0-9])'
    prefilter_chars: {chars: "0123456789", run: 3}
    counts_in: {roles: [user], states: [sent]}
    normalize: [{step: delete_chars, chars: "-"}]
    validate: [{check: matches, regex: '.*[1-9].*', reason: zero}]
    examples:
      - text: "编号 123-4567"
        locks: [{quote: "123-4567", start: 3, end: 11, normalized_value: "1234567", valid: true}]
      - text: "123"
        locks: []
"""


def test_the_gates_words_and_openings_change_no_lock(lock_book):
    """Every message of the lock snapshots' cases, both chat corpora and every table example, in
    every role and state, locks to the bytes that scanning it with every pattern of its role and
    state (no gate, no word, no opening asked) gives."""
    roles, states = _vocabulary(lock_book)
    every = tuple(p for t in lock_book.of_kind("lock_patterns") for p in t.patterns)
    texts = _every_text() + [(f"{p.id}:{n}", ex.get("state", "sent"), ex["text"])
                             for p in every for n, ex in enumerate(p.examples, 1)]
    compared = skipped = 0
    for message_id, _, content in texts:
        for role in roles:
            for state in states:
                readers = [p for p in every if role in p.roles and state in p.states]
                plan = Plan(every, role, state)
                skipped += len(readers) - len(plan.runnable(content))
                want = locks_of(readers, message_id, content) if readers else []
                got = lock({"id": message_id, "role": role, "state": state, "content": content}, lock_book)
                assert canonical.dumps(got) == canonical.dumps(want), (message_id, role, state)
                compared += 1
    assert compared > 2000 and skipped > compared      # the gates do skip most scans


def test_a_gate_asks_for_every_character_each_match_reads(tmp_path):
    """A gate written as a run of three, on a regex whose every match reads seven of its
    characters, asks for seven: a message with three digits is not scanned, one with seven is."""
    path = tmp_path / "codes.yaml"
    path.write_text(CODES, encoding="utf-8")
    book = load_rulebook(ROOT, files=[path])
    [pattern] = book.table("codes").patterns
    assert pattern.gate[1:3] == (3, 7) == (3, cost.least(pattern.regex.pattern, "0123456789"))
    plan = Plan((pattern,), "user", "sent")
    assert plan.runnable("编号 123，房间 45") == []
    assert plan.runnable("编号 123，房间 4567") == [pattern]
    assert [c["quote"] for c in lock({"id": "m", "role": "user", "content": "编号 123-4567"}, book)] == ["123-4567"]


@pytest.mark.parametrize("pattern, chars, least", [
    ("[0-9]{3}(?:-[0-9]{4}){2}", "0123456789", 11),
    ("1(?:[ -]?[0-9]){10}", "0123456789", 11),
    ("(?:ab|[0-9]{5})[0-9]", "0123456789", 1),     # the branch that reads fewest counts
    ("(?<=[0-9]{9})x", "0123456789", 0),           # what a lookaround reads is not counted
    ("[0-9]+", "0123456789", 0),                   # outside the subset: nothing derived
])
def test_least_counts_what_every_match_reads(pattern, chars, least):
    assert cost.least(pattern, chars) == least


D = "0123456789"


@pytest.mark.parametrize("pattern, head", [
    ("ab|ac", ["a", "bc"]),
    ("(?<![0-9])[一幺][一二三]{2}[0-9]{7,9}", ["一幺", "一二三", "一二三"] + [D] * 5),   # at most HEAD_CAP
    ("(?<=x)a(?=b)c", ["a", "c"]),                   # lookarounds read nothing of the match
    ("a?b", []),                                     # an optional start is no fixed opening
    ("x{2,3}y", ["x", "x"]),
    ("(?:ab){2}c", ["a", "b", "a", "b", "c"]),
    ("a.b", ["a"]),                                  # a set not enumerated ends it
    ("ab+", []),                                     # outside the subset: nothing derived
])
def test_head_is_what_every_match_opens_with(pattern, head):
    assert list(cost.head(pattern)) == [frozenset(h) for h in head]


def test_an_opening_keeps_ordinary_chat_from_the_chinese_numeral_reading(lock_book):
    """一 is in most Chinese sentences; the reading's every match opens with 一 or 幺 and two more
    numerals (read off its regex), so a sentence without that is not scanned for it."""
    [pattern] = [p for t in lock_book.of_kind("lock_patterns") for p in t.patterns
                 if p.opening and "一" in {c for c, _ in p.opening}]
    plan = Plan((pattern,), "user", "sent")
    assert plan.runnable("好的，我先跟领导确认一下预算，一周内给您回复，第一时间通知您。") == []
    assert plan.runnable("电话 一三八零零一三八零零零") == [pattern]


def test_a_rule_verdict_is_its_rows_read_in_order(lock_book):
    """The verdict a pattern's rows are compiled into keeps a candidate exactly when no drop row
    holds and, for an invalid one, an attempt row does: on every candidate of the corpora."""
    rows = {}
    for table in lock_book.of_kind("lock_patterns"):
        for p in table.patterns:
            rows[p.id] = [r for r in table.rows if p.id in r.patterns]
    every = tuple(p for t in lock_book.of_kind("lock_patterns") for p in t.patterns)
    judged = kept = 0
    for message_id, _, content in _every_text():
        raws = raw_scan(every, message_id, "user", "sent", content)
        neighbours = Neighbours(raws)
        for r in raws:
            if not rows[r.pattern]:
                continue
            fact = facts(r, content, neighbours)
            drops = [row for row in rows[r.pattern] if row.section == "drop"]
            attempts = [row for row in rows[r.pattern] if row.section == "attempt"]
            want = not any(row.when.test(fact) for row in drops) and (
                fact["valid"] or not attempts or any(row.when.test(fact) for row in attempts))
            assert r.rules.verdict(fact) is want, (message_id, r.pattern, r.start)
            judged += 1
            kept += want
    assert judged > 500 and 0 < kept < judged
