"""Word lists and character maps of a lock table (`words:`, `maps:`), beside its sets: one namespace,
written once, used by regexes, rules and steps; a misuse fails the load at file:line."""
from __future__ import annotations

from pathlib import Path

import pytest
from groundrules import RulesError, load_rulebook, lock
from groundrules.core.examples import run_all

ROOT = Path(__file__).resolve().parents[2]

# Room numbers typed in digits or in Chinese numerals; an invalid one is kept only after a label.
ROOMS = """\
kind: lock_patterns
id: rooms
timeout_ms: 100
sets:
  sep: " -"
words:
  label: [房间号, 房间, room]
maps:
  numerals: {零: "0", 一: "1", 二: "2", 三: "3"}
invalid_reasons:
  too_short: fewer than 4 digits
patterns:
  - id: room
    kind: room
    regex: '(?:[0-9]|{numerals})(?:{sep}?(?:[0-9]|{numerals}))+'
    counts_in: {roles: [user], states: [sent]}
    normalize:
      - {step: delete_chars, chars: "{sep}"}
      - {step: map_chars, map: numerals}
    validate: [{check: length, min: 4, reason: too_short}]
    examples:
      - text: "一二-零三"
        locks: [{quote: "一二-零三", start: 0, end: 5, normalized_value: "1203", valid: true}]
      - text: "四五"
        locks: []
attempt:
  - id: labelled
    when: {field: before, matches: '(?i){label}{sep}*$'}
    examples:
      - text: "Room 1二"
        locks: [{quote: "1二", start: 5, end: 7, normalized_value: "12", valid: false, invalid_reason: too_short}]
      - text: "楼 12"
        locks: []
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rooms.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def read(text: str, book) -> list[tuple]:
    return [(c["quote"], c["normalized_value"], c["valid"]) for c in
            lock({"id": "m", "role": "user", "content": text}, book)]


def test_words_and_maps_stand_for_what_the_table_lists(tmp_path):
    book = load_rulebook(ROOT, files=[write(tmp_path, ROOMS)])
    outcomes = run_all(book)
    assert outcomes and all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
    # the map's keys are a class in the regex, and the step writes each as its digit; quotes stay raw
    assert read("住 二零一三 号", book) == [("二零一三", "2013", True)]
    # every word of the list is a label (case-insensitive as the rule says), nothing else is
    assert [read(f"{label} 1二", book) for label in ("房间号", "房间", "ROOM", "楼层")] == \
        [[("1二", "12", False)]] * 3 + [[]]


def test_an_inline_map_works_like_a_named_one(tmp_path):
    text = ROOMS.replace("{step: map_chars, map: numerals}", '{step: map_chars, map: {零: "0", 一: "1", 二: "2", 三: "3"}}')
    assert read("二零一三", load_rulebook(ROOT, files=[write(tmp_path, text)])) == [("二零一三", "2013", True)]


def problems(tmp_path: Path, text: str) -> list[tuple[str, int]]:
    path = write(tmp_path, text)
    with pytest.raises(RulesError) as exc:
        load_rulebook(ROOT, files=[path])
    assert all(p.file == path.as_posix() for p in exc.value.problems)
    return [(p.code, p.line) for p in exc.value.problems]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("old, new, code, at", [
    ("  label: [房间号, 房间, room]", "  sep: [房间号, 房间, room]", "duplicate-name", "sep: [房间号"),
    ("{step: map_chars, map: numerals}", "{step: map_chars, map: numeral}", "unknown-map", "map: numeral}"),
    ('{step: delete_chars, chars: "{sep}"}', '{step: delete_chars, chars: "{label}"}', "words-as-characters",
     "{label}"),
    ("matches: '(?i){label}{sep}*$'", "matches: '(?i){labels}{sep}*$'", "unknown-set", "{labels}"),
    ("{step: map_chars, map: numerals}", '{step: map_chars, map: {零一: "01"}}', "bad-step-argument", "map_chars"),
    ('  numerals: {零: "0", 一: "1", 二: "2", 三: "3"}', '  numerals: {零一: "01"}', "schema-violation", "numerals:"),
    ("  label: [房间号, 房间, room]", "  label: []", "bad-value", "label: []"),
])
def test_a_misused_name_fails_the_load_at_file_line(tmp_path, old, new, code, at):
    assert old in ROOMS
    text = ROOMS.replace(old, new, 1)
    assert (code, line_of(text, at)) in problems(tmp_path, text)


def test_a_word_list_is_no_gate_set(tmp_path):
    text = ROOMS.replace("    counts_in:", '    prefilter_chars: {chars: "{label}", count: 2}\n    counts_in:', 1)
    assert ("words-as-characters", line_of(text, "prefilter_chars")) in problems(tmp_path, text)


def test_a_map_counts_as_its_characters_in_a_gate(tmp_path):
    """A gate over the map's characters: a message needs so many numerals, digits do not count."""
    text = ROOMS.replace("    counts_in:", '    prefilter_chars: {chars: "{numerals}", count: 2}\n    counts_in:', 1)
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    assert read("二零一三", book) == [("二零一三", "2013", True)]
    assert read("1203", book) == []


def test_a_word_list_in_a_prefilter_stands_for_its_words(tmp_path):
    """prefilter: ["{label}"] is every word of the list: a message holding none of them is skipped
    (so the invalid reading the label rule would keep is never looked for), one holding any is read."""
    text = ROOMS.replace("    counts_in:", '    prefilter: ["{label}", "楼"]\n    counts_in:', 1)
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    [pattern] = book.tables["rooms"].patterns
    assert pattern.prefilter == ("房间号", "房间", "room", "楼")
    assert read("住 二零一三 号", book) == []                      # no word of the prefilter
    assert read("房间 二零一三", book) == [("二零一三", "2013", True)]
    broken = ROOMS.replace("    counts_in:", '    prefilter: ["{labels}"]\n    counts_in:', 1)
    assert ("unknown-set", line_of(broken, "prefilter:")) in problems(tmp_path, broken)


def test_prev_and_next_are_the_characters_around_a_candidate_and_in_lists_expand_names(tmp_path):
    """A rule reads `prev` / `next` (one character each side, empty at an end); an `in` list item
    `{name}` is a set's characters or a word list's words."""
    text = ROOMS.replace("attempt:", """sets_placeholder
drop:
  - id: glued
    when:
      any:
        - {field: prev, in: ["{letters}", "#"]}
        - {field: next, in: ["{letters}"]}
        - {field: after, in: ["{label}"]}
    examples:
      - text: "A二零一三"
        locks: []
      - text: "二零一三"
        locks: [{quote: "二零一三", start: 0, end: 4, normalized_value: "2013", valid: true}]
attempt:""", 1).replace("sets_placeholder\n", "").replace('  sep: " -"\n', '  sep: " -"\n  letters: "AB"\n', 1)
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    outcomes = run_all(book)
    assert outcomes and all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
    assert [read(t, book) for t in ("A二零一三", "#二零一三", "C二零一三", "二零一三B", "二零一三room", "二零一三号")] == \
        [[], [], [("二零一三", "2013", True)], [], [], [("二零一三", "2013", True)]]
    broken = text.replace('["{letters}", "#"]', '["{leters}", "#"]')
    assert ("unknown-set", line_of(broken, "{leters}")) in problems(tmp_path, broken)
